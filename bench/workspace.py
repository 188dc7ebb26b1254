"""Big workspaces (issues 24 and 40): commands over many conversations against a floor, in one run.

Each workspace holds copies of the corpus and fixture conversations under new IDs (``bench/find.py``'s
generator: real copies, every one its own file; the sources
are never changed). The floor is a Python process that reads and ``msgspec``-decodes every
conversation's files and does nothing else. Each row runs real ``turnmark`` processes (default ``--jobs``:
one per core) and is reported as a ratio to the floor of the same workspace, with its target:

- ``conversations`` cold (no cache file) <= 1.5x; at 10,000 conversations, warm (nothing changed) <= 0.05x and
  after one conversation changed (JP's rewrite with one more turn) <= 0.1x (smaller workspaces: no target, as
  start-up alone is a larger share of their floor);
- ``summarize --all --dry-run --model builtin/extractive``: the same three rows, cold <= 2x (warm and after a
  change: no target);
- ``summarize --all --model builtin/extractive`` on the smallest workspace <= 6x;
- growth from the smallest to the largest workspace of the cold rows, against the growth of the floor's
  size (within 5.5x for 10,000 vs 2,000 conversations: linear).

Each row is the better of ``--repeat`` runs (default 2). Run:
``python bench/workspace.py [--conversations 2000,10000] [--all]``; ``--all`` then runs the rest of issue 24's
table, each against its own floor: ``bench/huge.py`` (a 200 MB conversation: time, peak memory, growth
with the turns, load + save of 100 MB), ``bench/catchup.py`` (linear catch-up) and ``bench/watch.py
--latency`` (change to summary past the settle time).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import with_bytecode
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
OFFLINE = ("--model", "builtin/extractive")


WARM_TARGETS_FROM = 10_000
"""The workspace size issue 40 sets the warm listing's targets at."""


def timed(*args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 2) or b"Traceback" in done.stderr:
        sys.exit(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')[-400:]}")
    return elapsed


def report(label: str, seconds: float, floor: float, target: float | None) -> None:
    ratio = seconds / floor
    verdict = "" if target is None else f"  (target <= {target}x: {'met' if ratio <= target else 'NOT met'})"
    print(f"{label:<60}{seconds:8.3f} s  {ratio:6.3f}x floor{verdict}")


class Workspace:
    """A generated workspace, its floor and the commands run on it."""

    def __init__(self, root: Path, count: int, repeat: int) -> None:
        self.root, self.count, self.repeat = root, count, repeat
        size = generate(root, count)
        time.sleep(RACY_NS / 1e9 + 0.1)  # files older than the racy window, as in a workspace in use
        self.folder = root / ".jp" / "conversations"
        self.directories = sorted(self.folder.iterdir())
        self.floor = min(timed(sys.executable, "-c", FLOOR, str(self.folder)) for _ in range(repeat))
        self.database = cache_path(require_workspace(root)).parent
        self.changes = 0
        print(
            f"\n{count} conversations, {size / 1e6:.1f} MB; floor (read + msgspec-decode every file) {self.floor:.3f} s"
        )

    def command(self, *args: str) -> tuple[str, ...]:
        return (TURNMARK, "--workspace", str(self.root), *args)

    def cold(self, command: tuple[str, ...]) -> float:
        def once() -> float:
            shutil.rmtree(self.database, ignore_errors=True)
            return timed(*command)

        return min(once() for _ in range(self.repeat))

    def after_change(self, command: tuple[str, ...]) -> float:
        times = []
        for _ in range(self.repeat):
            self.changes += 1
            change_one(self.directories[self.changes * 7 % len(self.directories)], self.changes)
            times.append(timed(*command))
        return min(times)

    def three_rows(
        self, name: str, command: tuple[str, ...], cold_target: float = 1.5, warm_targets: bool = True
    ) -> float:
        """Cold, warm and after-one-change rows of ``command``; its cold time. The warm rows have their targets
        only at 10,000 conversations, and only with ``warm_targets``."""
        cold = self.cold(command)
        report(f"{name}, cold (no cache)", cold, self.floor, cold_target)
        warm = warm_targets and self.count >= WARM_TARGETS_FROM
        warm_seconds = min(timed(*command) for _ in range(self.repeat))
        report(f"{name}, warm (nothing changed)", warm_seconds, self.floor, 0.05 if warm else None)
        report(f"{name}, after one conversation changed", self.after_change(command), self.floor, 0.1 if warm else None)
        return cold


def offline_summaries(root: Path, count: int) -> None:
    """``summarize --all`` with the offline summarizer on a workspace of its own (it writes)."""
    space = Workspace(root, count, 1)
    seconds = timed(*space.command("summarize", "--all", *OFFLINE))
    report("summarize --all --model builtin/extractive", seconds, space.floor, 6.0)


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", default="2000,10000", help="workspace sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="then the other benchmarks of issue 24's table")
    options = parser.parse_args()
    sizes = sorted(int(size) for size in options.conversations.split(","))
    cold: dict[int, tuple[float, float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="turnmark-workspace-") as temporary:
        os.environ["TURNMARK_CACHE_DIR"] = str(Path(temporary) / "cache")
        os.environ["TURNMARK_STATE_DIR"] = str(Path(temporary) / "state")
        for count in sizes:
            root = Path(temporary) / f"w{count}"
            space = Workspace(root, count, options.repeat)
            listed = space.three_rows("conversations", space.command("conversations"))
            planned = space.three_rows(
                "summarize --all --dry-run",
                space.command("summarize", "--all", "--dry-run", *OFFLINE),
                2.0,
                warm_targets=False,
            )
            cold[count] = (space.floor, listed, planned)
            idle = listing.settled(require_workspace(root), print, upgrade=False)
            print(f"  ({count - len(idle)} of {count} conversations have turns waiting: the dry run plans those)")
            shutil.rmtree(root)
        offline_summaries(Path(temporary) / "offline", sizes[0])
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        print(f"\ngrowth from {small} to {large} conversations ({large / small:.1f}x the conversations):")
        print(f"  {'floor':<58}{cold[large][0] / cold[small][0]:6.2f}x")
        target = 1.1 * large / small
        for index, name in ((1, "conversations, cold"), (2, "summarize --all --dry-run, cold")):
            growth = cold[large][index] / cold[small][index]
            verdict = "met" if growth <= target else "NOT met"
            print(f"  {name:<58}{growth:6.2f}x  (target <= {target:.1f}x: {verdict})")
    if options.all:
        for bench in (["huge.py"], ["catchup.py"], ["watch.py", "--latency"]):
            print(f"\n$ python bench/{' '.join(bench)}", flush=True)
            subprocess.run([sys.executable, str(Path(__file__).parent / bench[0]), *bench[1:]], check=True)


if __name__ == "__main__":
    main()
