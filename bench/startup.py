"""Start-up cost: ``turnmark --help``, ``turns`` and ``conversations`` against ``python -c pass``, in the same run.

Each command imports what it needs when it runs (httpx, watchdog, rich, the summarizer, the repair
planner, ...), and the CLI's simple option types are coerced without pydantic. For scale, the run
also times the floor any typer CLI pays: ``import typer`` and an app of one command with one argument.
Run: ``just bench`` or ``python bench/startup.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import with_bytecode  # noqa: E402

TURNMARK = Path(sys.executable).with_name("turnmark")


TYPER_APP = """
import typer
app = typer.Typer(add_completion=False, rich_markup_mode=None)
@app.command()
def one(name: str) -> None:
    print(name)
app()
"""


def best(command: list[str], runs: int = 7) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> None:
    with_bytecode()
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "ws"
        shutil.copytree(REPO / "fixtures" / "workspace", workspace)
        baseline = best([sys.executable, "-c", "pass"])
        timings = {
            "import typer": best([sys.executable, "-c", "import typer"]),
            "one-command typer app": best([sys.executable, "-c", TYPER_APP, "x"]),
            "turnmark --help": best([str(TURNMARK), "--help"]),
            "turnmark turns": best([str(TURNMARK), "--workspace", str(workspace), "turns", "17800000010"]),
            "turnmark conversations": best([str(TURNMARK), "--workspace", str(workspace), "conversations"]),
        }
    print(f"{'python -c pass':<24} {baseline * 1000:4.0f} ms")
    for name, seconds in timings.items():
        print(f"{name:<24} {seconds * 1000:4.0f} ms ({seconds / baseline:.1f}x)")


if __name__ == "__main__":
    main()
