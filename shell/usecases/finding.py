"""``turnmark find``: bring the index up to date for the conversations that changed, then search it.

A conversation is read again only when its files are not the ones indexed (``core/search/freshness``);
its turns' rows are rewritten only where their document changed. With ``--regex`` the conversations
are read and scanned instead, exactly, without the index. When the index file cannot be used (a link
on its way, a read-only disk, another writer holding it too long) the search runs on an index built in
memory for this run, with a note: slower, never a wrong answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from turnmark.core.search.documents import TurnDocument, TurnLine, conversation_documents
from turnmark.core.search.freshness import Freshness
from turnmark.core.search.scopes import SCOPES, WEIGHTS, by_weight, index_columns, parse_scopes
from turnmark.core.search.snippets import Pattern, Snippet, best_snippet, regex_marked, snippet
from turnmark.core.search.terms import Query, parse_query, parse_since
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.clock import now_ns, now_timestamp
from turnmark.shell.entropy import random_event_ids
from turnmark.shell.errors import (
    BadRows,
    ConversationError,
    FileFault,
    QueryError,
    SearchUnavailable,
    reraise_interrupt,
)
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.storage import cache_db, search_index, workspace_cache
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import ConversationRef, Workspace, list_conversations
from turnmark.shell.storage.workspace_cache import ConversationRow
from turnmark.shell.usecases import parallel

with lazy_imports():
    import re2

Note = Callable[[str], None]
Changed = Collection[str] | None
"""The display IDs of the only conversations whose files may have changed (``None``: any may have)."""


def _ignore(_message: str) -> None:
    return None


@dataclass(frozen=True)
class FindOptions:
    scopes: tuple[str, ...]
    limit: int = 20
    since: int | None = None
    regex: Pattern | None = None
    jobs: int | None = None
    """Processes that read the conversations the index lacks (``None``: one per core)."""


@dataclass(frozen=True)
class Hit:
    """A turn that matched, with the text around its best match."""

    line: TurnLine
    score: float
    snippet: Snippet | None

    def to_json(self) -> JsonObject:
        found = self.snippet
        return {
            **self.line.to_json(),
            "scope": found.scope if found else None,
            "event_id": found.event_id if found else None,
            "excluded": found.excluded if found else False,
            "snippet": found.text if found else None,
            "marks": [list(mark) for mark in found.marks()] if found else [],
            "score": round(self.score, 6),
        }


@dataclass
class FindResult:
    hits: list[Hit]
    total: int
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Conversations that could not be read: display ID and the one-line reason."""
    reindexed: int = 0

    def to_json(self, text: str, options: FindOptions, since: str | None) -> JsonObject:
        """``find --format json``'s document (``text`` and ``since`` as given)."""
        return {
            "query": text,
            "scopes": list(options.scopes),
            "regex": options.regex is not None,
            "since": since,
            "total": self.total,
            "hits": [hit.to_json() for hit in self.hits],
            "skipped": [{"conversation": conversation, "error": error} for conversation, error in self.skipped],
        }


def find_options(
    text: str, scopes: str | None, *, regex: bool, since: str | None, limit: int, jobs: int | None
) -> FindOptions:
    """The options of a search as the command line gives them; a ``QueryError`` names what is wrong."""
    chosen = parse_scopes(scopes)
    if not isinstance(chosen, tuple):
        raise QueryError(chosen.describe())
    moment = None
    if since is not None:
        parsed = parse_since(since, now_timestamp())
        moment = parsed.value_or(None)
        if moment is None:
            raise QueryError(parsed.failure().describe())
    return FindOptions(chosen, limit, moment, _pattern(text) if regex else None, jobs)


