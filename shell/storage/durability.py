"""Durability paid per batch: a commit's new files synced together, its folders left to one sync of the batch.

A safe write syncs each new file's data before its rename (the rename never makes a file with unwritten
bytes visible) and then syncs the folders the renames changed, so the change itself outlives a power cut.
A run that writes many conversations (``summarize --all``) pays both per batch: inside ``batched`` a commit
(``write_together``) writes its new files unsynced and makes them durable with one ``syncfs`` of each file
system they lie on before its first rename (what was written there before, such as an undo step's second
names, with them), instead of one ``fsync`` per file; and its folder syncs, which are best effort and order
nothing, are skipped: the run calls ``sync_file_systems`` every ``BATCH`` conversations and when it ends. A
power cut before that sync leaves each conversation of the batch old or new, as a kill does (the kill tests'
guarantee).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

BATCH = 64
"""Conversations written between two syncs of the file systems."""

_deferred: list[bool] = []


@contextlib.contextmanager
def batched() -> Iterator[None]:
    """Within: a commit syncs its new files together (``sync_together``) and leaves its folders to
    ``sync_file_systems``."""
    _deferred.append(True)
    try:
        yield
    finally:
        _deferred.pop()


def per_file() -> bool:
    """Whether a commit syncs each new file and its folders itself (not inside ``batched``)."""
    return not _deferred


def sync_together(folders: Iterable[int]) -> None:
    """Make what was written in each folder (descriptors) durable with one ``syncfs`` of each file system they
    lie on; ``OSError`` when one cannot be synced (unlike ``sync_file_systems``, nothing is passed over)."""
    synced: set[int] = set()
    for fd in folders:
        device = os.fstat(fd).st_dev
        if device not in synced:
            _syncfs(fd)
            synced.add(device)


def _syncfs(fd: int) -> None:
    """``syncfs(2)`` on the file system holding ``fd``; ``sync(2)`` where the C library lacks it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    call = getattr(libc, "syncfs", None)
    if call is None:
        os.sync()
    elif call(fd) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def sync_file_systems(places: Iterable[Path]) -> int:
    """Sync each file system one of ``places`` (folders) lies on, once; the file systems synced. Best effort,
    as the folder syncs it stands for: a place that is gone or cannot be synced is passed over."""
    synced: set[int] = set()
    for place in places:
        try:
            fd = os.open(place, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            device = os.fstat(fd).st_dev
            if device not in synced:
                _syncfs(fd)
                synced.add(device)
        except OSError:
            pass
        finally:
            os.close(fd)
    return len(synced)
