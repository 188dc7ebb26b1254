"""``turnmark conversations`` and ``check --all``: each conversation's row, read again only when its files changed.

The rows come from the workspace cache (``storage/workspace_cache.py``): a conversation whose files keep
their identity is not read; one whose identity is in doubt is hashed; only a changed one is read and
parsed. What was read is written back under the cache's lock in a few transactions. A cache that cannot
be used (a link, a read-only disk, another writer holding it) costs a slower run, never a wrong row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

from turnmark.core.stream.conversation_ids import display_id
from turnmark.core.stream.quick_init import quick_init
from turnmark.shell.clock import now_ns
from turnmark.shell.collector import collector_paused
from turnmark.shell.errors import ConversationError, FileFault, WorkerDied, reraise_interrupt
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.storage import cache_db, listing_snapshot, workspace_cache
from turnmark.shell.storage.listing_snapshot import PrintedRow
from turnmark.shell.storage.workspace import (
    ConversationRef,
    Folder,
    Workspace,
    conversation_folders,
    list_conversations,
    ref_of,
)
from turnmark.shell.storage.workspace_cache import ConversationRow, Facts, Look
from turnmark.shell.usecases import parallel

with lazy_imports():
    from turnmark.core.links import check as link_check
    from turnmark.core.summaries import facts
    from turnmark.shell import entropy
    from turnmark.shell.storage import check_reports, conversations

Note = Callable[[str], None]
_T = TypeVar("_T")


@quick_init
@dataclass(frozen=True, slots=True)
class Listed:
    """A conversation as listed: its row (with ``facts``, or a ``problem`` when it cannot be read)."""

    ref: ConversationRef
    row: ConversationRow
    checked: link_check.CheckReport | None = None
    """``row.check`` already read back (a row the cache kept was read back to be kept)."""

    def report(self) -> link_check.CheckReport | None:
        """``check``'s report, when the listing was made with ``checks``."""
        if self.checked is not None or self.row.check is None:
            return self.checked
        return check_reports.read_back(self.row.check)


def _read(ref: ConversationRef, checks: bool) -> ConversationRow:
    """Read one conversation for its row (with ``checks``, ``check``'s full report too); a worker process may
    run it (the IDs a read assigns in memory never show in a row). A settled ``events.json`` is not hashed
    (a fifth of a cold listing): its row holds while its identity does, and a new identity is read again; a
    file too young to trust by its identity is, so that the next listing can verify it by its bytes."""
    checked = now_ns()
    seen = workspace_cache.look(ref)
    new_id = entropy.random_event_ids()
    try:
        if checks:
            loaded = conversations.read_conversation(ref, new_id, digest=True)
            stream = loaded.stream
            return row_of(
                loaded, facts.facts_of(stream), seen, checked, link_check.check_report(stream, stream.doubled_keys)
            )
        hashed = workspace_cache.hashed_when_read(seen, checked)
        read = conversations.read_facts(ref, new_id, digests=True, hash_events=hashed, ids=False)
        return row_of(read, read.facts, seen, checked)
    except ConversationError as error:
        return workspace_cache.unreadable(ref, seen, checked, str(error))


def _facts(found: facts.ConversationFacts, metadata_error: str | None) -> Facts:
    return Facts(
        found.legacy, found.entries, found.unresolved_links, found.duplicated_ids, metadata_error, found.waiting
    )


def row_of(
    read: conversations.LoadedConversation | conversations.ReadFacts,
    found: facts.ConversationFacts,
    seen: workspace_cache.Look,
    checked: int,
    report: link_check.CheckReport | None = None,
) -> ConversationRow:
    """The row of a conversation read (with the facts ``found`` in it, and ``check``'s ``report``) after
    ``seen`` was taken at ``checked``."""
    turns, summarized = found.summarized
    return workspace_cache.loaded_row(
        read,
        seen,
        checked,
        turns=turns,
        summarized_turns=summarized,
        facts=_facts(found, read.metadata_error),
        check=check_reports.stored(report) if report else None,
    )


def written_row(
    row: ConversationRow, found: facts.ConversationFacts, after: workspace_cache.Look, digests: tuple[str, str]
) -> ConversationRow | None:
    """The row of a conversation turnmark just saved (``after`` looked at under the lock, since the save;
    ``digests``: of the ``events.json`` and ``base_config.json`` written): ``row``, made from its read, with the
    files written and the facts ``found`` in the stream written. The metadata and the time stay the read's: the
    files written are younger than that time, so the next listing hashes them before it trusts this row.
    ``None`` for a row that is not a read's."""
    if row.facts is None or row.problem is not None or after.events is None or after.base_config is None:
        return None
    turns, summarized = found.summarized
    return row._replace(
        directory=after.directory,
        events=workspace_cache.Identity(after.events, digests[0]),
        base_config=workspace_cache.Identity(after.base_config, digests[1]),
        turns=turns,
        summarized_turns=summarized,
        facts=_facts(found, row.facts.metadata_error),
        check=None,
    )


