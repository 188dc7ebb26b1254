"""``turnmark show`` in a real terminal (tmux): long text goes through the pager, in colour; short text, a
pipe and ``PAGER=cat`` do not."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.optional_tools import needs
from tests.support.terminal import wait_for
from turnmark.shell.cli.pager import _through_pager
from turnmark.shell.interrupts import interrupts_held

pytestmark = needs(shutil.which("tmux") is not None and shutil.which("less") is not None, "tmux or less")
TURNMARK = Path(sys.executable).parent / "turnmark"


def in_terminal(command: str) -> str:
    """A tmux session (100x20) running ``command``; its name."""
    session = f"turnmark-show-{time.monotonic_ns()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "20", command], check=True)
    return session


def screen_with_escapes(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-e", "-p", "-t", session], capture_output=True, text=True, check=True
    ).stdout


def test_long_text_is_paged_in_colour_and_q_leaves(show_workspace: Path) -> None:
    session = in_terminal(
        f"env -u NO_COLOR -u LESS PAGER=less {TURNMARK} -w {show_workspace} show 17820000010; echo EXIT=$?; sleep 30"
    )
    try:
        screen = wait_for(session, "Turn 0 (s0turn0)")
        time.sleep(0.3)
        screen = wait_for(session, ":")
        assert "EXIT=" not in screen, "the pager waits for the reader"
        assert "Turn 3" not in screen, "only the first screen is shown"
        assert "\x1b[" in screen_with_escapes(session), "colours reach the terminal"
        subprocess.run(["tmux", "send-keys", "-t", session, "G"], check=True)
        assert "What did we change today" in wait_for(session, "(END)")
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        assert "EXIT=0" in wait_for(session, "EXIT=")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def test_ctrl_c_once_the_text_is_written_ends_the_command_interrupted_when_the_pager_is_quit(
    show_workspace: Path,
) -> None:
    session = in_terminal(
        f"env -u NO_COLOR -u LESS PAGER=less {TURNMARK} -w {show_workspace} show 17820000010; echo EXIT=$?; sleep 30"
    )
    try:
        wait_for(session, "Turn 0 (s0turn0)")
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        time.sleep(0.3)
        assert "EXIT=" not in screen_with_escapes(session), "the command waits for the pager"
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        assert "EXIT=130" in wait_for(session, "EXIT=")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


@pytest.mark.parametrize(
    ("settings", "arguments"),
    [("PAGER=less", "--turn 3"), ("PAGER=cat", ""), ("PAGER=less", "| cat")],
    ids=["short", "pager-cat", "piped"],
)
def test_no_pager_when_not_needed(show_workspace: Path, settings: str, arguments: str) -> None:
    session = in_terminal(
        f"env {settings} {TURNMARK} -w {show_workspace} show 17820000010 {arguments}; echo EXIT=$?; sleep 30"
    )
    try:
        screen = wait_for(session, "EXIT=")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert "EXIT=0" in screen
    assert "What did we change today" in screen


def _turnmark_processes(marker: str) -> list[str]:
    """The processes whose command line names ``marker`` (a workspace's path)."""
    listing = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in listing.splitlines() if marker in line and "tmux" not in line and "ps -ww" not in line]


