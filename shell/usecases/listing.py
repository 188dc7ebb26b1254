"""``turnmark conversations`` and ``check --all``: each conversation's row, read again only when its files changed.

The rows come from the workspace cache (``storage/workspace_cache.py``): a conversation whose files keep
their identity is not read; one whose identity is in doubt is hashed; only a changed one is read and
parsed. What was read is written back under the cache's lock in a few transactions. A cache that cannot
be used (a link, a read-only disk, another writer holding it) costs a slower run, never a wrong row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from turnmark.shell.clock import now_ns
from turnmark.shell.errors import ConversationError, FileFault, WorkerDied, reraise_interrupt
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.storage import cache_db, workspace_cache
from turnmark.shell.storage.workspace import ConversationRef, Workspace, list_conversations
from turnmark.shell.storage.workspace_cache import ConversationRow, Facts
from turnmark.shell.usecases import parallel

with lazy_imports():
    from turnmark.core.links import check as link_check
    from turnmark.core.summaries import facts
    from turnmark.shell import entropy
    from turnmark.shell.storage import check_reports, conversations

Note = Callable[[str], None]


@dataclass(frozen=True)
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
    run it (the IDs a read assigns in memory never show in a row)."""
    checked = now_ns()
    seen = workspace_cache.look(ref)
    new_id = entropy.random_event_ids()
    try:
        if checks:
            loaded = conversations.read_conversation(ref, new_id, digest=True)
            stream = loaded.stream
            report = link_check.check_report(stream, stream.doubled_keys)
            found = facts.facts_of(stream)
            read: conversations.LoadedConversation | conversations.ReadFacts = loaded
        else:
            read = conversations.read_facts(ref, new_id, digest=True)
            found, report = read.facts, None
    except ConversationError as error:
        return workspace_cache.unreadable(ref, seen, checked, str(error))
    turns, summarized = found.summarized
    return workspace_cache.loaded_row(
        read,
        seen,
        checked,
        turns=turns,
        summarized_turns=summarized,
        facts=Facts(
            found.legacy,
            found.entries,
            found.unresolved_links,
            found.duplicated_ids,
            read.metadata_error,
            found.waiting,
        ),
        check=check_reports.stored(report) if report else None,
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


def _listed(
    db: cache_db.CacheDb | None,
    refs: Sequence[ConversationRef],
    note: Note,
    *,
    checks: bool,
    jobs: int | None,
    on_read: parallel.OnRead,
) -> list[Listed]:
    rows = workspace_cache.stored(db.connection) if db is not None else {}
    found: dict[str, ConversationRow] = {}
    reports: dict[str, link_check.CheckReport] = {}
    written: list[tuple[ConversationRow, bool]] = []
    unread: list[ConversationRef] = []
    for ref in refs:
        row = rows.get(ref.display_id)
        report = _stored_report(row, checks)
        kept = workspace_cache.kept(ref, row, _usable(row, checks, report))
        if kept is None:
            unread.append(ref)
            continue
        found[ref.display_id] = kept[0]
        if report is not None:
            reports[ref.display_id] = report
        if kept[1]:
            written.append(kept)
    on_read(0, len(unread))
    reads = parallel.each(partial(_read, checks=checks), unread, jobs)
    try:
        for done, (ref, row) in enumerate(zip(unread, reads, strict=True), 1):
            found[ref.display_id] = row
            written.append((row, False))
            on_read(done, len(unread))
    except (KeyboardInterrupt, WorkerDied):
        _store(db, written, set(), note)
        raise
    _store(db, written, set(rows) - {ref.display_id for ref in refs}, note)
    return [Listed(ref, found[ref.display_id], reports.get(ref.display_id)) for ref in refs]


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
    try:
        db = cache_db.open_cache(workspace)
    except (FileFault, sqlite3.Error) as error:
        reraise_interrupt(error)
        note(f"{error}; listing without the workspace cache (slower)")
        return _listed(None, refs, note, checks=checks, jobs=jobs, on_read=on_read)
    assert db is not None
    with db:
        for line in db.notes:
            note(line)
        try:
            return db.guarded(lambda: _listed(db, refs, note, checks=checks, jobs=jobs, on_read=on_read))
        except sqlite3.Error as error:
            reraise_interrupt(error)
            note(f"{error}; listing without the workspace cache this time (slower)")
    return _listed(None, refs, note, checks=checks, jobs=jobs, on_read=on_read)


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
