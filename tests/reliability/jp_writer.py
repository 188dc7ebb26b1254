"""A JP-like writer for the concurrent-writer probe: appends a turn every tick under JP's lock.

``python -m tests.reliability.jp_writer CONVERSATION_DIR LOCK_FILE --seconds S --log FILE [--seed S]``

JP's protocol (jp-runtime §3.5-3.6): a non-blocking ``flock`` on the lock file
(retried while another process holds it), read ``events.json``, append a turn
(``turn_start``, ``chat_request``, ``chat_response``, with ``event_id`` and
``request_id`` as RFD 097/098 write them), write ``events.json.tmp`` and rename
it over the file, release. Now and then it edits an earlier turn's request
and removes that turn's summary, as a user editing by hand does.

Unlike JP at HEAD, it checks after locking that the path still names the
inode it locked, and deletes the lock file before unlocking (as turnmark
does): JP's own order leaves a window where two processes both hold a lock,
and this probe is about turnmark's writes, not about that window.

Each request reads ``T<turn>v<version> ...``: the version goes up with every
edit, so the probe can tell which content a summary was written for. The log
holds one JSON line per action and a final ``{"final": ...}`` line.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

TICK = 0.2
EDIT_CHANCE = 0.2


def timestamp() -> str:
    text = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0")
    return text + "0" if text.endswith(".") else text


def ids(turn: int) -> tuple[str, str, str]:
    """The turn's ``turn_start``, ``chat_request`` and ``chat_response`` IDs (7 lowercase letters and digits)."""
    return f"w{turn:05d}s", f"w{turn:05d}q", f"w{turn:05d}r"


def request_text(turn: int, version: int) -> str:
    return f"T{turn}v{version} please do step {turn} of the plan (revision {version})"


def response_text(turn: int) -> str:
    return f"Did step {turn}."


def turn_entries(turn: int) -> list[dict[str, Any]]:
    start, request, response = ids(turn)
    return [
        {"event_id": start, "timestamp": timestamp(), "type": "turn_start"},
        {"event_id": request, "timestamp": timestamp(), "type": "chat_request", "content": request_text(turn, 0)},
        {
            "event_id": response,
            "request_id": request,
            "timestamp": timestamp(),
            "type": "chat_response",
            "message": response_text(turn),
        },
    ]


def write_json(path: Path, value: Any) -> None:
    """JP's ``write_json``: pretty JSON and a newline to ``<file>.tmp``, renamed over the file; unchanged: no write."""
    data = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()
    with contextlib.suppress(FileNotFoundError):
        if path.read_bytes() == data:
            return
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


@contextlib.contextmanager
def jp_lock(path: Path, waits: Counter[str]) -> Iterator[None]:
    """Hold the conversation lock, retrying every few milliseconds while someone else holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            waits["locked"] += 1
            time.sleep(0.005)
            continue
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            waits["stale inode"] += 1
            continue
        break
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "acquired_at": datetime.now(UTC).isoformat()}).encode())
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.close(fd)


def create(directory: Path, turns: int) -> None:
    """A new conversation with ``turns`` turns, written as JP writes it."""
    directory.mkdir(parents=True)
    write_json(directory / "metadata.json", {"title": "Concurrent", "last_activated_at": timestamp()})
    write_json(directory / "base_config.json", {})
    write_json(directory / "events.json", [entry for turn in range(turns) for entry in turn_entries(turn)])


def writer_workspace(tmp_path: Path, conversation_id: int) -> tuple[Path, Path, Path]:
    """A workspace with one three-turn conversation for the writer: the workspace, the conversation, its lock."""
    workspace = tmp_path / "ws"
    directory = workspace / ".jp" / "conversations" / f"{conversation_id}-concurrent"
    create(directory, 3)
    return workspace, directory, workspace / ".jp" / "locks" / f"jp-c{conversation_id}.lock"


class Writer:
    def __init__(self, directory: Path, lock: Path, log: IO[str], seed: str) -> None:
        self.events = directory / "events.json"
        self.lock = lock
        self.log = log
        self.rng = random.Random(seed)
        self.waits: Counter[str] = Counter()
        entries = json.loads(self.events.read_text(encoding="utf-8"))
        self.appended: list[str] = [entry["event_id"] for entry in entries]
        self.turns = sum(entry["type"] == "turn_start" for entry in entries)
        self.versions: dict[int, int] = dict.fromkeys(range(self.turns), 0)
        self.edits = 0
        self.lost: set[str] = set()

    def note(self, **fields: Any) -> None:
        self.log.write(json.dumps({"t": round(time.time(), 3), **fields}) + "\n")
        self.log.flush()

    def step(self) -> None:
        with jp_lock(self.lock, self.waits):
            entries = json.loads(self.events.read_text(encoding="utf-8"))
            present = Counter(entry.get("event_id") for entry in entries)
            missing = [event_id for event_id in self.appended if present[event_id] != 1 and event_id not in self.lost]
            if missing:
                self.note(missing={event_id: present[event_id] for event_id in missing})
                self.lost.update(missing)
            if self.turns > 2 and self.rng.random() < EDIT_CHANCE:
                self.edit(entries, self.rng.randrange(self.turns - 1))
            added = turn_entries(self.turns)
            entries += added
            write_json(self.events, entries)
        self.appended += [entry["event_id"] for entry in added]
        self.versions[self.turns] = 0
        self.note(appended=self.turns)
        self.turns += 1

    def edit(self, entries: list[dict[str, Any]], turn: int) -> None:
        """Change the turn's request and remove its summary, as a user does by hand."""
        start, request, _ = ids(turn)
        version = self.versions[turn] + 1
        for entry in entries:
            if entry.get("event_id") == request:
                entry["content"] = request_text(turn, version)
            elif entry.get("event_id") == start:
                entry.pop("summary", None)
        self.versions[turn] = version
        self.edits += 1
        self.note(edited=turn, version=version)

    def run(self, seconds: float) -> None:
        started = time.monotonic()
        ticks = 0
        while time.monotonic() - started < seconds:
            self.step()
            ticks += 1
            time.sleep(max(0.0, started + ticks * TICK - time.monotonic()))
        self.note(
            final={
                "appended": self.appended,
                "versions": self.versions,
                "edits": self.edits,
                "lock_waits": dict(self.waits),
            }
        )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("lock", type=Path)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--seed", default="writer")
    options = parser.parse_args(argv)
    with options.log.open("w", encoding="utf-8") as log:
        Writer(options.directory, options.lock, log, options.seed).run(options.seconds)


if __name__ == "__main__":
    main(sys.argv[1:])