def _stored_report(row: ConversationRow | None, checks: bool) -> link_check.CheckReport | None:
    """With ``checks``, the report a readable row keeps, when it reads back whole."""
    if not checks or row is None or row.problem is not None or row.check is None:
        return None
    return check_reports.read_back(row.check)


def _usable(row: ConversationRow | None, checks: bool, report: link_check.CheckReport | None) -> bool:
    """A row to keep as it is: a problem, or facts (and with ``checks``, its ``report`` read back whole)."""
    if row is None or row.problem is not None:
        return row is not None
    return row.facts is not None and (report is not None or not checks)


def _write(db: cache_db.CacheDb, written: Sequence[tuple[ConversationRow, bool]], gone: set[str]) -> None:
    with db.writing(), cache_db.batch(db.connection) as checkpoint:
        for count, (row, touched) in enumerate(written, 1):
            if touched:
                workspace_cache.touch(db.connection, row)
            else:
                workspace_cache.save(db.connection, row)
            if count % cache_db.BATCH == 0:
                checkpoint()
        if gone:
            workspace_cache.forget_rows(db.connection, gone)


def _store(
    db: cache_db.CacheDb | None, written: Sequence[tuple[ConversationRow, bool]], gone: set[str], note: Note
) -> None:
    """Write what was read (after Ctrl-C too: a first listing of a big workspace goes on where it stopped)."""
    if db is None or not (written or gone):
        return
    try:
        _write(db, written, gone)
    except (cache_db.CacheBusy, sqlite3.OperationalError) as error:
        reraise_interrupt(error)
        if isinstance(error, sqlite3.OperationalError) and cache_db.damaged(error):
            raise
        note(f"the workspace cache was not updated ({error}); it is next time")


@dataclass
class _Kept:
    """What the cache already knows: the rows kept (with ``check``'s reports read back), those to write back
    (touched: the same bytes under a new identity), and the conversations to read."""

    found: dict[str, ConversationRow]
    reports: dict[str, link_check.CheckReport]
    written: list[tuple[ConversationRow, bool]]
    unread: list[ConversationRef]
    stored: set[str]
    """Every conversation the cache had a row for."""


def _kept(db: cache_db.CacheDb | None, refs: Sequence[ConversationRef], *, checks: bool, some: bool = False) -> _Kept:
    """``some``: ``refs`` are a few of the workspace's conversations (their rows fetched one by one)."""
    with collector_paused():
        if db is None:
            rows: dict[str, ConversationRow] = {}
        elif some:
            rows = workspace_cache.stored(db.connection, among=[ref.display_id for ref in refs])
        else:
            rows = workspace_cache.stored(db.connection)
        names = workspace_cache.stored_names(db.connection) if db is not None and some else set(rows)
        kept = _Kept({}, {}, [], [], names)
        for ref in refs:
            name = ref.display_id
            row = rows.get(name)
            report = _stored_report(row, checks)
            still = workspace_cache.kept(ref, row, _usable(row, checks, report))
            if still is None:
                kept.unread.append(ref)
                continue
            kept.found[name] = still[0]
            if report is not None:
                kept.reports[name] = report
            if still[1]:
                kept.written.append(still)
    return kept


def _listed(
    db: cache_db.CacheDb | None,
    refs: Sequence[ConversationRef],
    note: Note,
    *,
    checks: bool,
    jobs: int | None,
    on_read: parallel.OnRead,
    alive: Collection[str] | None = None,
) -> list[Listed]:
    """``alive``: every conversation of the workspace when ``refs`` are a few of them."""
    known = _kept(db, refs, checks=checks, some=alive is not None and len(refs) <= _FEW)
    found, written, unread = known.found, known.written, known.unread
    on_read(0, len(unread))
    reads = parallel.each(partial(_read, checks=checks), unread, jobs, parallel.QUICK)
    try:
        for done, (ref, row) in enumerate(zip(unread, reads, strict=True), 1):
            found[ref.display_id] = row
            written.append((row, False))
            on_read(done, len(unread))
    except (KeyboardInterrupt, WorkerDied):
        _store(db, written, set(), note)
        raise
    names = [ref.display_id for ref in refs]
    _store(db, written, known.stored.difference(names if alive is None else alive), note)
    reports = known.reports
    with collector_paused():
        return [Listed(ref, found[name], reports.get(name)) for ref, name in zip(refs, names, strict=True)]


