"""Ctrl-C at random moments of a run whose work is spread over worker processes (issue 34, findings 7 and 11).

Each round runs a real ``turnmark -j 4`` in its own process group over a few hundred conversations, with a
fresh cache so that the workers start, and sends SIGINT to the group at a random moment of the run: the
command must end (30 s is the hang guard) with 130 (or killed by the SIGINT itself, which a shell reports as
130 too: a Ctrl-C while the interpreter shuts down, after Python has put back the default handler), or with its
own status when the run was over first, and print no traceback from the parent, a worker or the resource
tracker. Moments are drawn once the interpreter runs turnmark's code (before that, a Ctrl-C interrupts
Python's own start-up, which no program can catch).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, corpus_conversations
from tests.reliability.figures import record, scale
from tests.reliability.processes import TURNMARK, isolated_env, run_turnmark
from tests.support.copies import link_or_copy

COMMANDS = (
    ("conversations",),
    ("find", "lock"),
    ("check", "--all"),
    ("summarize", "--all", "--dry-run", "--model", "builtin/extractive"),
)
HANG_GUARD = 30.0
STARTED_MARK = "/_json."
"""A library the interpreter maps only once turnmark's own imports run (``site`` does not load it)."""

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to see a start-up end")


def many_conversations(root: Path, count: int) -> Path:
    """A workspace of ``count`` conversations hard-linked from the corpus and the fixtures."""
    fixtures = sorted(path for path in (FIXTURES / ".jp" / "conversations").iterdir() if path.is_dir())
    sources = corpus_conversations() + fixtures
    conversations = root / ".jp" / "conversations"
    conversations.mkdir(parents=True)
    for index in range(count):
        target = conversations / f"{17_000_000_000 + index}-copy"
        target.mkdir()
        for file in sources[index % len(sources)].iterdir():
            if file.is_file():
                link_or_copy(file, target / file.name)
    return root


def fresh_env(home: Path, workspace: Path) -> dict[str, str]:
    """An isolated environment whose caches and state are new, so the run reads every conversation again."""
    shutil.rmtree(workspace / ".jp" / ".turnmark", ignore_errors=True)
    env = isolated_env(home)
    env.update(
        XDG_CACHE_HOME=str(home / "cache"), XDG_STATE_HOME=str(home / "state"), TURNMARK_CACHE_DIR=str(home / "tm")
    )
    return env


def start(workspace: Path, env: dict[str, str], command: tuple[str, ...]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [TURNMARK, "--workspace", str(workspace), "-j", "4", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def wait_for_turnmark_code(process: subprocess.Popen[bytes]) -> None:
    """Return once ``process`` runs turnmark's imports (or has ended)."""
    maps = Path(f"/proc/{process.pid}/maps")
    while process.poll() is None:
        try:
            if STARTED_MARK in maps.read_text():
                return
        except OSError:
            return
        time.sleep(0.005)


def finish(process: subprocess.Popen[bytes]) -> tuple[int | None, str]:
    """The exit status (``None``: still running after the hang guard, then killed) and stderr."""
    try:
        _, err = process.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        return None, err.decode(errors="replace")
    return process.returncode, err.decode(errors="replace")


@pytest.fixture(scope="module")
def workspace_of_many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return many_conversations(tmp_path_factory.mktemp("many") / "ws", scale(200, 3000))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command[0])
def test_ctrl_c_at_any_moment_ends_the_run_without_a_hang_or_a_traceback(
    workspace_of_many: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    began = time.monotonic()
    uninterrupted = start(workspace_of_many, fresh_env(tmp_path / "whole", workspace_of_many), command)
    wait_for_turnmark_code(uninterrupted)
    ready = time.monotonic()
    status, err = finish(uninterrupted)
    span = time.monotonic() - ready
    assert status is not None, err
    assert "Traceback" not in err, err
    chosen = random.Random(f"{command}")
    rounds = scale(3, 20)
    problems: list[str] = []
    for number in range(rounds):
        process = start(workspace_of_many, fresh_env(tmp_path / f"round-{number}", workspace_of_many), command)
        wait_for_turnmark_code(process)
        time.sleep(chosen.uniform(0, span))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        ended, err = finish(process)
        if ended is None:
            problems.append(f"round {number}: still running {HANG_GUARD:g} s after Ctrl-C")
        elif ended not in (130, -signal.SIGINT, status) or "Traceback" in err:
            problems.append(f"round {number}: exit {ended}, stderr:\n{err[-2000:]}")
    record(
        f"Ctrl-C while workers run: `-j 4 {' '.join(command)}`",
        f"{rounds} SIGINTs to the process group at random moments over {scale(200, 3000)} conversations",
        f"{len(problems)} problem(s)",
        f"every run ends (30 s guard) with 130 or {status}, no traceback from any process",
        began,
        setups=rounds,
    )
    assert not problems, "\n".join(problems)


def test_jobs_beyond_two_per_core_are_capped_with_a_note(workspace: Path, tmp_path: Path) -> None:
    result = run_turnmark(workspace, isolated_env(tmp_path / "home"), ("-j", "100000", "conversations"), 60)
    assert result.returncode == 0, result.stderr
    assert "note: --jobs 100000 is more than this machine can use; using" in result.stderr
