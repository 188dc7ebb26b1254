"""Exit latency of ``turnmark query`` with background summaries on (``auto=true``) against off, same run.

A loopback model answers the chat in 300 ms and the summary request in 200 ms, so the summary overlaps
the turn and should cost nothing at exit. Target (issue 5): auto=true <= 1.1x auto=false.
Run: ``just bench`` or ``python bench/query_exit.py``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.llm_servers import Behaviour, ModelServer
from turnmark.shell.entropy import random_event_ids
from turnmark.shell.usecases.query import QueryOptions, run_query

REPO = Path(__file__).resolve().parents[1]
RUNS = 7


def answer(body: dict[str, Any]) -> str:
    if "format" in body:
        time.sleep(0.2)
        ids = body["format"]["properties"]["summaries"]["required"]
        return json.dumps({"summaries": {i: f"Summary of {i}" for i in ids}})
    time.sleep(0.3)
    return "An answer."


def exit_latency(workspace: Path, auto: bool) -> float:
    """Time of one query on a fresh copy whose earlier turns still need summaries."""
    copy = workspace.parent / f"run-{time.monotonic_ns()}"
    shutil.copytree(workspace, copy)
    options = QueryOptions(
        message="next step",
        conversation="17800000040",
        model="ollama/llama3.2:3b",
        cfg=(f"conversation.turn_summary.generate.auto={str(auto).lower()}",),
    )
    started = time.perf_counter()
    run_query(copy, options, random_event_ids(), io.StringIO(), io.StringIO())
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch, ModelServer() as server:
        os.environ["JP_USER_DATA_DIR"] = str(Path(scratch) / "user")
        workspace = Path(scratch) / "ws"
        shutil.copytree(REPO / "fixtures" / "workspace", workspace)
        (workspace / ".jp" / "config.toml").write_text(
            '[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
            f'[providers.llm.ollama]\nbase_url = "{server.url}"\n'
        )
        server.queue.extend([Behaviour(content=answer)] * (RUNS * 4))
        on, off = [], []
        for _ in range(RUNS):
            off.append(exit_latency(workspace, auto=False))
            on.append(exit_latency(workspace, auto=True))
    median_on, median_off = statistics.median(on), statistics.median(off)
    print(f"query exit, median of {RUNS}: auto=false {median_off * 1000:.0f} ms, auto=true {median_on * 1000:.0f} ms")
    print(f"auto=true / auto=false: {median_on / median_off:.2f}x (target <= 1.1x)")


if __name__ == "__main__":
    main()
