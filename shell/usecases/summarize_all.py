"""``summarize --all``: catch up every conversation of the workspace, in turn or on worker processes.

Conversations the workspace cache knows to have no turn waiting are not read. With the offline
summarizer (``--model builtin/...``) each conversation's catch-up needs nothing from the others (no
model to remember as failed, no network), so it runs on ``jobs`` worker processes, each taking its
conversation's lock as a single run would; with a model behind a network each conversation waits
its turn, so a model that failed is tried once per run.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from functools import partial

from returns.result import Success

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.wire.models import resolve_summary_model
from turnmark.shell import entropy
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases import parallel, summarize
from turnmark.shell.usecases.summarize import CatchupOptions, CatchupReport, CatchupRun

OnBatch = Callable[[int, int], None]


def offline(options: CatchupOptions) -> bool:
    """The run's model is named on the command line and is turnmark's own offline summarizer."""
    if options.model is None:
        return False
    match resolve_summary_model({}, options.model):
        case Success(model):
            return bool(model.is_builtin)
    return False


def _offline_catch_up(ref: ConversationRef, options: CatchupOptions) -> CatchupReport:
    return summarize.catch_up(ref, options, entropy.random_event_ids())


def catch_up_all(
    refs: Sequence[ConversationRef],
    options: CatchupOptions,
    new_id: IdSource,
    idle: set[str],
    *,
    on_batch: OnBatch,
    jobs: int | None,
) -> Generator[CatchupReport, None, None]:
    """Each conversation's report, in the order of ``refs``, as it is done (the ``idle`` ones, unread).

    Closing the iterator (or Ctrl-C while it runs) stops the conversations not yet started.
    """
    busy = [ref for ref in refs if ref.display_id not in idle]
    if offline(options):
        done: Generator[CatchupReport, None, None] = parallel.each(
            partial(_offline_catch_up, options=options), busy, jobs
        )
    else:
        run = CatchupRun()
        done = (summarize.catch_up(ref, options, new_id, on_batch=on_batch, run=run) for ref in busy)
    try:
        for ref in refs:
            yield CatchupReport(ref.display_id) if ref.display_id in idle else next(done)
    finally:
        done.close()
