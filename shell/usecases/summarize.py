"""Catch-up for one conversation: plan, ask the model without the lock, write back under it.

1. Read the conversation, in memory inserting the ``turn_start`` its first
   turn may lack (IDs assigned at load, and this one, are derived from the
   entries, so the turns the model is shown are the turns found again later).
2. Nominate completed turns without a summary and pack them into batches, once.
3. For each batch, call the model with no lock held (a running ``jp`` never
   waits for a summary) and keep its answer in memory. Answers are written
   together before the oldest would wait ``WRITE_EVERY_SECONDS`` for the next
   answer (taking as long as the last; or ten times as long as the last save
   took), at the end, on Ctrl-C, and when the model fails; the offline
   summarizer's, which cost nothing to ask again, at the end only. So a crash
   loses at most about those last seconds of answers.
4. To write: take the lock without waiting (locked: stop, the turns are
   retried next time). When the conversation's files are still the ones read
   or last written (same device, inode, size, mtime and ctime), the answers go
   into the stream already in memory; otherwise the files are read again and
   only the summaries whose turn still has the fingerprint the model was shown
   are written. Only then are IDs, the inserted ``turn_start`` and a legacy
   upgrade written, with them (the report says so; the upgrade keeps an undo step).

A catch-up that stores no summary writes nothing; a model failure leaves its
turns for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack, closing, nullcontext
from typing import TYPE_CHECKING

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.legacy_upgrade import legacy_upgrade
from turnmark.core.summaries.batching import (
    write_due,
)
from turnmark.core.summaries.catchup import (
    catchup_stream,
    wants_summaries,
)
from turnmark.core.summaries.facts import facts_of
from turnmark.core.summaries.packing import Packing
from turnmark.core.summaries.request import SummaryAnswer
from turnmark.core.summaries.schedule import still_settling
from turnmark.shell.clock import monotonic, now_epoch, now_ns
from turnmark.shell.collector import collector_paused
from turnmark.shell.errors import (
    ConfigProblem,
    ConversationError,
)
from turnmark.shell.storage import workspace_cache
from turnmark.shell.storage.conversations import (
    LoadedConversation,
    read_conversation,
    save_refusal,
)
from turnmark.shell.storage.locking import is_locked, lock_holder
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases import listing
from turnmark.shell.usecases.catchup_files import changed_ns, files_seen
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport, CatchupRun
from turnmark.shell.usecases.summary_session import Session

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


def catch_up(
    ref: ConversationRef,
    options: CatchupOptions,
    new_id: IdSource,
    *,
    on_batch: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    run: CatchupRun | None = None,
) -> CatchupReport:
    """Summarize what one conversation still lacks; never raises for a model or lock problem."""
    report = CatchupReport(ref.display_id)
    try:
        return _catch_up(
            ref, options, new_id, on_batch=on_batch, should_stop=should_stop, report=report, run=run or CatchupRun()
        )
    except ConversationError as error:
        report.error = str(error)
        report.conversation_problem = True
        return report
    except ConfigProblem as error:
        report.error = str(error)
        return report


def _catch_up(
    ref: ConversationRef,
    options: CatchupOptions,
    new_id: IdSource,
    *,
    on_batch: Callable[[int, int], None],
    should_stop: Callable[[], bool],
    report: CatchupReport,
    run: CatchupRun,
) -> CatchupReport:
    planned = _planned(ref, options, new_id, report=report, run=run)
    if planned is None:
        return report
    session, stream, runnable = planned
    with closing(session), collector_paused() if session.provider is None else nullcontext():
        _ask_and_write(session, stream, runnable, on_batch=on_batch, should_stop=should_stop)
    on_batch(len(runnable), len(runnable))
    return report


def _ask_and_write(
    session: Session,
    stream: ConversationStream,
    runnable: Sequence[Packing],
    *,
    on_batch: Callable[[int, int], None],
    should_stop: Callable[[], bool],
) -> None:
    """Ask for each batch and keep the answers, writing them together when ``write_due`` says (a model's: the
    oldest would wait that long by the next answer, if it takes as long as the last) and at the end; Ctrl-C
    writes the answers received, then stops the run."""
    held: list[tuple[Packing, SummaryAnswer]] = []
    since = 0.0
    try:
        for number, packing in enumerate(runnable, start=1):
            if should_stop():
                session.report.notes.append("stopped before the remaining batches; retried next time")
                break
            on_batch(number - 1, len(runnable))
            started = monotonic()
            answer = session.ask(stream, packing, should_stop)
            answered = monotonic()
            if answer is None:
                if session.model_failed:
                    break
                continue
            since = since if held else answered
            held.append((packing, answer))
            waited = answered - since + (answered - started)
            if session.provider is not None and write_due(waited, session.last_save_seconds):
                written, held = session.write_back(*_together(held)), []
                if not written:
                    break
    except KeyboardInterrupt:
        if held:
            session.write_back(*_together(held))
        raise
    if held:
        session.write_back(*_together(held))


def _planned(
    ref: ConversationRef, options: CatchupOptions, new_id: IdSource, *, report: CatchupReport, run: CatchupRun
) -> tuple[Session, ConversationStream, list[Packing]] | None:
    """Read the conversation and plan its batches: the session, the stream planned and the batches to ask;
    ``None`` when nothing is to be asked (nothing waits, it is locked, a dry run, the model fails: see
    ``report``). The collector is paused while reading and packing, not while a model server is asked for
    its context window."""
    with collector_paused():
        before = files_seen(ref)
        loaded = _read(ref, new_id, report, rows=options.rows)
        files = before if before is not None and before.holds(files_seen(ref)) else None
        stream = catchup_stream(loaded.stream)
        locked = is_locked(ref)
        report.read_locked = locked
        open_turn = options.last_turn_open or locked
        if not open_turn and options.settled_for is not None:
            report.unsettled = still_settling(changed_ns(files), options.settled_for, now_epoch())
            open_turn = report.unsettled is not None
        if not wants_summaries(stream, last_turn_may_be_open=open_turn, upgrade=options.upgrade):
            return None
    if locked and not options.dry_run:
        holder = lock_holder(ref)
        report.skipped = f"locked by {holder or 'another process'} (a running jp?); retried next time"
        report.locked = True
        return None
    session = Session.open(ref, loaded.stream, options, new_id, report=report, run=run)
    if session is None:
        return None
    with ExitStack() as unless_kept:
        unless_kept.callback(session.close)
        with collector_paused():
            runnable = session.batches(stream, last_turn_may_be_open=open_turn)[: options.max_batches]
            if options.dry_run and runnable:
                report.upgrade = legacy_upgrade(loaded.stream, stream)
                if (refusal := save_refusal(loaded, stream)) is not None:
                    report.save_refused = str(refusal)
        if options.dry_run or not runnable:
            return None
        session.adopt(loaded, stream, files)
        unless_kept.pop_all()
    return session, stream, runnable


def _read(ref: ConversationRef, new_id: IdSource, report: CatchupReport, *, rows: bool) -> LoadedConversation:
    """The conversation as read; with ``rows``, its workspace-cache row from the same bytes goes in ``report``
    (that of an unreadable conversation too). As a listing's read, an ``events.json`` settled when looked at
    is not hashed: the row, and a dry run's stored plan, hold while its identity does."""
    if not rows:
        return read_conversation(ref, new_id)
    checked = now_ns()
    seen = workspace_cache.look(ref)
    hashed = workspace_cache.hashed_when_read(seen, checked)
    try:
        loaded = read_conversation(ref, new_id, digest=True, hash_events=hashed)
    except ConversationError as error:
        report.row = workspace_cache.unreadable(ref, seen, checked, str(error))
        raise
    report.row = listing.row_of(loaded, facts_of(loaded.stream), seen, checked)
    return loaded


def _together(answers: Sequence[tuple[Packing, SummaryAnswer]]) -> tuple[Packing, SummaryAnswer]:
    """Answers kept in memory as one, written in one save (one lock, one look at the files, one write)
    instead of one per batch."""
    packed = tuple(candidate for packing, _ in answers for candidate in packing.packed)
    summaries = {turn_id: text for _, answer in answers for turn_id, text in answer.summaries.items()}
    return Packing(packed, (), answers[0][0].budget), SummaryAnswer(summaries, {})
