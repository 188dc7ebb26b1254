"""When a conversation's file is the one that was indexed: by its identity, then by its content.

The identity is the file's device, inode, size, modification time and change time (ns): restoring a
rewritten file's size and modification time (``os.utime``) does not restore its change time. An identical identity is
trusted only when the file was last modified well before it was looked at (``RACY_NS``): a write in the
same clock tick as the look keeps size and time, so such a "racily clean" file, and one whose size is
the same but whose identity is not, is verified by the hash of its bytes. A different size is a change.
Shared by ``find``'s index and the workspace cache, which keep these columns in ``conversations``. A
clock that runs ahead of the files (or behind them) only makes more files "racily clean": they are
hashed, never trusted.
"""

import enum
from typing import NamedTuple

RACY_NS = 2_000_000_000
"""Modification times this close to the look (2 s, the coarsest common file-system clock) prove nothing."""


class FileIdentity(NamedTuple):
    """A file's identity as ``stat`` gives it (a tuple: a workspace of thousands compares many)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int = 0


class Freshness(enum.Enum):
    SAME = "same"
    VERIFY = "verify"
    """Hash the bytes: the same hash is the same file."""
    CHANGED = "changed"


def freshness(stored: FileIdentity | None, checked_ns: int, current: FileIdentity | None) -> Freshness:
    """Whether a file looked at ``checked_ns`` (wall clock, ns) as ``stored`` is still the same ``current``.

    >>> old = FileIdentity(1, 7, 120, 1_000_000_000_000)
    >>> freshness(old, 1_100_000_000_000, old).name
    'SAME'
    >>> freshness(old, 1_100_000_000_000, FileIdentity(1, 7, 120, 1_000_000_000_000, 1_090_000_000_000)).name
    'VERIFY'
    >>> freshness(old, 1_000_500_000_000 - 499_000_000_000, old).name
    'VERIFY'
    >>> freshness(old, 1_100_000_000_000, FileIdentity(1, 8, 120, 1_050_000_000_000)).name
    'VERIFY'
    >>> freshness(old, 1_100_000_000_000, FileIdentity(1, 7, 121, 1_050_000_000_000)).name
    'CHANGED'
    """
    if stored is None or current is None:
        return Freshness.SAME if stored is None and current is None else Freshness.CHANGED
    if current.size != stored.size:
        return Freshness.CHANGED
    if current == stored and settled(current, checked_ns):
        return Freshness.SAME
    return Freshness.VERIFY


def settled(identity: FileIdentity, checked_ns: int) -> bool:
    """A file looked at ``checked_ns`` as ``identity`` was last changed well before: found the same later, it
    is trusted without its bytes (else its bytes are what proves it).

    >>> settled(FileIdentity(1, 7, 120, 1_000_000_000_000), 1_100_000_000_000)
    True
    >>> settled(FileIdentity(1, 7, 120, 1_000_000_000_000, 1_099_000_000_000), 1_100_000_000_000)
    False
    """
    return max(identity.mtime_ns, identity.ctime_ns) < checked_ns - RACY_NS


def combined(decisions: list[Freshness]) -> Freshness:
    """Several files' decisions as one: any change is a change, any doubt is a doubt."""
    for kind in (Freshness.CHANGED, Freshness.VERIFY):
        if kind in decisions:
            return kind
    return Freshness.SAME
