"""Commands that call no model, watch nothing and draw no progress bar never import httpx, watchdog or rich."""

import subprocess
import sys

PROBE = """
import sys
from typer.testing import CliRunner
from turnmark.shell.cli import app
CliRunner().invoke(app, sys.argv[1:])
print(",".join(name for name in ("httpx", "watchdog", "rich.progress") if name in sys.modules))
"""


def heavy_modules_after(*arguments: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *arguments], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_turns_and_help_stay_light(workspace) -> None:  # type: ignore[no-untyped-def]
    assert heavy_modules_after("--help") == ""
    assert heavy_modules_after("--workspace", str(workspace), "turns", "17800000010") == ""
    assert heavy_modules_after("--workspace", str(workspace), "check", "--all") == ""
