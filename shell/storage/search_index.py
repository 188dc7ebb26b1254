"""``find``'s tables in the cache database: each conversation's files as indexed, one row per turn, FTS5.

A conversation's rows are rewritten in one transaction, and of its turns only those whose document
changed (``TurnDocument.digest``): a new label rewrites that turn's row alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from turnmark.core.search.documents import MARK_CLOSE, MARK_OPEN, Span, TurnDocument, TurnLine, spans_from_json
from turnmark.core.search.scopes import LIGHT_SCOPES, SCOPES, WEIGHTS, index_columns
from turnmark.shell.errors import BadRows
from turnmark.shell.storage import workspace_cache
from turnmark.shell.storage.cache_db import FTS_TABLES, fetched
from turnmark.shell.storage.workspace_cache import ConversationRow


@dataclass(frozen=True, slots=True)
class HitRow:
    rowid: int
    line: TurnLine
    spans: tuple[tuple[Span, ...], ...]
    score: float


TABLES = dict(zip(FTS_TABLES, (LIGHT_SCOPES, SCOPES), strict=True))
"""The FTS5 tables and their columns: a turn's light scopes alone, and all its scopes (filled only once a
search asks for tool results or reasoning: see ``include_all_scopes``)."""
ALL_SCOPES_KEY = "all_scopes"


class Indexed(NamedTuple):
    """A turn's document as the index stores it (``of``): its row's values, its spans as JSON and its digest
    (``TurnDocument.digest``), made where the document was made (a worker's: plain values are quick to send)."""

    turn_index: int
    turn_id: str | None
    id_transient: bool
    started_at: int | None
    date: str | None
    label: str | None
    label_source: str | None
    spans: str
    digest: str
    texts: tuple[str, ...]

    @classmethod
    def of(cls, document: TurnDocument) -> Indexed:
        return cls(
            document.turn_index,
            document.turn_id,
            document.id_transient,
            document.started_at,
            document.date,
            document.label,
            document.label_source,
            document.spans_json(),
            document.digest(),
            document.texts,
        )


def kept_scopes(connection: sqlite3.Connection) -> tuple[str, ...]:
    """The scopes whose texts the index keeps: the light ones, or all once a search asked for more."""
    return SCOPES if all_scopes(connection) else LIGHT_SCOPES


def all_scopes(connection: sqlite3.Connection) -> bool:
    """Whether ``turns_all_fts`` is kept (tool results and reasoning are indexed)."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (ALL_SCOPES_KEY,)).fetchone()
    return bool(row and row[0] == "1")


def built(connection: sqlite3.Connection) -> bool:
    """Whether any conversation's turns are indexed (the workspace cache alone may have filled the file)."""
    return connection.execute("SELECT 1 FROM conversations WHERE indexed = 1 LIMIT 1").fetchone() is not None


def include_all_scopes(connection: sqlite3.Connection) -> None:
    """From now on index every scope: forget every turn, so the next update reads every conversation again."""
    connection.execute("BEGIN IMMEDIATE")
    for table in ("turns", *TABLES):
        connection.execute(f"DELETE FROM {table}")
    connection.execute("UPDATE conversations SET indexed = 0")
    connection.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (ALL_SCOPES_KEY,))
    connection.execute("COMMIT")


