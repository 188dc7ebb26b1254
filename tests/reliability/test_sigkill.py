"""SIGKILL probe: ``summarize`` and ``label`` killed at random points on a large conversation.

The conversation (a fixture repeated to a few thousand entries, every ID
stored) lives in a temporary workspace. Reference runs in this process record
every version of every file an uninterrupted run writes (the offline
``summarize`` writes one version for all its batches). Then real ``turnmark`` processes are killed with
SIGKILL after a random delay, several times in a row, and one more run is left
to finish. It must show: after every kill each file parses and equals either
what it was before that run or a version an uninterrupted run writes (a
leftover ``*.tmp`` is allowed); the run after the kills succeeds; and it ends
on the same bytes as an uninterrupted run from the start.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app

from .figures import FULL, record, scale
from .processes import TURNMARK, isolated_env, run_turnmark
from .sigkill_conversation import CONVERSATION_ID, conversation_dir, write_conversation

CONV = str(CONVERSATION_ID)
COPIES = 150
BATCH_SIZE = 25
FILES = ("events.json", "base_config.json", "metadata.json")
LABELS = (("3", "Backoff for the stream handler"), ("e010000", "Zweiter Versuch: Rückoff ✓"))
SUMMARIZE: tuple[str, ...] = ("summarize", CONV, "--model", "builtin/extractive")
CONFIG = (
    f"[conversation.turn_summary.generate]\nbatch_size = {BATCH_SIZE}\n"
    '[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n'
)

STARTUP = 0.4
"""Roughly how long a run takes before it reads anything (interpreter and imports)."""

State = dict[str, bytes]
StrPath = str | os.PathLike[str]


def short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:10]


@dataclass
class Reference:
    """What uninterrupted runs write for one format of the conversation."""

    original: State
    summarized: State
    versions: dict[str, set[bytes]]
    """Every version of each file an uninterrupted ``summarize`` writes (one ``events.json`` per batch)."""
    labelled: dict[tuple[str, int], State]
    """The result of ``label`` number ``i`` of ``LABELS`` on the original (``"original"``) or summarized state."""


@dataclass
class Probe:
    """The references and the outcome so far, shared by the trial threads."""

    env: dict[str, str]
    references: dict[str, Reference]
    summarize_seconds: float
    label_seconds: float
    seed: str
    kills: int = 0
    finished_early: int = 0
    landed: Counter[str] = field(default_factory=Counter)
    tmp_left: int = 0
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def read_state(directory: Path) -> State:
    return {name: (directory / name).read_bytes() for name in FILES if (directory / name).exists()}


def put_state(workspace: Path, state: State) -> Path:
    """A fresh workspace holding the conversation in ``state`` (no leftovers, no lock files)."""
    shutil.rmtree(workspace, ignore_errors=True)
    directory = conversation_dir(workspace)
    directory.mkdir(parents=True)
    for name, data in state.items():
        (directory / name).write_bytes(data)
    (workspace / ".jp" / "config.toml").write_text(CONFIG)
    return directory


@contextmanager
def recorded_writes() -> Iterator[list[tuple[str, bytes]]]:
    """Every conversation file an in-process run renames into place, in order (the complete versions); the
    copies an undo step keeps (in turnmark's state folder) are not the conversation's."""
    writes: list[tuple[str, bytes]] = []
    original = os.replace

    def recording(
        source: StrPath, target: StrPath, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None
    ) -> None:
        folder = os.readlink(f"/proc/self/fd/{dst_dir_fd}") if dst_dir_fd is not None else str(target)
        if os.path.basename(target) in FILES and os.environ["TURNMARK_STATE_DIR"] not in folder:
            fd = os.open(source, os.O_RDONLY, dir_fd=src_dir_fd)
            with os.fdopen(fd, "rb") as handle:
                writes.append((os.path.basename(target), handle.read()))
        original(source, target, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", recording)
        yield writes


def in_process(workspace: Path, *args: str) -> None:
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *args],
        obj=Settings(new_id=sequential_ids(), environ={"JP_GLOBAL_CONFIG_DIR": str(workspace / "no-global")}),
    )
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)


def subprocess_run(workspace: Path, env: dict[str, str], args: tuple[str, ...]) -> tuple[int, str, float]:
    started = time.monotonic()
    done = run_turnmark(workspace, env, args, timeout=300)
    return done.returncode, done.stderr, time.monotonic() - started


def reference(root: Path, legacy: bool) -> Reference:
    """The versions uninterrupted in-process runs write, for the current or the legacy format."""
    workspace = root / ("reference-legacy" if legacy else "reference")
    original = read_state(write_conversation(root / ("source-legacy" if legacy else "source"), COPIES, legacy=legacy))
    directory = put_state(workspace, original)
    with recorded_writes() as writes:
        in_process(workspace, *SUMMARIZE)
    summarized = read_state(directory)
    versions: dict[str, set[bytes]] = {name: set() for name in FILES}
    for name, data in writes:
        versions[name].add(data)
    assert summarized["events.json"] in versions["events.json"], "the reference run's writes were not recorded"
    assert len(versions["events.json"]) == 1, "the offline summarizer writes all its batches in one save"
    labelled: dict[tuple[str, int], State] = {}
    for base_name, base in (("original", original), ("summarized", summarized)):
        for index, (turn, text) in enumerate(LABELS):
            put_state(workspace, base)
            in_process(workspace, "summary", "set", CONV, turn, text)
            labelled[(base_name, index)] = read_state(directory)
    return Reference(original, summarized, versions, labelled)


def prepare(root: Path) -> Probe:
    """The references, and how long real runs take (checked once against a real process)."""
    env = isolated_env(root / "home")
    references = {"current": reference(root, legacy=False), "legacy": reference(root, legacy=True)}
    checked = root / "checked"
    current = references["current"]
    directory = put_state(checked, current.original)
    code, stderr, summarize_seconds = subprocess_run(checked, env, SUMMARIZE)
    assert code == 0, f"an uninterrupted summarize failed: {stderr}"
    assert read_state(directory) == current.summarized, (
        "a real summarize process wrote other bytes than the in-process reference (is the outcome deterministic?)"
    )
    code, stderr, label_seconds = subprocess_run(checked, env, ("summary", "set", CONV, *LABELS[0]))
    assert code == 0, f"an uninterrupted label failed: {stderr}"
    assert read_state(directory) == current.labelled[("summarized", 0)]
    seed = os.environ.get("TURNMARK_SIGKILL_SEED") or (secrets.token_hex(4) if FULL else "quick")
    return Probe(env, references, summarize_seconds, label_seconds, seed)


def killed_run(probe: Probe, workspace: Path, args: tuple[str, ...], delay: float, at_write: float | None) -> bool:
    """Start ``turnmark args`` and SIGKILL it after ``delay`` seconds; whether it was still running.

    With ``at_write``, the kill waits after ``delay`` until a new ``*.tmp`` file exists (a write
    in progress) and comes ``at_write`` seconds later.
    """
    process = subprocess.Popen(
        [TURNMARK, "--workspace", str(workspace), *args],
        env=probe.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    directory = conversation_dir(workspace)
    leftovers = temporary_files(directory)
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        if at_write is not None:
            while process.poll() is None and not temporary_files(directory) - leftovers:
                time.sleep(0.0005)
            time.sleep(at_write)
        process.send_signal(signal.SIGKILL)
    return process.wait() == -signal.SIGKILL


def temporary_files(directory: Path) -> set[tuple[str, int, int]]:
    """The ``*.tmp`` files in the folder, told apart by inode and mtime (a new one differs from a leftover)."""
    found: set[tuple[str, int, int]] = set()
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(".tmp"):
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                found.add((entry.name, info.st_ino, info.st_mtime_ns))
    return found


def unsummarized(state: State) -> float:
    """The share of turns still without a summary."""
    try:
        entries = json.loads(state["events.json"])
    except (KeyError, ValueError):
        return 1.0
    starts = [entry for entry in entries if entry.get("type") == "turn_start"]
    return sum("summary" not in entry for entry in starts) / max(len(starts), 1)


def check_after_kill(
    probe: Probe, directory: Path, before: State, complete: dict[str, set[bytes]], context: str
) -> list[str]:
    problems: list[str] = []
    after = read_state(directory)
    for name in FILES:
        data = after.get(name)
        if data is None:
            if name in before:
                problems.append(f"{context}: {name} is gone")
            continue
        try:
            json.loads(data)
        except ValueError as error:
            problems.append(f"{context}: {name} does not parse ({error}; {len(data)} bytes)")
            continue
        if data != before.get(name) and data not in complete.get(name, set()):
            summaries = data.count(b'"summary"')
            problems.append(
                f"{context}: {name} is neither the old version nor a complete new one "
                f"({len(data)} bytes, sha {short(data)}, {summaries} summaries)"
            )
    with probe.lock:
        probe.landed["unchanged" if after == before else "new version"] += 1
        probe.tmp_left += any(directory.glob("*.tmp"))
    return problems


def trial(probe: Probe, number: int, workspace: Path) -> int:
    """One chain of kills from a known state, then a run left to finish; returns the kills made."""
    rng = random.Random(f"{probe.seed}:{number}")
    variant = rng.choice(("current", "legacy"))
    chosen = probe.references[variant]
    if rng.random() < 2 / 3:
        kind, args, start = f"summarize ({variant})", SUMMARIZE, chosen.original
        final, complete = chosen.summarized, chosen.versions
        chain, longest = rng.randint(2, 6), probe.summarize_seconds
    else:
        base_name = rng.choice(("original", "summarized"))
        index = rng.randrange(len(LABELS))
        kind, args = f"label ({variant}, {base_name})", ("summary", "set", CONV, *LABELS[index])
        start = chosen.original if base_name == "original" else chosen.summarized
        final = chosen.labelled[(base_name, index)]
        complete = {name: {data} for name, data in final.items()}
        chain, longest = rng.randint(1, 2), probe.label_seconds
    directory = put_state(workspace, start)
    kills = 0
    problems: list[str] = []
    delays: list[float | str] = []
    for _ in range(chain):
        before = read_state(directory)
        share = unsummarized(before) if args == SUMMARIZE else 1.0
        if share == 0:
            break
        delay = rng.uniform(0.15, STARTUP + share * (longest - STARTUP))
        at_write = rng.uniform(0, 0.004) if rng.random() < 0.5 else None
        delays.append(round(delay, 3) if at_write is None else f"{delay:.3f}+write+{at_write:.4f}")
        context = f"trial {number} (seed {probe.seed}) {kind}, kill after {delays}s"
        if killed_run(probe, workspace, args, delay, at_write):
            kills += 1
            problems += check_after_kill(probe, directory, before, complete, context)
        else:
            with probe.lock:
                probe.finished_early += 1
    context = f"trial {number} (seed {probe.seed}) {kind}, after kills at {delays}s"
    code, stderr, _ = subprocess_run(workspace, probe.env, args)
    if code != 0:
        problems.append(f"{context}: the next run failed with exit {code}: {stderr.strip()[-300:]}")
    elif read_state(directory) != final:
        state = read_state(directory)
        differ = [name for name in FILES if state.get(name) != final.get(name)]
        problems.append(f"{context}: the next run did not converge on the uninterrupted result ({differ} differ)")
    with probe.lock:
        probe.kills += kills
        probe.failures += problems
    return kills


def test_sigkill_during_summarize_and_label(tmp_path: Path, user_data: Path) -> None:
    started = time.monotonic()
    probe = prepare(tmp_path)
    wanted = scale(30, 300)
    numbers = iter(range(1_000_000))
    taken = threading.Lock()

    def worker(slot: int) -> None:
        while True:
            with probe.lock:
                if probe.kills >= wanted:
                    return
            with taken:
                number = next(numbers)
            try:
                trial(probe, number, tmp_path / f"slot-{slot}")
            except Exception as error:
                with probe.lock:
                    probe.failures.append(f"trial {number} (seed {probe.seed}): probe error {error!r}")
                return

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    versions = len(probe.references["current"].versions["events.json"])
    record(
        "SIGKILL (summarize, label)",
        f"{probe.kills} kills ({COPIES * 14} entries, current and legacy format, {versions} complete versions "
        "of events.json; "
        f"{probe.finished_early} runs finished before their kill), seed {probe.seed}",
        f"{len(probe.failures)} problem(s); after a kill: {probe.landed['unchanged']} unchanged, "
        f"{probe.landed['new version']} on a complete new version, {probe.tmp_left} with a leftover .tmp",
        "every file parses and is the old or a complete version after every kill; the next run succeeds "
        "and converges on the uninterrupted result",
        started,
        setups=probe.kills,
    )
    assert probe.kills >= wanted
    if probe.failures:
        pytest.fail(
            f"{len(probe.failures)} problems (seed {probe.seed}):\n" + "\n".join(probe.failures[:10]), pytrace=False
        )
