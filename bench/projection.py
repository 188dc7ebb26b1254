"""Projection cost against load cost: every corpus conversation, and synthetic 1,000- and 10,000-turn ones.

Targets (issue 3): projection <= 0.5x the load of the same conversation, and linear growth
(10x the events -> <= 12x the time). Run: ``just bench`` or ``python bench/projection.py``.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, corpus_conversations, corpus_files
from turnmark.core.links.projection import project
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.shell.entropy import random_event_ids

TS = "2026-06-01 10:00:00.123456"


def synthetic(turns: int) -> bytes:
    """A conversation of ``turns`` coding turns, with overlays every 100 turns and one deleted request in 50."""
    output = base64.b64encode(b"fn main() {}\n" * 20).decode()
    entries: list[dict[str, object]] = []
    for n in range(turns):
        request = f"r{n}"
        entries.append({"event_id": f"t{n}", "timestamp": TS, "type": "turn_start", "summary": f"Turn {n}"})
        if n % 50 != 7:
            entries.append({"event_id": request, "timestamp": TS, "type": "chat_request", "content": f"do step {n}"})
        linked = {"request_id": request, "timestamp": TS}
        entries += [
            {"event_id": f"s{n}", **linked, "type": "chat_response", "reasoning": "thinking " * 20},
            {
                "event_id": f"c{n}",
                **linked,
                "type": "tool_call_request",
                "id": f"call{n}",
                "name": "fs_read_file",
                "arguments": {"path": base64.b64encode(b"src/main.rs").decode()},
            },
            {
                "event_id": f"o{n}",
                **linked,
                "type": "tool_call_response",
                "id": f"call{n}",
                "content": output,
                "is_error": False,
            },
            {"event_id": f"m{n}", **linked, "type": "chat_response", "message": f"Done with step {n}."},
        ]
        if n % 100 == 99:
            entries.append(
                {
                    "event_id": f"k{n}",
                    "type": "compaction",
                    "timestamp": TS,
                    "from_turn": n - 99,
                    "to_turn": n - 60,
                    "summary": {"summary": f"Steps {n - 99} to {n - 60}."},
                }
            )
            entries.append(
                {
                    "event_id": f"x{n}",
                    "type": "compaction",
                    "timestamp": TS,
                    "from_turn": n - 59,
                    "to_turn": n,
                    "reasoning": "strip",
                    "tool_calls": {"policy": "strip", "request": False, "response": True},
                }
            )
    return msgspec.json.format(msgspec.json.encode(entries), indent=2) + b"\n"


def measure(events: bytes, base_config: bytes | None) -> tuple[float, float, int, float]:
    """Load time, projection time, entry count, and the time of a bare pass over the entries."""
    stream = ConversationStream.from_json(events, base_config, new_id=random_event_ids()).unwrap()
    load = best_of(lambda: ConversationStream.from_json(events, base_config, new_id=random_event_ids()), 5, 2)
    projection = best_of(lambda: project(stream), 5, 2)
    bare = best_of(lambda: [type(entry.payload) for entry in stream.entries], 5, 2)
    return load, projection, len(stream.entries), bare


def main() -> None:
    total_load = total_projection = 0.0
    print(f"{'conversation':<22} {'entries':>7} {'load ms':>8} {'project/load':>12}")
    for directory in corpus_conversations():
        load, projection, entries, _ = measure(*corpus_files(directory))
        total_load += load
        total_projection += projection
        print(f"{directory.name[:22]:<22} {entries:>7} {load * 1000:>8.2f} {projection / load:>11.2f}x")
    print(f"{'whole corpus':<22} {'':>7} {total_load * 1000:>8.2f} {total_projection / total_load:>11.2f}x")
    small = measure(synthetic(1_000), b"{}")
    large = measure(synthetic(10_000), b"{}")
    for name, (load, projection, entries, _) in (("synthetic 1,000 turns", small), ("synthetic 10,000 turns", large)):
        print(f"{name:<22} {entries:>7} {load * 1000:>8.2f} {projection / load:>11.2f}x")
    growth_entries = large[2] / small[2]
    growth_time = large[1] / small[1]
    growth_bare = large[3] / small[3]
    print(
        f"projection/load: corpus {total_projection / total_load:.2f}x, 10,000 turns {large[1] / large[0]:.2f}x "
        f"(target <= 0.5x); growth {growth_entries:.1f}x entries -> {growth_time:.1f}x time (target <= 12x); "
        f"a bare pass over the same entries grows {growth_bare:.1f}x in this run"
    )


if __name__ == "__main__":
    main()
