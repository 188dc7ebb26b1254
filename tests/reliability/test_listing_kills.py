"""The listing's snapshot killed at any point: `conversations` SIGKILLed while it lists, while it writes the rows
or the snapshot, between edits of the workspace (some in the same clock tick as the listing), then listed again
to the end; what it prints must be what a listing with no cache prints."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

from .figures import scale
from .processes import TURNMARK, isolated_env, run_turnmark

PROBE = (
    "the listing's snapshot, SIGKILLed while it lists, writes its rows or writes its snapshot",
    "{cases} setups: a workspace of 120 conversations, rounds of edits (same size and time kept, renames, "
    "deletions, additions, titles) each followed by a `conversations` killed after a random delay, then one run "
    "to the end",
    "the text and JSON of each run to the end equal those of a listing with no cache; no traceback",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""
ROUNDS = scale(1, 12)


def _workspace(root: Path) -> Path:
    sources = sorted((FIXTURES / ".jp" / "conversations").iterdir())
    folder = root / ".jp" / "conversations"
    folder.mkdir(parents=True)
    for number in range(120):
        source = sources[number % len(sources)]
        shutil.copytree(source, folder / f"{17_950_000_000 + number * 10}-{source.name.partition('-')[2] or 'c'}")
    return root


def _edit(root: Path, chance: random.Random) -> None:
    folders = sorted((root / ".jp" / "conversations").iterdir())
    folder = chance.choice(folders)
    kind = chance.randrange(5)
    if kind == 0:
        events = folder / "events.json"
        data = bytearray(events.read_bytes())
        at = data.find(b'"content": "') + len(b'"content": "')
        data[at] = ord("Q") if data[at] != ord("Q") else ord("R")
        stat = events.stat()
        events.write_bytes(bytes(data))
        os.utime(events, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    elif kind == 1:
        number, _, rest = folder.name.partition("-")
        folder.rename(folder.with_name(f"{number}-{rest}x"))
    elif kind == 2 and len(folders) > 20:
        shutil.rmtree(folder)
    elif kind == 3:
        shutil.copytree(folder, folder.with_name(f"{int(folder.name.split('-')[0]) + 3}-added"))
    else:
        (folder / "metadata.json").write_text(json.dumps({"title": f"Title {chance.randrange(10**6)}"}))


def _listing(root: Path, env: dict[str, str]) -> tuple[str, str]:
    text = run_turnmark(root, env, ("conversations",), 120)
    listed = run_turnmark(root, env, ("--format", "json", "conversations"), 120)
    for done in (text, listed):
        assert "Traceback" not in done.stderr, done.stderr
    return text.stdout, listed.stdout


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_a_listing_killed_anywhere_lists_as_no_cache_next(tmp_path: Path, seed: int) -> None:
    chance = random.Random(seed)
    root = _workspace(tmp_path / "ws")
    env = isolated_env(tmp_path / "home")
    fresh = isolated_env(tmp_path / "fresh")
    _listing(root, env)
    for _ in range(4):
        for _ in range(chance.randrange(1, 4)):
            _edit(root, chance)
        if chance.random() < 0.5:
            time.sleep(2.1)
        process = subprocess.Popen(
            [TURNMARK, "--workspace", str(root), "conversations"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(chance.uniform(0.05, 0.6))
        process.send_signal(signal.SIGKILL)
        process.wait()
        shutil.rmtree(tmp_path / "fresh" / "cache", ignore_errors=True)
        assert _listing(root, env) == _listing(root, fresh), f"seed {seed}: the cached listing differs"
