"""One fuzz worker process: runs the given cases in-process (typer's CliRunner) and reports JSON lines.

``python -m tests.reliability.fuzz_worker --source fixtures|corpus --seed S --cases 0,2,4 --workdir DIR``

For each case it writes ``{"start": N}``, then ``{"done": N, ...}`` with the runs made
and every failure found, on the file descriptor that was stdout at start (the
commands' own output is captured by the runner; anything else written to fd 1
goes to stderr). A run that takes longer than ``RUN_LIMIT`` seconds is
interrupted by an alarm and counts as a hang; the rest of that case is skipped.
A few cases replace the file by something that is not a file (missing, a
directory, a named pipe).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app

from .fuzz_mutations import BASE_CONFIG, EVENTS, METADATA, mutate

RUN_LIMIT = 5.0
FILE_KIND_CHANCE = 0.03
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "workspace" / ".jp" / "conversations"
LOOPBACK = ("127.0.0.1", "::1", "localhost")

READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("turns",),
    ("check",),
    ("transcript",),
    ("project",),
    ("project", "--provider", "ollama"),
    ("project", "--provider", "openai"),
    ("project", "--provider", "anthropic"),
)
SUMMARIZE = ("summarize", "--model", "builtin/extractive")


class Hang(BaseException):
    """Raised by the alarm: not an ``Exception``, so the runner does not swallow it."""


@dataclass(frozen=True)
class Source:
    dirname: str
    files: dict[str, bytes]


def load_sources(kind: str) -> list[Source]:
    if kind == "fixtures":
        directories = sorted(path for path in FIXTURES.iterdir() if path.is_dir())
    else:
        from tests.conftest import corpus_conversations

        directories = corpus_conversations()
    return [
        Source(
            directory.name,
            {
                name: (directory / name).read_bytes()
                for name in (EVENTS, BASE_CONFIG, METADATA)
                if (directory / name).exists()
            },
        )
        for directory in directories
    ]


def commands(conversation: str | None) -> list[tuple[str, ...]]:
    named = (conversation,) if conversation else ()
    listed: list[tuple[str, ...]] = []
    for output in ((), ("--format", "json")):
        listed.append(("conversations", *output))
        listed += [(*command, *named, *output) for command in READ_COMMANDS]
    listed.append((SUMMARIZE[0], *named, *SUMMARIZE[1:]))
    return listed


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the workspace but its lock files and the workspace cache (a read may fill it)."""
    locks = root / ".jp" / "locks"
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and locks not in path.parents and not path.name.startswith("cache.sqlite3")
    }


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def _loopback_only() -> None:
    """Refuse any connection that would leave the machine (a config mutation must never reach the internet)."""
    original = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in LOOPBACK and not host.startswith("127."):
            raise OSError(f"fuzz probe: connection to {host} refused (loopback only)")
        original(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]


def tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


@dataclass(frozen=True)
class Case:
    """One mutated conversation: which files it has, what was done, whether commands name it."""

    source: Source
    target: str
    files: dict[str, bytes]
    mutations: list[str]
    conversation: str | None
    replaced: str | None = None
    """The target is not a file at all: ``missing``, a ``directory`` or a ``fifo`` (a named pipe)."""


def plan_case(source_kind: str, sources: list[Source], seed: str, case: int) -> Case:
    """The case numbered ``case``: the same files and mutations for the same seed."""
    rng = random.Random(f"{seed}:{source_kind}:{case}")
    source = rng.choice(sources)
    target = rng.choices((EVENTS, BASE_CONFIG, METADATA), weights=(70, 15, 15))[0]
    files = dict(source.files)
    files[target], mutations = mutate(rng, target, files.get(target, b"{}\n"))
    conversation = source.dirname.split("-")[0] if rng.random() < 0.8 else None
    replaced = rng.choice(("missing", "directory", "fifo")) if rng.random() < FILE_KIND_CHANCE else None
    if replaced:
        mutations = [f"file_kind: {target} is {'a ' if replaced != 'missing' else ''}{replaced}"]
    return Case(source, target, files, mutations, conversation, replaced)


def run_case(source_kind: str, sources: list[Source], seed: str, case: int, workdir: Path) -> dict[str, Any]:
    planned = plan_case(source_kind, sources, seed, case)
    source, target, mutations, conversation = planned.source, planned.target, planned.mutations, planned.conversation
    root = workdir / "ws"
    shutil.rmtree(root, ignore_errors=True)
    directory = root / ".jp" / "conversations" / source.dirname
    directory.mkdir(parents=True)
    for name, data in planned.files.items():
        if name != target or planned.replaced is None:
            (directory / name).write_bytes(data)
        elif planned.replaced == "directory":
            (directory / name).mkdir()
        elif planned.replaced == "fifo":
            os.mkfifo(directory / name)

    described = {"seed": seed, "source": source_kind, "case": case, "conversation": source.dirname, "file": target}
    failures: list[dict[str, Any]] = []
    exits: dict[str, int] = {}
    runs = 0
    for command in commands(conversation):
        args = ["--workspace", str(root), *command]
        before = snapshot(root)
        settings = Settings(new_id=sequential_ids(), environ={"JP_GLOBAL_CONFIG_DIR": str(workdir / "global")})
        signal.setitimer(signal.ITIMER_REAL, RUN_LIMIT)
        try:
            result = CliRunner().invoke(app, args, obj=settings, env={"COLUMNS": "100", "NO_COLOR": "1"})
        except Hang:
            failures.append(
                {**described, "kind": "hang", "command": command, "exit": None, "detail": f"> {RUN_LIMIT} s"}
            )
            runs += 1
            break
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        runs += 1
        exits[str(result.exit_code)] = exits.get(str(result.exit_code), 0) + 1
        after = snapshot(root)
        written = changed(before, after)
        found: list[tuple[str, str]] = []
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            trace = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else ""
            found.append(
                ("traceback", f"{type(result.exception).__name__}: {str(result.exception)[:200]}\n{tail(trace)}")
            )
        if result.exit_code not in (0, 1, 2):
            found.append(("exit_code", f"exit code {result.exit_code}"))
        if written and result.exit_code != 0:
            found.append(("wrote_on_error", f"exit {result.exit_code} but changed {written}"))
        elif written and command[0] != "summarize":
            found.append(("read_command_wrote", f"changed {written}"))
        if "json" in command and result.exit_code == 0 and result.exception is None:
            try:
                json.loads(result.stdout)
            except ValueError as error:
                found.append(("bad_json_output", f"stdout is not JSON ({error}): {result.stdout[:120]!r}"))
        for kind, detail in found:
            failures.append(
                {
                    **described,
                    "kind": kind,
                    "command": command,
                    "exit": result.exit_code,
                    "detail": detail,
                    "stderr": tail(result.stderr, 3),
                }
            )
    return {"done": case, "runs": runs, "mutations": mutations, "exits": exits, "failures": failures}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", choices=("fixtures", "corpus"), required=True)
    parser.add_argument("--seed", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    options = parser.parse_args(argv)
    report = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    _loopback_only()
    signal.signal(signal.SIGALRM, _alarm)
    sources = load_sources(options.source)
    (options.workdir / "global").mkdir(parents=True, exist_ok=True)
    for case in (int(part) for part in options.cases.split(",") if part):
        report.write(json.dumps({"start": case}) + "\n")
        report.write(json.dumps(run_case(options.source, sources, options.seed, case, options.workdir)) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
