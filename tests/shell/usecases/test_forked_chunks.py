"""``forked_chunks`` with real forked children: the chunks made here alone, in order, whatever happens to a child
(an error, a kill), an error raised here where it would be alone, and no child left behind (closed early,
Ctrl-C)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from turnmark.shell.usecases.forked_chunks import can_fork, forked_chunks

PARENT = os.getpid()


def _children() -> list[int]:
    """The processes whose parent is this one (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == os.getpid():
                found.append(int(entry.name))
    return found


def _items(start: int, stop: int) -> Iterator[str]:
    for item in range(start, stop):
        yield f"item {item} " + "é\udcff" * (item % 3) + "\n"


@pytest.fixture(autouse=True)
def _forks() -> Iterator[None]:
    """Each test forks: no other thread may run here; and it leaves no child of its own (those of earlier tests
    aside)."""
    assert can_fork(), "these tests fork: no other thread may run in the test process"
    before = set(_children())
    yield
    assert set(_children()) <= before, "a child was left behind"


@pytest.mark.parametrize(
    ("count", "block", "children"),
    [(0, 1, 1), (1, 1, 1), (2, 1, 1), (10, 3, 1), (10, 3, 2), (10, 20, 1), (25, 2, 5), (7, 1, 0)],
)
def test_the_chunks_made_alone_in_order(count: int, block: int, children: int) -> None:
    assert list(forked_chunks(_items, count, block, children)) == list(_items(0, count))


def test_children_make_their_blocks() -> None:
    def where(start: int, stop: int) -> Iterator[str]:
        return (f"{item} {os.getpid()}" for item in range(start, stop))

    made = [chunk.split() for chunk in forked_chunks(where, 12, 2, 2)]
    assert [int(item) for item, _ in made] == list(range(12))
    processes = [int(pid) for _, pid in made]
    assert [pid == PARENT for pid in processes] == [True, True, False, False, False, False] * 2
    assert len(set(processes)) == 3


def test_a_chunk_longer_than_the_pipe_comes_whole() -> None:
    def big(start: int, stop: int) -> Iterator[str]:
        return ((str(item) * 3_000_000)[:3_000_000] for item in range(start, stop))

    assert list(forked_chunks(big, 4, 1, 1)) == list(big(0, 4))


@pytest.mark.parametrize("how", ["error", "exit", "kill"])
def test_what_a_child_did_not_send_is_made_here(how: str) -> None:
    """A child that fails, leaves or is killed at item 6 sent its items before it; this process makes the rest."""
    here: list[int] = []

    def failing(start: int, stop: int) -> Iterator[str]:
        for item in range(start, stop):
            if os.getpid() == PARENT:
                here.append(item)
            elif item == 6:
                if how == "error":
                    raise ValueError("in the child only")
                if how == "exit":
                    os._exit(3)
                os.kill(os.getpid(), signal.SIGKILL)
            yield f"{item}\n"

    assert list(forked_chunks(failing, 12, 2, 1)) == [f"{item}\n" for item in range(12)]
    assert here == [0, 1, 4, 5, 6, 7, 8, 9, 10, 11]


def test_an_error_is_raised_here_after_the_chunks_before_it() -> None:
    def broken(start: int, stop: int) -> Iterator[str]:
        for item in range(start, stop):
            if item == 7:
                raise ValueError(f"item {item}")
            yield f"{item}\n"

    made: list[str] = []
    with pytest.raises(ValueError, match="item 7"):
        made.extend(forked_chunks(broken, 12, 2, 1))
    assert made == [f"{item}\n" for item in range(7)]


def test_closed_early_no_child_is_left() -> None:
    before = set(_children())
    chunks = forked_chunks(_items, 1000, 1, 1)
    assert [next(chunks) for _ in range(3)] == list(_items(0, 3))
    assert len(set(_children()) - before) == 1
    chunks.close()
    assert set(_children()) <= before


def test_with_another_thread_running_everything_is_made_here() -> None:
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        assert not can_fork()
        processes = set(forked_chunks(lambda a, b: (str(os.getpid()) for _ in range(a, b)), 8, 1, 1))
        assert processes == {str(PARENT)}
    finally:
        stop.set()
        waiting.join()


def test_ctrl_c_leaves_no_process_behind(tmp_path: Path) -> None:
    """Ctrl-C to the process group while the children make chunks: the command ends, and every process of it."""
    script = tmp_path / "slow.py"
    script.write_text(
        f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
from turnmark.shell.usecases.forked_chunks import forked_chunks

def slow(start, stop):
    for item in range(start, stop):
        time.sleep(0.05)
        yield f"{{item}}\\n"

for chunk in forked_chunks(slow, 10_000, 1, 1):
    sys.stdout.write(chunk)
    sys.stdout.flush()
"""
    )
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"0\n"
    assert process.stdout.readline() == b"1\n"
    os.killpg(process.pid, signal.SIGINT)
    _, errors = process.communicate(timeout=30)
    assert process.returncode != 0
    assert b"KeyboardInterrupt" in errors
    assert errors.count(b"Traceback") == 1, errors
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)


def test_when_the_system_cannot_fork_everything_is_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork refused (no more processes, no memory): no error, the chunks made here alone, no pipe left open."""

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    open_before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", refused)
    assert list(forked_chunks(_items, 9, 2, 2)) == list(_items(0, 9))
    assert len(os.listdir("/proc/self/fd")) == open_before


def test_when_only_the_first_child_starts_its_blocks_and_the_others_are_made(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fork = os.fork
    forks: list[int] = []

    def once() -> int:
        if forks:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", once)

    def where(start: int, stop: int) -> Iterator[str]:
        return (f"{item} {os.getpid()}" for item in range(start, stop))

    made = [chunk.split() for chunk in forked_chunks(where, 12, 2, 2)]
    assert [int(item) for item, _ in made] == list(range(12))
    assert [pid == str(PARENT) for _, pid in made] == [True, True, False, False, True, True] * 2


def test_a_child_keeps_no_descriptor_but_its_pipe() -> None:
    """A child holds stdin, stdout and stderr on /dev/null and its own pipe, nothing else (not a sibling's pipe,
    not this process's output): whatever reads this process's output sees its end with this process's."""

    def descriptors(start: int, stop: int) -> Iterator[str]:
        for _ in range(start, stop):
            fds = {}
            for name in os.listdir("/proc/self/fd"):
                with contextlib.suppress(OSError):
                    fds[int(name)] = os.readlink(f"/proc/self/fd/{name}")
            yield json.dumps([os.getpid(), fds])

    made = [json.loads(chunk) for chunk in forked_chunks(descriptors, 6, 1, 2)]
    children = [fds for pid, fds in made if pid != PARENT]
    assert len(children) == 4
    for fds in children:
        standard = {fds.pop(str(number)) for number in (0, 1, 2)}
        assert standard == {os.devnull}
        assert len(fds) <= 2, fds  # its pipe, and the listing's own descriptor
        assert all(target.startswith("pipe:") for target in fds.values() if not target.startswith("/proc/")), fds
