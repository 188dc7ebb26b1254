"""The workspace cache's rows read back (issue 40): SQLite leaves out the rows of the wrong types in bulk, by the
same rule ``_valid`` states in Python (the long way), on rows of every type in every column."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=200, derandomize=True)
@given(changes=st.lists(st.tuples(st.integers(0, 9), st.integers(0, len(COLUMNS) - 1), VALUES), max_size=12))
def test_sqlite_leaves_out_what_the_python_rule_leaves_out(changes: list[tuple[int, int, object]]) -> None:
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
    assert set(workspace_cache.stored(connection)) == long_way
    for name in long_way:
        assert set(workspace_cache.stored(connection, name)) == {name}
