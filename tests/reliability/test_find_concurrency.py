"""Concurrent ``find``s beside a running ``watch`` and a JP-like writer, all real processes.

The writer appends a turn every tick (and edits earlier ones) under JP's lock; ``turnmark watch`` summarizes
with the offline summarizer and refreshes the search index after each catch-up; two loops run ``turnmark find``
over and over, each of which brings the index up to date first. No process may fail, print a traceback or wait
on the index beyond its lock; at the end the index passes SQLite's integrity check and a ``find`` through it
finds exactly what a ``--regex`` scan of the files finds.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from tests.conftest import REPO

from .figures import record, seconds
from .jp_writer import writer_workspace
from .processes import TURNMARK, cache_folder, isolated_env, run_turnmark, stop_writer_and_watch

CONVERSATION_ID = 17830000000


def find_loop(
    workspace: Path, env: dict[str, str], stop: threading.Event, outcomes: Counter[str], problems: list[str]
) -> None:
    while not stop.is_set():
        done = run_turnmark(workspace, env, ("find", "step", "--output", "count"), timeout=120)
        outcomes[f"exit {done.returncode}"] += 1
        if done.returncode not in (0, 1) or "Traceback" in done.stderr or "error:" in done.stderr:
            problems.append(f"exit {done.returncode}: {done.stderr[-800:]}")


def test_finds_beside_watch_and_a_jp_like_writer(tmp_path: Path) -> None:
    started = time.monotonic()
    duration = seconds(8, 60)
    workspace, directory, lock = writer_workspace(tmp_path, CONVERSATION_ID)
    env = isolated_env(tmp_path / "home")
    assert run_turnmark(workspace, env, ("find", "step"), timeout=120).returncode == 0
    watch_log = tmp_path / "watch.log"
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    stop = threading.Event()
    loops = [threading.Thread(target=find_loop, args=(workspace, env, stop, outcomes, problems)) for _ in range(2)]
    with watch_log.open("w") as log:
        watch = subprocess.Popen(
            [TURNMARK, "watch", "--workspace", str(workspace), "--settle", "0.2"], env=env, stderr=log
        )
    writer: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 30
        while "watching" not in watch_log.read_text() and time.monotonic() < deadline:
            assert watch.poll() is None, watch_log.read_text()
            time.sleep(0.05)
        writer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.reliability.jp_writer",
                str(directory),
                str(lock),
                "--seconds",
                str(duration),
                "--log",
                str(tmp_path / "writer.log"),
            ],
            cwd=REPO,
            env=env,
        )
        for loop in loops:
            loop.start()
        assert writer.wait(timeout=duration + 120) == 0, "the JP-like writer failed"
        stop.set()
        for loop in loops:
            loop.join(timeout=180)
        time.sleep(1.0)
    finally:
        stop.set()
        watch_code = stop_writer_and_watch(writer, watch)
    watched = watch_log.read_text(errors="replace")
    assert watch_code == 0, watched[-1500:]
    assert "Traceback" not in watched
    assert "search index was not updated" not in watched
    assert not problems, problems[:3]
    assert sum(outcomes.values()) >= 4, outcomes

    with sqlite3.connect(cache_folder(tmp_path / "home", workspace) / "cache.sqlite3") as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for table in ("turns_fts", "turns_all_fts"):
            connection.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    indexed = run_turnmark(workspace, env, ("find", "step", "--output", "count", "--in", "requests"), timeout=120)
    scanned = run_turnmark(
        workspace, env, ("find", "--regex", r"(?i)\bstep\b", "--output", "count", "--in", "requests"), timeout=120
    )
    assert indexed.stdout == scanned.stdout, (indexed.stderr, scanned.stderr)
    turns = int(indexed.stdout)
    assert turns > 3
    record(
        "find beside watch and a JP-like writer",
        f"{sum(outcomes.values())} finds in {duration:.0f} s, {turns} turns written",
        "no failure, index intact, index and scan agree",
        "concurrent finds and a running watch never corrupt the index",
        started,
    )
