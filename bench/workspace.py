"""Big workspaces (issue 24): commands over many conversations against a floor, in one run.

The workspace holds ``--conversations`` (default 10,000) copies of the corpus and fixture conversations under
new IDs (``bench/find.py``'s generator: hard links, every copy its own path). The floor is a Python process
that reads and ``msgspec``-decodes every conversation's files and does nothing else. Each row runs a real
``turnmark`` process and is reported as a ratio to the floor, with its target:

- ``conversations`` cold (no cache file): <= 1.5x;
- ``conversations`` warm (nothing changed): <= 0.05x;
- ``conversations`` after one conversation changed (JP's rewrite with one more turn): <= 0.1x;
- ``summarize --all --dry-run`` (offline model) cold, warm and after one change, with the same targets.

Each row is the better of ``--repeat`` runs (default 2). Run: ``python bench/workspace.py [--conversations N]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.find import change_one, generate
from turnmark.core.search.freshness import RACY_NS
from turnmark.shell.storage.cache_db import cache_path
from turnmark.shell.storage.workspace import require_workspace
from turnmark.shell.usecases import listing

TURNMARK = str(Path(sys.executable).parent / "turnmark")
FLOOR = """
import os, sys, msgspec
root = sys.argv[1]
decoder = msgspec.json.Decoder()
for name in sorted(os.listdir(root)):
    folder = os.path.join(root, name)
    for file in ("events.json", "metadata.json", "base_config.json"):
        try:
            with open(os.path.join(folder, file), "rb") as handle:
                decoder.decode(handle.read())
        except FileNotFoundError:
            pass
"""


def timed(*args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 2) or b"Traceback" in done.stderr:
        sys.exit(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')[-400:]}")
    return elapsed


def report(label: str, seconds: float, floor: float, target: float) -> None:
    ratio = seconds / floor
    verdict = "met" if ratio <= target else "NOT met"
    print(f"{label:<44}{seconds:8.3f} s  {ratio:6.3f}x floor  (target <= {target}x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="turnmark-workspace-") as temporary:
        root = Path(temporary)
        size = generate(root, options.conversations)
        time.sleep(RACY_NS / 1e9 + 0.1)  # files older than the racy window, as in a workspace in use
        folder = root / ".jp" / "conversations"
        print(f"{options.conversations} conversations, {size / 1e6:.1f} MB")
        floor = min(timed(sys.executable, "-c", FLOOR, str(folder)) for _ in range(options.repeat))
        print(f"{'floor: read + msgspec-decode every file':<44}{floor:8.3f} s")
        listed = (TURNMARK, "--workspace", str(root), "conversations")
        database = cache_path(require_workspace(root)).parent

        def cold_run(command: tuple[str, ...]) -> float:
            shutil.rmtree(database, ignore_errors=True)
            return timed(*command)

        report("conversations, cold (no cache)", min(cold_run(listed) for _ in range(options.repeat)), floor, 1.5)
        warm = min(timed(*listed) for _ in range(options.repeat))
        report("conversations, warm (nothing changed)", warm, floor, 0.05)
        changed = []
        directories = sorted(folder.iterdir())
        for attempt in range(options.repeat):
            change_one(directories[attempt * 7 % len(directories)], attempt)
            changed.append(timed(*listed))
        report("conversations, after one conversation changed", min(changed), floor, 0.1)
        planning = (
            TURNMARK,
            "--workspace",
            str(root),
            "summarize",
            "--all",
            "--dry-run",
            "--model",
            "builtin/extractive",
        )
        report("summarize --all --dry-run, cold (no cache)", cold_run(planning), floor, 1.5)
        report("summarize --all --dry-run, warm", min(timed(*planning) for _ in range(options.repeat)), floor, 0.05)
        change_one(directories[1], 99)
        report("summarize --all --dry-run, after one change", timed(*planning), floor, 0.1)
        waiting = sum(
            1
            for item in listing.list_workspace(require_workspace(root), print)
            if item.row.facts is not None and item.row.facts.waiting.may_need_summaries(upgrade=False)
        )
        print(f"  ({waiting} of {options.conversations} conversations have turns waiting: the dry run reads those)")


if __name__ == "__main__":
    main()
