"""Copies of the corpus (or any read-only tree) a test may change: the shared corpus is read-only, and a copy keeps
its modes, which stop anyone but root from writing it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path


def writable_copy(source: Path, target: Path) -> Path:
    """``source`` copied to ``target`` (made), every folder and file of it writable by its owner."""
    shutil.copytree(source, target)
    for folder, folders, files in os.walk(target):
        for name in (".", *folders, *files):
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


def link_or_copy(source: Path, target: Path) -> None:
    """A hard link to ``source`` (cheap), or a copy where linking another user's file is not allowed (a non-root
    user and ``fs.protected_hardlinks``)."""
    try:
        os.link(source, target)
    except PermissionError:
        shutil.copyfile(source, target)