_FEW = 64
"""Up to this many conversations' rows are fetched one by one rather than all at once."""


def _cached(
    workspace: Workspace,
    note: Note,
    use: Callable[[cache_db.CacheDb | None], _T],
    unusable: Callable[[BaseException, str], None],
) -> _T:
    """``use`` with the workspace cache open (its notes said first), or ``use(None)`` where it cannot be
    opened or fails part-way, after ``unusable(error, when)`` (``when``: "" or " this time")."""
    try:
        db = cache_db.open_cache(workspace)
    except (FileFault, sqlite3.Error) as error:
        reraise_interrupt(error)
        unusable(error, "")
        return use(None)
    if db is None:
        return use(None)
    with db:
        for line in db.notes:
            note(line)
        try:
            return db.guarded(lambda: use(db))
        except sqlite3.Error as error:
            reraise_interrupt(error)
            unusable(error, " this time")
    return use(None)


def _listing_without_cache(note: Note, error: BaseException, when: str) -> None:
    note(f"{error}; listing without the workspace cache{when} (slower)")


def list_workspace(
    workspace: Workspace,
    note: Note,
    *,
    checks: bool = False,
    jobs: int | None = None,
    on_read: parallel.OnRead = parallel.no_progress,
) -> list[Listed]:
    """Every conversation of ``workspace`` with its row (with ``checks``: and ``check``'s report), through the
    workspace cache; the conversations it lacks are read on ``jobs`` processes (``None``: one per core), with
    ``on_read(done, total)`` after each."""
    refs = list_conversations(workspace)
    return _cached(
        workspace,
        note,
        lambda db: _listed(db, refs, note, checks=checks, jobs=jobs, on_read=on_read),
        partial(_listing_without_cache, note),
    )


class Layout(Protocol):
    """How ``conversations`` prints a listing (the CLI's); ``version`` names it in the listing's snapshot and
    changes whenever what it prints for the same rows does."""

    version: str

    def row(self, listed: Listed) -> PrintedRow: ...

    def text(self, rows: Sequence[PrintedRow]) -> str: ...

    def fits(self, row: PrintedRow) -> bool:
        """Whether ``row`` (from a snapshot) has the shape this layout prints (else it is listed again)."""


@dataclass(frozen=True)
class Printed:
    """A listing as printed: its ``text`` (``None`` when a row prints on stderr too, or ``rows`` were not asked
    for) and its ``rows`` (``None`` when only the text was asked for and the snapshot had it)."""

    text: str | None
    rows: list[PrintedRow] | None


def printed_listing(
    workspace: Workspace,
    note: Note,
    layout: Layout,
    *,
    text_only: bool = False,
    jobs: int | None = None,
    on_read: parallel.OnRead = parallel.no_progress,
) -> Printed:
    """``list_workspace`` as ``layout`` prints it, through the listing's snapshot (``storage/listing_snapshot.py``):
    when every conversation's files look as they did, what was printed then (with ``text_only``, its text alone);
    else the rows of the conversations whose files look the same are taken from it, the others listed
    (``list_workspace``'s way), and the snapshot kept again."""
    with collector_paused():
        folders = conversation_folders(workspace)
        seen = list(zip(folders, workspace_cache.looks(folders, workspace), strict=True))
    return _cached(
        workspace,
        note,
        lambda db: _printed(
            db,
            workspace=workspace,
            seen=seen,
            layout=layout,
            note=note,
            text_only=text_only,
            jobs=jobs,
            on_read=on_read,
        ),
        partial(_listing_without_cache, note),
    )


