"""A conversation's turns written to the index all or nothing, alone or inside a caller's transaction."""

from __future__ import annotations

import pytest

from tests.support.streams import message, request, stream_of, turn
from turnmark.core.search.documents import conversation_documents
from turnmark.shell.storage import cache_db, search_index, workspace_cache
from turnmark.shell.storage.workspace_cache import ConversationRow


def indexed() -> list[search_index.Indexed]:
    stream = stream_of(turn("Fix the lock"), request("Why?"), message("Held twice."), turn(), request("And now?"))
    return [search_index.Indexed.of(document) for document in conversation_documents(stream, "T")]


def row() -> ConversationRow:
    return ConversationRow("jp-c17000000001", "/nowhere/17000000001", None, None, 1)


def turns(db: cache_db.CacheDb) -> int:
    return int(db.connection.execute("SELECT count(*) FROM turns").fetchone()[0])


def failing_on_the_second_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    write = search_index._write_turn
    calls: list[int] = []

    def second_fails(*args: object, **options: bool) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        write(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "_write_turn", second_fails)


def test_alone_it_is_one_transaction() -> None:
    db = cache_db.memory_cache()
    assert search_index.record(db.connection, row(), indexed()) == 2
    assert not db.connection.in_transaction
    assert turns(db) == 2
    assert workspace_cache.stored(db.connection)["jp-c17000000001"].indexed


def test_alone_a_failure_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    db = cache_db.memory_cache()
    failing_on_the_second_turn(monkeypatch)
    with pytest.raises(OSError, match="disk full"):
        search_index.record(db.connection, row(), indexed())
    assert not db.connection.in_transaction
    assert turns(db) == 0
    assert workspace_cache.stored(db.connection) == {}


def test_inside_a_batch_a_failure_is_undone_with_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    db = cache_db.memory_cache()
    failing_on_the_second_turn(monkeypatch)
    with pytest.raises(OSError, match="disk full"), cache_db.batch(db.connection):
        search_index.record(db.connection, row(), indexed())
    assert turns(db) == 0
    assert workspace_cache.stored(db.connection) == {}


def test_the_text_tables_merge_sixteen_segments_at_a_time_and_find_every_turn() -> None:
    """FTS5 keeps up to ``AUTOMERGE`` segments of a level before merging them (fewer, bigger merges while the
    index is built); what a search finds is the same (a segment per transaction here, 40 of them)."""
    db = cache_db.memory_cache()
    for table in cache_db.FTS_TABLES:
        [(value,)] = db.connection.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchall()
        assert value == cache_db.AUTOMERGE == 16
    for number in range(40):
        search_index.record(db.connection, row()._replace(conversation=f"jp-c{17000000000 + number}"), indexed())
    [(found,)] = db.connection.execute("SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'lock'").fetchall()
    assert found == 40
