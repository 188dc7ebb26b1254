"""Durability paid per batch: the folder syncs after a commit's renames, left to one sync of the file system.

A safe write syncs each new file's data before its rename (the rename never makes a file with unwritten
bytes visible) and then syncs the folders the renames changed, so the change itself outlives a power cut.
The second sync is best effort (``write_together``: the change is made either way) and orders nothing, so
a run that writes many conversations (``summarize --all``) defers it: inside ``folder_syncs_deferred``
those folder syncs are skipped, and the run calls ``sync_file_systems`` every ``BATCH`` conversations and
when it ends, one ``syncfs`` per file system instead of two ``fsync`` per conversation. A power cut before
that sync leaves each conversation of the batch old or new, as a kill does (the kill tests' guarantee).
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
def folder_syncs_deferred() -> Iterator[None]:
    """Within: the folder syncs after ``write_together``'s renames are left to ``sync_file_systems``."""
    _deferred.append(True)
    try:
        yield
    finally:
        _deferred.pop()


def folders_synced_now() -> bool:
    """Whether a commit syncs its folders itself (not inside ``folder_syncs_deferred``)."""
    return not _deferred


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
