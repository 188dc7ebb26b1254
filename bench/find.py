"""``turnmark find`` over a generated workspace: the index's cold build, a warm search, a search after one change.

The workspace holds ``--conversations`` (default 10,000) copies of the corpus and fixture conversations under
new IDs (real copies: the same bytes, every copy its own file). Ratios, each against a baseline measured in the
same run:

- cold build of the index (a first ``find``, in process) vs reading and ``msgspec``-decoding every file (issue
  40: <= 4x) and vs loading every conversation once (issue 24: <= 1.5x), in wall-clock and in CPU time (which
  other work on the machine cannot inflate), the better of two runs each;
- a warm ``turnmark find WORD`` (a real process) vs ``grep -rl WORD .jp/conversations`` (target <= 0.1x);
- ``turnmark find`` after one conversation changed (JP's rewrite with one more turn) vs a warm one (<= 2x);
- the index's size vs the conversations' size.

Run: ``python bench/find.py [--conversations N] [--word WORD]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import REPO, corpus_conversations, with_bytecode
from turnmark.core.search.scopes import DEFAULT_SCOPES
from turnmark.core.search.terms import parse_query
from turnmark.shell.entropy import random_event_ids
from turnmark.shell.storage.cache_db import cache_path
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import list_conversations, require_workspace
from turnmark.shell.usecases import finding

TURNMARK = str(Path(sys.executable).parent / "turnmark")
FIRST_ID = 17000000000


def generate(root: Path, count: int) -> int:
    """``count`` conversations copied from the corpus and fixtures (real copies: hard links would share one
    inode's change time, so touching one would put every copy in doubt); their total size in bytes."""
    sources = corpus_conversations() + sorted((REPO / "fixtures" / "workspace" / ".jp" / "conversations").iterdir())
    conversations = root / ".jp" / "conversations"
    conversations.mkdir(parents=True)
    size = 0
    for index in range(count):
        source = sources[index % len(sources)]
        target = conversations / f"{FIRST_ID + index}-copy"
        target.mkdir()
        for file in source.iterdir():
            shutil.copyfile(file, target / file.name)
            size += file.stat().st_size
    return size


def timed(action: object) -> float:
    return measured(action)[0]


def measured(action: object) -> tuple[float, float]:
    """Wall-clock and CPU time of ``action`` (CPU time is what other processes on the machine cannot inflate)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    action()  # type: ignore[operator]
    return time.perf_counter() - start, time.process_time() - start_cpu


def best(action: object, repeat: int = 3) -> float:
    return min(timed(action) for _ in range(repeat))


def row(label: str, seconds: float, ratio: str) -> None:
    print(f"{label:<36}{seconds:8.3f} s   {ratio}")


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, capture_output=True, check=False)


def change_one(directory: Path, round_number: int) -> None:
    """JP's write: the whole ``events.json`` rewritten (a new file, renamed over) with one more turn."""
    events = directory / "events.json"
    entries = json.loads(events.read_bytes())
    ts = "2026-11-30 12:00:00.0"
    entries += [
        {"event_id": f"b{round_number:06d}", "timestamp": ts, "type": "turn_start"},
        {
            "event_id": f"c{round_number:06d}",
            "timestamp": ts,
            "type": "chat_request",
            "content": f"bench {round_number}",
        },
    ]
    (directory / "events.json.tmp").write_text(json.dumps(entries, indent=2))
    os.replace(directory / "events.json.tmp", events)


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--word", default="tokenizer", help="a word in few conversations (grep reads the others whole)")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="turnmark-find-bench-"))
    os.environ["JP_USER_DATA_DIR"] = str(scratch / "user-data")
    os.environ["TURNMARK_CACHE_DIR"] = str(scratch / "cache")
    os.environ["TURNMARK_STATE_DIR"] = str(scratch / "state")
    try:
        root = scratch / "ws"
        size = generate(root, options.conversations)
        for path in (root / ".jp" / "conversations").rglob("*.json"):
            path.read_bytes()
        workspace = require_workspace(root)
        refs = list_conversations(workspace)

        files = sorted((root / ".jp" / "conversations").rglob("*.json"))
        decoder = msgspec.json.Decoder()

        def read_and_decode() -> None:
            for path in files:
                decoder.decode(path.read_bytes())

        def load_all() -> None:
            for ref in refs:
                read_conversation(ref, random_event_ids())

        def search() -> finding.FindResult:
            query = parse_query(options.word).unwrap()
            return finding.find(workspace, query, finding.FindOptions(DEFAULT_SCOPES))

        def build() -> None:
            shutil.rmtree(cache_path(workspace).parent, ignore_errors=True)
            search()

        load_all()
        floor = best(read_and_decode)
        runs = [(measured(load_all), measured(build)) for _ in range(2)]
        load, load_cpu = min(run[0][0] for run in runs), min(run[0][1] for run in runs)
        cold, cold_cpu = min(run[1][0] for run in runs), min(run[1][1] for run in runs)
        warm_in_process = best(search)
        command = (TURNMARK, "--workspace", str(root), "find", options.word, "--output", "count")
        warm = best(lambda: run(*command))
        grep = best(lambda: run("grep", "-rl", options.word, str(root / ".jp" / "conversations")))
        changed = []
        for round_number in range(3):
            change_one(refs[round_number * 7].workspace_dir or root, round_number)
            changed.append(timed(lambda: run(*command)))
        after_change = min(changed)
        index = cache_path(workspace)
        index_size = sum(path.stat().st_size for path in index.parent.glob(index.name + "*"))
        print(f"{len(refs)} conversations, {size / 2**20:.0f} MiB; {search().total} turns match {options.word!r}")
        row("load every conversation once", load, f"(CPU {load_cpu:.2f} s)")
        row("read + msgspec-decode every file", floor, "(the floor)")
        row("cold index build (first find)", cold, f"{cold / floor:5.2f}x the floor (target <= 4x)")
        row("  against loading every conversation", cold, f"{cold / load:5.2f}x load (issue 24: <= 1.5x)")
        row("  the same in CPU time", cold_cpu, f"{cold_cpu / load_cpu:5.2f}x load")
        row(f"grep -rl {options.word}", grep, "")
        row("warm find, a process", warm, f"{warm / grep:5.2f}x grep (target <= 0.1x)")
        row("warm find, in process", warm_in_process, f"{warm_in_process / grep:5.2f}x grep")
        row("find after one changed, a process", after_change, f"{after_change / warm:5.2f}x warm (target <= 2x)")
        print(f"{'index size':<36}{index_size / 2**20:8.1f} MiB {index_size / size:5.2f}x the conversations")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
