"""``turnmark mcp``: a warm ``find_turns`` against a ``turnmark find`` process, ``read_turn`` on a long conversation.

Issue 41's rows, each against a baseline of the same run:

- a warm ``find_turns`` over ``--conversations`` (default 10,000) copies of the corpus and fixture
  conversations (``bench/find.py``'s workspace; the index built first) vs a warm ``turnmark find`` process
  for the same query, the better of ``--repeat`` runs each (target <= 0.3x);
- ``read_turn`` of the last turn of a ``--megabytes`` (default 200) conversation (``bench/huge.py``'s): the
  server's peak memory against the file's size (<= 2.5x, issue 40's bound), and the call's time against a
  ``turnmark transcript --turn`` process;
- how long the server takes to stop after stdin closes and after SIGTERM (the issue asks for within a second).

The server is spoken to in plain JSON-RPC lines, as any client does. Run: ``python bench/mcp.py``.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import with_bytecode
from bench.find import generate
from bench.huge import CONVERSATION_ID, long_workspace

TURNMARK = str(Path(sys.executable).parent / "turnmark")


class Server:
    """A ``turnmark mcp`` process, initialized, spoken to one request at a time."""

    def __init__(self, workspace: Path) -> None:
        self.process = subprocess.Popen(
            [TURNMARK, "--workspace", str(workspace), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdout is not None
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        if "error" in answer or answer["result"].get("isError"):
            sys.exit(f"{method} {params} failed: {answer}")
        return answer

    def call(self, tool: str, **arguments: object) -> float:
        start = time.perf_counter()
        self.request("tools/call", {"name": tool, "arguments": arguments})
        return time.perf_counter() - start

    def peak_memory(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        [line] = [line for line in status.splitlines() if line.startswith("VmHWM:")]
        return int(line.split()[1]) * 1024

    def stop(self, how: str) -> float:
        assert self.process.stdin is not None
        start = time.perf_counter()
        if how == "stdin":
            self.process.stdin.close()
        else:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        return time.perf_counter() - start


def process_time(*args: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([TURNMARK, *args], capture_output=True, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def row(label: str, value: str, ratio: float, target: float | None) -> None:
    verdict = "" if target is None else f"  (target <= {target}x: {'met' if ratio <= target else 'NOT met'})"
    print(f"{label:<58}{value:>12}  {ratio:7.3f}x{verdict}")


def measure_find(count: int, word: str, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="turnmark-mcp-") as temporary:
        root = Path(temporary)
        size = generate(root, count)
        print(f"{count:,} conversations ({size / 1e6:.0f} MB)")
        subprocess.run([TURNMARK, "--workspace", str(root), "find", word], capture_output=True, check=False)
        command = process_time("--workspace", str(root), "find", word, repeat=repeat)
        server = Server(root)
        server.call("find_turns", query=word)
        warm = min(server.call("find_turns", query=word) for _ in range(max(repeat, 5)))
        row("warm find_turns / a turnmark find process", f"{warm * 1000:.0f} ms", warm / command, 0.3)
        print(f"{'  (the turnmark find process)':<58}{command * 1000:>9.0f} ms")
        for how in ("stdin", "SIGTERM"):
            stopped = server.stop(how) if how == "stdin" else Server(root).stop(how)
            print(f"{'stop after ' + ('stdin closes' if how == 'stdin' else 'SIGTERM'):<58}{stopped * 1000:>9.0f} ms")


def measure_read(megabytes: float, repeat: int) -> None:
    with long_workspace(megabytes) as (root, _events, size):
        server = Server(root)
        started = time.perf_counter()
        server.call("list_turns", conversation=str(CONVERSATION_ID))
        listed = time.perf_counter() - started
        answer = server.request(
            "tools/call", {"name": "list_turns", "arguments": {"conversation": str(CONVERSATION_ID)}}
        )
        total = answer["result"]["structuredContent"]["total_turns"]
        last = f"jp-c{CONVERSATION_ID}:{total - 1}"
        read = min(server.call("read_turn", turn=last) for _ in range(repeat))
        peak = server.peak_memory()
        server.stop("stdin")
        command = process_time(
            "--workspace", str(root), "transcript", str(CONVERSATION_ID), "--turn", str(total - 1), repeat=repeat
        )
        row(
            "read_turn (conversation loaded) / turnmark transcript --turn",
            f"{read * 1000:.0f} ms",
            read / command,
            None,
        )
        print(f"{'  first call (loads the conversation)':<58}{listed:>11.2f} s")
        row("server peak memory / file size", f"{peak / 1e6:.0f} MB", peak / size, 2.5)


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--megabytes", type=float, default=200)
    parser.add_argument("--word", default="lock")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=("find", "read"), action="append")
    options = parser.parse_args()
    if not options.only or "find" in options.only:
        measure_find(options.conversations, options.word, options.repeat)
    if not options.only or "read" in options.only:
        measure_read(options.megabytes, options.repeat)


if __name__ == "__main__":
    main()
