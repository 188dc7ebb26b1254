"""Start-up cost: ``turnmark --help`` and ``turnmark turns`` against ``python -c pass``, in the same run.

Heavy imports (httpx, watchdog, rich) are deferred to the commands that use them. Run:
``just bench`` or ``python bench/startup.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TURNMARK = Path(sys.executable).with_name("turnmark")


def best(command: list[str], runs: int = 7) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "ws"
        shutil.copytree(REPO / "fixtures" / "workspace", workspace)
        baseline = best([sys.executable, "-c", "pass"])
        help_time = best([str(TURNMARK), "--help"])
        turns_time = best([str(TURNMARK), "--workspace", str(workspace), "turns", "17800000010"])
    print(f"python -c pass: {baseline * 1000:.0f} ms")
    print(f"turnmark --help: {help_time * 1000:.0f} ms ({help_time / baseline:.1f}x)")
    print(f"turnmark turns:  {turns_time * 1000:.0f} ms ({turns_time / baseline:.1f}x)")


if __name__ == "__main__":
    main()
