"""The workspace cache: each conversation's row in the cache database, and whether its files changed.

One row per conversation in ``conversations`` (cache_db's schema): its files' identities as last read
(``core/search/freshness.py`` decides whether they are still the same), what listing needs (title, last
activity, lineage, turn counts, problem counts) and two marks: ``indexed`` (``find``'s turn rows were
taken from these files) and ``cached`` (the listing columns were). A writer that records new files
clears the other's mark, so each reads again only what it has not seen; ``find`` and the listing share
the looks, the hashing and the row. ``check --all`` keeps its report beside the listing's columns; it is
dropped with them when the files change.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from turnmark.core.search.freshness import FileIdentity, Freshness, combined, freshness, settled
from turnmark.core.summaries.waiting import Waiting
from turnmark.shell.clock import now_ns
from turnmark.shell.errors import FileFault
from turnmark.shell.storage import plan_cache
from turnmark.shell.storage.cache_db import FTS_TABLES, fetched
from turnmark.shell.storage.files import BASE_CONFIG_LIMIT, EVENTS_LIMIT, METADATA_LIMIT, read_file
from turnmark.shell.storage.workspace import (
    BASE_CONFIG,
    EVENTS,
    METADATA,
    ConversationRef,
    Folder,
    Workspace,
    newest_copy,
    ref_of,
)

_new = tuple.__new__
"""Makes a NamedTuple from a tuple without its Python ``__new__`` (a warm listing makes tens of thousands)."""

if TYPE_CHECKING:
    from turnmark.shell.storage.conversations import Digests, LoadedConversation, ReadFacts


class Identity(NamedTuple):
    """A file as it was read: its identity and the hash of its bytes (``""``: not hashed, ``hashed_when_read``:
    the row holds while the identity does; a new identity is read again, never taken for the same bytes)."""

    file: FileIdentity
    sha256: str


class Facts(NamedTuple):
    """What ``conversations`` lists beside the title and counts (the format and the link problems), and what
    ``summarize --all`` needs to know that a conversation has nothing to summarize."""

    legacy: bool
    entries: int
    unresolved_links: int
    duplicated_ids: int
    metadata_error: str | None
    waiting: Waiting
    """Turns that could still want a summary: ``summarize --all`` reads only conversations that have some."""


class ConversationRow(NamedTuple):
    """What the cache keeps about a conversation (tuples: a warm listing of a big workspace builds many)."""

    conversation: str
    directory: str
    events: Identity | None
    metadata: Identity | None
    checked_ns: int
    title: str | None = None
    last_activated_at: str | None = None
    forked_from: str | None = None
    turns: int = 0
    summarized_turns: int = 0
    problem: str | None = None
    indexed: bool = False
    facts: Facts | None = None
    """Set when the row is ``cached`` (listing's columns read from these files)."""
    check: str | None = None
    """``check``'s report (its JSON) when one was taken from these files."""
    base_config: Identity | None = None
    """``base_config.json`` beside the ``events.json`` read (``None``: none there, the legacy format)."""

    def same_files(self, other: ConversationRow) -> bool:
        return self.events == other.events and self.metadata == other.metadata and self.base_config == other.base_config


# Files and their identities -----------------------------------------------------------------------


class Look(NamedTuple):
    """A conversation's files as they are now (stat only), in the copy a read picks."""

    events_file: str
    events: FileIdentity | None
    metadata_file: str
    metadata: FileIdentity | None
    base_config: FileIdentity | None
    """``base_config.json`` beside ``events_file``: what the stream is read with (every file a row's facts
    come from is part of its key)."""

    @property
    def events_path(self) -> Path:
        return Path(self.events_file)

    @property
    def metadata_path(self) -> Path:
        return Path(self.metadata_file)

    @property
    def directory(self) -> str:
        return os.path.dirname(self.events_file)

    @property
    def base_config_path(self) -> Path:
        return Path(self.directory, BASE_CONFIG)


UNSEEN = FileIdentity(-1, -1, -1, 2**62, 2**62)
"""A file that is there but cannot be looked at (a loop of links, a file where a folder should be): changed since
anything stored, and never settled, so a row is never kept by it (the read says why it cannot be read)."""


def file_identity(path: str) -> FileIdentity | None:
    """``None`` for a file that is not there."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return UNSEEN
    return _new(FileIdentity, (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns))


def _look_in(folder: str) -> Look:
    events, metadata = f"{folder}{os.sep}{EVENTS}", f"{folder}{os.sep}{METADATA}"
    base_config = f"{folder}{os.sep}{BASE_CONFIG}"
    return _new(Look, (events, file_identity(events), metadata, file_identity(metadata), file_identity(base_config)))


def look(ref: ConversationRef) -> Look:
    """Strings, not paths, on the way: a warm listing of a big workspace is mostly this."""
    if ref.user_dir is None and ref.workspace_dir is not None:
        return _look_in(os.fspath(ref.workspace_dir))
    events, metadata = os.fspath(newest_copy(ref, EVENTS)), os.fspath(newest_copy(ref, METADATA))
    base_config = os.path.join(os.path.dirname(events), BASE_CONFIG)
    return _new(Look, (events, file_identity(events), metadata, file_identity(metadata), file_identity(base_config)))


def looks(folders: Sequence[Folder], workspace: Workspace) -> list[Look]:
    """``look`` of each conversation of ``workspace`` by its ``folders`` (``conversation_folders``), without making
    its ``ConversationRef`` (a warm listing of 10,000 conversations is mostly its 30,000 stats)."""
    return [
        _look_in(folder[1]) if folder[2] is None and folder[1] is not None else look(ref_of(folder, workspace))
        for folder in folders
    ]


def hashed_when_read(seen: Look, checked: int) -> bool:
    """Whether a read for a row hashes the ``events.json`` seen at ``checked``: only one too young to be trusted
    by its identity (``freshness.settled``), so that a later look can verify it by its bytes; a settled one's
    row holds while its identity does (a new identity is read again)."""
    return seen.events is None or not settled(seen.events, checked)


def decide(row: ConversationRow | None, seen: Look) -> Freshness:
    if row is None:
        return Freshness.CHANGED
    checked = row.checked_ns
    return combined(
        [
            freshness(row.events.file if row.events else None, checked, seen.events),
            freshness(row.metadata.file if row.metadata else None, checked, seen.metadata),
            freshness(row.base_config.file if row.base_config else None, checked, seen.base_config),
        ]
    )


def holds(row: ConversationRow, seen: Look) -> bool:
    """Whether a listing that looks again and finds ``seen`` keeps ``row`` as it is, unread and untouched."""
    usable = row.problem is not None or row.facts is not None
    return usable and row.directory == seen.directory and decide(row, seen) is Freshness.SAME


def sha(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def file_hash(path: Path) -> str | None:
    try:
        data = read_file(path, {METADATA: METADATA_LIMIT, BASE_CONFIG: BASE_CONFIG_LIMIT}.get(path.name, EVENTS_LIMIT))
    except FileFault:
        return None
    return None if data is None else sha(data)


def same_bytes(row: ConversationRow, seen: Look) -> bool:
    """The files hold the bytes ``row`` was taken from (never so for a file it did not hash)."""
    pairs = (
        (row.events, seen.events_path),
        (row.metadata, seen.metadata_path),
        (row.base_config, seen.base_config_path),
    )
    if any(identity is not None and not identity.sha256 for identity, _ in pairs):
        return False
    return all((identity.sha256 if identity else None) == file_hash(path) for identity, path in pairs)


def _identified(file: FileIdentity | None, path: Path, known: str | None = None) -> Identity | None:
    digest = known if known is not None else file_hash(path) if file else None
    return Identity(file, digest) if file and digest else None


def identities(seen: Look, digests: Digests | None = None) -> tuple[Identity | None, Identity | None, Identity | None]:
    """The files' identities with their hashes (``digests``: of the files as a read just took them, so none is
    read again): events, metadata, base config."""
    if digests is None:
        return (
            _identified(seen.events, seen.events_path),
            _identified(seen.metadata, seen.metadata_path),
            _identified(seen.base_config, seen.base_config_path),
        )
    return (
        Identity(seen.events, digests.events) if seen.events else None,
        _identified(seen.metadata, seen.metadata_path, digests.metadata or ""),
        _identified(seen.base_config, seen.base_config_path, digests.base_config or ""),
    )


def verified(row: ConversationRow, seen: Look, now: int) -> ConversationRow | None:
    """``row`` under the files' new identity when their bytes are the ones it was taken from, else ``None``."""
    if not same_bytes(row, seen):
        return None
    events = Identity(seen.events, row.events.sha256) if seen.events and row.events else None
    metadata = Identity(seen.metadata, row.metadata.sha256) if seen.metadata and row.metadata else None
    base = Identity(seen.base_config, row.base_config.sha256) if seen.base_config and row.base_config else None
    return row._replace(directory=seen.directory, events=events, metadata=metadata, base_config=base, checked_ns=now)


