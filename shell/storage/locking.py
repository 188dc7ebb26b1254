"""JP's conversation lock: a non-blocking ``flock`` on ``locks/jp-c<id>.lock`` (jp-runtime §3.6).

The lock file lives in the user-local silo when JP keeps one, else in the
workspace's ``.jp/locks/``; an existing file in either place is reused so
turnmark and ``jp`` always contend for the same inode. The holder writes
``{"pid", "acquired_at"}`` into it and deletes it on release. After locking,
the path is checked to still name the locked inode (a releasing holder may
have just deleted it); if not, the attempt starts over. The locks folder is
reached from the ``.jp`` folder or silo without following a link (see
``files.py``), the lock file is opened ``O_NOFOLLOW`` and refused when it has a
second hard link, so its diagnostics can only land in a file no other name
reaches. (They are written in place, as JP does: replacing the file would give
the path a new, unlocked inode and break the lock JP and turnmark share.) A
conversation outside any workspace is never locked for writing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from turnmark.shell.errors import ConversationLocked, FileFault
from turnmark.shell.storage.files import SMALL_FILE_LIMIT, link_refusal, open_directory, os_reason, read_file
from turnmark.shell.storage.workspace import ConversationRef, Workspace

_ATTEMPTS = 5
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def lock_path(ref: ConversationRef) -> Path:
    """The lock file JP uses for this conversation."""
    name = f"{ref.display_id}.lock"
    workspace = ref.workspace
    if workspace is None:
        directory = ref.directories[0]
        return directory.parent.parent / "locks" / name
    preferred = (workspace.user_silo or workspace.storage) / "locks" / name
    fallback = workspace.storage / "locks" / name
    if os.path.lexists(preferred) or not os.path.lexists(fallback):
        return preferred
    return fallback


class ConversationLock:
    """A held conversation lock; release it with ``release()`` or by leaving a ``with`` block."""

    def __init__(self, conversation_id: int, path: Path, fd: int, directory_fd: int) -> None:
        self.conversation_id = conversation_id
        self.path = path
        self._fd: int | None = fd
        self._directory_fd = directory_fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Delete the lock file while still holding it, then unlock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path.name, dir_fd=self._directory_fd)
        os.close(self._fd)
        os.close(self._directory_fd)
        self._fd = None

    def __enter__(self) -> ConversationLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


def _open_lock_file(directory_fd: int, path: Path) -> int:
    """The lock file, created if absent; ``FileFault`` when it is a link, not a regular file, or has other names.

    A file with a second hard link could be any file on the disk: its diagnostics would overwrite it.
    """
    try:
        fd = os.open(path.name, _LOCK_FLAGS, 0o644, dir_fd=directory_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise link_refusal(path, "not used as a lock") from None
        raise FileFault(f"{path}: cannot open the lock: {os_reason(error)}") from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode) or status.st_nlink != 1:
        os.close(fd)
        what = "it is not a regular file" if not stat.S_ISREG(status.st_mode) else "it has another name (a hard link)"
        raise FileFault(f"{path}: not used as a lock: {what}")
    return fd


def _same_file(directory_fd: int, name: str, fd: int) -> bool:
    try:
        current = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    locked = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (locked.st_dev, locked.st_ino)


def _locks_directory(ref: ConversationRef, path: Path) -> int:
    return open_directory(path.parent, ref.anchor_of(path), create=True, target=path)


def try_lock(ref: ConversationRef) -> ConversationLock | None:
    """Take the conversation's lock without waiting; ``None`` when another process holds it.

    Raises ``FileFault`` (one line) when the lock file or a folder on its way is a link, when it has a
    second hard link, when it cannot be opened, or when the conversation is not in a workspace.
    """
    path = lock_path(ref)
    directory_fd = _locks_directory(ref, path)
    try:
        for _ in range(_ATTEMPTS):
            fd = _open_lock_file(directory_fd, path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return None
                raise FileFault(f"{path}: cannot lock: {os_reason(error)}") from None
            if not _same_file(directory_fd, path.name, fd):
                os.close(fd)
                continue
            _write_diagnostics(fd)
            lock = ConversationLock(ref.id, path, fd, directory_fd)
            directory_fd = -1
            return lock
        return None
    finally:
        if directory_fd >= 0:
            os.close(directory_fd)


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
        info = json.loads(read_file(lock_path(ref), SMALL_FILE_LIMIT, follow_links=False) or b"")
    except (FileFault, ValueError, RecursionError):
        return ""
    pid = info.get("pid") if isinstance(info, dict) else None
    return f"pid {pid}" if isinstance(pid, int) and not isinstance(pid, bool) else ""


def lock_names(workspace: Workspace) -> frozenset[str]:
    """The names in the workspace's lock folders (JP's silo and ``.jp``), for many ``is_locked`` at once."""
    names: set[str] = set()
    for folder in {workspace.user_silo or workspace.storage, workspace.storage}:
        try:
            names.update(os.listdir(folder / "locks"))
        except OSError:
            continue
    return frozenset(names)


def is_locked(ref: ConversationRef, names: frozenset[str] | None = None) -> bool:
    """Whether another process holds the conversation's lock right now (a leftover lock file is not a lock).

    Probing takes the lock for an instant when it is free (and then removes the orphaned file). ``names``
    (``lock_names``, taken just before) spares a look for each conversation that has no lock file there.
    """
    if names is not None and f"{ref.display_id}.lock" not in names:
        return False
    if not os.path.lexists(lock_path(ref)):
        return False
    lock = try_lock(ref)
    if lock is None:
        return True
    lock.release()
    return False


def hold_lock(ref: ConversationRef) -> ConversationLock:
    """The conversation's lock, or ``ConversationLocked`` naming the holder (never waits)."""
    lock = try_lock(ref)
    if lock is None:
        holder = lock_holder(ref)
        by = f" by {holder}" if holder else ""
        raise ConversationLocked(f"{ref.display_id} is locked{by} (a running jp?); try again when it is done")
    return lock
