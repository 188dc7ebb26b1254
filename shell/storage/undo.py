"""Undo for the commands that restructure a conversation (``edit -i``, ``repair --apply``, ``strip --apply``).

Before such a command saves, the conversation's files as they were are kept in
``.jp/.turnmark/undo/<conversation>/<n>/`` (a dot-folder JP's listing ignores),
with a digest of the ``events.json`` the command then wrote; only the last
``KEEP`` are kept. ``undo`` restores the newest one under the lock, only if the
conversation is still exactly as that command left it, and removes it, so a
second undo restores the one before.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

from turnmark.shell.errors import ConversationError
from turnmark.shell.storage.conversations import BASE_CONFIG, EVENTS, LoadedConversation, hold_lock
from turnmark.shell.storage.files import (
    BASE_CONFIG_LIMIT,
    EVENTS_LIMIT,
    SMALL_FILE_LIMIT,
    read_file,
    remove,
    write_if_changed,
)
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.workspace import ConversationRef

KEEP = 5
AFTER = "after.sha256"
NAMES = (BASE_CONFIG, EVENTS)
"""The files a restructuring command writes (``metadata.json`` is never among them, nor restored)."""
LIMITS = {BASE_CONFIG: BASE_CONFIG_LIMIT, EVENTS: EVENTS_LIMIT}


def undo_root(ref: ConversationRef) -> Path:
    return lock_path(ref).parent.parent / ".turnmark" / "undo" / ref.display_id


def _digest(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def _steps(ref: ConversationRef) -> list[Path]:
    root = undo_root(ref)
    if not root.is_dir() or root.is_symlink():
        return []
    return sorted((path for path in root.iterdir() if path.name.isdecimal()), key=lambda path: int(path.name))


def saved_with_undo(loaded: LoadedConversation, save: Callable[[], object]) -> None:
    """Keep the files as they are, run ``save`` (under the lock ``loaded`` was read with), and record its result."""
    root = undo_root(loaded.ref)
    if root.is_symlink() or root.parent.is_symlink() or root.parent.parent.is_symlink():
        raise ConversationError(f"{root}: not used for undo: a folder on its way is a symbolic link")
    steps = _steps(loaded.ref)
    step = root / str(int(steps[-1].name) + 1 if steps else 1)
    try:
        step.mkdir(parents=True)
        for name in NAMES:
            data = read_file(loaded.directory / name, LIMITS[name])
            if data is not None:
                write_if_changed(step / name, data)
    except OSError as error:
        raise ConversationError(f"{step}: cannot keep the undo copy: {error.strerror or error}") from None
    try:
        save()
    except BaseException:
        shutil.rmtree(step, ignore_errors=True)
        raise
    write_if_changed(step / AFTER, _digest(read_file(loaded.directory / EVENTS, EVENTS_LIMIT)).encode())
    for old in _steps(loaded.ref)[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)


def undo(ref: ConversationRef) -> str:
    """Restore the newest kept copy; a one-line message of what happened (``ConversationError`` when refused)."""
    steps = _steps(ref)
    if not steps:
        raise ConversationError(
            f"{ref.display_id}: nothing to undo (edit -i, repair --apply and strip --apply keep copies)"
        )
    step = steps[-1]
    with hold_lock(ref):
        directory = max(ref.directories, key=lambda d: (d / EVENTS).stat().st_mtime_ns if (d / EVENTS).exists() else -1)
        recorded = (read_file(step / AFTER, SMALL_FILE_LIMIT) or b"").decode(errors="replace")
        if _digest(read_file(directory / EVENTS, EVENTS_LIMIT)) != recorded:
            raise ConversationError(
                f"{ref.display_id}: changed since that edit (events.json is not what it wrote); nothing restored"
            )
        for directory in ref.directories:
            for name in reversed(NAMES):
                data = read_file(step / name, LIMITS[name])
                if data is not None:
                    write_if_changed(directory / name, data)
                elif (directory / name).exists():
                    remove(directory / name)
    shutil.rmtree(step, ignore_errors=True)
    return f"{ref.display_id}: restored the copy kept before edit {step.name}; {len(steps) - 1} more to undo"
