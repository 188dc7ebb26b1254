"""A catch-up's batches: the configured batch size, successive packings, and the plan ``summarize`` reports.

Each batch is one request; batches are packed newest turns first until nothing
more fits. A turn too large for the budget on its own is never packed: the plan
lists it as excluded, and ``too_large`` says why it waits for a larger model.
"""

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


def batch_size(config: JsonObject) -> int:
    """``conversation.turn_summary.generate.batch_size`` when it is a positive integer, else ``DEFAULT_BATCH_SIZE``.

    >>> batch_size({"conversation": {"turn_summary": {"generate": {"batch_size": 2}}}}), batch_size({})
    (2, 5)
    """
    value = lookup(config, f"{TURN_SUMMARY}.batch_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_BATCH_SIZE


def batches(wanted: tuple[Candidate, ...], window: int | None, size: int) -> tuple[Packing, ...]:
    """Successive packings until nothing more fits (a turn too large alone stays out).

    When not even the first batch packs a turn, that empty packing is the only one, so
    the plan still lists why each turn was left out.
    """
    found: list[Packing] = []
    remaining = wanted
    while remaining:
        packing = plan_summaries(remaining, window, size)
        if not packing.packed:
            if not found:
                found.append(packing)
            break
        found.append(packing)
        packed = {c.turn_id for c in packing.packed}
        remaining = tuple(c for c in remaining if c.turn_id not in packed)
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