def _printed(
    db: cache_db.CacheDb | None,
    *,
    workspace: Workspace,
    seen: Sequence[tuple[Folder, Look]],
    layout: Layout,
    note: Note,
    text_only: bool,
    jobs: int | None,
    on_read: parallel.OnRead,
) -> Printed:
    root = str(workspace.root)
    looks = listing_snapshot.digest(root, seen)
    snapshot = None if db is None or looks is None else listing_snapshot.read(db.connection, root, layout.version)
    if snapshot is not None and snapshot.looks == looks and text_only and snapshot.text is not None:
        on_read(0, 0)
        return Printed(snapshot.text, None)
    before = listing_snapshot.rows(db.connection, root, layout.version) if db is not None and snapshot else None
    earlier = {kept.folder[0]: kept for kept in before or () if layout.fits(kept.row)}
    rows: dict[int, listing_snapshot.Kept] = {}
    changed: list[Folder] = []
    for folder, look in seen:
        kept = earlier.get(folder[0])
        if kept is not None and kept.folder == folder and kept.look == look:
            rows[folder[0]] = kept
        else:
            changed.append(folder)
    if not changed and before is not None and len(before) == len(seen):
        on_read(0, 0)
        return Printed(None, [rows[folder[0]].row for folder, _ in seen])
    alive = [display_id(folder[0]) for folder, _ in seen] if rows else None
    at = dict(seen)
    refs = [ref_of(folder, workspace) for folder in changed]
    for listed, folder in zip(
        _listed(db, refs, note, checks=False, jobs=jobs, on_read=on_read, alive=alive), changed, strict=True
    ):
        look = at[folder]
        holds = workspace_cache.holds(listed.row, look)
        rows[folder[0]] = listing_snapshot.Kept(folder, look if holds else None, layout.row(listed))
    kept_rows = [rows[folder[0]] for folder, _ in seen]
    printed = [item.row for item in kept_rows]
    text = None if any(row.chrome is not None for row in printed) else layout.text(printed)
    if db is not None:
        _keep(db, root, layout.version, kept_rows, text)
    return Printed(text, printed)


def _keep(db: cache_db.CacheDb, root: str, layout: str, kept: list[listing_snapshot.Kept], text: str | None) -> None:
    """Keep the listing's snapshot. It only saves time: a cache another process is writing, or one that cannot
    be written, keeps the one it has (the next listing tries again)."""
    try:
        with db.writing(wait=0), cache_db.batch(db.connection):
            listing_snapshot.write(db.connection, root, layout, kept, text)
    except (cache_db.CacheBusy, sqlite3.OperationalError) as error:
        reraise_interrupt(error)
        if isinstance(error, sqlite3.OperationalError) and cache_db.damaged(error):
            raise


@dataclass(frozen=True)
class Known:
    """What the workspace cache knows before a run that reads the other conversations itself (``summarize
    --all`` makes their rows from the bytes its catch-ups read and write, ``CatchupOptions.rows``)."""

    listed: dict[str, Listed]
    """The conversations whose row the cache kept (their files unchanged), by display ID."""
    unread: list[ConversationRef]
    touched: list[tuple[ConversationRow, bool]]
    """Rows kept under their files' new identity (the same bytes): written back with the run's rows."""
    gone: set[str]
    """Conversations the cache has a row for that are gone."""


def known(workspace: Workspace, note: Note) -> Known:
    """The rows the workspace cache keeps for ``workspace``'s conversations, and the conversations it lacks
    (none is read); a cache that cannot be used leaves every conversation unread."""
    refs = list_conversations(workspace)
    kept = _cached(
        workspace,
        note,
        lambda db: _kept(db, refs, checks=False),
        lambda error, when: note(f"{error}; working without the workspace cache{when} (slower)"),
    )
    names = [ref.display_id for ref in refs]
    found = kept.found
    listed = {name: Listed(ref, found[name]) for ref, name in zip(refs, names, strict=True) if name in found}
    return Known(listed, kept.unread, kept.written, kept.stored.difference(names))


def store(workspace: Workspace, known: Known, rows: Sequence[ConversationRow], note: Note) -> None:
    """Write the rows a run made (and those ``known`` touched) to the workspace cache, and forget the
    conversations that are gone; a cache that cannot be written is noted (it is next time)."""
    written = [*known.touched, *((row, False) for row in rows)]
    if written or known.gone:
        _cached(
            workspace,
            note,
            lambda db: _store(db, written, known.gone, note),
            lambda error, _when: note(f"the workspace cache was not updated ({error}); it is next time"),
        )


def idle(listed: Sequence[Listed], *, upgrade: bool) -> set[str]:
    """The listed conversations in which no turn can want a summary (``summarize --all`` skips them unread)."""
    return {
        item.ref.display_id
        for item in listed
        if item.row.facts is not None and not item.row.facts.waiting.may_need_summaries(upgrade=upgrade)
    }


def settled(workspace: Workspace, note: Note, *, upgrade: bool, jobs: int | None = None) -> set[str]:
    """The conversations of ``workspace`` in which no turn can want a summary, through the workspace cache."""
    return idle(list_workspace(workspace, note, jobs=jobs), upgrade=upgrade)
