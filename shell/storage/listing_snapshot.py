"""The listing's snapshot: what ``conversations`` printed last time, kept with the files' looks it holds for.

One row of the cache database's ``listing`` table per workspace root: the digest of every conversation's folders
and look (``workspace_cache.Look``), each conversation's printed row with the folders and look it holds for, and
the whole text the listing printed. A warm listing stats the files and compares the digest of their looks with the one
kept: the same digest, the same output, no row read or made. A printed row holds for a look at which its
conversation's cache row was the same (``workspace_cache.decide``), so a look found equal later is one at
which the listing's long way would print that row again. The ``layout`` names the printed form: a snapshot of
another layout is not used.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from turnmark.shell.storage.cache_db import fetched
from turnmark.shell.storage.workspace import Folder
from turnmark.shell.storage.workspace_cache import Look

Value = str | int | bool | None


class PrintedRow(msgspec.Struct, array_like=True, frozen=True):
    """A conversation as ``conversations`` prints it."""

    values: tuple[Value, ...]
    """Its JSON object's values (without ``default``; the layout knows the keys)."""
    line: str
    """Its text line, not marked as the default."""
    candidate: tuple[int, int, int] | None
    """When it may be the default conversation: its ``timestamps.activity_key``."""
    chrome: str | None
    """The error or warning printed on stderr for it."""


class Kept(msgspec.Struct, array_like=True, frozen=True):
    """A conversation's printed row and the folders and look it holds for (``None``: it holds for none)."""

    folder: Folder
    look: Look | None
    row: PrintedRow


Looks = Sequence[tuple[Folder, Look | None]]
_ENCODER = msgspec.msgpack.Encoder()


@functools.cache
def _rows() -> msgspec.msgpack.Decoder[list[Kept]]:
    """Made when first used: the text alone, printed when nothing changed, needs no decoder."""
    return msgspec.msgpack.Decoder(list[Kept])


def digest(root: str, looks: Looks) -> bytes | None:
    """What is kept of the ``looks`` of the workspace at ``root``: the BLAKE2b digest of their encoding (``None``:
    a path that is not UTF-8, which no snapshot holds)."""
    try:
        return hashlib.blake2b(_ENCODER.encode((root, looks))).digest()
    except UnicodeEncodeError:
        return None


class Snapshot(NamedTuple):
    """A stored snapshot: the looks' digest and the text printed (``None`` when the listing printed something on
    stderr too); its rows are read by ``rows``."""

    looks: bytes
    text: str | None


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def read(connection: sqlite3.Connection, root: str, layout: str) -> Snapshot | None:
    """The snapshot kept for the workspace at ``root`` in ``layout``, when there is one of the right types."""
    if not _encodes(root):
        return None
    found = fetched(connection, "SELECT layout, looks, text FROM listing WHERE root = ?", (root,))
    if len(found) != 1:
        return None
    stored_layout, looks, text = found[0]
    if stored_layout != layout or type(looks) is not bytes or (text is not None and type(text) is not str):
        return None
    return Snapshot(looks, text)


def rows(connection: sqlite3.Connection, root: str, layout: str) -> list[Kept] | None:
    """The printed rows kept for the workspace at ``root`` in ``layout`` (each with the look it holds for, which
    is what makes them true, whatever ``read`` gave), ``None`` when they do not decode to them (a damaged or
    crafted file)."""
    if not _encodes(root):
        return None
    found = fetched(connection, "SELECT layout, rows FROM listing WHERE root = ?", (root,))
    if len(found) != 1 or found[0][0] != layout or type(found[0][1]) is not bytes:
        return None
    try:
        return _rows().decode(found[0][1])
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def write(connection: sqlite3.Connection, root: str, layout: str, kept: Sequence[Kept], text: str | None) -> bool:
    """Keep the snapshot of ``kept`` (replacing any other: a cache is one workspace's); ``False`` when a path or a
    printed row does not encode (text that is not UTF-8) and none is kept."""
    connection.execute("DELETE FROM listing")
    looks = digest(root, [(item.folder, item.look) for item in kept])
    try:
        blob = _ENCODER.encode(kept)
    except (UnicodeEncodeError, OverflowError):
        return False
    if looks is None or (text is not None and not _encodes(text)):
        return False
    connection.execute("INSERT INTO listing VALUES (?, ?, ?, ?, ?)", (root, layout, looks, blob, text))
    return True
