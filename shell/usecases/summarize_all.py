"""``summarize --all``: catch up every conversation of the workspace, in turn or on worker processes.

Conversations the workspace cache knows to have no turn waiting are not read. With the offline
summarizer (``--model builtin/...``) each conversation's catch-up needs nothing from the others (no
model to remember as failed, no network), so it runs on ``jobs`` worker processes, each taking its
conversation's lock as a single run would; with a model behind a network each conversation waits
its turn, so a model that failed is tried once per run. An offline dry run keeps each plan in the
cache database (``storage/plan_cache.py``) and shows it again while nothing it was made from changed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from returns.result import Success

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.wire.models import resolve_summary_model
from turnmark.shell import entropy, version
from turnmark.shell.errors import ConfigProblem, FileFault, reraise_interrupt
from turnmark.shell.storage import cache_db, durability, plan_cache, state_dirs
from turnmark.shell.storage.config_files import config_layers, run_layers
from turnmark.shell.storage.locking import is_locked, lock_names
from turnmark.shell.storage.workspace import ConversationRef, Workspace
from turnmark.shell.storage.workspace_cache import ConversationRow
from turnmark.shell.usecases import listing, parallel, summarize
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport, CatchupRun

OnBatch = Callable[[int, int], None]
PLAN_RULES = 2
"""Part of every stored plan's inputs, with turnmark's version: raise it when a change to catch-up makes other
plans from the same conversation (candidates, transcripts, packing), so plans stored before are not shown."""
Note = Callable[[str], None]
CATCH_UPS_A_HAND_OUT = 4
"""Offline catch-ups handed to a worker at a time (a few milliseconds each: the pool's own cost per hand-out
is about a tenth of a millisecond; after Ctrl-C a worker finishes at most 16 more)."""


def offline(options: CatchupOptions) -> bool:
    """The run's model is named on the command line and is turnmark's own offline summarizer."""
    if options.model is None:
        return False
    match resolve_summary_model({}, options.model):
        case Success(model):
            return bool(model.is_builtin)
    return False


def _offline_catch_up(ref: ConversationRef, options: CatchupOptions) -> CatchupReport:
    """One conversation's offline catch-up, its save's syncs batched (``durability.batched``; its folders
    left to the run's: ``_Durable``)."""
    with durability.batched():
        return summarize.catch_up(ref, options, entropy.random_event_ids())


class _Durable:
    """The offline run's syncs: the file systems its conversations and undo steps lie on, every
    ``durability.BATCH`` conversations written and when the run ends."""

    def __init__(self, deferred: bool) -> None:
        self.deferred = deferred
        self.places: set[Path] = set()
        self.pending = 0

    def written(self, ref: ConversationRef, report: CatchupReport) -> None:
        if not (self.deferred and (report.written or report.upgraded)):
            return
        self.places.update(directory.parent for directory in ref.directories)
        self.pending += 1
        if self.pending >= durability.BATCH:
            self.sync()

    def sync(self) -> None:
        if self.pending:
            self.pending = 0
            durability.sync_file_systems([*sorted(self.places), state_dirs.state_home()])


def _sharing_layers(options: CatchupOptions, workspace: Workspace | None) -> CatchupOptions:
    """``options`` with the layers every conversation of the run shares, read once (a source that cannot be
    read leaves each catch-up to report it, as it would alone)."""
    if options.shared_layers is not None or workspace is None:
        return options
    try:
        return replace(options, shared_layers=run_layers(workspace, options.environ))
    except ConfigProblem:
        return options


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _Plans:
    """The stored plans of an offline dry run, and the new ones to store when it ends."""

    def __init__(self, workspace: Workspace, options: CatchupOptions, rows: Mapping[str, ConversationRow]) -> None:
        self.workspace = workspace
        self.rows = rows
        layers = config_layers(workspace, None, options.cfg, options.environ, shared=options.shared_layers)
        self.run = _digest(
            [
                PLAN_RULES,
                version.installed(),
                options.model,
                options.upgrade,
                options.retry_failed,
                options.last_turn_open,
                options.max_batches,
                options.settled_for,
                layers,
            ]
        )
        self.stored: dict[str, tuple[str, str]] = {}
        self.made: list[tuple[str, str, str]] = []
        self.lock_names = lock_names(workspace)

    def load(self, note: Note) -> None:
        try:
            db = cache_db.open_cache(self.workspace)
            if db is not None:
                with db:
                    self.stored = db.guarded(lambda: plan_cache.stored_plans(db.connection))
        except (FileFault, sqlite3.Error) as error:
            reraise_interrupt(error)
            note(f"{error}; planning without the stored plans")

    def inputs(self, row: ConversationRow | None, locked: bool) -> str | None:
        """The digest of what the conversation's plan is made from (``row``: the files its read took, when jp
        held the lock or not): its events by their hash, or by their identity when the read trusted that (a
        settled file, not hashed: a new identity is another plan), and the hash of the ``base_config.json`` it
        read (never the file as it is now: one rewritten since is another plan); ``None`` when it cannot be
        trusted."""
        if row is None or row.events is None or row.facts is None:
            return None
        events = row.events.sha256 or list(row.events.file)
        base = row.base_config.sha256 if row.base_config is not None else None
        return _digest([self.run, row.directory, events, base, locked])

    def known(self, ref: ConversationRef) -> CatchupReport | None:
        locked = is_locked(ref, self.lock_names)
        inputs = self.inputs(self.rows.get(ref.display_id), locked)
        stored = self.stored.get(ref.display_id)
        if inputs is None or stored is None or stored[0] != inputs:
            return None
        try:
            return CatchupReport.from_json(json.loads(stored[1]))
        except (ValueError, RecursionError):
            return None

    def remember(self, ref: ConversationRef, report: CatchupReport) -> None:
        """Keep a plan under the inputs of the bytes its catch-up read (``report.row``: never those the cache
        row it was looked up with named, which another copy or a change since may not hold), unless jp took or
        left the lock meanwhile; its JSON in ASCII (a path that is not UTF-8 reads back as it was)."""
        if report.read_locked is None or report.error is not None or report.skipped is not None:
            return
        inputs = self.inputs(report.row, report.read_locked)
        if inputs is None or is_locked(ref) != report.read_locked:
            return
        self.made.append((ref.display_id, inputs, json.dumps(report.to_json())))

    def save(self, note: Note) -> None:
        if not self.made:
            return
        try:
            db = cache_db.open_cache(self.workspace)
            if db is not None:
                with db, db.writing(), cache_db.batch(db.connection):
                    plan_cache.save_plans(db.connection, self.made)
        except (FileFault, sqlite3.Error) as error:
            reraise_interrupt(error)
            note(f"the plans were not stored ({error}); the next dry run makes them again")


def catch_up_all(
    refs: Sequence[ConversationRef],
    options: CatchupOptions,
    new_id: IdSource,
    known: listing.Known | None,
    *,
    on_batch: OnBatch,
    jobs: int | None,
    note: Note = lambda text: None,
) -> Generator[CatchupReport, None, None]:
    """Each conversation's report, in the order of ``refs``, as it is done.

    ``known`` (the workspace cache's rows, ``listing.known``) names the conversations with no turn waiting,
    which are not read, and lets an offline dry run reuse the plans it stored; each other conversation is
    read once, by its catch-up, which makes its row from the bytes it reads and writes, and the rows are
    stored when the run ends (Ctrl-C included). ``new_id`` serves catch-ups with a network model; the
    offline summarizer's, which may run on workers, take fresh random IDs. Closing the iterator (or Ctrl-C
    while it runs) stops the conversations not yet started.
    """
    plans = None
    workspace = refs[0].workspace if refs else None
    options = replace(_sharing_layers(options, workspace), rows=known is not None)
    listed = known.listed if known is not None else {}
    idle = listing.idle(list(listed.values()), upgrade=options.upgrade)
    if options.dry_run and offline(options) and known is not None and workspace is not None:
        try:
            plans = _Plans(workspace, options, {name: item.row for name, item in listed.items()})
        except ConfigProblem:
            plans = None
        else:
            plans.load(note)
    stored = {
        ref.display_id: report
        for ref in refs
        if plans is not None and ref.display_id not in idle and (report := plans.known(ref)) is not None
    }
    busy = [ref for ref in refs if ref.display_id not in idle and ref.display_id not in stored]
    durable = _Durable(offline(options))
    if offline(options):
        work = partial(_offline_catch_up, options=options)
        done: Generator[CatchupReport, None, None] = parallel.each(work, busy, jobs, CATCH_UPS_A_HAND_OUT)
    else:
        run = CatchupRun()
        done = (summarize.catch_up(ref, options, new_id, on_batch=on_batch, run=run) for ref in busy)
    rows: list[ConversationRow] = []
    try:
        for ref in refs:
            if ref.display_id in idle:
                yield CatchupReport(ref.display_id)
            elif ref.display_id in stored:
                yield stored[ref.display_id]
            else:
                report = next(done)
                durable.written(ref, report)
                if report.row is not None:
                    rows.append(report.row)
                if plans is not None:
                    plans.remember(ref, report)
                yield report
    finally:
        done.close()
        durable.sync()
        if plans is not None:
            plans.save(note)
        if known is not None and workspace is not None:
            listing.store(workspace, known, rows, note)
