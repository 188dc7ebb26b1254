"""The workspace cache's rows read back (issue 40): ``stored`` leaves out the rows of the wrong types deciding once
per shape of row, by the rule ``_valid`` states for one row (the long way), on rows of every type in every column."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.search.freshness import FileIdentity
from turnmark.core.summaries.waiting import Waiting
from turnmark.shell.storage import cache_db, workspace_cache

VALUES = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=3), st.binary(max_size=3), st.floats(allow_nan=False)
)
COLUMNS = workspace_cache._SELECT.split(", ")


def _typical(number: int) -> list[object]:
    """A row the listing writes (every column of its type), to vary from."""
    values: list[object] = [f"jp-c{number}", "/ws/.jp/conversations/x"]
    for _ in range(3):
        values += [1, 2, 3, 4, 5, "ab"]
    values += [6, "t", "2026-01-01 10:00:00.0", None, 2, 1, None, 0, 1, 0, 7, 0, 0, None, 1, 0, 0, None]
    return values


def _text(value: object) -> str | None:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else None if value is None else str(value)


def _identity(values: tuple[object, ...]) -> workspace_cache.Identity | None:
    return None if values[0] is None else workspace_cache.Identity(FileIdentity(*values[:5]), values[5])  # type: ignore[arg-type]


def _long_row(values: tuple[Any, ...]) -> workspace_cache.ConversationRow:
    """A stored row made by the named tuples' own constructors, column by column."""
    named = dict(zip(COLUMNS, values, strict=True))
    facts = None
    if named["cached"]:
        waiting = Waiting(named["waiting_before_last"], bool(named["waiting_last"]), named["waiting_extractive"])
        facts = workspace_cache.Facts(
            bool(named["legacy"]),
            named["entries"],
            named["unresolved_links"],
            named["duplicated_ids"],
            _text(named["metadata_error"]),
            waiting,
        )
    return workspace_cache.ConversationRow(
        conversation=named["conversation"],
        directory=_text(named["directory"]),  # type: ignore[arg-type]
        events=_identity(values[2:8]),
        metadata=_identity(values[8:14]),
        checked_ns=named["checked_ns"],
        title=_text(named["title"]),
        last_activated_at=_text(named["last_activated_at"]),
        forked_from=_text(named["forked_from"]),
        turns=named["turns"],
        summarized_turns=named["summarized_turns"],
        problem=_text(named["problem"]),
        indexed=bool(named["indexed"]),
        facts=facts,
        check=_text(named["check_report"]) if facts is not None else None,
        base_config=_identity(values[14:20]),
    )


@settings(max_examples=200, derandomize=True)
@given(changes=st.lists(st.tuples(st.integers(0, 9), st.integers(0, len(COLUMNS) - 1), VALUES), max_size=12))
def test_stored_leaves_out_what_the_rule_leaves_out_row_by_row(changes: list[tuple[int, int, object]]) -> None:
    connection = sqlite3.connect(":memory:")
    cache_db.create_schema(connection)
    rows = [_typical(number) for number in range(10)]
    assert all(workspace_cache._valid(row) for row in rows)
    for number, column, value in changes:
        if column:
            rows[number][column] = value
    marks = ", ".join("?" * len(COLUMNS))
    for row in rows:
        try:
            connection.execute(f"INSERT INTO conversations ({workspace_cache._SELECT}) VALUES ({marks})", row)
        except sqlite3.IntegrityError:
            continue  # a NOT NULL column given null: SQLite itself refuses the row
    everything = connection.execute(f"SELECT {workspace_cache._SELECT} FROM conversations").fetchall()
    long_way = {
        values[0]
        for values in everything
        if workspace_cache._valid(values) and workspace_cache._readable_row(values) is not None
    }
    kept = workspace_cache.stored(connection)
    assert set(kept) == long_way
    for values in everything:
        if values[0] in long_way:
            assert kept[values[0]] == _long_row(values)
    for name in long_way:
        assert set(workspace_cache.stored(connection, name)) == {name}


def test_rows_of_one_shape_are_kept_by_their_cached_mark() -> None:
    """Two rows whose values have the same types, a fact missing from both: kept when not ``cached``, left out
    when ``cached`` (a shape is the types and the mark, not the types alone)."""
    connection = sqlite3.connect(":memory:")
    cache_db.create_schema(connection)
    cached, entries = COLUMNS.index("cached"), COLUMNS.index("entries")
    rows = [_typical(number) for number in range(4)]
    for number, row in enumerate(rows):
        row[cached], row[entries] = number % 2, None
    marks = ", ".join("?" * len(COLUMNS))
    connection.executemany(f"INSERT INTO conversations ({workspace_cache._SELECT}) VALUES ({marks})", rows)
    assert set(workspace_cache.stored(connection)) == {"jp-c0", "jp-c2"}


def test_text_that_is_not_utf8_leaves_out_its_row_only() -> None:
    """Python's sqlite3 refuses a whole query over one text value that is not UTF-8 (a crafted file's): the
    rows with one are left out, in any column, and the others kept; the row is then replaced when saved."""
    connection = sqlite3.connect(":memory:")
    cache_db.create_schema(connection)
    rows = [_typical(number) for number in range(6)]
    rows[1][2] = None  # a half identity: left out by the rule, as before
    marks = ", ".join("?" * len(COLUMNS))
    connection.executemany(f"INSERT INTO conversations ({workspace_cache._SELECT}) VALUES ({marks})", rows)
    for conversation, column in (("jp-c2", "turns"), ("jp-c3", "title"), ("jp-c4", "conversation")):
        connection.execute(
            f"UPDATE conversations SET {column} = CAST(x'ff' AS TEXT) WHERE conversation = ?", (conversation,)
        )
    connection.execute("UPDATE conversations SET problem = 'unreadable' WHERE conversation IN ('jp-c0', 'jp-c3')")
    assert set(workspace_cache.stored(connection)) == {"jp-c0", "jp-c5"}
    assert set(workspace_cache.stored(connection, "jp-c2")) == set()
    assert set(workspace_cache.with_problems(connection)) == {"jp-c0"}
    assert isinstance(connection.execute("SELECT title FROM conversations LIMIT 1").fetchone()[0], str)
    replacement = workspace_cache.stored(connection, "jp-c5")["jp-c5"]._replace(conversation="jp-c2")
    workspace_cache.save(connection, replacement)
    assert set(workspace_cache.stored(connection)) == {"jp-c0", "jp-c2", "jp-c5"}


def test_fetched_reads_text_that_is_not_utf8_as_not_utf8_and_nothing_else_differs() -> None:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE t (a TEXT, b INTEGER)")
    connection.executemany("INSERT INTO t VALUES (?, ?)", [("é", 1), ("x", 2)])
    assert cache_db.fetched(connection, "SELECT a, b FROM t ORDER BY b") == [("é", 1), ("x", 2)]
    connection.execute("UPDATE t SET a = CAST(x'ff' AS TEXT) WHERE b = 2")
    assert cache_db.fetched(connection, "SELECT a, b FROM t WHERE b >= ? ORDER BY b", (1,)) == [
        ("é", 1),
        (cache_db.NOT_UTF8, 2),
    ]
    assert connection.text_factory is str
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        cache_db.fetched(connection, "SELECT c FROM t")
