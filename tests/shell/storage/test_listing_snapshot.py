"""The listing's snapshot as stored: what is written reads back; anything else (another layout, values of other
types, a blob that does not decode, text that does not encode) reads as no snapshot."""

from __future__ import annotations

import pytest

from turnmark.core.search.freshness import FileIdentity
from turnmark.shell.storage import cache_db, listing_snapshot
from turnmark.shell.storage.listing_snapshot import Kept, PrintedRow
from turnmark.shell.storage.workspace_cache import Look

ROOT = "/home/user/project"
LOOK = Look("/c/1/events.json", FileIdentity(1, 2, 3, 4, 5), "/c/1/metadata.json", None, FileIdentity(1, 3, 9, 4, 5))
FOLDER = (1, "/c/1", None)
OTHER = (2, None, "/u/2")
ROW = PrintedRow(("jp-c1", 3, True, None), "jp-c1  line", (10, 5, 1), None)


@pytest.fixture
def db() -> cache_db.CacheDb:
    return cache_db.memory_cache()


def test_a_snapshot_reads_back_as_written(db: cache_db.CacheDb) -> None:
    kept = [Kept(FOLDER, LOOK, ROW), Kept(OTHER, None, ROW)]
    assert listing_snapshot.write(db.connection, ROOT, "1", kept, "the text")
    snapshot = listing_snapshot.read(db.connection, ROOT, "1")
    assert snapshot == (listing_snapshot.digest(ROOT, [(FOLDER, LOOK), (OTHER, None)]), "the text")
    assert listing_snapshot.rows(db.connection, ROOT, "1") == kept
    assert listing_snapshot.read(db.connection, ROOT, "2") is None
    assert listing_snapshot.rows(db.connection, ROOT, "2") is None
    assert listing_snapshot.read(db.connection, "/elsewhere", "1") is None


def test_a_new_snapshot_replaces_the_last(db: cache_db.CacheDb) -> None:
    listing_snapshot.write(db.connection, "/old/root", "1", [Kept(FOLDER, LOOK, ROW)], None)
    listing_snapshot.write(db.connection, ROOT, "1", [], "empty")
    assert db.connection.execute("SELECT root FROM listing").fetchall() == [(ROOT,)]


@pytest.mark.parametrize(
    "tampering",
    [
        "UPDATE listing SET rows = x'00'",
        "UPDATE listing SET rows = 'text, not a blob'",
        "UPDATE listing SET rows = x'91940190c0'",
        "UPDATE listing SET looks = 7",
        "UPDATE listing SET text = x'ff'",
        "UPDATE listing SET text = CAST(x'ff' AS TEXT)",
        "UPDATE listing SET layout = x'31'",
    ],
)
def test_a_snapshot_of_other_types_reads_as_none(db: cache_db.CacheDb, tampering: str) -> None:
    listing_snapshot.write(db.connection, ROOT, "1", [Kept(FOLDER, LOOK, ROW)], "text")
    db.connection.execute(tampering)
    snapshot = listing_snapshot.read(db.connection, ROOT, "1")
    rows = listing_snapshot.rows(db.connection, ROOT, "1")
    if "rows" in tampering or "layout" in tampering:
        assert rows is None
    if "rows" not in tampering:
        assert snapshot is None


def test_text_that_does_not_encode_is_never_kept(db: cache_db.CacheDb) -> None:
    listing_snapshot.write(db.connection, ROOT, "1", [Kept(FOLDER, LOOK, ROW)], "text")
    odd = PrintedRow(("a\udcff",), "line", None, None)
    assert not listing_snapshot.write(db.connection, ROOT, "1", [Kept(FOLDER, LOOK, odd)], "text")
    assert listing_snapshot.read(db.connection, ROOT, "1") is None
    assert not listing_snapshot.write(db.connection, ROOT, "1", [Kept(FOLDER, LOOK, ROW)], "a\udcff")
    assert not listing_snapshot.write(
        db.connection, ROOT, "1", [Kept(FOLDER, LOOK._replace(events_file="/\udcff"), ROW)], None
    )
    assert listing_snapshot.digest(ROOT, [(FOLDER, LOOK._replace(metadata_file="/c/\udcff"))]) is None


def test_a_root_that_is_not_utf8_has_no_snapshot(db: cache_db.CacheDb) -> None:
    root = "/home/\udcff"
    assert listing_snapshot.digest(root, []) is None
    assert not listing_snapshot.write(db.connection, root, "1", [], "text")
    assert listing_snapshot.read(db.connection, root, "1") is None
    assert listing_snapshot.rows(db.connection, root, "1") is None
