"""Which conversation folders changed since a long-lived process last asked: the kernel's notifications
(Linux inotify), read when asked, never waited for.

A change made before ``changes()`` is called is in the kernel's queue by the time the call that made it
returned, so ``changes()`` reads it: a process that asks at the start of each request sees every change made
before that request. A folder is watched on its own inode (a link is never followed); the folders that hold the
conversations are watched for folders coming, going and being renamed. Anything the feed cannot vouch for (the
kernel's queue overflowed, a folder of conversations itself went away) is said as ``everything``: look at all of
them again with a new feed. Where inotify is missing (not Linux), ``open_feed`` gives ``None``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from turnmark.shell.storage.workspace import ConversationRef, Workspace, list_conversations

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _Q_OVERFLOW, _IGNORED = 0x400, 0x800, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_CHILDREN = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
_FOLDER_MASK = _MODIFY | _ATTRIB | _CLOSE_WRITE | _CHILDREN | _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW
"""A conversation folder: any file in it written, replaced, touched, made or removed; the folder itself gone."""
_ROOT_MASK = _CHILDREN | _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW
"""A folder of conversations: a conversation folder made, removed or renamed; the folder itself gone."""
_HEADER = struct.Struct("iIII")
_READ_SIZE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed since the last ``changes()``: ``everything`` (nothing can be vouched for: look at every
    conversation again, with a new feed); ``relist`` (conversation folders came, went or were renamed: list
    them again); the conversation folders (their paths as watched) where something changed."""

    everything: bool
    relist: bool
    folders: frozenset[str]


class ChangeFeed:
    """An inotify instance over some folders of conversations and the conversation folders in them."""

    def __init__(self, descriptor: int, libc: ctypes.CDLL) -> None:
        self._fd = descriptor
        self._libc = libc
        self._roots: dict[int, str] = {}
        self._folders: dict[int, str] = {}
        self._watched: dict[str, int] = {}

    def watch_roots(self, roots: Iterable[Path]) -> bool:
        """Watch folders of conversations for folders made, removed and renamed; ``False`` if one that is there
        cannot be (one that is not holds no conversation: its coming is seen by ``WorkspaceWatch``)."""
        ok = True
        for root in roots:
            descriptor = self._add(root, _ROOT_MASK)
            if descriptor is not None:
                self._roots[descriptor] = os.fspath(root)
            elif os.path.lexists(root):
                ok = False
        return ok

    def watch(self, folders: Iterable[Path]) -> frozenset[str]:
        """Watch each conversation folder not yet watched under its path; the ones that could not be (a link, a
        folder gone, no watch left), which only a look at their files can vouch for (they are tried again at the
        next call)."""
        unwatched = set()
        for folder in folders:
            path = os.fspath(folder)
            if path in self._watched:
                continue
            descriptor = self._add(folder, _FOLDER_MASK)
            if descriptor is None:
                unwatched.add(path)
                continue
            previous = self._folders.get(descriptor)
            if previous is not None:
                self._watched.pop(previous, None)
            self._folders[descriptor] = path
            self._watched[path] = descriptor
        return frozenset(unwatched)

    def changes(self) -> Changes:
        """Every change the kernel has queued since the last call (without waiting for more)."""
        everything = relist = False
        folders: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                break
            except InterruptedError:
                continue
            if not data:
                break
            offset = 0
            while offset + _HEADER.size <= len(data):
                descriptor, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size + length
                if mask & _Q_OVERFLOW:
                    everything = True
                elif descriptor in self._roots:
                    everything |= bool(mask & (_IGNORED | _DELETE_SELF | _MOVE_SELF))
                    relist = True
                elif (path := self._folders.get(descriptor)) is not None:
                    folders.add(path)
                    if mask & _MOVE_SELF:
                        self._libc.inotify_rm_watch(self._fd, descriptor)
                    if mask & (_IGNORED | _MOVE_SELF | _DELETE_SELF):
                        self._forget(descriptor)
        return Changes(everything, relist or everything, frozenset(folders))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _add(self, path: Path, mask: int) -> int | None:
        descriptor = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask))
        return descriptor if descriptor >= 0 else None

    def _forget(self, descriptor: int) -> None:
        path = self._folders.pop(descriptor, None)
        if path is not None and self._watched.get(path) == descriptor:
            del self._watched[path]


