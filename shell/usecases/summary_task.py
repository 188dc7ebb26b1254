"""``TurnSummaryTask``: RFD 126's lagged catch-up as a background task of ``turnmark query``.

Spawned before the new turn starts, with a snapshot of the conversation: its
``run`` summarizes one batch of completed turns without a summary while the
assistant answers the new turn (no lock held, cancellable); its ``sync``, at
exit and after the query released its lock, writes the results under a
non-blocking lock, only for turns whose fingerprint still matches.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import TYPE_CHECKING

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.summaries.packing import Packing
from turnmark.core.summaries.request import SummaryAnswer
from turnmark.shell.errors import ConfigProblem
from turnmark.shell.output import chrome
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport
from turnmark.shell.usecases.summary_session import Session
from turnmark.shell.usecases.tasks import CancelToken

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


class TurnSummaryTask:
    name = "turn_summary"

    def __init__(
        self,
        ref: ConversationRef,
        snapshot: ConversationStream,
        options: CatchupOptions,
        new_id: IdSource,
        log: Callable[[str], None] = chrome,
    ) -> None:
        self.ref = ref
        self.snapshot = snapshot
        self.options = options
        self.new_id = new_id
        self.log = log
        self.report = CatchupReport(ref.display_id)
        self._session: Session | None = None
        self._work: tuple[Packing, SummaryAnswer] | None = None

    def run(self, token: CancelToken) -> None:
        try:
            session = Session.open(self.ref, self.snapshot, self.options, self.new_id, report=self.report)
        except ConfigProblem as error:
            self.report.error = str(error)
            return
        if session is None:
            return
        with closing(session):
            batches = session.batches(self.snapshot, last_turn_may_be_open=True)
            if not batches or token.cancelled:
                return
            answer = session.ask(self.snapshot, batches[0], lambda: token.cancelled)
        if answer is not None and not token.cancelled:
            self._session, self._work = session, (batches[0], answer)

    def sync(self) -> None:
        if self._session is not None and self._work is not None:
            self._session.write_back(*self._work)
        for note in self.report.notes:
            self.log(f"note: turn summaries: {note}")
        if self.report.error:
            self.log(f"note: turn summaries not written: {self.report.error}")
