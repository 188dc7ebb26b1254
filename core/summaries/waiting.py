"""How many turns of a conversation could still want a summary: what the workspace cache keeps per
conversation so that ``summarize --all`` and ``watch`` leave the others unread (``catchup.waiting`` counts them),
and the one rule it counts by (``wanting``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from turnmark.core.summaries.sources import EXTRACTIVE

if TYPE_CHECKING:
    from turnmark.core.stream.turn_facts import TurnFacts


class Waiting(NamedTuple):
    """How many turns could still want a summary (what the workspace cache keeps instead of reading again).

    ``before_last``: the candidates while the last turn may be open; ``last``: the last turn is one more
    once it is closed; ``extractive``: how many more ``--upgrade`` takes (offline summaries it rewrites).
    ``catchup.waiting`` counts them with ``summary_candidates``' own rule.
    """

    before_last: int = 0
    last: bool = False
    extractive: int = 0

    def may_need_summaries(self, *, upgrade: bool) -> bool:
        """False only when ``summary_candidates`` finds nothing, whatever the lock and the transcript limit."""
        return self.before_last > 0 or self.last or (upgrade and self.extractive > 0)


def wanting(turns: Sequence[TurnFacts], *, last_turn_may_be_open: bool, upgrade: bool) -> Iterator[int]:
    """The one rule for which turns want a summary (their positions): every other answer to that question is
    derived from it."""
    for position, turn in enumerate(turns):
        if turn.id is None or not turn.requests:
            continue
        if position == len(turns) - 1 and (last_turn_may_be_open or not turn.complete):
            continue
        if turn.summary is not None and not (upgrade and turn.source == EXTRACTIVE):
            continue
        yield position


def waiting_in(turns: Sequence[TurnFacts]) -> Waiting:
    """``waiting`` from the facts of the turns catch-up plans from (the light reader's too)."""

    def count(*, last_turn_may_be_open: bool, upgrade: bool) -> int:
        return sum(1 for _ in wanting(turns, last_turn_may_be_open=last_turn_may_be_open, upgrade=upgrade))

    before_last = count(last_turn_may_be_open=True, upgrade=False)
    closed = count(last_turn_may_be_open=False, upgrade=False)
    upgraded = count(last_turn_may_be_open=False, upgrade=True)
    return Waiting(before_last, closed > before_last, upgraded - closed)
