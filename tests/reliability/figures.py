"""Scale and figures of the reliability probes.

Every probe runs at two scales: quick (in `just test`, the default) and full
(`just reliability`, ``TURNMARK_RELIABILITY=full``). Each probe records what it
did with ``record``; when ``TURNMARK_RELIABILITY_FIGURES`` names a file, the
figures are appended to it as JSON lines, and ``write_report.py`` turns them
into ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

FULL = os.environ.get("TURNMARK_RELIABILITY") == "full"


def scale(quick: int, full: int) -> int:
    """The count to run at the current scale."""
    return full if FULL else quick


def seconds(quick: float, full: float) -> float:
    """The duration to run at the current scale."""
    return full if FULL else quick


def record(
    probe: str, count: str, result: str, must_show: str, started: float | None = None, *, setups: int | None = None
) -> None:
    """Note one probe's figures: what it ran (``count``), what it found (``result``), what it had to show.

    ``setups``: how many hostile or faulty setups (workspaces, files, kills, servers) it tried.
    """
    target = os.environ.get("TURNMARK_RELIABILITY_FIGURES")
    if not target:
        return
    row = {
        "probe": probe,
        "scale": "full" if FULL else "quick",
        "count": count,
        "result": result,
        "must_show": must_show,
        "seconds": round(time.monotonic() - started, 1) if started is not None else None,
        "setups": setups,
    }
    with Path(target).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
