"""Fuzz probe: mutated fixture and corpus files through every read command and ``summarize``.

Each case mutates one file of one conversation (byte flips, truncation, invalid
UTF-8, NaN, lone surrogates, deep nesting, huge numbers, duplicate keys, wrong
types, unknown kinds, ...; see ``fuzz_mutations``; in a few cases the file is
missing, a directory or a named pipe) and runs the 16 read
commands (both formats) and ``summarize --model builtin/extractive`` on it, in
two worker processes. It must show 0 tracebacks, exit codes 0/1/2 only, no file
changed by a read command or by a failing command, and no hang.

Reproduce a failure with ``TURNMARK_FUZZ_SEED=<seed> TURNMARK_FUZZ_CASES=<case>``.
"""

from __future__ import annotations

import json
import math
import os
import queue
import secrets
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import REPO, corpus_conversations, corpus_root

from .figures import FULL, record, scale
from .fuzz_worker import RUN_LIMIT, commands, load_sources, plan_case
from .processes import isolated_env

WORKERS = 2
RUNS_PER_CASE = len(commands("x"))
CASE_LIMIT = RUNS_PER_CASE * RUN_LIMIT + 60
"""A worker silent this long is stuck where the per-run alarm cannot reach (native code)."""


def seed() -> str:
    """``$TURNMARK_FUZZ_SEED``; else fixed at quick scale (reproducible suite) and fresh at full scale."""
    return os.environ.get("TURNMARK_FUZZ_SEED") or (secrets.token_hex(4) if FULL else "quick")


def case_numbers(total: int) -> list[int]:
    wanted = os.environ.get("TURNMARK_FUZZ_CASES")
    return [int(part) for part in wanted.split(",")] if wanted else list(range(total))


@dataclass
class Worker:
    cases: list[int]
    process: subprocess.Popen[str]
    stderr: Path
    current: int | None = None
    last: float = field(default_factory=time.monotonic)


@dataclass
class Outcome:
    runs: int = 0
    cases: int = 0
    exits: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)


def _read_lines(index: int, stream: IO[str], lines: queue.Queue[tuple[int, str | None]]) -> None:
    for line in stream:
        lines.put((index, line))
    lines.put((index, None))


class Pool:
    """Worker processes over a list of cases; a worker that dies or stalls is replaced, its case reported."""

    def __init__(self, source: str, fuzz_seed: str, workdir: Path, env: dict[str, str]) -> None:
        self.source, self.seed, self.workdir, self.env = source, fuzz_seed, workdir, env
        self.lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
        self.workers: dict[int, Worker] = {}
        self.spawned = 0
        self.outcome = Outcome()

    def spawn(self, cases: list[int]) -> None:
        if not cases:
            return
        index = self.spawned
        self.spawned += 1
        workdir = self.workdir / f"worker-{index}"
        workdir.mkdir(parents=True)
        stderr = workdir / "stderr.txt"
        command = [sys.executable, "-m", "tests.reliability.fuzz_worker", "--source", self.source, "--seed", self.seed]
        command += ["--cases", ",".join(map(str, cases)), "--workdir", str(workdir)]
        with stderr.open("w") as errors:
            process = subprocess.Popen(
                command, cwd=REPO, env=self.env, stdout=subprocess.PIPE, stderr=errors, text=True
            )
        assert process.stdout is not None
        threading.Thread(target=_read_lines, args=(index, process.stdout, self.lines), daemon=True).start()
        self.workers[index] = Worker(list(cases), process, stderr)

    def lost(self, index: int, kind: str, detail: str) -> None:
        """The worker ``index`` stopped early: report its case, continue with the rest in a new worker."""
        worker = self.workers.pop(index)
        if worker.process.poll() is None:
            worker.process.kill()
        worker.process.wait()
        stuck = worker.current if worker.current is not None else worker.cases[0]
        planned = plan_case(self.source, load_sources(self.source), self.seed, stuck)
        self.outcome.failures.append(
            {
                "seed": self.seed,
                "source": self.source,
                "case": stuck,
                "conversation": planned.source.dirname,
                "file": planned.target,
                "mutations": planned.mutations,
                "kind": kind,
                "command": ["(one of the case's commands)"],
                "exit": worker.process.returncode,
                "detail": f"{detail}\n{_tail(worker.stderr.read_text(errors='replace'))}",
            }
        )
        self.spawn([case for case in worker.cases if case != stuck])

    def run(self) -> Outcome:
        while self.workers:
            try:
                index, line = self.lines.get(timeout=1.0)
            except queue.Empty:
                for stalled, running in list(self.workers.items()):
                    if time.monotonic() - running.last > CASE_LIMIT:
                        self.lost(stalled, "hang", f"no progress for {CASE_LIMIT:.0f} s (stuck in native code?)")
                continue
            worker = self.workers.get(index)
            if worker is None:
                continue
            worker.last = time.monotonic()
            if line is None:
                if worker.process.wait() != 0 or worker.cases:
                    self.lost(index, "worker_died", f"worker exited with {worker.process.returncode}")
                else:
                    del self.workers[index]
                continue
            message = json.loads(line)
            if "start" in message:
                worker.current = message["start"]
                continue
            worker.cases.remove(message["done"])
            worker.current = None
            self._add(message)
        return self.outcome

    def _add(self, message: dict[str, Any]) -> None:
        outcome = self.outcome
        outcome.cases += 1
        outcome.runs += message["runs"]
        outcome.exits.update(message["exits"])
        for failure in message["failures"]:
            outcome.failures.append({**failure, "mutations": message["mutations"]})


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def signature(failure: dict[str, Any]) -> str:
    """What makes two failures the same defect: the kind, the exception and where it was raised."""
    detail = str(failure.get("detail", ""))
    if failure["kind"] != "traceback":
        return f"{failure['kind']} in {failure['command'][0]}"
    frames = [line.strip() for line in detail.splitlines() if line.strip().startswith("File ")]
    return f"{detail.split(':', maxsplit=1)[0]} at {frames[-1] if frames else '?'}"