def _pattern(text: str) -> Pattern:
    """``--regex``'s QUERY compiled by RE2 (linear time: no pattern can make a scan hang), or why it cannot be."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(text, options=options)  # type: ignore[no-any-return]
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else error
        raise QueryError(f"regex: {reason} (RE2 syntax: no backreferences or lookarounds)") from None


def search(
    workspace: Workspace,
    text: str,
    options: FindOptions,
    new_id: IdSource,
    *,
    refs: Sequence[ConversationRef] | None = None,
    note: Note = _ignore,
    on_read: parallel.OnRead = parallel.no_progress,
    listed: Sequence[ConversationRef] | None = None,
    changed: Changed = None,
) -> FindResult:
    """``find``: a scan for ``options.regex``, else the index searched for the query ``text``."""
    if options.regex is not None:
        return scan(workspace, options, new_id, refs)
    parsed = parse_query(text)
    query = parsed.value_or(None)
    if query is None:
        raise QueryError(parsed.failure().describe())
    return find(workspace, query, options, refs=refs, note=note, on_read=on_read, listed=listed, changed=changed)


# Indexing -------------------------------------------------------------------------------------------


def _read_documents(
    ref: ConversationRef, scopes: Collection[str]
) -> tuple[ConversationRow, Sequence[search_index.Indexed]]:
    """Read one conversation for its row and its turns' documents of the ``scopes`` the index keeps, each with
    its digest (a worker process may run it: the IDs a read assigns in memory are derived from the entries,
    never new); a settled ``events.json`` is not hashed, as a listing's read."""
    checked = now_ns()
    seen = workspace_cache.look(ref)
    hashed = workspace_cache.hashed_when_read(seen, checked)
    try:
        loaded = read_conversation(ref, random_event_ids(), digest=True, hash_events=hashed, count_keys=False)
    except ConversationError as error:
        return workspace_cache.unreadable(ref, seen, checked, str(error)), ()
    documents = conversation_documents(loaded.stream, loaded.title, scopes)
    summarized = sum(1 for document in documents if document.label_source == "summary")
    row = workspace_cache.loaded_row(loaded, seen, checked, turns=len(documents), summarized_turns=summarized)
    return row, [search_index.Indexed.of(document) for document in documents]


def _stale(row: ConversationRow | None, seen: workspace_cache.Look) -> Freshness:
    """Whether ``find`` must look again: the files changed, or the turn rows were not taken from them."""
    decision = workspace_cache.decide(row, seen)
    return Freshness.CHANGED if decision is Freshness.SAME and row is not None and not row.indexed else decision


def _must_read(connection: sqlite3.Connection, ref: ConversationRef, row: ConversationRow | None) -> bool:
    """Whether the conversation must be read again (under the index's lock); the same bytes under a new
    identity only update the identity."""
    kept = workspace_cache.kept(ref, row, row is not None and row.indexed)
    if kept is not None and kept[1]:
        workspace_cache.touch(connection, kept[0])
    return kept is None


def _bring_up_to_date(
    db: cache_db.CacheDb,
    refs: Sequence[ConversationRef],
    *,
    everything: bool,
    jobs: int | None,
    on_read: parallel.OnRead,
    changed: Changed = None,
) -> tuple[int, dict[str, ConversationRow]]:
    """Re-index what changed among ``refs`` (and, for ``everything``, drop what is gone); the conversations
    to read are read on ``jobs`` processes while this one writes what they found. ``changed``: the display IDs
    of the only conversations whose files may have changed since the last call that looked at every one (a
    long-lived caller that watches the folders knows; ``None``: look at each); those the index has no turn rows
    of (new, or the index emptied: by another process, a rebuild, a wider scope) are looked at too.

    The number of turn rows written, and the conversations as the index now holds them (with ``changed``: the
    looked-at ones and those with a problem).
    """
    listed = {ref.display_id for ref in refs}
    if changed is not None:
        marks = workspace_cache.indexed_marks(db.connection)
        changed = {*changed, *(name for name in listed if not marks.get(name))}
        rows = workspace_cache.stored(db.connection, among=changed)
        known: Collection[str] = marks
    else:
        rows = workspace_cache.stored(db.connection)
        known = rows
    stale = [
        ref
        for ref in refs
        if (changed is None or ref.display_id in changed)
        and _stale(rows.get(ref.display_id), workspace_cache.look(ref)) is not Freshness.SAME
    ]
    missing = set(known) - listed if everything else set()
    if not stale and not missing:
        return 0, rows if changed is None else _rows_held(db.connection, changed)
    written = 0
    with db.writing(), cache_db.batch(db.connection) as checkpoint:
        rows = workspace_cache.stored(db.connection, among=changed)
        unread = [ref for ref in stale if _must_read(db.connection, ref, rows.get(ref.display_id))]
        on_read(0, len(unread))
        read = partial(_read_documents, scopes=search_index.kept_scopes(db.connection))
        for count, (row, documents) in enumerate(parallel.each(read, unread, jobs, parallel.QUICK), 1):
            written += search_index.record(db.connection, row, documents)
            on_read(count, len(unread))
            if count % cache_db.BATCH == 0:
                checkpoint()
        if missing:
            search_index.forget(db.connection, missing)
    return written, _rows_held(db.connection, changed)


