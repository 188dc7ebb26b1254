"""The one safe-write path and the one guarded read: nothing is written through a link, no leftover is
reused, nothing read is unbounded, faults are one line.

Every file turnmark reads goes through ``read_file``: it must be a regular file
(a FIFO, device, socket or directory is refused without being opened for a
blocking read: it is checked before opening, opened with ``O_NONBLOCK`` and
checked again), and no larger than the limit its kind is given below (checked
on the open file and again while reading, so a file that grows is cut off);
the refusal names the file and the limit. Reads follow links, as JP does: a
linked ``events.json`` or config file is read, and every check applies to the
link's target, so a link to ``/dev/zero`` or to a FIFO is refused like the
thing itself. ``follow_links=False`` refuses the link instead (for files only
turnmark writes, which are never links). Writes never follow links.

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

Files that must change together (both copies of a conversation, and undo's record)
go through ``write_together``: all or none. A new folder (a new conversation) is built
under a hidden name and renamed into place whole (``build_directory``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from turnmark.shell.errors import FileFault
from turnmark.shell.storage import durability

os_write = os.write

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SIDESTEPS = 8
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC

KIB = 1024
MIB = 1024 * KIB
SMALL_FILE_LIMIT = 4 * KIB
"""``.jp/.id``, a lock's diagnostics, an undo step's digest: a line or two."""
CONFIG_LIMIT = 4 * MIB
"""A TOML config file (JP's, ``--cfg @FILE``); real ones are a few KiB."""
METADATA_LIMIT = 1 * MIB
"""``metadata.json`` (real ones hold about 120 bytes) and turnmark's failure memory."""
BASE_CONFIG_LIMIT = 16 * MIB
"""``base_config.json``; the largest in the real corpus is 300 KB."""
EVENTS_LIMIT = 512 * MIB
"""``events.json``, its undo copy and each event file of ``edit -i``; the largest real one is 1.8 MB, a long
agentic session with big tool outputs can reach hundreds of MB (issue 24)."""
PLAN_LIMIT = 16 * MIB
"""``edit -i``'s plan; the largest real one is 19 KB."""


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


def open_directory(
    path: Path, anchor: Path, *, create: bool = False, target: Path | None = None, mode: int = 0o777
) -> int:
    """A descriptor of the directory ``path``, reached from ``anchor`` without following a link below it.

    ``create`` makes the missing folders on the way (with ``mode``, less the umask). ``FileFault`` (one line,
    naming ``target``, the file to be written, when given) names the folder that is a link, is missing or
    cannot be opened, or says that ``path`` is not below ``anchor``.
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
            try:
                below = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, mode, dir_fd=fd)
                below = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = below
    except OSError as error:
        os.close(fd)
        raise _walk_refusal(target, reached, error) from None
    return fd


@contextlib.contextmanager
def directory(
    path: Path, anchor: Path, *, create: bool = False, target: Path | None = None, mode: int = 0o777
) -> Iterator[int]:
    fd = open_directory(path, anchor, create=create, target=target, mode=mode)
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


def _size(limit: int) -> str:
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if limit >= unit and limit % unit == 0:
            return f"{limit // unit} {name}"
    return f"{limit} bytes"


def _refuse_unreadable(path: Path, status: os.stat_result, limit: int) -> None:
    if stat.S_ISLNK(status.st_mode):
        raise FileFault(f"{path}: not read: it is a symbolic link")
    if not stat.S_ISREG(status.st_mode):
        raise FileFault(f"{path}: cannot read: it is not a regular file")
    if status.st_size > limit:
        raise _too_large(path, limit)


def _too_large(path: Path, limit: int) -> FileFault:
    return FileFault(f"{path}: not read: it is larger than {_size(limit)}, turnmark's limit for this file")


def _opened(path: Path, limit: int, follow_links: bool) -> int | None:
    """A descriptor of the regular file ``path`` for reading (``None``: it is absent), refused as
    ``read_file`` says."""
    try:
        _refuse_unreadable(path, os.stat(path, follow_symlinks=follow_links), limit)
        fd = os.open(path, _READ_FLAGS | (0 if follow_links else os.O_NOFOLLOW))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise FileFault(f"{path}: cannot read: {os_reason(error)}") from None
    try:
        _refuse_unreadable(path, os.fstat(fd), limit)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_chunks(path: Path, limit: int, size: int, *, follow_links: bool = True) -> Generator[bytes, None, None]:
    """``read_file``'s bytes of ``path`` as consecutive chunks of ``size`` bytes (the last shorter), read as
    they are taken, so the file is never held whole; the same refusals, an absent file as ``FileFault``."""
    fd = _opened(path, limit, follow_links)
    if fd is None:
        raise FileFault(f"{path}: cannot read: no such file or directory")
    with os.fdopen(fd, "rb") as handle:
        total = 0
        while True:
            try:
                chunk = handle.read(size)
            except OSError as error:
                raise FileFault(f"{path}: cannot read: {os_reason(error)}") from None
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                raise _too_large(path, limit)
            yield chunk


def read_file(path: Path, limit: int, *, follow_links: bool = True) -> bytes | None:
    """A regular file's bytes, at most ``limit`` of them; ``None`` when it is absent.

    Anything else (a FIFO, device or directory, a larger file, a link when ``follow_links`` is false) is
    refused without blocking, as ``FileFault`` naming the file (and the limit).
    """
    fd = _opened(path, limit, follow_links)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        try:
            data = handle.read(status.st_size + 1)
            while len(data) <= limit and (more := handle.read(min(MIB, limit + 1 - len(data)))):
                data += more
        except OSError as error:
            raise FileFault(f"{path}: cannot read: {os_reason(error)}") from None
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def _holds(directory_fd: int, name: str, data: bytes) -> bool:
    """Whether the file already holds ``data`` (no more than one byte beyond it is read)."""
    try:
        fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=directory_fd)
    except FileNotFoundError:
        return False
    with os.fdopen(fd, "rb") as handle:
        return stat.S_ISREG(os.fstat(fd).st_mode) and handle.read(len(data) + 1) == data


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


def _write_temporary(directory_fd: int, name: str, data: bytes, *, synced: bool = True) -> str:
    """A new temporary file beside ``name`` holding ``data``, synced (unless the caller syncs it with others);
    removed again when that fails."""
    temporary, fd = _create_temporary(directory_fd, name)
    try:
        try:
            _write_all(fd, data)
            if synced:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory_fd)
        raise
    return temporary


def _replace(directory_fd: int, name: str, data: bytes) -> None:
    temporary = _write_temporary(directory_fd, name, data)
    try:
        os.replace(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory_fd)
        raise
    os.fsync(directory_fd)


def write_if_changed(path: Path, data: bytes, anchor: Path, *, create: bool = False, mode: int = 0o777) -> bool:
    """Write ``data`` atomically unless the file already holds it; ``FileFault`` (one line) when it cannot.

    ``create`` makes the missing folders between ``anchor`` and the file (with ``mode``, less the umask).
    """
    with directory(path.parent, anchor, create=create, target=path, mode=mode) as fd:
        refuse_links(fd, path.parent, (path.name,))
        try:
            if _holds(fd, path.name, data):
                return False
            _replace(fd, path.name, data)
        except OSError as error:
            raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None
    return True


def keep_as(source: Path, source_anchor: Path, target: Path, target_anchor: Path, limit: int, *, mode: int) -> bool:
    """Give the file ``source`` as it is now a second name, ``target``, in a folder turnmark owns (made when
    missing, with ``mode``); ``False`` when ``source`` is absent. ``FileFault`` (one line) when it cannot.

    A regular file with one name is hard-linked (no byte is read or written: the next save replaces the
    original by a rename, so the kept inode never changes); anything else (a link, a file with other
    names that could be written in place, another file system) is copied (at most ``limit`` bytes read,
    synced). The new name is not synced: the caller syncs ``target``'s folder once for all it keeps there.
    """
    with directory(source.parent, source_anchor, target=source) as source_fd:
        try:
            status = os.stat(source.name, dir_fd=source_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except OSError as error:
            raise FileFault(f"{source}: cannot read: {os_reason(error)}") from None
        with directory(target.parent, target_anchor, create=True, target=target, mode=mode) as target_fd:
            _clear_leftover(target_fd, target.name)
            if stat.S_ISREG(status.st_mode) and status.st_nlink == 1:
                try:
                    os.link(source.name, target.name, src_dir_fd=source_fd, dst_dir_fd=target_fd, follow_symlinks=False)
                    return True
                except OSError as error:
                    if error.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO):
                        raise FileFault(f"{target}: cannot write: {os_reason(error)}") from None
            data = read_file(source, limit)
            if data is None:
                return False
            try:
                temporary = _write_temporary(target_fd, target.name, data)
                os.replace(temporary, target.name, src_dir_fd=target_fd, dst_dir_fd=target_fd)
            except OSError as error:
                raise FileFault(f"{target}: cannot write: {os_reason(error)}") from None
    return True


def make_folder(path: Path, anchor: Path, *, mode: int) -> None:
    """The folder ``path`` and those between ``anchor`` and it, made where missing (with ``mode``, less the
    umask); ``FileFault`` when one cannot be."""
    with directory(path, anchor, create=True, target=path, mode=mode):
        pass


def sync_folder(path: Path, anchor: Path) -> None:
    """Make what was written in the folder ``path`` (new names, renames) durable; ``FileFault`` when it cannot."""
    with directory(path, anchor, target=path) as fd:
        try:
            os.fsync(fd)
        except OSError as error:
            raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None


def remove_tree(path: Path, anchor: Path) -> None:
    """Remove the folder ``path`` and all below it (turnmark's own keeping); no link is followed, faults ignored."""
    with contextlib.suppress(FileFault), directory(path.parent, anchor) as fd, contextlib.suppress(OSError):
        shutil.rmtree(path.name, dir_fd=fd)


def _copy_aside(directory_fd: int, name: str) -> str:
    fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=directory_fd)
    with os.fdopen(fd, "rb") as handle:
        return _write_temporary(directory_fd, f"{name}.kept", handle.read())


def _keep_aside(directory_fd: int, name: str) -> str:
    """A second name for the file ``name`` as it is now (a hard link; a copy where links fail)."""
    for candidate in (f"{name}.kept.tmp", *(f"{name}.{os.getpid()}-{n}.kept.tmp" for n in range(1, _SIDESTEPS))):
        _clear_leftover(directory_fd, candidate)
        try:
            os.link(name, candidate, src_dir_fd=directory_fd, dst_dir_fd=directory_fd, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO):
                raise
            return _copy_aside(directory_fd, name)
        return candidate
    raise OSError(errno.EEXIST, "leftover temporary files are in the way")


@dataclass
class _Staged:
    """One file of ``write_together``: its folder, the new bytes' temporary name (``None`` once renamed, or for
    a removal), the old file's second name (``None`` when there was none) and whether its rename is done."""

    path: Path
    directory_fd: int
    temporary: str | None
    kept: str | None
    done: bool = False


def _commit(item: _Staged) -> None:
    if item.temporary is None:
        os.unlink(item.path.name, dir_fd=item.directory_fd)
    else:
        os.replace(item.temporary, item.path.name, src_dir_fd=item.directory_fd, dst_dir_fd=item.directory_fd)
        item.temporary = None
    item.done = True


def _take_back(item: _Staged) -> str | None:
    """Put the file back as it was before its rename; when even that fails, what became of it."""
    try:
        if item.kept is None:
            os.unlink(item.path.name, dir_fd=item.directory_fd)
        else:
            os.replace(item.kept, item.path.name, src_dir_fd=item.directory_fd, dst_dir_fd=item.directory_fd)
    except OSError as error:
        kept = f" (it was kept as {item.kept})" if item.kept else ""
        item.kept = None
        return f"{item.path} could not be put back{kept}: {os_reason(error)}"
    item.kept = None
    return None


def _discard(staged: list[_Staged]) -> None:
    for item in staged:
        for name in (item.temporary, item.kept):
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=item.directory_fd)


