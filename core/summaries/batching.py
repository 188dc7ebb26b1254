"""A catch-up's batches: the configured batch size, successive packings, and the plan ``summarize`` reports.

Each batch is one request; batches are packed newest turns first until nothing
more fits. A turn too large for the budget on its own is never packed: the plan
lists it as excluded, and ``too_large`` says why it waits for a larger model.
"""

from collections import deque
from collections.abc import Sequence

from turnmark.core.stream.config import TURN_SUMMARY, lookup
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.catchup import plan_summaries
from turnmark.core.summaries.packing import Candidate, Packing

DEFAULT_BATCH_SIZE = 5

PlanRow = dict[str, object]
"""A turn in ``summarize --format json``'s plan: ``turn``, ``index``, ``tokens``, then ``batch`` or ``excluded``."""

UNLIMITED_WINDOW = 1 << 40
"""The offline summarizer reads turns of any size."""

WRITE_EVERY_SECONDS = 10.0
"""A model's answers wait at most this long before they are written (what a crash can lose)..."""
SAVE_SHARE = 10
"""...or this many times as long as the last save took, when that is longer: saving takes at most a
tenth of a catch-up however long the conversation."""


def batch_size(config: JsonObject) -> int:
    """``conversation.turn_summary.generate.batch_size`` when it is a positive integer, else ``DEFAULT_BATCH_SIZE``.

    >>> batch_size({"conversation": {"turn_summary": {"generate": {"batch_size": 2}}}}), batch_size({})
    (2, 5)
    """
    value = lookup(config, f"{TURN_SUMMARY}.batch_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_BATCH_SIZE


def batches(wanted: tuple[Candidate, ...], window: int | None, size: int) -> tuple[Packing, ...]:
    """Successive packings until nothing more fits (a turn too large alone stays out), in one pass.

    Each batch is what ``plan_summaries`` would pack from the turns the batches before it left: newest
    first, at most ``size``, a turn over the budget left for a later batch. The turns are sorted once
    and each batch looks only at the turns it takes or passes over, so a plan is linear in its turns,
    not quadratic. Only the last packing lists what the plan leaves out (the turns too large alone);
    when not even the first batch packs a turn, that empty packing is the only one, so the plan still
    lists why each turn was left out.
    """
    if not wanted:
        return ()
    budget = plan_summaries((), window, size).budget
    newest_first = sorted(wanted, key=lambda c: c.index, reverse=True)
    too_big = tuple((c, "too_large") for c in newest_first if c.tokens > budget)
    waiting = deque(c for c in newest_first if c.tokens <= budget)
    found: list[Packing] = []
    while waiting:
        packed: list[Candidate] = []
        passed: list[Candidate] = []
        used = 0
        while waiting and len(packed) < size:
            candidate = waiting.popleft()
            if used + candidate.tokens > budget:
                passed.append(candidate)
            else:
                packed.append(candidate)
                used += candidate.tokens
        waiting.extendleft(reversed(passed))
        found.append(Packing(tuple(reversed(packed)), (), budget))
    if not found:
        return (Packing((), too_big, budget),)  # type: ignore[arg-type]
    found[-1] = Packing(found[-1].packed, too_big, budget)  # type: ignore[arg-type]
    return tuple(found)


def plan_rows(packings: Sequence[Packing]) -> list[PlanRow]:
    """The plan in turn order: each packed turn with its batch number (from 1), then what the last batch left out."""
    rows: list[PlanRow] = []
    for number, packing in enumerate(packings, start=1):
        rows += [{"turn": c.turn_id, "index": c.index, "tokens": c.tokens, "batch": number} for c in packing.packed]
    if packings:
        rows += [
            {"turn": c.turn_id, "index": c.index, "tokens": c.tokens, "excluded": reason}
            for c, reason in packings[-1].left_out
        ]
    return sorted(rows, key=lambda row: int(str(row["index"])))


def too_large(rows: Sequence[PlanRow], model_id: str, budget: int | None) -> dict[str, str]:
    """Why each turn the plan excludes as ``too_large`` is not asked for, by turn ID.

    >>> too_large([{"turn": "a1", "index": 0, "tokens": 9000, "excluded": "too_large"}], "ollama/qwen3:4b", 6806)
    {'a1': "too large for ollama/qwen3:4b's window (9000 tokens > budget 6806)"}
    """
    return {
        str(row["turn"]): f"too large for {model_id}'s window ({row['tokens']} tokens > budget {budget})"
        for row in rows
        if row.get("excluded") == "too_large"
    }


def write_due(waited: float, last_save: float) -> bool:
    """Whether answers are written now that the oldest would have waited ``waited`` seconds by the next
    answer (``last_save``: how long the last save of the conversation took, 0 before the first).

    A catch-up asks batch after batch and keeps the answers in memory; it writes them all in one save
    before the oldest would wait ``WRITE_EVERY_SECONDS`` (or ``SAVE_SHARE`` times the last save), and
    at the end. So a long conversation is written a bounded number of times, not once per batch, and a
    slow model's every answer is written as it comes.

    >>> write_due(3.0, 0.0), write_due(10.0, 0.2), write_due(12.0, 1.5), write_due(15.0, 1.5)
    (False, True, False, True)
    """
    return waited >= max(WRITE_EVERY_SECONDS, SAVE_SHARE * last_save)
