"""Catch-up planning (transcripts, fingerprints, packing) for every corpus turn, against loading the same files.

Target (issue 4): planning <= 0.3x load time. Also reports how much the stripped transcripts shrink
the turns: transcript bytes over the turn's raw ``events.json`` bytes (median and worst across turns),
and what a turn costs a model (issue 12): median and p90 estimated tokens per turn (one per 3 bytes,
as packing estimates them) at each ``conversation.turn_summary.transcript.max_message_chars`` in
``LIMITS`` (4,000 is RFD 126's default).
Run: ``just bench`` or ``python bench/catchup_plan.py``.
"""

from __future__ import annotations

import statistics
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, corpus_conversations, corpus_files
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.codec import write_entry
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.json_document import encode_document
from turnmark.core.summaries.catchup import plan_summaries, summary_candidates
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.packing import estimate_tokens
from turnmark.core.summaries.transcript import turn_transcript
from turnmark.shell.entropy import random_event_ids

LIMITS = (4000, 1500, 600)
"""``max_message_chars`` values compared: RFD 126's default and two cheaper ones."""


def percentile(values: list[int], share: float) -> float:
    """The value below which ``share`` of ``values`` lie (linear interpolation between neighbours)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def catchup_plan(stream: ConversationStream) -> object:
    prepared = ensure_first_turn_start(stream)
    return plan_summaries(summary_candidates(prepared, last_turn_may_be_open=False), None, 5)


def main() -> None:
    total_load = total_plan = 0.0
    ratios: list[tuple[float, str]] = []
    tokens: dict[int, list[int]] = {limit: [] for limit in LIMITS}
    for directory in corpus_conversations():
        events, base = corpus_files(directory)
        stream = ConversationStream.from_json(events, base, new_id=random_event_ids()).unwrap()
        total_load += best_of(partial(ConversationStream.from_json, events, base, new_id=random_event_ids()), 5, 2)
        total_plan += best_of(partial(catchup_plan, stream), 5, 2)
        prepared = ensure_first_turn_start(stream)
        excluded = excluded_ids(prepared)
        for turn in prepared.turns():
            raw = len(encode_document([write_entry(entry) for entry in turn.entries]))
            ratios.append((len(turn_transcript(turn).encode()) / raw, f"{directory.name[:11]} turn {turn.index}"))
            if turn.id() is not None and turn.requests():
                for limit in LIMITS:
                    tokens[limit].append(estimate_tokens(turn_transcript(turn, excluded, limit)))
    ratios.sort()
    median = statistics.median(ratio for ratio, _ in ratios)
    worst, where = ratios[-1]
    print(f"planning/load over the corpus: {total_plan / total_load:.2f}x (target <= 0.3x)")
    print(
        f"transcript size / raw turn size over {len(ratios)} turns: median {median:.3f} "
        f"({1 / median:.0f}x smaller), worst {worst:.3f} ({where}), best {ratios[0][0]:.4f}"
    )
    print(f"tokens per turn over {len(tokens[LIMITS[0]])} turns (one per 3 bytes), by max_message_chars:")
    for limit in LIMITS:
        counts = tokens[limit]
        print(
            f"  {limit:>5,}: median {statistics.median(counts):,.0f}, p90 {percentile(counts, 0.9):,.0f}, "
            f"max {max(counts):,}, total {sum(counts):,}" + (" (RFD 126's default)" if limit == 4000 else "")
        )


if __name__ == "__main__":
    main()
