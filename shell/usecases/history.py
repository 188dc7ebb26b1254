"""The workspace's history for the assistant: the four tools ``turnmark mcp`` serves, over the workspace.

One ``History`` per server, kept for its life: each call looks at the files again (a conversation JP or
``watch`` changed since is read again; JP replaces a file by rename, so a read sees the old bytes or the new),
keeps the last conversation it loaded while its files stay the same, and lists and searches through the
workspace cache and the search index in the user's cache folder, as ``conversations`` and ``find`` do.
Nothing is written inside the workspace, and nothing is read but its conversations and JP's user-local
copies of them. Calls are answered one at a time (a lock), whatever thread the server runs them on.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from returns.result import Failure, Result

from turnmark.core.errors import ArgumentRefused
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.rendering import history_tools
from turnmark.core.rendering.history_tools import ConversationItem, Hit, ToolAnswer, TurnItem
from turnmark.core.rendering.shown import turn_time
from turnmark.core.stream.conversation_ids import display_id
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.turns import Turn, find_turn
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.transcript import turn_transcript
from turnmark.core.summaries.turn_rows import turn_row
from turnmark.core.text.terminal import visible
from turnmark.shell.errors import ConversationError, FileFault, QueryError, SearchUnavailable, TurnmarkError
from turnmark.shell.secrets import redacted
from turnmark.shell.storage import conversations, workspace_cache
from turnmark.shell.storage.change_feed import WorkspaceWatch
from turnmark.shell.storage.conversations import LoadedConversation
from turnmark.shell.storage.workspace import ConversationRef, Workspace
from turnmark.shell.usecases import finding, listing

T = TypeVar("T")
Note = Callable[[str], None]

MAX_LIMIT = 200
"""The most conversations or hits one call lists."""


class NotAnswered(TurnmarkError):
    """What a tool call cannot answer (an unknown conversation or turn, a refused argument, a bad query); the
    message says what exists and how to list it."""


@dataclass
class _Kept:
    look: workspace_cache.Look
    loaded: LoadedConversation


class History:
    """The tools' answers for ``workspace``; ``limit``: the most characters of any answer. With ``watch`` (Linux)
    the kernel says which conversations changed between calls, and a search looks again only at those; without
    it every call looks at every conversation's files (the long way)."""

    def __init__(
        self,
        workspace: Workspace,
        new_id: IdSource,
        *,
        jobs: int | None = None,
        limit: int = history_tools.RESULT_CHARS,
        note: Note = lambda _line: None,
        watch: bool = True,
    ) -> None:
        self.workspace = workspace
        self.new_id = new_id
        self.jobs = jobs
        self.limit = limit
        self.note = note
        self._lock = threading.Lock()
        self._kept: _Kept | None = None
        self._listing: list[listing.Listed] | None = None
        self._indexed_refs: tuple[list[ConversationRef], dict[str, ConversationRef]] | None = None
        self._watch = WorkspaceWatch(workspace, feed=watch)

    def close(self) -> None:
        """Stop watching the workspace's folders."""
        with self._lock:
            self._watch.close()

    def list_conversations(self, limit: int = 20, query: str | None = None) -> ToolAnswer:
        with self._lock:
            _refs, changed = self._watch.now("listing")
            found = self._listing if changed is not None and not changed else None
            if found is None:
                found = listing.list_workspace(self.workspace, self.note, jobs=self.jobs)
                self._listing = found
                self._watch.settle("listing", None)
            items = [_conversation_item(listed) for listed in found if _own(listed.ref)]
            if query:
                wanted = query.casefold()
                items = [item for item in items if wanted in f"{item.id} {item.title or ''}".casefold()]
            items.sort(key=lambda item: (item.last_active or "", item.id), reverse=True)
            return _clean(
                history_tools.conversations_answer(items[: _bounded(limit)], len(items), self.limit), self.limit
            )

    def list_turns(self, conversation: str, first: int = 0) -> ToolAnswer:
        with self._lock:
            ref = self._ref(_argument(history_tools.conversation_argument(conversation)))
            loaded = self._load(ref)
            items = [_turn_item(ref.id, turn) for turn in loaded.stream.turns()]
            return _clean(
                history_tools.turns_answer(ref.display_id, loaded.title, items, max(0, first), self.limit), self.limit
            )

    def find_turns(
        self, query: str, limit: int = 10, conversation: str | None = None, scope: str | None = None
    ) -> ToolAnswer:
        with self._lock:
            listed, changed = self._watch.now("find")
            refs = None
            if conversation is not None:
                refs = [self._ref(_argument(history_tools.conversation_argument(conversation)), listed)]
            try:
                options = finding.find_options(
                    query, scope, regex=False, since=None, limit=_bounded(limit), jobs=self.jobs
                )
                result = finding.search(
                    self.workspace,
                    query,
                    options,
                    self.new_id,
                    refs=refs,
                    note=self.note,
                    listed=listed,
                    changed=changed,
                )
            except (QueryError, SearchUnavailable) as error:
                raise NotAnswered(
                    f"{error} (the query language is turnmark find's: see `turnmark find --help`)"
                ) from None
            self._watch.settle("find", None if refs is None else [ref.display_id for ref in refs])
            by_id = self._by_id(listed)
            hits = [_hit(hit) for hit in result.hits if (ref := by_id.get(hit.line.conversation)) is None or _own(ref)]
            return _clean(history_tools.hits_answer(query, hits, result.total, self.limit), self.limit)

    def read_turn(self, turn: str, max_chars: int = history_tools.READ_CHARS, start: int = 0) -> ToolAnswer:
        with self._lock:
            conversation, wanted = _argument(history_tools.turn_argument(turn))
            ref = self._ref(conversation)
            stream = self._load(ref).stream
            found = find_turn(stream.turns(), wanted)
            if found is None:
                raise NotAnswered(
                    f"no turn {wanted!r} in {ref.display_id} (list_turns with conversation={ref.display_id!r} "
                    "lists its turns)"
                )
            item = _turn_item(ref.id, found)
            prepared = ensure_first_turn_start(stream)
            transcript = turn_transcript(
                prepared.turns()[found.index], excluded_ids(prepared), max_message_chars=history_tools.WHOLE
            )
            room = max(200, min(max_chars, self.limit - 1_000))
            return _clean(history_tools.turn_answer(item, transcript, max(0, start), room), self.limit)

    def _by_id(self, listed: list[ConversationRef]) -> dict[str, ConversationRef]:
        """``listed`` by display ID (made again only when the watch listed the conversations again)."""
        if self._indexed_refs is None or self._indexed_refs[0] is not listed:
            self._indexed_refs = (listed, {ref.display_id: ref for ref in listed})
        return self._indexed_refs[1]

    def _ref(self, conversation: int, listed: list[ConversationRef] | None = None) -> ConversationRef:
        for ref in listed if listed is not None else self._watch.now("refs")[0]:
            if ref.id != conversation:
                continue
            if not _own(ref):
                raise NotAnswered(
                    f"{ref.display_id} is not read: its folder is a link (only the workspace's own conversation "
                    "folders and JP's user-local copies are read)"
                )
            return ref
        raise NotAnswered(
            f"no conversation {display_id(conversation)} in this workspace (list_conversations lists them)"
        )

    def _relative(self, message: str) -> str:
        """``message`` with the workspace's folders named from the workspace (a model has no use for where it is)."""
        silo = self.workspace.user_silo
        for folder, name in ((self.workspace.root, ""), *(((silo, "(JP's user-local copy)/"),) if silo else ())):
            message = message.replace(f"{folder}{os.sep}", name)
        return message

    def _load(self, ref: ConversationRef, tries: int = 3) -> LoadedConversation:
        """The conversation as its files are now: the one kept while they stay the same, else read again (again
        after a moment, ``tries`` times in all, when a file is replaced while it is read). A file that is a link
        is not read."""
        look = workspace_cache.look(ref)
        kept = self._kept
        if kept is not None and kept.loaded.ref.id == ref.id and kept.look == look:
            return kept.loaded
        self._kept = None
        try:
            loaded = conversations.read_conversation(ref, self.new_id, follow_links=False, count_keys=False)
        except (ConversationError, FileFault) as error:
            if workspace_cache.look(ref) == look or tries <= 1:
                raise NotAnswered(self._relative(str(error))) from error
            time.sleep(0.05)
            return self._load(self._ref(ref.id), tries - 1)
        if workspace_cache.look(ref) == look:
            self._kept = _Kept(look, loaded)
        return loaded