def _long_show_in_pager(workspace: Path) -> str:
    """A tmux session showing a generated conversation of 400 turns (long enough for a child to make every other
    block of turns) through less, on two cores; its name."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from bench.huge import generate_long_conversation

    generate_long_conversation(workspace, turns=400)
    return in_terminal(
        f"env -u NO_COLOR -u LESS PAGER=less {TURNMARK} -w {workspace} --jobs 2 show; echo EXIT=$?; sleep 30"
    )


@pytest.mark.slow
@pytest.mark.parametrize("keys", ["G", "q"], ids=["to-the-end", "quit-at-once"])
def test_a_long_conversation_shown_on_two_cores_pages_and_leaves_nothing_behind(tmp_path: Path, keys: str) -> None:
    """A conversation long enough for a child to make every other block of turns: the pager shows the first screen,
    then the end (``G``), the last turn whole; ``q`` leaves with 0, at the end or at once, and no process of the
    command is left."""
    session = _long_show_in_pager(tmp_path)
    try:
        wait_for(session, "Turn 0 (")
        assert _turnmark_processes(str(tmp_path)), "the command waits for the reader"
        if keys == "G":
            subprocess.run(["tmux", "send-keys", "-t", session, "G"], check=True)
            assert "Turn 399 (" in wait_for(session, "(END)", timeout=60) or "Turn 399" in screen_with_escapes(session)
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        assert "EXIT=0" in wait_for(session, "EXIT=", timeout=60)
        assert _turnmark_processes(str(tmp_path)) == []
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2], ids=["once", "twice"])
def test_ctrl_c_in_the_pager_is_the_pagers_and_the_command_ends_after_it(tmp_path: Path, presses: int) -> None:
    """Ctrl-C while the pager shows a conversation still being written (as under git): the text stops where it is,
    a child making turns is gone at once, the pager stays with what it has (``G`` reaches its end, no ``EXIT``
    printed over it, nor a traceback when Ctrl-C comes twice), and the command ends only when the pager is quit,
    interrupted (130), leaving no process."""
    session = _long_show_in_pager(tmp_path)
    try:
        wait_for(session, "Turn 0 (")
        subprocess.run(["tmux", "send-keys", "-t", session, *["C-c"] * presses], check=True)
        deadline = time.monotonic() + 10
        while len(_python_processes(tmp_path)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_python_processes(tmp_path)) == 1, "the child is gone, the command waits for the pager"
        time.sleep(0.3)
        printed_over_the_pager = screen_with_escapes(session)
        assert "Traceback" not in printed_over_the_pager
        assert "Exception" not in printed_over_the_pager
        subprocess.run(["tmux", "send-keys", "-t", session, "G"], check=True)
        wait_for(session, "(END)", timeout=30)
        time.sleep(0.5)
        screen = screen_with_escapes(session)
        assert "EXIT=" not in screen, "the command waits for the pager"
        assert "Turn 399 (" not in screen, "the text stopped at the interrupt"
        assert _python_processes(tmp_path), "the command waits for the pager"
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        assert "EXIT=130" in wait_for(session, "EXIT=", timeout=30)
        assert _turnmark_processes(str(tmp_path)) == []
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def _python_processes(workspace: Path) -> list[str]:
    """The command's processes (itself and its children), not the shell that runs it."""
    return [line for line in _turnmark_processes(str(workspace)) if " bash -c " not in f" {line.split(maxsplit=1)[1]}"]


def _made_with_a_cleanup_interrupted(stopped: list[float]) -> Iterator[str]:
    """Chunks, the last as long as several pipes; their maker's cleanup holds Ctrl-C as ``forked_chunks`` does
    while it stops its children, and a second Ctrl-C comes meanwhile (delivered as the hold ends)."""

    def made() -> Iterator[str]:
        try:
            yield "a\n" * 50
            yield "b" * 1_000_000 + "\n"
        finally:
            with interrupts_held():
                os.kill(os.getpid(), signal.SIGINT)
            stopped.append(time.monotonic())

    yield from made()


def test_ctrl_c_twice_while_writing_to_the_pager_raises_once_after_the_pager_ended(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """In process, with a pager that reads nothing for half a second: Ctrl-C while a write to it is blocked stops
    the writing; the second, during the chunks' cleanup, is only noted (no traceback, no early return); the
    interrupt comes out once, after the pager has ended."""
    ended = tmp_path / "ended"
    pager_command = ["sh", "-c", f"sleep 0.5; cat > /dev/null; touch {ended}"]
    stopped: list[float] = []
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        _through_pager(pager_command, {}, ["first screen\n"], _made_with_a_cleanup_interrupted(stopped))
    timer.join()
    assert ended.exists(), "the pager ended before the interrupt came out"
    assert stopped, "the chunks' maker was closed"
    assert "Exception ignored" not in capfd.readouterr().err