def kept(ref: ConversationRef, row: ConversationRow | None, usable: bool) -> tuple[ConversationRow, bool] | None:
    """``row`` when the conversation's files are still the ones it was taken from, with whether it was touched
    (the same bytes under a new identity, or in a folder renamed since: write them back); ``None``: read the
    conversation. A row
    that is not ``usable`` for the caller (taken by the other reader) is never kept, nor one that names a file
    (``_names_a_file``) of a conversation whose folder was renamed since."""
    if row is None or not usable:
        return None
    seen = look(ref)
    if row.directory != seen.directory and _names_a_file(row):
        return None
    decision = decide(row, seen)
    if decision is Freshness.SAME:
        if row.directory != seen.directory:
            return row._replace(directory=seen.directory), True
        return row, False
    if decision is Freshness.VERIFY:
        same = verified(row, seen, now_ns())
        if same is not None:
            return same, True
    return None


def _names_a_file(row: ConversationRow) -> bool:
    """The row says something that names a file where it was read: why it could not be, or its metadata's
    problem."""
    return row.problem is not None or (row.facts is not None and row.facts.metadata_error is not None)


def unreadable(ref: ConversationRef, seen: Look, checked: int, problem: str) -> ConversationRow:
    """The row of a conversation that cannot be read: its files' identities (so it is not read again until
    they change) and why."""
    events, metadata, base_config = identities(seen)
    return ConversationRow(
        ref.display_id, seen.directory, events, metadata, checked, problem=problem, base_config=base_config
    )


