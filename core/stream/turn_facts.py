"""What the listing, ``turns`` and catch-up's planning read of a turn (``TurnFacts``), and the rule for when a
turn ended: apart from the turns themselves (``turns``), so the light reader works them out without loading the
stream's entries."""

from collections.abc import Iterable
from dataclasses import dataclass

from turnmark.core.stream.quick_init import quick_init

SOURCE_KEY = "summary_source"
"""The ``turn_start`` metadata key that records who wrote the summary."""


Step = tuple[str, str | None, bool]
"""One conversation event of a turn as completeness reads it: its kind, its tool call ``id`` (tool events)
and whether it is reasoning (a ``chat_response``)."""


def steps_complete(steps: Iterable[Step]) -> bool:
    """The turn ended: its last event (``turn_start`` aside) is an answer that is not reasoning, and every tool
    call has its result (the one rule; ``catchup.turn_is_complete`` and the light reader use it)."""
    pending: dict[str, int] = {}
    last: Step | None = None
    for step in steps:
        kind, tool_id, _ = step
        if kind == "tool_call_request" and tool_id is not None:
            pending[tool_id] = pending.get(tool_id, 0) + 1
        elif kind == "tool_call_response" and tool_id is not None and pending.get(tool_id):
            pending[tool_id] -= 1
        if kind != "turn_start":
            last = step
    answered = last is not None and last[0] == "chat_response" and not last[2]
    return answered and not any(pending.values())


@quick_init
@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What the listing, ``turns`` and catch-up's planning read of a turn, from a ``Turn`` (``facts``) or from
    the light reader (``core/stream/light.py``), which must agree."""

    index: int
    id: str | None
    id_transient: bool
    summary: str | None
    source: str | None
    fallback: str | None
    requests: int
    events: int
    complete: bool