def _rows_held(connection: sqlite3.Connection, changed: Changed) -> dict[str, ConversationRow]:
    """The rows ``_bring_up_to_date`` answers with: every one, or (with ``changed``) those it looked at and
    those with a problem."""
    if changed is None:
        return workspace_cache.stored(connection)
    return {**workspace_cache.with_problems(connection), **workspace_cache.stored(connection, among=changed)}


def _skipped(rows: dict[str, ConversationRow], refs: Sequence[ConversationRef]) -> list[tuple[str, str]]:
    return [
        (ref.display_id, problem)
        for ref in refs
        if (row := rows.get(ref.display_id)) is not None and (problem := row.problem) is not None
    ]


def _open(workspace: Workspace, note: Note) -> cache_db.CacheDb:
    """The workspace's index, or one in memory (with a note saying why)."""
    try:
        db = cache_db.open_cache(workspace)
    except (FileFault, sqlite3.Error) as error:
        reraise_interrupt(error)
        note(f"{error}; searching without the index file (slower)")
        return cache_db.memory_cache()
    assert db is not None
    if db.created or not search_index.built(db.connection):
        note(f"building the search index {db.path} (once; later searches read only what changed)")
    for line in db.notes:
        note(line)
    return db


def _search(
    db: cache_db.CacheDb,
    refs: Sequence[ConversationRef],
    *,
    everything: bool,
    query: Query,
    options: FindOptions,
    note: Note,
    on_read: parallel.OnRead,
    retried: bool = False,
    changed: Changed = None,
) -> FindResult:
    """Search ``db``; turn rows not of the types turnmark writes are read again once (``retried`` then)."""
    if index_columns(options.scopes) == SCOPES and not search_index.all_scopes(db.connection):
        with db.writing():
            search_index.include_all_scopes(db.connection)
        if not db.in_memory:
            note("indexing tool results and reasoning too, for --in (once; the index keeps them from now on)")
    written, stored = _bring_up_to_date(
        db, refs, everything=everything, jobs=options.jobs, on_read=on_read, changed=changed
    )
    try:
        hits, total = _matched(db, everything=everything, refs=refs, query=query, options=options)
    except BadRows as bad:
        if retried or db.in_memory:
            raise sqlite3.OperationalError(f"turn rows of {bad} are not of the types turnmark writes") from None
        with db.writing(), cache_db.batch(db.connection):
            search_index.unindex(db.connection, bad.conversations)
        again = _search(
            db, refs, everything=everything, query=query, options=options, note=note, on_read=on_read, retried=True
        )
        return replace(again, reindexed=again.reindexed + written)
    return FindResult(hits, total, _skipped(stored, refs), written)


def _matched(
    db: cache_db.CacheDb,
    *,
    everything: bool,
    refs: Sequence[ConversationRef],
    query: Query,
    options: FindOptions,
) -> tuple[list[Hit], int]:
    """The hits and their number; ``BadRows`` when a turn row is not of the types turnmark writes."""
    match = query.match(options.scopes)
    only = [] if everything else sorted(ref.display_id for ref in refs)
    try:
        rows = search_index.search(
            db.connection, match, options.scopes, since=options.since, conversations=only, limit=options.limit
        )
        total = search_index.count(db.connection, match, options.scopes, options.since, only)
    except sqlite3.OperationalError as error:
        if "fts5" in str(error):
            raise QueryError(f"query: {error} (position unknown)") from None
        raise
    order = by_weight(options.scopes)
    hits = []
    for row in rows:
        columns = search_index.highlighted(db.connection, match, row.rowid, options.scopes, order)
        spans = [row.spans[SCOPES.index(scope)] for scope in order]
        found = best_snippet(list(zip(order, columns, spans, strict=True)))
        hits.append(Hit(row.line, row.score, found))
    return hits, total