def _table(scopes: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    columns = index_columns(scopes)
    return next(table for table, kept in TABLES.items() if kept == columns), columns


def _write_turn(
    connection: sqlite3.Connection, conversation: str, turn: Indexed, rowid: int | None, *, every_scope: bool
) -> None:
    values = (
        turn.turn_id,
        int(turn.id_transient),
        turn.started_at,
        turn.date,
        turn.label,
        turn.label_source,
        turn.spans,
        turn.digest,
    )
    if rowid is None:
        cursor = connection.execute(
            "INSERT INTO turns (conversation, turn_index, turn_id, id_transient, started_at, date, label, "
            "label_source, spans, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (conversation, turn.turn_index, *values),
        )
        rowid = cursor.lastrowid
    else:
        connection.execute(
            "UPDATE turns SET turn_id = ?, id_transient = ?, started_at = ?, date = ?, label = ?, label_source = ?, "
            "spans = ?, digest = ? WHERE id = ?",
            (*values, rowid),
        )
        _delete_text(connection, rowid)
    for table, columns in TABLES.items():
        if columns == SCOPES and not every_scope:
            continue
        marks = ", ".join("?" * len(columns))
        connection.execute(
            f"INSERT INTO {table} (rowid, {', '.join(columns)}) VALUES (?, {marks})",
            (rowid, *turn.texts[: len(columns)]),
        )


def _delete_text(connection: sqlite3.Connection, rowid: int) -> None:
    for table in TABLES:
        connection.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


def _delete_turns(connection: sqlite3.Connection, rowids: Iterable[int]) -> None:
    for rowid in rowids:
        _delete_text(connection, rowid)
        connection.execute("DELETE FROM turns WHERE id = ?", (rowid,))


def record(connection: sqlite3.Connection, row: ConversationRow, turns: Sequence[Indexed]) -> int:
    """Store a conversation and its turns (``Indexed``), all or nothing; the number of turn rows (re)written.

    Inside a transaction the caller opened, it is part of it, undone by the caller's rollback (no savepoint of
    its own: FTS5 writes out its pending rows at every savepoint's end, which made each conversation's
    release cost more than its inserts); else it is one transaction of its own.
    """
    if connection.in_transaction:
        return _record(connection, row, turns)
    connection.execute("BEGIN IMMEDIATE")
    try:
        written = _record(connection, row, turns)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite rolls back by itself on some errors (disk full, I/O)
            connection.execute("ROLLBACK")
        raise
    return written


def _record(connection: sqlite3.Connection, row: ConversationRow, turns: Sequence[Indexed]) -> int:
    written = 0
    every_scope = all_scopes(connection)
    existing = {
        index: (rowid, digest)
        for rowid, index, digest in connection.execute(
            "SELECT id, turn_index, digest FROM turns WHERE conversation = ?", (row.conversation,)
        )
    }
    for turn in turns:
        rowid, stored_digest = existing.pop(turn.turn_index, (None, None))
        if turn.digest != stored_digest:
            _write_turn(connection, row.conversation, turn, rowid, every_scope=every_scope)
            written += 1
    _delete_turns(connection, (rowid for rowid, _ in existing.values()))
    workspace_cache.save(connection, row._replace(indexed=True))
    return written


def unindex(connection: sqlite3.Connection, conversations: Collection[str]) -> None:
    """Drop the turn rows of ``conversations`` and their marks, so the next update reads them again."""
    for conversation in conversations:
        for table in TABLES:
            connection.execute(
                f"DELETE FROM {table} WHERE rowid IN (SELECT id FROM turns WHERE conversation = ?)", (conversation,)
            )
        connection.execute("DELETE FROM turns WHERE conversation = ?", (conversation,))
        connection.execute("UPDATE conversations SET indexed = 0 WHERE conversation = ?", (conversation,))


def forget(connection: sqlite3.Connection, conversations: Collection[str]) -> None:
    """Drop conversations that no longer exist (inside the caller's transaction)."""
    workspace_cache.forget_rows(connection, conversations)


def _filters(since: int | None, conversations: Sequence[str]) -> tuple[str, list[object]]:
    clauses: list[str] = []
    values: list[object] = []
    if since is not None:
        clauses.append("t.started_at >= ?")
        values.append(since)
    if conversations:
        clauses.append(f"t.conversation IN ({', '.join('?' * len(conversations))})")
        values.extend(conversations)
    return "".join(f" AND {clause}" for clause in clauses), values


def _from(table: str) -> str:
    return f" FROM {table} JOIN turns AS t ON t.id = {table}.rowid WHERE {table} MATCH ?"


def search(
    connection: sqlite3.Connection,
    match: str,
    scopes: Sequence[str],
    *,
    since: int | None,
    conversations: Sequence[str],
    limit: int,
) -> list[HitRow]:
    """The best ``limit`` turns for ``match`` over ``scopes``, best first (bm25 with the scopes' weights)."""
    table, columns = _table(scopes)
    where, values = _filters(since, conversations)
    weights = ", ".join(str(WEIGHTS[scope]) for scope in columns)
    rows = fetched(
        connection,
        "SELECT t.id, t.conversation, c.title, t.turn_index, t.turn_id, t.id_transient, t.date, t.label, "
        f"t.label_source, t.spans, bm25({table}, {weights}) AS score"
        + _from(table).replace(" WHERE", " JOIN conversations AS c ON c.conversation = t.conversation WHERE")
        + where
        + " ORDER BY score, t.started_at DESC, t.conversation, t.turn_index LIMIT ?",
        (match, *values, limit),
    )
    hits = [_hit(row) for row in rows]
    bad = frozenset(row for row in hits if isinstance(row, str))
    if bad:
        raise BadRows(bad)
    return [row for row in hits if not isinstance(row, str)]


_OPTIONAL_TEXT = (str, type(None))
_HIT_KINDS = (
    (int,),
    (str,),
    (str, bytes, type(None)),
    (int,),
    _OPTIONAL_TEXT,
    (int,),
    _OPTIONAL_TEXT,
    _OPTIONAL_TEXT,
    _OPTIONAL_TEXT,
    (str,),
    (float,),
)


def _hit(row: Sequence[Any]) -> HitRow | str:
    """A hit from its stored values, or its conversation when a value is not of the type turnmark writes."""
    if not all(type(value) in kinds for value, kinds in zip(row, _HIT_KINDS, strict=True)):
        return str(row[1])
    spans = spans_from_json(row[9])
    if spans is None:
        return str(row[1])
    title = row[2].decode("utf-8", "surrogatepass") if isinstance(row[2], bytes) else row[2]
    return HitRow(row[0], TurnLine(row[1], title, row[3], row[4], bool(row[5]), *row[6:9]), spans, -row[10])


def count(
    connection: sqlite3.Connection, match: str, scopes: Sequence[str], since: int | None, conversations: Sequence[str]
) -> int:
    table, _ = _table(scopes)
    where, values = _filters(since, conversations)
    return int(connection.execute("SELECT count(*)" + _from(table) + where, (match, *values)).fetchone()[0])


def highlighted(
    connection: sqlite3.Connection, match: str, rowid: int, scopes: Sequence[str], shown: Sequence[str]
) -> list[str]:
    """Each of the ``shown`` scopes' columns of one turn with every match between the markers."""
    table, columns = _table(scopes)
    selected = ", ".join(f"highlight({table}, {columns.index(scope)}, ?, ?)" for scope in shown)
    markers = [MARK_OPEN, MARK_CLOSE] * len(shown)
    found = fetched(
        connection, f"SELECT {selected} FROM {table} WHERE {table} MATCH ? AND rowid = ?", (*markers, match, rowid)
    )
    row = found[0] if found else None
    if row and not all(isinstance(text, str) for text in row):
        conversation = connection.execute("SELECT conversation FROM turns WHERE id = ?", (rowid,)).fetchone()
        raise BadRows(frozenset({str(conversation[0]) if conversation else ""}))
    return list(row) if row else [""] * len(shown)
