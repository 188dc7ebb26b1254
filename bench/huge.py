"""Huge conversations (issue 24): memory, time and growth of the read commands on one long conversation.

``generate_long_conversation`` writes a long agentic session with big tool outputs (legacy format, no
``event_id`` on any entry: every ID is derived at load, JP's older files). Each row runs a real ``turnmark``
process (or, for load + save, code in this process) and compares it with a baseline of the same run:

- peak memory (the process's RSS high-water mark) of ``turns``, ``check``, ``transcript``, ``project`` on the
  ``--megabytes`` (default 200) conversation / the file's size: <= 2.5x;
- ``turns`` on it / a Python process that reads and ``msgspec``-decodes the file: <= 3x; ``show`` in every
  format <= 4x, ``show | head -n 50`` <= 3x (issue 40);
- ``turns`` on another shape, 10,000 short coding turns (``bench/catchup.py``'s generator, 30 MB, five times the
  entries per megabyte), current and legacy format / the same floor: <= 3x (``--only short``: the runs alternate
  with the floor's, ``--pairs`` of them, default 10, and the ratio is the median of the pairs');
- growth from a 1,000-turn to a 10,000-turn conversation for ``turns``, ``check``, ``project``: <= 11x;
- load + save of a 100 MB conversation / ``msgspec`` decode + encode of the same bytes: <= 3x.

Each time is the better of ``--repeat`` runs (default 2). Run: ``python bench/huge.py [--megabytes 200]``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catchup import long_conversation, make_workspace
from bench.common import with_bytecode
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.collector import collector_paused

TURNMARK = str(Path(sys.executable).parent / "turnmark")
CONVERSATION_ID = 17900000000
TURN_BYTES = 9_460
"""About what one generated turn takes on disk (to size a conversation by megabytes)."""
FLOOR = """
import sys, msgspec
with open(sys.argv[1], "rb") as handle:
    msgspec.json.decode(handle.read())
