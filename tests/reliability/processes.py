"""What the probes' real ``turnmark`` processes run with: an isolated home, no user config, no API key."""

from __future__ import annotations

import os
from pathlib import Path


def isolated_env(home: Path) -> dict[str, str]:
    """An environment whose JP user data and config live under ``home`` (created), nothing else inherited."""
    (home / "user-data").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "JP_USER_DATA_DIR": str(home / "user-data"),
        "JP_GLOBAL_CONFIG_DIR": str(home / "config"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "LANG": "C.UTF-8",
    }
    env.update({key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ})
    return env
