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
    remove_tree,
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
    anchor = loaded.ref.anchor_of(root)
    steps = _steps(loaded.ref)
    step = root / str(int(steps[-1].name) + 1 if steps else 1)
    try:
        for name in NAMES:
            data = read_file(loaded.directory / name, LIMITS[name])
            if data is not None:
                write_if_changed(step / name, data, anchor, create=True)
    except ConversationError as error:
        remove_tree(step, anchor)
        raise ConversationError(f"cannot keep the undo copy: {error}") from None
    try:
        save()
    except BaseException:
        remove_tree(step, anchor)
        raise
    digest = _digest(read_file(loaded.directory / EVENTS, EVENTS_LIMIT)).encode()
    write_if_changed(step / AFTER, digest, anchor, create=True)
    for old in _steps(loaded.ref)[:-KEEP]:
        remove_tree(old, anchor)


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
            anchor = ref.anchor_of(directory)
            for name in reversed(NAMES):
                data = read_file(step / name, LIMITS[name])
                if data is not None:
                    write_if_changed(directory / name, data, anchor)
                elif (directory / name).exists():
                    remove(directory / name, anchor)
    remove_tree(step, ref.anchor_of(step))
    return f"{ref.display_id}: restored the copy kept before edit {step.name}; {len(steps) - 1} more to undo"
