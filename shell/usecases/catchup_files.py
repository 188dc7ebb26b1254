"""How a catch-up knows the files it read are still the files on disk: their identity, and their bytes when
the identity is too young to prove anything."""

from __future__ import annotations

from dataclasses import dataclass

from turnmark.core.search.freshness import FileIdentity, Freshness, freshness
from turnmark.shell.clock import now_ns
from turnmark.shell.storage.workspace import BASE_CONFIG, EVENTS, ConversationRef
from turnmark.shell.storage.workspace_cache import file_hash, file_identity

FilesIdentity = tuple[FileIdentity | None, ...]
"""Each copy's ``events.json`` and ``base_config.json``: device, inode, size, mtime and ctime (``None``: absent)."""


def files_identity(ref: ConversationRef) -> FilesIdentity:
    """How the files a catch-up reads and writes stand now: any write, JP's rename or in place, changes it."""
    names = (EVENTS, BASE_CONFIG)
    return tuple(file_identity(str(directory / name)) for directory in ref.directories for name in names)


@dataclass(frozen=True)
class FilesSeen:
    """The files' identity as taken at ``at_ns`` (wall clock) and, when that identity cannot prove a later one
    the same (they changed within ``RACY_NS`` of it, as right after a write), the SHA-256 of their bytes."""

    identity: FilesIdentity
    at_ns: int
    digest: str | None

    def unchanged(self, ref: ConversationRef) -> bool:
        """Whether the files provably hold what they held then (``core/search/freshness``: the same identity
        long enough after their last change, else the same bytes)."""
        now = files_identity(ref)
        if len(now) != len(self.identity):
            return False
        decisions = [freshness(then, self.at_ns, current) for then, current in zip(self.identity, now, strict=True)]
        if all(decision is Freshness.SAME for decision in decisions):
            return True
        return Freshness.CHANGED not in decisions and self.digest is not None and files_digest(ref) == self.digest

    def holds(self, later: FilesSeen | None) -> bool:
        """``later`` looked at the same files (around a read: nothing changed while it read)."""
        return later is not None and (later.identity, later.digest) == (self.identity, self.digest)


def files_digest(ref: ConversationRef) -> str:
    """The SHA-256 of each file ``files_identity`` looks at, in its order (``-``: absent or unreadable)."""
    names = (EVENTS, BASE_CONFIG)
    return " ".join(file_hash(directory / name) or "-" for directory in ref.directories for name in names)


def files_seen(ref: ConversationRef, holding: tuple[str, str] | None = None) -> FilesSeen | None:
    """How the files stand now (their bytes too, when their identity is too young to prove anything later);
    ``None`` when they changed while being looked at. ``holding``: the SHA-256 of the ``events.json`` and
    ``base_config.json`` every copy holds, known from the bytes just written under the lock (none is read
    back to be hashed)."""
    identity, at_ns = files_identity(ref), now_ns()
    young = any(freshness(file, at_ns, file) is not Freshness.SAME for file in identity)
    digest = None
    if young:
        digest = files_digest(ref) if holding is None else " ".join(holding[:2] * len(ref.directories))
    return FilesSeen(identity, at_ns, digest) if files_identity(ref) == identity else None


def changed_ns(files: FilesSeen | None) -> int | None:
    """When the files were last changed (``None``: while they were read)."""
    if files is None:
        return None
    return max((max(file.mtime_ns, file.ctime_ns) for file in files.identity if file is not None), default=0)
