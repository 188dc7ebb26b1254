"""The one safe-write path: nothing is written through a link, no leftover is reused, faults are one line.

Every write starts from an *anchor*: the workspace's ``.jp`` folder or JP's user-local
silo for it (either may itself be a link: a user may keep ``.jp`` elsewhere). From
there the path is resolved one folder at a time (``openat`` with ``O_NOFOLLOW`` and
``O_DIRECTORY``), so no link anywhere below the anchor is followed, and a path that
is not below it is refused. Every file turnmark writes goes through
``write_if_changed``: the target must be a regular file (or
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
import shutil
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


def link_refusal(path: Path, outcome: str = "not written", via: Path | None = None) -> FileFault:
    """``path`` is not used because it (or ``via``, a folder on its way) is a symbolic link."""
    which = "it is" if via is None or via == path else f"{via} is"
    return FileFault(f"{path}: {outcome}: {which} a symbolic link, and turnmark never writes through links")


def _walk_refusal(target: Path, reached: Path, error: OSError) -> FileFault:
    if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(reached):
        return link_refusal(target, via=reached)
    return FileFault(f"{target}: cannot write: {reached}: {os_reason(error)}")


def open_directory(path: Path, anchor: Path, *, create: bool = False, target: Path | None = None) -> int:
    """A descriptor of the directory ``path``, reached from ``anchor`` without following a link below it.

    ``create`` makes the missing folders on the way. ``FileFault`` (one line, naming ``target``, the file
    to be written, when given) names the folder that is a link, is missing or cannot be opened, or says
    that ``path`` is not below ``anchor``.
    """
    target = target or path
    try:
        parts = path.relative_to(anchor).parts
    except ValueError:
        parts = ("..",)
    if ".." in parts:
        raise FileFault(f"{target}: not written: it is not inside {anchor}")
    try:
        fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise FileFault(f"{target}: cannot write: {anchor}: {os_reason(error)}") from None
    reached = anchor
    try:
        for part in parts:
            reached /= part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            below = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = below
    except OSError as error:
        os.close(fd)
        raise _walk_refusal(target, reached, error) from None
    return fd


@contextlib.contextmanager
def directory(path: Path, anchor: Path, *, create: bool = False, target: Path | None = None) -> Iterator[int]:
    fd = open_directory(path, anchor, create=create, target=target)
    try:
        yield fd
    finally:
        os.close(fd)


def refuse_links(directory_fd: int, parent: Path, names: Iterable[str], *, one_name: bool = False) -> None:
    """Raise ``FileFault`` unless each of ``names`` in the directory is absent or a regular file.

    ``one_name`` also refuses a file with a second hard link (writing it in place would change the other).
    """
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
        if one_name and status.st_nlink != 1:
            raise FileFault(f"{parent / name}: not written: it has another name (a hard link)")


def check_writable(parent: Path, names: Iterable[str], anchor: Path) -> None:
    """Refuse, before anything is written, a directory or files that are links."""
    with directory(parent, anchor, target=parent) as fd:
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


def write_if_changed(path: Path, data: bytes, anchor: Path, *, create: bool = False) -> bool:
    """Write ``data`` atomically unless the file already holds it; ``FileFault`` (one line) when it cannot.

    ``create`` makes the missing folders between ``anchor`` and the file.
    """
    with directory(path.parent, anchor, create=create, target=path) as fd:
        refuse_links(fd, path.parent, (path.name,))
        try:
            if _read(fd, path.name) == data:
                return False
            _replace(fd, path.name, data)
        except OSError as error:
            raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None
    return True


def remove(path: Path, anchor: Path) -> None:
    """Remove a regular file written moments ago (undoing part of a save); never follows a link."""
    with directory(path.parent, anchor) as fd, contextlib.suppress(OSError):
        os.unlink(path.name, dir_fd=fd)


def remove_tree(path: Path, anchor: Path) -> None:
    """Remove the folder ``path`` and all below it (turnmark's own keeping); no link is followed, faults ignored."""
    with contextlib.suppress(FileFault), directory(path.parent, anchor) as fd, contextlib.suppress(OSError):
        shutil.rmtree(path.name, dir_fd=fd)
