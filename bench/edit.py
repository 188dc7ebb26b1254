"""``edit -i`` cost against load cost: rendering the plan (every line with its preview) and the event files,
then rebuilding from them unchanged.

Workloads: the largest corpus conversation and a synthetic 10,000-turn one
(the projection benchmark's). Target (issues 14 and 20): render + rebuild <= 3x load, previews on.
Run: ``just bench`` or ``python bench/edit.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, corpus_files, largest_conversation
from bench.projection import synthetic
from turnmark.core.editing.edit_plan import rebuild, render_session
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.shell.entropy import random_event_ids

NOW = "2026-07-01 12:00:00.0"


def session_lines(stream: ConversationStream) -> int:
    return sum(1 for line in render_session(stream).plan.splitlines() if "  # " in line)


def measure(label: str, events: bytes, base_config: bytes | None, repeat: int) -> float:
    def load() -> ConversationStream:
        return ConversationStream.from_json(events, base_config, new_id=random_event_ids()).unwrap()

    stream = load()

    def edit() -> object:
        session = render_session(stream)
        return rebuild(stream, session, session.plan, dict(session.files), NOW)

    load_time = best_of(load, repeat, 1)
    edit_time = best_of(edit, repeat, 1)
    ratio = edit_time / load_time
    lines = session_lines(stream)
    print(
        f"{label:<28} load {load_time * 1000:8.1f} ms  render+rebuild {edit_time * 1000:8.1f} ms  {ratio:5.2f}x"
        f"  ({lines:,} plan lines with previews)"
    )
    return ratio


def main() -> None:
    ratios = []
    largest = largest_conversation()
    if largest is not None:
        events, base = corpus_files(largest)
        ratios.append(measure(f"corpus {largest.name[:20]}", events, base, 5))
    ratios.append(measure("synthetic 10,000 turns", synthetic(10_000), b"{}", 3))
    print(f"render+rebuild / load: {', '.join(f'{r:.2f}x' for r in ratios)} (target <= 3x)")


if __name__ == "__main__":
    main()