def _own(ref: ConversationRef) -> bool:
    """The conversation's folders are folders, not links to somewhere else."""
    return not any(os.path.islink(folder) for folder in ref.directories)


def _argument(result: Result[T, ArgumentRefused]) -> T:
    if isinstance(result, Failure):
        raise NotAnswered(result.failure().describe())
    return result.unwrap()


def _bounded(limit: int) -> int:
    return max(1, min(limit, MAX_LIMIT))


def _conversation_item(listed: listing.Listed) -> ConversationItem:
    row = listed.row
    return ConversationItem(
        listed.ref.display_id,
        row.title,
        row.last_activated_at,
        row.turns,
        row.summarized_turns,
        row.problem if row.problem is not None or row.facts is None else None,
    )


def _turn_item(conversation: int, turn: Turn) -> TurnItem:
    row = turn_row(turn)
    name = row.id if row.id is not None else str(turn.index)
    return TurnItem(
        history_tools.address(conversation, name), turn.index, row.id, turn_time(turn), row.label, row.label_source
    )


def _hit(hit: finding.Hit) -> Hit:
    line = hit.line
    name = line.turn_id if line.turn_id is not None else str(line.turn_index)
    turn = TurnItem(
        f"{line.conversation}:{name}", line.turn_index, line.turn_id, line.date, line.label, line.label_source
    )
    return Hit(turn, line.title, hit.snippet.text if hit.snippet else None, hit.score)


def _clean(answer: ToolAnswer, limit: int) -> ToolAnswer:
    """The answer with every form of a remembered key redacted, in its text and its data, and no control
    character raw in the data either."""
    data = _safe(answer.data)
    assert isinstance(data, dict)
    return history_tools.clamped(ToolAnswer(redacted(answer.text), data), limit)


def _safe(value: Json) -> Json:
    if isinstance(value, str):
        return redacted(visible(value))
    if isinstance(value, list):
        return [_safe(item) for item in value]
    if isinstance(value, dict):
        return {key: _safe(item) for key, item in value.items()}
    return value
