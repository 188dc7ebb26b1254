"""A catch-up's batches with plain values: the batch size, successive packings, the plan and its too-large turns."""

import pytest

from turnmark.core.stream.json_value import Json
from turnmark.core.summaries.batching import DEFAULT_BATCH_SIZE, batch_size, batches, plan_rows, too_large
from turnmark.core.summaries.catchup import plan_summaries
from turnmark.core.summaries.packing import Candidate

HUGE = 1_000_000


def candidate(index: int, tokens: int = 10) -> Candidate:
    return Candidate(f"t{index}", index, "<turn/>", tokens, f"f{index}")


def ids(turns: tuple[Candidate, ...]) -> list[str]:
    return [c.turn_id for c in turns]


def configured(value: Json) -> dict[str, Json]:
    return {"conversation": {"turn_summary": {"generate": {"batch_size": value}}}}


def test_the_configured_batch_size_is_used() -> None:
    assert batch_size(configured(2)) == 2


@pytest.mark.parametrize("value", [None, 0, -3, True, "3", 2.5])
def test_a_missing_or_unusable_batch_size_is_the_default(value: Json) -> None:
    assert batch_size(configured(value)) == DEFAULT_BATCH_SIZE == 5
    assert batch_size({}) == 5


def test_batches_are_packed_newest_first_until_every_turn_is_in_one() -> None:
    planned = batches(tuple(candidate(i) for i in range(5)), None, 2)
    assert [ids(p.packed) for p in planned] == [["t3", "t4"], ["t1", "t2"], ["t0"]]
    assert [[(c.turn_id, why) for c, why in p.left_out] for p in planned] == [[], [], []]


def test_the_one_pass_packs_as_plan_summaries_does_batch_after_batch() -> None:
    """Over the budget, batch-full and too-large turns mixed: the same batches as packing the remaining turns
    again for every batch (the plan before it was linear)."""
    sizes = [9000, 3000, 2500, 40, 3100, 9000, 700, 2000, 10, 3300, 600, 1200]
    wanted = tuple(candidate(index, tokens) for index, tokens in enumerate(sizes))
    expected: list[list[str]] = []
    remaining = wanted
    while remaining:
        packing = plan_summaries(remaining, None, 3)
        if not packing.packed:
            break
        expected.append(ids(packing.packed))
        remaining = tuple(c for c in remaining if c not in packing.packed)
    planned = batches(wanted, None, 3)
    assert [ids(p.packed) for p in planned] == expected
    assert planned[-1].left_out == plan_summaries(remaining, None, 3).left_out


def test_a_turn_too_large_alone_stays_out_of_every_batch() -> None:
    planned = batches((candidate(0), candidate(1, HUGE), candidate(2)), None, 1)
    assert [ids(p.packed) for p in planned] == [["t2"], ["t0"]]
    assert [(c.turn_id, why) for c, why in planned[-1].left_out] == [("t1", "too_large")]


def test_when_nothing_fits_the_one_empty_packing_says_why() -> None:
    [only] = batches((candidate(0, HUGE), candidate(1, HUGE)), None, 5)
    assert only.packed == ()
    assert [(c.turn_id, why) for c, why in only.left_out] == [("t1", "too_large"), ("t0", "too_large")]


def test_no_candidates_make_no_batches_and_an_empty_plan() -> None:
    assert batches((), None, 5) == ()
    assert plan_rows(()) == []


def test_plan_rows_are_in_turn_order_with_batch_numbers_then_exclusions() -> None:
    planned = batches((candidate(0, 7), candidate(1, HUGE), candidate(2, 8), candidate(3, 9)), None, 2)
    assert plan_rows(planned) == [
        {"turn": "t0", "index": 0, "tokens": 7, "batch": 2},
        {"turn": "t1", "index": 1, "tokens": HUGE, "excluded": "too_large"},
        {"turn": "t2", "index": 2, "tokens": 8, "batch": 1},
        {"turn": "t3", "index": 3, "tokens": 9, "batch": 1},
    ]


def test_too_large_says_why_for_each_excluded_turn_only() -> None:
    rows: list[dict[str, object]] = [
        {"turn": "t0", "index": 0, "tokens": 7, "batch": 1},
        {"turn": "t1", "index": 1, "tokens": 9000, "excluded": "too_large"},
        {"turn": "t2", "index": 2, "tokens": 8, "excluded": "batch_full"},
    ]
    assert too_large(rows, "ollama/qwen3:4b", 6806) == {
        "t1": "too large for ollama/qwen3:4b's window (9000 tokens > budget 6806)"
    }
    assert too_large(rows[:1], "ollama/qwen3:4b", 6806) == {}
