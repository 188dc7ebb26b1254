"""The one safe-write path: nothing is written through a link, no leftover is reused, faults are one line.

Every file turnmark writes goes through ``write_if_changed``: the directory is
opened without following a link, the target must be a regular file (or
absent), the bytes go to a freshly created ``<file>.tmp`` (exclusive create,
no-follow; a leftover of that name is removed, or sidestepped with another
``*.tmp`` name when it cannot be), and the temporary file is renamed over the
target. An ``OSError`` becomes ``FileFault`` with a one-line message naming
the file and the OS reason (``read-only file system``). ``os_write`` is the
single call through which bytes reach a file, so tests can inject faults there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from turnmark.shell.errors import FileFault

os_write = os.write

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SIDESTEPS = 8


def os_reason(error: OSError) -> str:
    """The OS's reason in lower case: ``read-only file system``, ``no space left on device``."""
    reason = error.strerror or type(error).__name__
    return reason[:1].lower() + reason[1:]


def _is_link(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISLNK(os.lstat(path).st_mode)
    return False


def link_refusal(path: Path, outcome: str = "not written") -> FileFault:
    return FileFault(f"{path}: {outcome}: it is a symbolic link, and turnmark never writes through links")


def open_directory(path: Path) -> int:
    """A descriptor of the real directory ``path`` (never a link to one)."""
    try:
        return os.open(path, _DIRECTORY_FLAGS)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(path):
            raise link_refusal(path) from None
        raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None


@contextlib.contextmanager
def directory(path: Path) -> Iterator[int]:
    fd = open_directory(path)
    try:
        yield fd
    finally:
        os.close(fd)


def refuse_links(directory_fd: int, parent: Path, names: Iterable[str]) -> None:
    """Raise ``FileFault`` unless each of ``names`` in the directory is absent or a regular file."""
    for name in names:
        try:
            status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise FileFault(f"{parent / name}: cannot write: {os_reason(error)}") from None
        if stat.S_ISLNK(status.st_mode):
            raise link_refusal(parent / name)
        if not stat.S_ISREG(status.st_mode):
            raise FileFault(f"{parent / name}: not written: it is not a regular file")


def check_writable(parent: Path, names: Iterable[str]) -> None:
    """Refuse, before anything is written, a directory or files that are links."""
    with directory(parent) as fd:
        refuse_links(fd, parent, names)


def read_file(path: Path) -> bytes | None:
    """A regular file's bytes (a link is followed: reading is safe), ``None`` when it is absent.

    A FIFO, device or directory is refused without blocking, as ``FileFault`` (one line).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise FileFault(f"{path}: cannot read: {os_reason(error)}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileFault(f"{path}: cannot read: it is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read()
        except OSError as error:
            raise FileFault(f"{path}: cannot read: {os_reason(error)}") from None


def _read(directory_fd: int, name: str) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory_fd)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _clear_leftover(directory_fd: int, name: str) -> None:
    """Remove a leftover ``name`` (a link itself, not its target; an empty directory); ignore what stays."""
    try:
        status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except OSError:
        return
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(status.st_mode):
            os.rmdir(name, dir_fd=directory_fd)
        else:
            os.unlink(name, dir_fd=directory_fd)


def _create_temporary(directory_fd: int, name: str) -> tuple[str, int]:
    """A newly created, empty temporary file: ``<name>.tmp``, or another ``*.tmp`` when a leftover stays."""
    candidates = [f"{name}.tmp", *(f"{name}.{os.getpid()}-{n}.tmp" for n in range(1, _SIDESTEPS))]
    for candidate in candidates:
        _clear_leftover(directory_fd, candidate)
        try:
            return candidate, os.open(candidate, _CREATE_FLAGS, 0o666, dir_fd=directory_fd)
        except (FileExistsError, IsADirectoryError):
            continue
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
    raise OSError(errno.EEXIST, "leftover temporary files are in the way")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os_write(fd, view) :]


def _replace(directory_fd: int, name: str, data: bytes) -> None:
    temporary, fd = _create_temporary(directory_fd, name)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory_fd)
        raise
    os.fsync(directory_fd)


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write ``data`` atomically unless the file already holds it; ``FileFault`` (one line) when it cannot."""
    with directory(path.parent) as fd:
        refuse_links(fd, path.parent, (path.name,))
        try:
            if _read(fd, path.name) == data:
                return False
            _replace(fd, path.name, data)
        except OSError as error:
            raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None
    return True


def remove(path: Path) -> None:
    """Remove a regular file written moments ago (undoing part of a save); never follows a link."""
    with directory(path.parent) as fd, contextlib.suppress(OSError):
        os.unlink(path.name, dir_fd=fd)
