"""The watch service: change-to-summary latency, idle CPU, and memory with many conversations.

- latency: a turn appended the way JP writes, until its summary is on disk, minus the settle time
  (instant model: builtin/extractive), on a small conversation and on 2 MB ones: 60 turns of large tool
  output, as agentic sessions are, and 950 short turns (the offline summarizer labels every turn of a
  conversation on each change); target median <= 200 ms.
- idle CPU: a watcher over 1,000 summarized conversations, doing nothing for 60 s; target < 1% of a core.
- memory: a watcher over 10,000 conversation folders, after its startup pass; target < 150 MB RSS.

Run: ``python bench/watch.py`` (``--quick`` for 10 s of idle time and smaller counts, ``--latency`` for the
latency rows only).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import with_bytecode  # noqa: E402

TURNMARK = Path(sys.executable).with_name("turnmark")
TS = "2026-07-01 10:00:00.0"
SETTLE = 0.5


def write_like_jp(path: Path, entries: list[dict[str, Any]]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(entries, indent=2) + "\n")
    os.replace(temporary, path)


def turn(n: int, summary: bool, output_lines: int = 0) -> list[dict[str, Any]]:
    """One turn; with ``output_lines``, a tool call whose result holds that many lines (base64, as JP stores it)."""
    start: dict[str, Any] = {"event_id": f"t{n}", "timestamp": TS, "type": "turn_start"}
    if summary:
        start["summary"] = f"Step {n}"
    linked = {"request_id": f"r{n}", "timestamp": TS}
    tool: list[dict[str, Any]] = []
    if output_lines:
        output = base64.b64encode((f"line {n} of the tool output\n" * output_lines).encode()).decode()
        tool = [
            {"event_id": f"c{n}", **linked, "type": "tool_call_request", "id": f"k{n}", "name": "fs_read_file"},
            {"event_id": f"o{n}", **linked, "type": "tool_call_response", "id": f"k{n}", "content": output},
        ]
        tool[0]["arguments"], tool[1]["is_error"] = {}, False
    return [
        start,
        {"event_id": f"r{n}", "timestamp": TS, "type": "chat_request", "content": f"Implement part {n} of the parser"},
        *tool,
        {"event_id": f"m{n}", **linked, "type": "chat_response", "message": "Done."},
    ]


def make_workspace(root: Path, conversations: int, turns: int = 2, output_lines: int = 0) -> Path:
    workspace = root / "ws"
    base = workspace / ".jp" / "conversations"
    base.mkdir(parents=True)
    (workspace / ".jp" / "config.toml").write_text(
        '[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n'
    )
    for index in range(conversations):
        directory = base / str(17900000000 + index)
        directory.mkdir()
        (directory / "metadata.json").write_text('{"last_activated_at": "2026-07-01 10:00:00.0"}\n')
        (directory / "base_config.json").write_text("{}\n")
        write_like_jp(directory / "events.json", [e for n in range(turns) for e in turn(n, True, output_lines)])
    return workspace


def start_watcher(workspace: Path, environment: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(TURNMARK), "watch", "--workspace", str(workspace), "--settle", str(SETTLE)],
        stderr=subprocess.DEVNULL,
        env=environment,
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_idle(pid: int, quiet: float = 2.0, limit: float = 600.0) -> None:
    """Until the process used no CPU for ``quiet`` seconds (its startup pass is over)."""
    deadline = time.monotonic() + limit
    last = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = cpu_seconds(pid)
        if now - last < 0.02:
            return
        last = now


def latency(
    root: Path, environment: dict[str, str], samples: int, turns: int = 2, output_lines: int = 0
) -> list[float]:
    workspace = make_workspace(root / f"latency-{turns}-{output_lines}", 1, turns, output_lines)
    events = workspace / ".jp" / "conversations" / "17900000000" / "events.json"
    watcher = start_watcher(workspace, environment)
    results = []
    try:
        wait_idle(watcher.pid)
        entries = json.loads(events.read_text())
        for n in range(turns, turns + samples):
            entries += turn(n, False, output_lines)
            written = time.monotonic()
            write_like_jp(events, entries)
            while f'"summary": "Implement part {n} of the parser"' not in events.read_text():
                time.sleep(0.005)
            results.append(time.monotonic() - written - SETTLE)
            entries = json.loads(events.read_text())
            time.sleep(0.2)
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=30)
    return results


def idle_cpu(root: Path, environment: dict[str, str], conversations: int, seconds: float) -> float:
    workspace = make_workspace(root / "idle", conversations)
    watcher = start_watcher(workspace, environment)
    try:
        wait_idle(watcher.pid)
        before = cpu_seconds(watcher.pid)
        time.sleep(seconds)
        return (cpu_seconds(watcher.pid) - before) / seconds
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=60)


def memory(root: Path, environment: dict[str, str], conversations: int) -> float:
    workspace = make_workspace(root / "memory", conversations)
    watcher = start_watcher(workspace, environment)
    try:
        wait_idle(watcher.pid)
        return rss_mb(watcher.pid)
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=60)


def main() -> None:
    with_bytecode()
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        environment = {**os.environ, "JP_USER_DATA_DIR": str(root / "user")}
        shapes = (("small conversation", 2, 0), ("2 MB conversation", 60, 900), ("2 MB of short turns", 950, 40))
        for label, turns, output_lines in shapes:
            size = len(json.dumps([e for n in range(turns) for e in turn(n, True, output_lines)], indent=2)) / 1e6
            samples = latency(root, environment, 10, turns, output_lines)
            ordered = sorted(samples)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            median = statistics.median(samples)
            print(
                f"change to summary on disk, beyond the {SETTLE:g} s settle, {label} ({size:.2f} MB): "
                f"median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (target median <= 200 ms: "
                f"{'met' if median <= 0.2 else 'NOT met'})"
            )
        if "--latency" in sys.argv:
            return
        count, seconds = (200, 10.0) if quick else (1000, 60.0)
        share = idle_cpu(root, environment, count, seconds)
        print(f"idle watcher over {count} conversations for {seconds:g} s: {share * 100:.2f}% of a core (target < 1%)")
        folders = 1000 if quick else 10_000
        resident = memory(root, environment, folders)
        print(f"watcher over {folders} conversation folders: {resident:.0f} MB RSS (target < 150 MB)")


if __name__ == "__main__":
    main()
