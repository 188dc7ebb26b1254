"""Load and save every corpus conversation; ratios against msgspec decode + encode of the same bytes.

The bytes are ``events.json`` plus ``base_config.json`` where a conversation has one (both are loaded
and both are written).

Target (issue 2): load <= 3x and save <= 3x the baseline. Run: ``just bench`` or
``python bench/load_save.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, corpus_conversations, corpus_files
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.shell.entropy import random_event_ids


def main() -> None:
    totals = {"baseline": 0.0, "load": 0.0, "save": 0.0}
    print(f"{'conversation':<16} {'KiB':>6} {'baseline ms':>11} {'load':>6} {'save':>6}")
    for directory in corpus_conversations():
        events, base_config = corpus_files(directory)
        stream = ConversationStream.from_json(events, base_config, new_id=random_event_ids()).unwrap()

        documents = [events] if base_config is None else [events, base_config]

        def baseline(data: list[bytes] = documents) -> list[bytes]:
            return [msgspec.json.encode(msgspec.json.decode(document)) for document in data]

        def load(data: bytes = events, base: bytes | None = base_config) -> object:
            return ConversationStream.from_json(data, base, new_id=random_event_ids())

        def save(loaded: ConversationStream = stream) -> tuple[bytes, bytes | None]:
            return loaded.to_json(), loaded.base_config_json()

        times = {"baseline": best_of(baseline), "load": best_of(load), "save": best_of(save)}
        for key, value in times.items():
            totals[key] += value
        print(
            f"{directory.name[:16]:<16} {len(events) / 1024:>6.0f} {times['baseline'] * 1000:>11.2f} "
            f"{times['load'] / times['baseline']:>5.2f}x {times['save'] / times['baseline']:>5.2f}x"
        )
    load_ratio, save_ratio = totals["load"] / totals["baseline"], totals["save"] / totals["baseline"]
    print(f"{'whole corpus':<16} {'':>6} {totals['baseline'] * 1000:>11.2f} {load_ratio:>5.2f}x {save_ratio:>5.2f}x")
    print(f"load/baseline {load_ratio:.2f}x (target <= 3x), save/baseline {save_ratio:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
