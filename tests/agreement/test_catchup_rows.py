"""The rows ``summarize --all`` makes from the bytes its catch-ups read and write (issue 40: one read per
conversation) against the rows a listing reads from the files afterwards, on the fixtures, the corpus and
generated workspaces, in one process and on workers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.agreement.cli import Cli, workers_forced
from tests.agreement.workspaces import (
    FIXTURE_WORKSPACES,
    ConversationShape,
    copy_corpus,
    copy_fixture,
    workspace_shapes,
    write_workspace,
)
from turnmark.core.search import freshness
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.errors import ConversationError
from turnmark.shell.storage import cache_db, workspace_cache
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import list_conversations, require_workspace
from turnmark.shell.storage.workspace_cache import ConversationRow

OFFLINE = ("--model", "builtin/extractive")


def cached_rows(root: Path) -> dict[str, ConversationRow]:
    db = cache_db.open_cache(require_workspace(root), create=False)
    assert db is not None, "the run left no workspace cache"
    with db:
        return workspace_cache.stored(db.connection)


def comparable(row: ConversationRow) -> ConversationRow:
    """A row without the time it was taken (a read's, the one compared with: later) and its events' hash (a
    listing does not hash them: ``bytes_hashed`` holds what each row says of it)."""
    events = row.events._replace(sha256="") if row.events is not None else None
    return row._replace(checked_ns=0, indexed=False, check=None, events=events)


def bytes_hashed(row: ConversationRow, *, listed: bool) -> bool:
    """The row's events hash is the file's, or says it was not taken, which only a read of a file settled when
    looked at may (trusted by its identity); a listing's read (``listed``) takes it exactly of a file too young
    for that. A run's row of a file it wrote has the hash of the bytes written, settled or not."""
    if row.events is None:
        return True
    data = (Path(row.directory) / "events.json").read_bytes()
    settled = freshness.settled(row.events.file, row.checked_ns)
    if listed:
        return row.events.sha256 == ("" if settled else hashlib.sha256(data).hexdigest())
    return row.events.sha256 in (hashlib.sha256(data).hexdigest(), "" if settled else None)


def forget_cache(root: Path) -> None:
    shutil.rmtree(cache_db.cache_path(require_workspace(root)).parent)


def with_repaired_ids(root: Path) -> set[str]:
    """The conversations whose read finds IDs several entries carry (a save gives them new ones)."""
    found = set()
    for ref in list_conversations(require_workspace(root)):
        try:
            stream = read_conversation(ref, sequential_ids("r")).stream
        except ConversationError:
            continue
        if stream.duplicated_ids or stream.id_repairs:
            found.add(ref.display_id)
    return found


def agree_on_rows(root: Path, *extra: str) -> None:
    """The rows a cold ``summarize --all`` stores (no listing read the files first) are those a listing of
    the files it left reads, and a warm listing through them prints what a listing without them prints; a dry
    run then plans the same with them, without them, and with the plans a cold dry run stored. A row the run
    cannot know without reading what it wrote (a save that gave duplicated IDs new ones) is left to a listing."""
    repaired = with_repaired_ids(root)
    cli = Cli(root, *extra)
    cli("summarize", "--all", *OFFLINE)
    made = cached_rows(root)
    through_them = cli.json("conversations")
    forget_cache(root)
    read_again = cli.json("conversations")
    assert through_them == read_again
    listed = cached_rows(root)
    assert set(made) <= set(listed)
    assert set(listed) - set(made) <= repaired, "only a save that repaired IDs leaves its row to a listing"
    for name, row in made.items():
        assert comparable(row) == comparable(listed[name]), name
        assert bytes_hashed(row, listed=False), name
        assert bytes_hashed(listed[name], listed=True), name
    planned = cli("summarize", "--all", "--dry-run", *OFFLINE)
    forget_cache(root)
    assert cli("summarize", "--all", "--dry-run", *OFFLINE) == planned
    assert cli("summarize", "--all", "--dry-run", *OFFLINE) == planned, "the plans the cold dry run stored"


@pytest.mark.parametrize("fixture", FIXTURE_WORKSPACES)
def test_the_rows_of_a_fixture_workspace(fixture: str, tmp_path: Path, user_data: Path) -> None:
    agree_on_rows(copy_fixture(fixture, tmp_path / "copy"))


def test_the_rows_of_the_corpus(tmp_path: Path, user_data: Path) -> None:
    agree_on_rows(copy_corpus(tmp_path / "copy"))


def test_the_rows_of_a_settled_workspace(tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files settled before the run: the catch-ups that only read them do not hash them (as a listing), and
    the rows and plans agree as on young files (that such plans are found again, and not after a change:
    ``tests/shell/usecases/test_summarize_all.py``)."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root = copy_corpus(tmp_path / "copy")
    for path in (root / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    cli = Cli(root)
    cli("summarize", "--all", "--dry-run", *OFFLINE)
    rows = cached_rows(root)
    assert rows
    assert all(row.events is None or row.events.sha256 == "" for row in rows.values()), "none hashed"
    agree_on_rows(root)


def test_the_rows_workers_make(tmp_path: Path, user_data: Path) -> None:
    with workers_forced():
        agree_on_rows(copy_fixture("workspace", tmp_path / "copy"), "--jobs", "2")


def test_a_conversation_changed_after_the_run_is_read_again(tmp_path: Path, user_data: Path) -> None:
    """The rows of the files a run wrote are trusted only once their bytes are seen to be the ones written."""
    root = copy_fixture("workspace", tmp_path / "copy")
    cli = Cli(root)
    cli("summarize", "--all", *OFFLINE)
    made = cached_rows(root)
    name = next(name for name, row in made.items() if row.summarized_turns)
    events = Path(made[name].directory) / "events.json"
    data = events.read_bytes()
    stat = events.stat()
    events.write_bytes(data.replace(b'"summary"', b'"summarz"', 1))
    os.utime(events, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    listed = cli.json("conversations")
    forget_cache(root)
    assert listed == cli.json("conversations")
    assert cached_rows(root)[name].summarized_turns < made[name].summarized_turns, "the change was seen"


@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(shapes=workspace_shapes)
def test_the_rows_of_a_generated_workspace(shapes: list[ConversationShape]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch)
        before = os.environ.get("JP_USER_DATA_DIR")
        os.environ["JP_USER_DATA_DIR"] = str(data / "user-data")
        try:
            agree_on_rows(write_workspace(data / "copy", shapes, data / "user-data"))
        finally:
            if before is None:
                os.environ.pop("JP_USER_DATA_DIR", None)
            else:
                os.environ["JP_USER_DATA_DIR"] = before
