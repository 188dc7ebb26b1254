"""JP's conversation lock: a non-blocking ``flock`` on ``locks/jp-c<id>.lock`` (jp-runtime §3.6).

The lock file lives in the user-local silo when JP keeps one, else in the
workspace's ``.jp/locks/``; an existing file in either place is reused so
turnmark and ``jp`` always contend for the same inode. The holder writes
``{"pid", "acquired_at"}`` into it and deletes it on release. After locking,
the path is checked to still name the locked inode (a releasing holder may
have just deleted it); if not, the attempt starts over.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from .workspace import ConversationRef

_ATTEMPTS = 5


def lock_path(ref: ConversationRef) -> Path:
    """The lock file JP uses for this conversation."""
    name = f"{ref.display_id}.lock"
    workspace = ref.workspace
    if workspace is None:
        directory = ref.directories[0]
        return directory.parent.parent / "locks" / name
    preferred = (workspace.user_silo or workspace.storage) / "locks" / name
    fallback = workspace.storage / "locks" / name
    if preferred.exists() or not fallback.exists():
        return preferred
    return fallback


class ConversationLock:
    """A held conversation lock; release it with ``release()`` or by leaving a ``with`` block."""

    def __init__(self, conversation_id: int, path: Path, fd: int) -> None:
        self.conversation_id = conversation_id
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Delete the lock file while still holding it, then unlock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ConversationLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


def try_lock(ref: ConversationRef) -> ConversationLock | None:
    """Take the conversation's lock without waiting; ``None`` when another process holds it."""
    path = lock_path(ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_ATTEMPTS):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            raise
        try:
            current = os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        locked = os.fstat(fd)
        if (current.st_dev, current.st_ino) != (locked.st_dev, locked.st_ino):
            os.close(fd)
            continue
        _write_diagnostics(fd)
        return ConversationLock(ref.id, path, fd)
    return None


def _write_diagnostics(fd: int) -> None:
    acquired = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    body = json.dumps({"pid": os.getpid(), "acquired_at": acquired}).encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, body, 0)
    except OSError:
        pass


def lock_holder(ref: ConversationRef) -> str:
    """Who holds the lock, as far as its diagnostic JSON says (``pid 123``), or ``""``."""
    try:
        info = json.loads(lock_path(ref).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    pid = info.get("pid") if isinstance(info, dict) else None
    return f"pid {pid}" if isinstance(pid, int) else ""


def is_locked(ref: ConversationRef) -> bool:
    """Whether another process holds the conversation's lock right now (a leftover lock file is not a lock).

    Probing takes the lock for an instant when it is free (and then removes the orphaned file).
    """
    if not lock_path(ref).exists():
        return False
    lock = try_lock(ref)
    if lock is None:
        return True
    lock.release()
    return False