def summary(outcome: Outcome, fuzz_seed: str, source: str) -> str:
    groups: dict[str, list[dict[str, Any]]] = {}
    for failure in outcome.failures:
        groups.setdefault(signature(failure), []).append(failure)
    lines = [
        f"fuzz ({source}, seed {fuzz_seed}): {len(outcome.failures)} failures in {outcome.runs} runs, "
        f"{len(groups)} distinct; reproduce one with "
        f"TURNMARK_FUZZ_SEED={fuzz_seed} TURNMARK_FUZZ_CASES=<case> pytest tests/reliability/test_fuzz.py -k {source}"
    ]
    for name, members in sorted(groups.items(), key=lambda item: -len(item[1]))[:8]:
        first = members[0]
        command = " ".join(first["command"])
        lines += [
            "",
            f"[{len(members)}x] {name} (cases {', '.join(str(m['case']) for m in members[:12])})",
            f"  case {first['case']} ({first.get('conversation', '?')}, {first.get('file', '?')}): "
            f"{'; '.join(first.get('mutations', []))[:300]}",
            f"  turnmark {command} -> exit {first['exit']}",
            *("    " + line for line in str(first["detail"]).splitlines()[-8:]),
        ]
    return "\n".join(lines)


def fuzz(source: str, tmp_path: Path) -> None:
    started = time.monotonic()
    fuzz_seed = seed()
    runs_wanted = scale(540, 10_200)
    cases = case_numbers(math.ceil(runs_wanted / RUNS_PER_CASE))
    env = {**isolated_env(tmp_path / "home"), "PYTHONHASHSEED": "0"}
    env.update({key: os.environ[key] for key in ("TURNMARK_CORPUS",) if key in os.environ})
    pool = Pool(source, fuzz_seed, tmp_path / "work", env)
    for worker in range(WORKERS):
        pool.spawn(cases[worker::WORKERS])
    outcome = pool.run()
    kinds = Counter(failure["kind"] for failure in outcome.failures)
    exits = ", ".join(f"{code}: {count}" for code, count in sorted(outcome.exits.items()))
    record(
        f"fuzz ({source})",
        f"{outcome.runs} command runs on {outcome.cases} mutated files, seed {fuzz_seed}",
        f"{kinds['traceback']} tracebacks, {kinds['hang']} hangs, "
        f"{kinds['wrote_on_error'] + kinds['read_command_wrote']} unexpected writes, "
        f"{kinds['exit_code']} other exit codes, {kinds['bad_json_output'] + kinds['worker_died']} other; "
        f"exit codes {exits}",
        "0 tracebacks, exit codes 0/1/2 only, no file changed on a non-zero exit (or by a read command), no hang",
        started,
        setups=outcome.cases,
    )
    if outcome.failures:
        pytest.fail(summary(outcome, fuzz_seed, source), pytrace=False)
    if not os.environ.get("TURNMARK_FUZZ_CASES"):
        assert outcome.runs >= runs_wanted, f"only {outcome.runs} of {runs_wanted} runs were made"


def test_fuzz_fixtures(tmp_path: Path) -> None:
    fuzz("fixtures", tmp_path)


@pytest.mark.skipif(
    not corpus_conversations(),
    reason=f"corpus not found at {corpus_root()} (set TURNMARK_CORPUS to a folder holding .jp/conversations)",
)
def test_fuzz_corpus(tmp_path: Path) -> None:
    fuzz("corpus", tmp_path)