def loaded_row(
    loaded: LoadedConversation | ReadFacts,
    seen: Look,
    checked: int,
    *,
    turns: int,
    summarized_turns: int,
    facts: Facts | None = None,
    check: str | None = None,
) -> ConversationRow:
    """The row of a conversation read after ``seen`` was taken (its events hashed from the bytes read)."""
    same_copy = os.fspath(loaded.directory) == seen.directory
    events, metadata, base_config = identities(seen, loaded.digests)
    return ConversationRow(
        loaded.ref.display_id,
        str(loaded.directory),
        events if same_copy else None,
        metadata,
        checked,
        title=loaded.title,
        last_activated_at=loaded.metadata.last_activated_at if loaded.metadata else None,
        forked_from=loaded.metadata.forked_from if loaded.metadata else None,
        turns=turns,
        summarized_turns=summarized_turns,
        facts=facts,
        check=check,
        base_config=base_config if same_copy else None,
    )


# The rows ----------------------------------------------------------------------------------------------

_IDENTITY = ("device", "inode", "size", "mtime_ns", "ctime_ns", "sha256")
_COMMON = (
    "conversation",
    "directory",
    *(f"events_{name}" for name in _IDENTITY),
    *(f"metadata_{name}" for name in _IDENTITY),
    *(f"base_config_{name}" for name in _IDENTITY),
    "checked_ns",
    "title",
    "last_activated_at",
    "forked_from",
    "turns",
    "summarized_turns",
    "problem",
)
_FACTS = (
    "legacy",
    "entries",
    "unresolved_links",
    "duplicated_ids",
    "metadata_error",
    "waiting_before_last",
    "waiting_last",
    "waiting_extractive",
)
_SELECT = ", ".join((*_COMMON, "indexed", "cached", *_FACTS, "check_report"))