def write_together(changes: Sequence[tuple[Path, bytes | None]], anchor_of: Callable[[Path], Path]) -> list[Path]:
    """Write several files (``None``: remove one), in one folder or several, all or none; the files changed.

    Every folder is opened from its anchor (``anchor_of``) and every target checked (no links)
    before anything is written.
    Then the new bytes go to temporary files beside their targets, synced (in a batch, all of them by one
    sync of each file system: ``durability.batched``), and each file to be replaced or removed gets a
    second name (a hard link) holding it as it was; only when all of that worked are the temporary files
    renamed over the targets, in the order given. When one rename fails, the renames already done are
    taken back, so every file is as it was. Unchanged files are not written. Syncing the folders after the
    renames is best effort: the change is made (a batch leaves it to one sync, ``durability``).
    ``FileFault`` (one line) names the file that failed.
    """
    per_file = durability.per_file()
    with contextlib.ExitStack() as stack:
        folders: dict[Path, int] = {}
        for path, _ in changes:
            if path.parent not in folders:
                folders[path.parent] = stack.enter_context(directory(path.parent, anchor_of(path), target=path))
            refuse_links(folders[path.parent], path.parent, (path.name,))
        staged: list[_Staged] = []
        stack.callback(_discard, staged)
        for path, data in changes:
            fd = folders[path.parent]
            try:
                exists = _taken(fd, path.name)
                if (data is None and not exists) or (data is not None and _holds(fd, path.name, data)):
                    continue
                item = _Staged(path, fd, None, None)
                staged.append(item)
                if exists:
                    item.kept = _keep_aside(fd, path.name)
                if data is not None:
                    item.temporary = _write_temporary(fd, path.name, data, synced=per_file)
            except OSError as error:
                raise FileFault(f"{path}: cannot write: {os_reason(error)}") from None
        if not per_file and staged:
            try:
                durability.sync_together(item.directory_fd for item in staged)
            except OSError as error:
                raise FileFault(f"{staged[0].path}: cannot write: {os_reason(error)}") from None
        for item in staged:
            try:
                _commit(item)
            except OSError as error:
                lost = [problem for done in reversed(staged) if done.done and (problem := _take_back(done))]
                raise FileFault("; ".join([f"{item.path}: cannot write: {os_reason(error)}", *lost])) from None
        if per_file:
            for fd in {item.directory_fd for item in staged}:
                with contextlib.suppress(OSError):
                    os.fsync(fd)
        return [item.path for item in staged]


