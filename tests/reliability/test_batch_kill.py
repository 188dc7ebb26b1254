"""SIGKILL probe of an offline ``summarize --all`` over many conversations: killed anywhere in the run, before,
across and after the syncs it makes once per batch (``storage/durability.py``), on its worker processes.

The workspace holds copies of the fixture conversations, legacy and current, under new IDs (more than two
batches of them). Each trial starts from the same files, kills a real ``turnmark`` after a random delay
within an uninterrupted run's time, and checks: every file parses and the listing reads every
conversation without a problem; each conversation that changed and was legacy is taken back by ``edit
--undo`` to its old bytes exactly (a sample, each a process); and a run after the kill finishes with the
same summarized turns as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

from turnmark.shell.storage.durability import BATCH

from .figures import record, scale
from .processes import TURNMARK, isolated_env, run_turnmark

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SUMMARIZE = ("summarize", "--all", "--model", "builtin/extractive")
FILES = ("events.json", "base_config.json", "metadata.json")


def _workspace(root: Path) -> Path:
    """A workspace of ``2 * BATCH + 10`` conversations: the fixtures' legacy and current ones, copied."""
    shutil.copytree(FIXTURES / "workspace", root)
    conversations = root / ".jp" / "conversations"
    sources = sorted([*conversations.iterdir(), *(FIXTURES / "legacy-workspace" / ".jp" / "conversations").iterdir()])
    for number in range(2 * BATCH + 10 - len(sources)):
        source = sources[number % len(sources)]
        stem, _, slug = source.name.partition("-")
        shutil.copytree(source, conversations / f"{int(stem) + 1 + number}-{slug}")
    return root


def _files(workspace: Path) -> dict[str, dict[str, bytes]]:
    return {
        folder.name: {name: (folder / name).read_bytes() for name in FILES if (folder / name).is_file()}
        for folder in sorted((workspace / ".jp" / "conversations").iterdir())
        if folder.is_dir()
    }


def _listing(workspace: Path, env: dict[str, str]) -> list[dict[str, object]]:
    done = run_turnmark(workspace, env, ("conversations", "--format", "json"), timeout=120)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)["conversations"]
    return rows


def _summarized(workspace: Path, env: dict[str, str]) -> dict[str, object]:
    return {str(row["id"]): row["summarized_turns"] for row in _listing(workspace, env)}


def test_sigkill_across_the_batches_of_summarize_all(tmp_path: Path) -> None:
    started = time.monotonic()
    seed = secrets.randbits(32)
    rng = random.Random(seed)
    pristine = _workspace(tmp_path / "pristine")
    before = _files(pristine)
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    env = isolated_env(tmp_path / "home-reference")
    began = time.monotonic()
    done = run_turnmark(reference, env, SUMMARIZE, timeout=300)
    longest = time.monotonic() - began
    assert done.returncode in (0, 1), done.stderr
    expected = _summarized(reference, env)
    assert sum(int(str(count)) for count in expected.values()) > 0

    problems: list[str] = []
    changed_at_kill: list[int] = []
    undone = 0
    for trial in range(scale(4, 20)):
        workspace = tmp_path / f"trial-{trial}"
        shutil.copytree(pristine, workspace)
        env = isolated_env(tmp_path / f"home-{trial}")
        delay = rng.uniform(0.2, longest)
        context = f"trial {trial} (seed {seed}), killed after {delay:.2f} s of {longest:.2f}"
        process = subprocess.Popen(
            [TURNMARK, "--workspace", str(workspace), *SUMMARIZE],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        after = _files(workspace)
        changed = [name for name in before if after.get(name) != before[name]]
        changed_at_kill.append(len(changed))
        for name, kept in after.items():
            for file, data in kept.items():
                try:
                    json.loads(data)
                except ValueError as error:
                    problems.append(f"{context}: {name}/{file} does not parse ({error})")
        problems += [
            f"{context}: {row['id']} cannot be read after the kill: {row['error']}"
            for row in _listing(workspace, env)
            if row["error"] is not None
        ]
        legacy = [name for name in changed if "base_config.json" not in before[name]]
        for name in rng.sample(legacy, min(2, len(legacy))):
            conversation = "jp-c" + name.partition("-")[0]
            undo = run_turnmark(workspace, env, ("edit", "--undo", conversation), timeout=60)
            undone += 1
            if undo.returncode != 0 or _files(workspace)[name] != before[name]:
                problems.append(f"{context}: edit --undo {conversation} did not give back the old files: {undo.stderr}")
            else:
                again = run_turnmark(workspace, env, ("summarize", conversation, "--model", "builtin/extractive"), 60)
                if again.returncode != 0:
                    problems.append(f"{context}: {conversation} could not be summarized again: {again.stderr}")
        finish = run_turnmark(workspace, env, SUMMARIZE, timeout=300)
        if finish.returncode not in (0, 1):
            problems.append(f"{context}: the run after the kill failed with exit {finish.returncode}")
        elif _summarized(workspace, env) != expected:
            problems.append(f"{context}: the run after the kill did not summarize what an uninterrupted run does")
    record(
        "SIGKILL (summarize --all, across its batches)",
        f"{len(changed_at_kill)} offline summarize --all runs over {len(before)} conversations killed (batches of "
        f"{BATCH}), {undone} undos",
        f"conversations changed at each kill: {changed_at_kill}; problems: {len(problems)}",
        "every file old or new, every conversation readable, undo restores, the next run converges",
        started,
        setups=len(changed_at_kill),
    )
    assert not problems, "\n".join(problems[:10])