def _stored_text(value: str | None) -> str | bytes | None:
    """Text SQLite keeps as given; a path or message with lone surrogates (a name that is not UTF-8) as bytes."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")
    return value


def _read_text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return None if value is None else str(value)


def _identity_values(identity: Identity | None) -> tuple[object, ...]:
    if identity is None:
        return (None,) * len(_IDENTITY)
    file = identity.file
    return (file.device, file.inode, file.size, file.mtime_ns, file.ctime_ns, identity.sha256)


_TEXT: frozenset[type] = frozenset({str, bytes})
_OPTIONAL_TEXT: frozenset[type] = frozenset({str, bytes, type(None)})
_INT: frozenset[type] = frozenset({int})
_OPTIONAL_INT: frozenset[type] = frozenset({int, type(None)})
_STRING: frozenset[type] = frozenset({str})
_OPTIONAL_STRING: frozenset[type] = frozenset({str, type(None)})
_KINDS: tuple[frozenset[type], ...] = (
    _STRING,
    _TEXT,
    *(_OPTIONAL_INT,) * 5,
    _OPTIONAL_STRING,
    *(_OPTIONAL_INT,) * 5,
    _OPTIONAL_STRING,
    *(_OPTIONAL_INT,) * 5,
    _OPTIONAL_STRING,
    _INT,
    *(_OPTIONAL_TEXT,) * 3,
    _INT,
    _INT,
    _OPTIONAL_TEXT,
    _INT,
    _INT,
    *(_OPTIONAL_INT,) * 4,
    _OPTIONAL_TEXT,
    *(_OPTIONAL_INT,) * 3,
    _OPTIONAL_TEXT,
)
"""The Python types each column of ``_SELECT`` may come back as (declared by the schema, not enforced by SQLite)."""
_WIDTH = len(_IDENTITY)
_EVENTS, _METADATA, _BASE_CONFIG = 2, 2 + _WIDTH, 2 + 2 * _WIDTH
"""Where each file's identity starts among the columns."""
_CACHED = len(_COMMON) + 1
_FACT_COUNTS = (_CACHED + 1, _CACHED + 2, _CACHED + 3, _CACHED + 4, _CACHED + 6, _CACHED + 7, _CACHED + 8)


def _valid(values: Sequence[Any]) -> bool:
    """Each value of its column's type, a file's identity whole or absent, a ``cached`` row's facts all there."""
    if len(values) != len(_KINDS) or not all(type(value) in kinds for value, kinds in zip(values, _KINDS, strict=True)):
        return False
    for start in (_EVENTS, _METADATA, _BASE_CONFIG):
        present = [value is not None for value in values[start : start + _WIDTH]]
        if any(present) and not all(present):
            return False
    return not values[_CACHED] or all(values[index] is not None for index in _FACT_COUNTS)


def _valid_rows(rows: Iterable[Sequence[Any]]) -> Iterator[Sequence[Any]]:
    """The rows ``_valid`` keeps, decided once per shape: the rule looks only at each value's type and whether
    ``cached`` is set, and a cache holds rows of a few shapes."""
    decided: dict[tuple[object, ...], bool] = {}
    for values in rows:
        shape = (not values[_CACHED], *map(type, values))
        keep = decided.get(shape)
        if keep is None:
            keep = decided[shape] = _valid(values)
        if keep:
            yield values


def _identity_at(values: Sequence[Any], start: int) -> Identity | None:
    if values[start] is None:
        return None
    return _new(Identity, (_new(FileIdentity, values[start : start + _WIDTH - 1]), values[start + _WIDTH - 1]))


def _row(values: Sequence[Any]) -> ConversationRow:
    """A stored row (SQLite gives its integers as ints and its text as str, or as bytes when it was not UTF-8);
    its tuples made by ``tuple.__new__``: a warm listing of a big workspace makes ten a row."""
    checked, title, last, forked, turns, summarized, problem, indexed, cached = values[
        _BASE_CONFIG + _WIDTH : _CACHED + 1
    ]
    facts = check = None
    if cached:
        facts_and_check = values[_CACHED + 1 : _CACHED + 2 + len(_FACTS)]
        legacy, entries, unresolved, duplicated, metadata_error, before_last, last_waits, extractive, check = (
            facts_and_check
        )
        waiting = _new(Waiting, (before_last, bool(last_waits), extractive))
        facts = _new(Facts, (bool(legacy), entries, unresolved, duplicated, _read_text(metadata_error), waiting))
        check = _read_text(check)
    texts: tuple[Any, ...] = (values[1], title, last, forked, problem)
    if bytes in map(type, texts):
        texts = tuple(_read_text(text) for text in texts)
    directory, title, last, forked, problem = texts
    events, metadata = _identity_at(values, _EVENTS), _identity_at(values, _METADATA)
    fields = (values[0], directory, events, metadata, checked, title, last, forked)
    rest = (turns, summarized, problem, bool(indexed), facts, check, _identity_at(values, _BASE_CONFIG))
    return _new(ConversationRow, fields + rest)


def stored(
    connection: sqlite3.Connection, only: str | None = None, *, among: Collection[str] | None = None
) -> dict[str, ConversationRow]:
    """Every conversation the cache holds (or the one ``only`` names, or those of ``among``), by display ID; a
    row whose values are not of their columns' types is left out (its conversation is read again and the row
    replaced)."""
    if among is not None:
        found: dict[str, ConversationRow] = {}
        for conversation in among:
            found.update(stored(connection, conversation))
        return found
    where, values = (" WHERE conversation = ?", (only,)) if only is not None else ("", ())
    rows = fetched(connection, f"SELECT {_SELECT} FROM conversations{where}", values)
    return {row.conversation: row for row in map(_readable_row, _valid_rows(rows)) if row is not None}


