"""Forgetting the folders of workspaces that are gone: turnmark's own files for a workspace that no longer exists.

Every workspace turnmark works on gets a folder under the user's cache and state homes (``state_dirs``),
and temporary workspaces leave theirs behind. Once a day (``EVERY``, judged by the ``.pruned`` stamp in the
cache home) the first command that opens a cache looks at both homes and removes:

- a folder whose ``workspace`` file names a path that is no longer a workspace (no ``.jp`` folder there),
  once nothing in it changed for ``GRACE`` (a drive that is only unmounted for an afternoon keeps its undo);
- a folder with no such file (an older turnmark made it, or its record is not its own) that nothing
  changed in for ``$TURNMARK_KEEP_DAYS`` days (``KEEP_DAYS`` by default; ``0`` keeps them).

A folder whose workspace exists is never removed, nor anything that is not a real folder named as
``state_dirs.workspace_key`` names them; nothing is followed through a link, and every fault is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

from turnmark.shell.clock import now_epoch
from turnmark.shell.errors import FileFault
from turnmark.shell.storage import state_dirs
from turnmark.shell.storage.files import METADATA_LIMIT, read_file, remove_tree, write_if_changed
from turnmark.shell.storage.workspace import STORAGE_DIR

KEEP_ENV = "TURNMARK_KEEP_DAYS"
KEEP_DAYS = 90
EVERY = 24 * 3600
GRACE = 24 * 3600
STAMP = ".pruned"
_FOLDER = re.compile(r".+-([0-9a-f]{16})")
_looked: list[bool] = []


def keep_days() -> int:
    """How many days a folder of unknown workspace is kept (``$TURNMARK_KEEP_DAYS``; 0: for ever)."""
    try:
        return max(0, int(os.environ.get(KEEP_ENV, KEEP_DAYS)))
    except ValueError:
        return KEEP_DAYS


def _last_change(folder: Path) -> float:
    """When anything directly in ``folder`` (or the folder itself) last changed."""
    newest = os.lstat(folder).st_mtime
    with os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    return newest


def recorded_workspace(folder: Path, digest: str) -> str | None:
    """The workspace ``folder`` is for, when its ``workspace`` file names a path whose digest its name carries."""
    try:
        data = read_file(folder / state_dirs.MARKER, METADATA_LIMIT, follow_links=False)
    except FileFault:
        return None
    if data is None:
        return None
    path = data.rstrip(b"\n")
    return os.fsdecode(path) if hashlib.sha256(path).hexdigest()[:16] == digest else None


def forgotten(folder: Path, now: float, keep: int) -> bool:
    """Whether ``folder`` (a workspace's, under a home) belongs to a workspace that is gone."""
    match = _FOLDER.fullmatch(folder.name)
    if match is None or not folder.is_dir() or folder.is_symlink():
        return False
    workspace = recorded_workspace(folder, match.group(1))
    age = now - _last_change(folder)
    if workspace is not None:
        return not os.path.isdir(os.path.join(workspace, STORAGE_DIR)) and age > GRACE
    return keep > 0 and age > keep * 86400


def prune(home: Path, now: float, keep: int) -> list[Path]:
    """Remove the forgotten folders under ``home``; the ones removed."""
    removed: list[Path] = []
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return removed
    for name in names:
        folder = home / name
        with contextlib.suppress(OSError):
            if forgotten(folder, now, keep):
                remove_tree(folder, home)
                removed.append(folder)
    return removed


def now_and_then() -> list[Path]:
    """Prune both homes when the last look is older than ``EVERY`` (at most one look per process)."""
    if _looked:
        return []
    _looked.append(True)
    home = state_dirs.cache_home()
    stamp = home / STAMP
    now = now_epoch()
    try:
        if now - os.lstat(stamp).st_mtime < EVERY:
            return []
    except OSError:
        pass
    with contextlib.suppress(FileFault):
        write_if_changed(stamp, b"", state_dirs.anchor(stamp))
        os.utime(stamp, follow_symlinks=False)
    keep = keep_days()
    return [*prune(home, now, keep), *prune(state_dirs.state_home(), now, keep)]
