"""Writing a catch-up's answers back: under the conversation's lock, without waiting for it, into the stream
in memory while the files are the ones it came from, else into the files read again (only the summaries whose
turn still has the fingerprint the model was shown)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.summaries.catchup import (
    apply_summaries,
    catchup_stream,
)
from turnmark.core.summaries.facts import facts_of
from turnmark.core.summaries.packing import Packing
from turnmark.core.summaries.request import SummaryAnswer
from turnmark.shell.clock import monotonic
from turnmark.shell.collector import collector_paused
from turnmark.shell.errors import (
    ConversationError,
    ConversationLocked,
)
from turnmark.shell.storage import workspace_cache
from turnmark.shell.storage.conversations import (
    LoadedConversation,
    events_stamp,
    read_conversation,
    save_stream,
)
from turnmark.shell.storage.locking import ConversationLock, hold_lock
from turnmark.shell.storage.undo import saved_with_undo
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.storage.workspace_cache import ConversationRow
from turnmark.shell.usecases import listing
from turnmark.shell.usecases.catchup_files import FilesSeen, files_seen
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass
class SummaryWriter:
    """Writes one conversation's answers back and remembers how its files stand after each write."""

    ref: ConversationRef
    options: CatchupOptions
    new_id: IdSource
    model_id: str
    report: CatchupReport
    max_message_chars: int
    last_save_seconds: float = 0.0
    """How long the last save took."""
    _current: tuple[LoadedConversation, ConversationStream, FilesSeen] | None = None
    """The conversation as read, the stream written last (or as read, prepared) and the identity of the
    files holding it: a write that finds the same files applies its answers to that stream, unread."""

    def adopt(self, loaded: LoadedConversation, stream: ConversationStream, files: FilesSeen | None) -> None:
        """Start from ``loaded`` as read, prepared as ``stream``, when ``files`` (their identity around the read)
        says what was read is what the files hold; ``None``: the first write reads them again."""
        self._current = None if files is None else (loaded, stream, files)

    def _under_lock(self, lock: ConversationLock) -> tuple[LoadedConversation, ConversationStream]:
        """The conversation under ``lock``: the stream in memory while its files are the ones it came from,
        else read again (another process wrote: the fingerprints decide which answers still apply)."""
        if self._current is not None and self._current[2].unchanged(self.ref):
            loaded, stream, _ = self._current
            return replace(loaded, lock=lock), stream
        before = files_seen(self.ref)
        fresh = read_conversation(self.ref, self.new_id, lock)
        prepared = catchup_stream(fresh.stream)
        self.adopt(fresh, prepared, before if before is not None and before.holds(files_seen(self.ref)) else None)
        return fresh, prepared

    def _note(self, text: str) -> None:
        if text not in self.report.notes:
            self.report.notes.append(text)

    def write_back(self, packing: Packing, answer: SummaryAnswer) -> frozenset[str] | None:
        """Write the answer under the lock, for turns still as the model saw them: the turns written; ``None``
        to stop (locked, or the conversation cannot be read or saved: see the report)."""
        if not answer.summaries:
            return frozenset()
        fingerprints = {c.turn_id: c.fingerprint for c in packing.packed}
        try:
            with collector_paused(), hold_lock(self.ref) as lock:
                loaded, stream = self._under_lock(lock)
                applied = apply_summaries(
                    stream,
                    answer.summaries,
                    fingerprints,
                    self.model_id,
                    upgrade=self.options.upgrade,
                    max_message_chars=self.max_message_chars,
                )
                if applied.written:
                    started = monotonic()
                    save = partial(
                        save_stream, lock, loaded, applied.stream, announce=self._note, command=self.options.saved_by
                    )
                    undo_as = self.options.undo_as
                    saved = save() if undo_as is None else saved_with_undo(loaded, save, undo_as)
                    written = applied.stream
                    if saved.upgrade is not None:
                        self.report.upgrade, self.report.upgraded = saved.upgrade, True
                        written = written.upgraded()
                        loaded = replace(loaded, stream=written)
                    self.last_save_seconds = monotonic() - started
                    self.report.last_write = events_stamp(self.ref)
                    digests = saved.digests()
                    seen = files_seen(self.ref, digests)
                    self._current = None if seen is None else (loaded, written, seen)
                    if self.report.row is not None:
                        self.report.row = self._written_row(written, digests)
        except ConversationLocked as error:
            self.report.skipped = f"results not written: {error}; retried next time"
            self.report.locked = True
            return None
        except ConversationError as error:
            self.report.error = str(error)
            self.report.conversation_problem = True
            return None
        self.report.written.update({turn_id: answer.summaries[turn_id] for turn_id in applied.written})
        self.report.dropped.update(applied.dropped)
        return frozenset(applied.written)

    def _written_row(self, written: ConversationStream, digests: tuple[str, str] | None) -> ConversationRow | None:
        """The workspace-cache row of what was just written (``None``: not known without reading it: the
        stream carries what its read found, the IDs several entries had and the new IDs they were given, which
        a read of the file written no longer finds)."""
        if digests is None or self.report.row is None or written.duplicated_ids or written.id_repairs:
            return None
        return listing.written_row(self.report.row, facts_of(written), workspace_cache.look(self.ref), digests)
