"""Packing candidate turns into one summary request (RFD 126, Run steps 2-4).

Sizes are estimated the way JP does it, with no tokenizer: one token per 3
bytes of UTF-8 (``CHARS_PER_TOKEN``), which overestimates for English and so
errs on the safe side. The request budget is 90% of the model's context
window (8,192 tokens when the provider does not say) minus the prompt and a
reserve for the answer. A turn whose transcript alone exceeds the budget is
excluded and never sent; the rest are packed whole, newest first, up to
``batch_size`` turns and the budget.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CHARS_PER_TOKEN = 3
DEFAULT_CONTEXT_WINDOW = 8192
WINDOW_SHARE = 0.9
ANSWER_TOKENS_PER_TURN = 40
ANSWER_OVERHEAD_TOKENS = 64

ExclusionReason = Literal["too_large", "batch_full", "over_budget"]


def estimate_tokens(text: str) -> int:
    """Tokens a text is assumed to take: UTF-8 bytes / 3, rounded up."""
    return -(-len(text.encode("utf-8")) // CHARS_PER_TOKEN)


def request_budget(context_window: int | None, prompt_tokens: int, batch_size: int) -> int:
    """Tokens left for transcripts in one request."""
    window = context_window if context_window and context_window > 0 else DEFAULT_CONTEXT_WINDOW
    answer = ANSWER_OVERHEAD_TOKENS + ANSWER_TOKENS_PER_TURN * max(batch_size, 1)
    return max(0, int(window * WINDOW_SHARE) - prompt_tokens - answer)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A turn that needs a summary: its ID, position, transcript, size and fingerprint.

    ``summary_candidates`` makes them from a stream; ``tokens`` is estimated as one
    token per 3 bytes of UTF-8, as JP does.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids, summary_candidates
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> stream = stream.push(ChatResponse(ts, "message", "Fixed."))
    >>> (candidate,) = summary_candidates(stream, last_turn_may_be_open=False)
    >>> candidate.turn_id, candidate.index, candidate.tokens, len(candidate.transcript.encode())
    ('e000001', 0, 30, 88)
    """

    turn_id: str
    index: int
    transcript: str
    tokens: int
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Packing:
    """The turns of the next request (oldest first) and why the others are not in it.

    >>> from turnmark.core import Candidate, pack
    >>> older, newer = Candidate("a1aaaaa", 0, "<turn/>", 40, "f1"), Candidate("b2bbbbb", 1, "<turn/>", 30, "f2")
    >>> packing = pack([older, newer], budget=50, batch_size=5)
    >>> [c.turn_id for c in packing.packed], [(c.turn_id, why) for c, why in packing.left_out], packing.tokens
    (['b2bbbbb'], [('a1aaaaa', 'over_budget')], 30)
    """

    packed: tuple[Candidate, ...]
    left_out: tuple[tuple[Candidate, ExclusionReason], ...]
    budget: int

    @property
    def tokens(self) -> int:
        return sum(candidate.tokens for candidate in self.packed)


def pack(candidates: Sequence[Candidate], budget: int, batch_size: int) -> Packing:
    """Whole turns, newest first, until ``batch_size`` or ``budget``; a turn too large alone is excluded.

    ``plan_summaries`` calls it with the budget a model's context window leaves.

    >>> from turnmark.core import Candidate, pack
    >>> sizes = [500, 40, 30, 20]
    >>> turns = [Candidate(f"t{index}aaaaa", index, "...", tokens, "") for index, tokens in enumerate(sizes)]
    >>> packing = pack(turns, budget=100, batch_size=2)
    >>> [c.turn_id for c in packing.packed]
    ['t2aaaaa', 't3aaaaa']
    >>> [(c.turn_id, why) for c, why in packing.left_out]
    [('t1aaaaa', 'batch_full'), ('t0aaaaa', 'too_large')]
    """
    packed: list[Candidate] = []
    left_out: list[tuple[Candidate, ExclusionReason]] = []
    used = 0
    for candidate in sorted(candidates, key=lambda c: c.index, reverse=True):
        if candidate.tokens > budget:
            left_out.append((candidate, "too_large"))
        elif len(packed) >= batch_size:
            left_out.append((candidate, "batch_full"))
        elif used + candidate.tokens > budget:
            left_out.append((candidate, "over_budget"))
        else:
            packed.append(candidate)
            used += candidate.tokens
    return Packing(tuple(sorted(packed, key=lambda c: c.index)), tuple(left_out), budget)