"""
WORDS = [
    "the",
    "build",
    "fails",
    "because",
    "the",
    "stream",
    "handler",
    "retries",
    "without",
    "backoff",
    "while",
    "the",
    "lock",
    "is",
    "held",
    "by",
    "another",
    "writer",
    "and",
    "the",
    "index",
    "is",
    "rebuilt",
    "from",
    "scratch",
    "on",
    "every",
    "save",
    "so",
    "we",
    "move",
    "the",
    "check",
    "into",
    "the",
    "loader",
]


def _text(seed: int, words: int) -> str:
    return " ".join(WORDS[(seed * 7 + position * 3) % len(WORDS)] for position in range(words))


def _tool_output(seed: int) -> str:
    lines = [f"{seed:>6}:{line:>4}  {_text(seed + line, 9)}" for line in range(48)]
    return "\n".join(lines)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def _timestamp(turn: int, second: int) -> str:
    minutes, seconds = divmod(turn * 60 + second, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"2026-{1 + days // 28:02d}-{1 + days % 28:02d} {hours:02d}:{minutes:02d}:{seconds:02d}.{turn % 997:03d}"


def _turn(turn: int) -> Iterator[dict[str, object]]:
    start: dict[str, object] = {"timestamp": _timestamp(turn, 0), "type": "turn_start"}
    if turn % 3 == 0:
        start["summary"] = f"Step {turn}: {_text(turn, 6)}"
    yield start
    yield {"timestamp": _timestamp(turn, 1), "type": "chat_request", "content": f"Step {turn}: {_text(turn, 40)}"}
    yield {"timestamp": _timestamp(turn, 2), "type": "chat_response", "reasoning": _text(turn + 1, 60)}
    for call in range(2):
        call_id = f"call_{turn}_{call}"
        yield {
            "timestamp": _timestamp(turn, 3 + call * 2),
            "type": "tool_call_request",
            "id": call_id,
            "name": "fs_read_file" if call == 0 else "cargo_check",
            "arguments": {"path": _b64(f"crates/part_{turn % 97}/src/lib_{call}.rs")},
        }
        yield {
            "timestamp": _timestamp(turn, 4 + call * 2),
            "type": "tool_call_response",
            "id": call_id,
            "content": _b64(_tool_output(turn * 2 + call)),
            "is_error": call == 1 and turn % 11 == 0,
        }
    yield {"timestamp": _timestamp(turn, 9), "type": "chat_response", "message": f"Done: {_text(turn + 2, 30)}"}


def _indented(entry: object) -> bytes:
    formatted = msgspec.json.format(msgspec.json.encode(entry), indent=2)
    return b"\n".join(b"  " + line for line in formatted.split(b"\n"))


def generate_long_conversation(folder: Path, megabytes: float | None = None, turns: int | None = None) -> Path:
    """Write a long conversation into the workspace ``folder`` (``.jp/conversations/<id>``); its directory.

    Sized by ``megabytes`` (about) or by ``turns``. Legacy format: a head ``config_delta``, no ``event_id``s;
    each turn has a request, reasoning, two tool calls with base64 outputs of about 3 kB, and an answer;
    every third turn has a stored summary. The bytes are exactly what a save writes (JP's pretty JSON).
    """
    count = turns if turns is not None else max(1, round((megabytes or 1) * 1_000_000 / TURN_BYTES))
    directory = folder / ".jp" / "conversations" / f"{CONVERSATION_ID}-long-session"
    directory.mkdir(parents=True, exist_ok=True)
    head = {"type": "config_delta", "timestamp": _timestamp(0, 0), "delta": {"assistant": {"name": "bench"}}}
    with (directory / "events.json").open("wb") as out:
        out.write(b"[\n" + _indented(head))
        for turn in range(count):
            out.write(b"".join(b",\n" + _indented(entry) for entry in _turn(turn)))
        out.write(b"\n]\n")
    last = _timestamp(count - 1, 9)
    metadata = {"title": f"A long session of {count} turns", "last_activated_at": last}
    (directory / "metadata.json").write_bytes(msgspec.json.format(msgspec.json.encode(metadata), indent=2) + b"\n")
    return directory


# Measuring ----------------------------------------------------------------------------------------------------


def run_measured(*args: str) -> tuple[float, int]:
    """Wall-clock seconds and peak RSS (bytes) of one process; exits on a crash or a traceback."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(args, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    if process.returncode not in (0, 1) or b"Traceback" in stderr:
        sys.exit(f"{' '.join(args)} failed ({process.returncode}): {stderr.decode(errors='replace')[-600:]}")
    return elapsed, usage.ru_maxrss * 1024


def best_run(args: tuple[str, ...], repeat: int) -> tuple[float, int]:
    runs = [run_measured(*args) for _ in range(repeat)]
    return min(seconds for seconds, _ in runs), min(peak for _, peak in runs)


def row(label: str, value: str, ratio: float, target: float) -> None:
    verdict = "met" if ratio <= target else "NOT met"
    print(f"{label:<46}{value:>14}  {ratio:7.2f}x  (target <= {target}x: {verdict})")


COMMANDS = {
    "turns": ("turns",),
    "check": ("check",),
    "transcript": ("transcript",),
    "project": ("project",),
    "show": ("show",),
    "show -F md": ("show", "--format", "md"),
    "show -F html": ("show", "--format", "html"),
    "show -F json": ("show", "--format", "json"),
}
TIME_TARGETS = {"turns": 3.0, "show": 4.0, "show -F md": 4.0, "show -F html": 4.0, "show -F json": 4.0}
"""Issue 40's time targets against the floor (the others are only printed)."""


def command(root: Path, name: str) -> tuple[str, ...]:
    return (TURNMARK, "--workspace", str(root), *COMMANDS[name], str(CONVERSATION_ID))


@contextlib.contextmanager
def long_workspace(megabytes: float) -> Iterator[tuple[Path, Path, int]]:
    """A temporary workspace holding one generated conversation of about ``megabytes``: the workspace, its
    ``events.json`` and the file's size (said on stdout)."""
    with tempfile.TemporaryDirectory(prefix="turnmark-huge-") as temporary:
        root = Path(temporary)
        events = generate_long_conversation(root, megabytes=megabytes) / "events.json"
        size = events.stat().st_size
        print(f"one conversation: {size / 1e6:.0f} MB")
        yield root, events, size


def measure_big(megabytes: float, repeat: int) -> None:
    with long_workspace(megabytes) as (root, events, size):
        floor, _ = best_run((sys.executable, "-c", FLOOR, str(events)), repeat)
        print(f"{'floor: python + read + msgspec decode':<46}{floor:>12.2f} s")
        for name in COMMANDS:
            seconds, peak = best_run(command(root, name), repeat)
            row(f"{name}: peak RSS / file size", f"{peak / 1e6:.0f} MB", peak / size, 2.5)
            if name in TIME_TARGETS:
                row(f"{name}: time / floor", f"{seconds:.2f} s", seconds / floor, TIME_TARGETS[name])
            else:
                print(f"{name + ': time':<46}{seconds:>12.2f} s")
        pipe = " ".join(command(root, "show")) + " | head -n 50 > /dev/null"
        seconds = min(_timed_shell(pipe) for _ in range(repeat))
        row("show | head -n 50: time / floor", f"{seconds:.2f} s", seconds / floor, 3)


def _timed_shell(line: str) -> float:
    start = time.perf_counter()
    subprocess.run(line, shell=True, check=False)
    return time.perf_counter() - start


def measure_short(pairs: int) -> None:
    """``turns`` on 10,000 short turns, current and legacy, against the floor: alternating runs, the median of
    the pairs' ratios (the machine drifts within a run)."""
    for legacy in (False, True):
        with tempfile.TemporaryDirectory(prefix="turnmark-short-") as temporary:
            root = Path(temporary)
            make_workspace(root, *long_conversation(10_000, legacy=legacy))
            events = next(root.glob(".jp/conversations/*/events.json"))
            floor_args = (sys.executable, "-c", FLOOR, str(events))
            turns_args = (TURNMARK, "--workspace", str(root), "turns")
            run_measured(*floor_args), run_measured(*turns_args)
            timed = [(run_measured(*floor_args)[0], run_measured(*turns_args)[0]) for _ in range(pairs)]
            floor = statistics.median(seconds for seconds, _ in timed)
            ours = statistics.median(seconds for _, seconds in timed)
            ratio = statistics.median(turns / floor for floor, turns in timed)
            size = events.stat().st_size / 1e6
            label = f"turns, 10,000 short turns ({size:.0f} MB, {'legacy' if legacy else 'current'}) / floor"
            row(label, f"{ours:.2f}/{floor:.2f} s", ratio, 3)


def measure_growth(repeat: int) -> None:
    times: dict[int, dict[str, float]] = {}
    for turns in (1_000, 10_000):
        with tempfile.TemporaryDirectory(prefix="turnmark-growth-") as temporary:
            root = Path(temporary)
            generate_long_conversation(root, turns=turns)
            times[turns] = {name: best_run(command(root, name), repeat)[0] for name in ("turns", "check", "project")}
    start = best_run((sys.executable, "-c", "pass"), repeat)[0]
    for name in ("turns", "check", "project"):
        small, large = times[1_000][name], times[10_000][name]
        row(f"{name}: 10,000 / 1,000 turns", f"{small:.2f}/{large:.2f} s", large / small, 11)
        row(f"{name}: the same without python's start ({start:.2f} s)", "", (large - start) / (small - start), 11)


def measure_load_save(megabytes: float, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="turnmark-loadsave-") as temporary:
        events = (generate_long_conversation(Path(temporary), megabytes=megabytes) / "events.json").read_bytes()

    def baseline() -> float:
        start = time.perf_counter()
        msgspec.json.encode(msgspec.json.decode(events))
        return time.perf_counter() - start

    def load_save() -> float:
        """As ``read_conversation`` and ``save_stream`` do it (the cycle collector waits)."""
        start = time.perf_counter()
        with collector_paused():
            stream = ConversationStream.from_json(events, None, new_id=sequential_ids()).unwrap()
            stream.to_json()
        return time.perf_counter() - start

    floor = min(baseline() for _ in range(repeat))
    ours = min(load_save() for _ in range(repeat))
    row(f"load + save {len(events) / 1e6:.0f} MB / msgspec decode + encode", f"{ours:.2f} s", ours / floor, 3)


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=200)
    parser.add_argument("--load-save-megabytes", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--only", choices=("big", "short", "growth", "load-save"), action="append")
    options = parser.parse_args()
    parts = options.only or ["big", "short", "growth", "load-save"]
    if "big" in parts:
        measure_big(options.megabytes, options.repeat)
    if "short" in parts:
        measure_short(options.pairs)
    if "growth" in parts:
        measure_growth(options.repeat)
    if "load-save" in parts:
        measure_load_save(options.load_save_megabytes, options.repeat)


if __name__ == "__main__":
    main()
