"""Driving a real terminal through tmux in tests."""

from __future__ import annotations

import subprocess
import time


def wait_for(session: str, text: str, timeout: float = 20.0) -> str:
    """The tmux session's screen once ``text`` shows on it (``AssertionError`` with the screen otherwise)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True, check=False
        ).stdout
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")