def stored_names(connection: sqlite3.Connection) -> set[str]:
    """Every conversation the cache has a row for, whatever the row's other values."""
    return {name for (name,) in fetched(connection, "SELECT conversation FROM conversations") if type(name) is str}


def indexed_marks(connection: sqlite3.Connection) -> dict[str, bool]:
    """Every conversation the cache has a row for, by display ID: whether ``find``'s turn rows were taken from
    the files the row names (a row of another type reads as not)."""
    return {
        conversation: indexed == 1
        for conversation, indexed in connection.execute("SELECT conversation, indexed FROM conversations")
        if isinstance(conversation, str)
    }


def with_problems(connection: sqlite3.Connection) -> dict[str, ConversationRow]:
    """The rows of the conversations that could not be read, by display ID."""
    rows = fetched(connection, f"SELECT {_SELECT} FROM conversations WHERE problem IS NOT NULL")
    found = map(_readable_row, _valid_rows(rows))
    return {row.conversation: row for row in found if row is not None and row.problem is not None}


def _readable_row(values: Sequence[Any]) -> ConversationRow | None:
    """``_row``, or ``None`` for a row whose text kept as bytes is not UTF-8 (a crafted file's: read it again)."""
    try:
        return _row(values)
    except UnicodeDecodeError:
        return None


def save(connection: sqlite3.Connection, row: ConversationRow) -> None:
    """Store ``row``; what another reader took from other files than ``row``'s is marked stale."""
    before = stored(connection, row.conversation).get(row.conversation)
    same = before is not None and before.same_files(row)
    indexed = row.indexed or (same and before is not None and before.indexed)
    kept = before if same and before is not None and row.facts is None else None
    facts = kept.facts if kept is not None else row.facts
    check = kept.check if kept is not None else row.check
    values = (
        row.conversation,
        _stored_text(row.directory),
        *_identity_values(row.events),
        *_identity_values(row.metadata),
        *_identity_values(row.base_config),
        row.checked_ns,
        _stored_text(row.title),
        _stored_text(row.last_activated_at),
        _stored_text(row.forked_from),
        row.turns,
        row.summarized_turns,
        _stored_text(row.problem),
        int(indexed),
        int(facts is not None),
        *(
            (
                int(facts.legacy),
                facts.entries,
                facts.unresolved_links,
                facts.duplicated_ids,
                _stored_text(facts.metadata_error),
                facts.waiting.before_last,
                int(facts.waiting.last),
                facts.waiting.extractive,
            )
            if facts
            else (None,) * len(_FACTS)
        ),
        check if facts else None,
    )
    marks = ", ".join("?" * len(values))
    connection.execute(f"INSERT OR REPLACE INTO conversations ({_SELECT}) VALUES ({marks})", values)


def touch(connection: sqlite3.Connection, row: ConversationRow) -> None:
    """The conversation's files are the same bytes under a new identity: remember the identity."""
    assignments = ", ".join(f"{name} = ?" for name in _COMMON[1 : 2 + 3 * len(_IDENTITY) + 1])
    connection.execute(
        f"UPDATE conversations SET {assignments} WHERE conversation = ?",
        (
            _stored_text(row.directory),
            *_identity_values(row.events),
            *_identity_values(row.metadata),
            *_identity_values(row.base_config),
            row.checked_ns,
            row.conversation,
        ),
    )


def forget_rows(connection: sqlite3.Connection, conversations: Iterable[str]) -> None:
    """Drop everything kept for conversations that no longer exist: their row, their turns with their text in
    ``find``'s index, their stored plans (inside the caller's transaction; the listing and ``find`` both call it)."""
    gone = list(conversations)
    for conversation in gone:
        turns = "SELECT id FROM turns WHERE conversation = ?"
        for table in FTS_TABLES:
            connection.execute(f"DELETE FROM {table} WHERE rowid IN ({turns})", (conversation,))
        connection.execute("DELETE FROM turns WHERE conversation = ?", (conversation,))
        connection.execute("DELETE FROM conversations WHERE conversation = ?", (conversation,))
    plan_cache.forget_plans(connection, gone)