def find(
    workspace: Workspace,
    query: Query,
    options: FindOptions,
    *,
    refs: Sequence[ConversationRef] | None = None,
    note: Note = _ignore,
    on_read: parallel.OnRead = parallel.no_progress,
    listed: Sequence[ConversationRef] | None = None,
    changed: Changed = None,
) -> FindResult:
    """Search the workspace's turns (``refs`` only, when given) through the index; ``on_read(done, total)``
    follows the conversations read into it. A long-lived caller that watches the folders gives the workspace's
    conversations as ``listed`` and ``changed`` as ``_bring_up_to_date`` takes it."""
    if not cache_db.fts5_available():
        raise SearchUnavailable(
            f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5 full-text index, which find needs; "
            "find --regex searches without it"
        )
    everything = refs is None
    chosen = list(refs if refs is not None else listed if listed is not None else list_conversations(workspace))
    db = _open(workspace, note)
    try:
        try:
            return db.guarded(
                lambda: _search(
                    db,
                    chosen,
                    everything=everything,
                    query=query,
                    options=options,
                    note=note,
                    on_read=on_read,
                    changed=changed,
                )
            )
        except (cache_db.CacheBusy, sqlite3.OperationalError) as error:
            reraise_interrupt(error)
            if db.in_memory:
                raise
            note(f"{error}; searching without the index file this time (slower)")
    finally:
        db.close()
    with cache_db.memory_cache() as memory:
        return _search(memory, chosen, everything=everything, query=query, options=options, note=note, on_read=on_read)


# The scan (--regex) ------------------------------------------------------------------------------


def _scan_document(document: TurnDocument, pattern: Pattern, scopes: Sequence[str]) -> Snippet | None:
    for scope in by_weight(scopes):
        column = SCOPES.index(scope)
        marked = regex_marked(document.texts[column], pattern)
        if marked is not None:
            return snippet(scope, marked, document.spans[column])
    return None


def scan(
    workspace: Workspace,
    options: FindOptions,
    new_id: IdSource,
    refs: Sequence[ConversationRef] | None = None,
) -> FindResult:
    """``--regex``: read every conversation and match the pattern in each searched scope, exactly."""
    assert options.regex is not None
    chosen = list_conversations(workspace) if refs is None else list(refs)
    hits: list[tuple[tuple[float, int], Hit]] = []
    skipped: list[tuple[str, str]] = []
    for ref in chosen:
        try:
            loaded = read_conversation(ref, new_id, count_keys=False)
        except ConversationError as error:
            skipped.append((ref.display_id, str(error)))
            continue
        for document in conversation_documents(loaded.stream, loaded.title):
            if options.since is not None and (document.started_at is None or document.started_at < options.since):
                continue
            found = _scan_document(document, options.regex, options.scopes)
            if found is None:
                continue
            weight = WEIGHTS[found.scope]
            hit = Hit(document.line(ref.display_id, loaded.title), weight, found)
            hits.append(((-weight, -(document.started_at or 0)), hit))
    hits.sort(key=lambda pair: pair[0])
    return FindResult([hit for _, hit in hits[: options.limit]], len(hits), skipped)


# Keeping it fresh from other commands --------------------------------------------------------------


def refresh_conversation(ref: ConversationRef) -> str | None:
    """After a write (``watch``, ``summary set``): re-index this conversation's changed turns, if an index exists.

    Never waits for another writer and never fails the command: a problem is returned as one line.
    """
    workspace = ref.workspace
    if workspace is None:
        return None
    try:
        db = cache_db.open_cache(workspace, create=False)
        if db is None:
            return None
        with db:
            db.guarded(lambda: _refresh_now(db, ref))
    except cache_db.CacheBusy:
        return None
    except (FileFault, sqlite3.Error) as error:
        reraise_interrupt(error)
        return f"the search index was not updated: {error}"
    return None


def _refresh_now(db: cache_db.CacheDb, ref: ConversationRef) -> int:
    conversation = ref.display_id
    if (
        _stale(workspace_cache.stored(db.connection, conversation).get(conversation), workspace_cache.look(ref))
        is Freshness.SAME
    ):
        return 0
    with db.writing(wait=0):
        if not _must_read(db.connection, ref, workspace_cache.stored(db.connection, conversation).get(conversation)):
            return 0
        return search_index.record(db.connection, *_read_documents(ref, search_index.kept_scopes(db.connection)))
