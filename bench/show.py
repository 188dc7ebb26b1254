"""``show --format html`` cost against load cost, and the page's size against ``events.json``.

Workloads: the largest corpus conversation and a synthetic 10,000-turn one (the projection
benchmark's: reasoning, a tool call with output and an answer per turn, overlays every 100 turns,
one request in 50 deleted), written to a temporary folder and read back as a command would.
Measured: the view (turns, tool items, exclusion, overlays) and the page (Markdown by markdown-it,
code by pygments, escaping), with reasoning and full tool output. Target (issue 22): <= 3x load.
Run: ``just bench`` or ``python bench/show.py``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, corpus_files, largest_conversation
from bench.projection import synthetic
from turnmark.core.rendering.html_page import render_html
from turnmark.core.rendering.shown import ShownConversation, ShowOptions, TurnSelection, select_turns, show_turns
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.shell.entropy import random_event_ids

OPTIONS = ShowOptions(reasoning=True, tools="full")


def page(stream: ConversationStream) -> str:
    turns = select_turns(stream.turns(), TurnSelection()).unwrap()
    view = ShownConversation({"id": "bench", "title": "bench"}, show_turns(stream, turns, OPTIONS), len(turns), OPTIONS)
    return render_html(view)


def measure(label: str, folder: Path, repeat: int) -> float:
    events, base_config = corpus_files(folder)

    def load() -> ConversationStream:
        return ConversationStream.from_json(events, base_config, new_id=random_event_ids()).unwrap()

    stream = load()
    load_time = best_of(load, repeat, 1)
    show_time = best_of(lambda: page(stream), repeat, 1)
    size = len(page(stream).encode("utf-8"))
    ratio = show_time / load_time
    print(
        f"{label:<28} load {load_time * 1000:8.1f} ms  show html {show_time * 1000:8.1f} ms  {ratio:5.2f}x"
        f"  page {size / 1e6:6.2f} MB = {size / len(events):4.2f}x events.json ({len(events) / 1e6:.2f} MB)"
    )
    return ratio


def main() -> None:
    ratios = []
    largest = largest_conversation()
    if largest is not None:
        ratios.append(measure(f"corpus {largest.name[:20]}", largest, 15))
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "17900000000-synthetic"
        folder.mkdir()
        (folder / "events.json").write_bytes(synthetic(10_000))
        (folder / "base_config.json").write_bytes(b"{}")
        ratios.append(measure("synthetic 10,000 turns", folder, 3))
    print(f"show html / load: {', '.join(f'{r:.2f}x' for r in ratios)} (target <= 3x)")


if __name__ == "__main__":
    main()
