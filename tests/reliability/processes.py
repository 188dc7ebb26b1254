"""What the probes' real ``turnmark`` processes run with: an isolated home, no user config, no API key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from turnmark.shell.storage.state_dirs import workspace_key

TURNMARK = str(Path(sys.executable).parent / "turnmark")


def isolated_env(home: Path) -> dict[str, str]:
    """An environment whose JP user data and config and turnmark's cache and state live under ``home`` (created),
    nothing else inherited."""
    (home / "user-data").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TURNMARK_CACHE_DIR": str(home / "cache"),
        "TURNMARK_STATE_DIR": str(home / "state"),
        "JP_USER_DATA_DIR": str(home / "user-data"),
        "JP_GLOBAL_CONFIG_DIR": str(home / "config"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "LANG": "C.UTF-8",
    }
    env.update({key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ})
    return env


def state_folder(home: Path, workspace: Path) -> Path:
    """turnmark's state folder (undo steps, failure memory) for ``workspace`` in ``isolated_env(home)``."""
    return home / "state" / workspace_key(workspace)


def cache_folder(home: Path, workspace: Path) -> Path:
    """turnmark's cache folder (the database) for ``workspace`` in ``isolated_env(home)``."""
    return home / "cache" / workspace_key(workspace)


def run_turnmark(
    workspace: Path, env: dict[str, str], args: tuple[str, ...], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``turnmark --workspace WORKSPACE ARGS`` as a real process, its output captured."""
    return subprocess.run(
        [TURNMARK, "--workspace", str(workspace), *args],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def stop_writer_and_watch(writer: subprocess.Popen[bytes] | None, watch: subprocess.Popen[bytes]) -> int | None:
    """End a probe: kill the writer if it still runs, stop ``watch`` with SIGTERM; its exit status (``None``: hung)."""
    if writer is not None and writer.poll() is None:
        writer.kill()
        writer.wait()
    watch.send_signal(signal.SIGTERM)
    try:
        return watch.wait(timeout=60)
    except subprocess.TimeoutExpired:
        watch.kill()
        return None