def open_feed() -> ChangeFeed | None:
    """A new feed, or ``None`` where the kernel gives none."""
    name = ctypes.util.find_library("c")
    if name is None or not hasattr(os, "O_NONBLOCK"):
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        init = libc.inotify_init1
    except (OSError, AttributeError):
        return None
    descriptor = int(init(os.O_NONBLOCK | os.O_CLOEXEC))
    return ChangeFeed(descriptor, libc) if descriptor >= 0 else None


class WorkspaceWatch:
    """A workspace's conversations as a long-lived process sees them: listed again only when conversation
    folders came, went or were renamed, and which of them may have changed since the looks last settled.

    ``now(reader)`` gives the conversations and the display IDs of those ``reader`` (a name: each use keeps its
    own results) is to look at again (``None``: every one: its first time, after a conversation went, or when
    the feed cannot vouch); ``settle(reader, looked)`` says its looks at them were made and their results kept.
    Without a feed (``feed=False``: the long way; not Linux) every call lists and looks at every one.
    """

    def __init__(self, workspace: Workspace, *, feed: bool = True) -> None:
        self.workspace = workspace
        self._wanted = feed
        self._feed: ChangeFeed | None = None
        self._opened = False
        self._roots_watched = False
        self._roots_seen: list[tuple[int, int] | None] = []
        self._refs: list[ConversationRef] | None = None
        self._by_folder: dict[str, str] = {}
        self._unwatched: frozenset[str] = frozenset()
        self._pending: dict[str, set[str] | None] = {}

    def now(self, reader: str) -> tuple[list[ConversationRef], frozenset[str] | None]:
        feed = self._current_feed()
        if feed is None:
            return list_conversations(self.workspace), None
        changes = feed.changes()
        if changes.everything or self._root_identities() != self._roots_seen:
            self.close()
            feed = self._current_feed()
            if feed is None:
                return list_conversations(self.workspace), None
            changes = feed.changes()
        if self._refs is None or changes.relist or not self._roots_watched:
            self._relist(feed)
        assert self._refs is not None
        changed = {self._by_folder[path] for path in changes.folders if path in self._by_folder}
        self._add(changed)
        pending = self._pending.setdefault(reader, None)
        return self._refs, None if pending is None else frozenset(pending | self._unwatched)

    def settle(self, reader: str, looked: Collection[str] | None) -> None:
        """``reader``'s looks at the conversations of ``looked`` (``None``: every one) were made since its last
        ``now()``."""
        pending = self._pending.get(reader)
        if looked is None:
            self._pending[reader] = set() if self._feed is not None else None
        elif pending is not None:
            pending.difference_update(looked)

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
        self._feed, self._opened, self._refs, self._pending = None, False, None, {}

    def _current_feed(self) -> ChangeFeed | None:
        if not self._wanted:
            return None
        if not self._opened:
            self._opened = True
            self._roots_seen = self._root_identities()
            self._feed = open_feed()
            if self._feed is not None:
                self._roots_watched = self._feed.watch_roots(self._roots())
        elif self._feed is not None and not self._roots_watched:
            self._roots_watched = self._feed.watch_roots(self._roots())
        return self._feed

    def _root_identities(self) -> list[tuple[int, int] | None]:
        """Which folder each folder of conversations is (none there: ``None``): one that came, went or was
        replaced (with the folder holding it, say) is seen here, where no event of its own may say so."""
        found: list[tuple[int, int] | None] = []
        for root in self._roots():
            try:
                status = os.stat(root, follow_symlinks=False)
            except OSError:
                found.append(None)
            else:
                found.append((status.st_dev, status.st_ino))
        return found

    def _roots(self) -> list[Path]:
        silo = self.workspace.user_silo
        return [self.workspace.conversations_dir, *([silo / "conversations"] if silo is not None else [])]

    def _relist(self, feed: ChangeFeed) -> None:
        refs = list_conversations(self.workspace)
        unwatched = feed.watch(folder for ref in refs for folder in ref.directories)
        previous = self._refs
        self._refs = refs
        self._by_folder = {os.fspath(folder): ref.display_id for ref in refs for folder in ref.directories}
        self._unwatched = frozenset(
            ref.display_id for ref in refs if any(os.fspath(folder) in unwatched for folder in ref.directories)
        )
        before = {ref.display_id: ref.directories for ref in previous} if previous is not None else {}
        if previous is None or before.keys() - {ref.display_id for ref in refs}:
            self._pending = dict.fromkeys(self._pending)
            return
        self._add({ref.display_id for ref in refs if before.get(ref.display_id) != ref.directories})

    def _add(self, changed: set[str]) -> None:
        """``changed`` to every reader's conversations to look at again."""
        for pending in self._pending.values():
            if pending is not None:
                pending.update(changed)