def _taken(directory_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def build_directory(
    parent: Path, anchor: Path, hidden: str, documents: Sequence[tuple[str, bytes]], names: Sequence[str], *, what: str
) -> str:
    """Build a folder in ``parent`` (made when missing) under the ``hidden`` name, holding ``documents``
    (written and synced in order), then give it the first of ``names`` that is free, in one rename; the
    name it got.

    Everything goes through folder descriptors and never follows a link. On failure the hidden folder
    is removed and ``FileFault`` says ``{parent}/{names[0]}: cannot create {what}: {reason}``; nothing is left.
    """
    target = parent / names[0]
    with directory(parent, anchor, create=True, target=target) as fd:
        try:
            os.mkdir(hidden, 0o755, dir_fd=fd)
        except OSError as error:
            raise FileFault(f"{target}: cannot create {what}: {os_reason(error)}") from None
        try:
            inner = os.open(hidden, _DIRECTORY_FLAGS, dir_fd=fd)
            try:
                for name, data in documents:
                    _replace(inner, name, data)
            finally:
                os.close(inner)
            for name in names:
                if _taken(fd, name):
                    continue
                try:
                    os.rename(hidden, name, src_dir_fd=fd, dst_dir_fd=fd)
                except OSError as error:
                    if error.errno in (errno.EEXIST, errno.ENOTEMPTY):
                        continue
                    raise
                with contextlib.suppress(OSError):
                    os.fsync(fd)
                return name
            raise OSError(errno.EEXIST, "no free name")
        except BaseException as error:
            shutil.rmtree(hidden, ignore_errors=True, dir_fd=fd)
            if isinstance(error, OSError):
                raise FileFault(f"{target}: cannot create {what}: {os_reason(error)}") from None
            raise


def process_gone(pid: str) -> bool | None:
    """Whether the process ``pid`` (a name's decimal part) has ended; ``None`` when ``pid`` is not a process ID."""
    if not pid.isdecimal() or not 0 < int(pid) < 2**31:
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def remove_abandoned(parent: Path, anchor: Path, prefix: str, abandoned: Callable[[str, float], bool]) -> None:
    """Remove the folders in ``parent`` whose name starts with ``prefix`` that ``abandoned(name, mtime)`` says
    no one is building any more (never through a link); what cannot be removed stays."""
    with contextlib.suppress(OSError, FileFault), directory(parent, anchor) as fd:
        for name in os.listdir(fd):
            if not name.startswith(prefix):
                continue
            status = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode) and abandoned(name, status.st_mtime):
                shutil.rmtree(name, ignore_errors=True, dir_fd=fd)
