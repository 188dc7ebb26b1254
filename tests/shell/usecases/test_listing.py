"""The workspace cache behind ``conversations``: a conversation is read again exactly when its files changed,
and a cache that is gone, damaged or shared is never a wrong answer."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from turnmark.core.search import freshness
from turnmark.core.stream.event_ids import IdSource, sequential_ids
from turnmark.shell.storage import conversations, workspace_cache
from turnmark.shell.storage.cache_db import SCHEMA_VERSION, cache_path
from turnmark.shell.storage.conversations import LoadedConversation, ReadFacts
from turnmark.shell.storage.workspace import ConversationRef, list_conversations, require_workspace
from turnmark.shell.usecases import listing, parallel

OLD = 1_700_000_000
Reads = list[str]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """The conversations each listing parsed, in order (all in this process, so that none goes uncounted)."""
    seen: Reads = []
    real = conversations.read_conversation

    def counting(
        ref: ConversationRef, new_id: IdSource, lock: object = None, digest: bool = False
    ) -> LoadedConversation:
        seen.append(ref.display_id)
        return real(ref, new_id, digest=digest)

    light = conversations.read_facts

    def counting_light(
        ref: ConversationRef, new_id: IdSource, digests: bool = False, hash_events: bool = True, ids: bool = True
    ) -> ReadFacts:
        seen.append(ref.display_id)
        return light(ref, new_id, digests=digests, hash_events=hash_events, ids=ids)

    monkeypatch.setattr(conversations, "read_conversation", counting)
    monkeypatch.setattr(conversations, "read_facts", counting_light)
    monkeypatch.setattr(parallel, "workers_for", lambda items, jobs: 0)
    return seen


@pytest.fixture
def settled(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture workspace with old modification times; a change time is trusted at once (no test writes
    within the same clock tick as a look unless it says so)."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    for path in (workspace / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (OLD, OLD))
    return workspace


def listed(workspace: Path, notes: list[str] | None = None) -> dict[str, dict[str, object]]:
    found = listing.list_workspace(require_workspace(workspace), (notes if notes is not None else []).append)
    return {
        item.ref.display_id: {
            "title": item.row.title,
            "turns": item.row.turns,
            "summarized": item.row.summarized_turns,
            "problem": item.row.problem,
            "unresolved": item.row.facts.unresolved_links if item.row.facts else None,
            "last_activated_at": item.row.last_activated_at,
            "forked_from": item.row.forked_from,
            "directory": item.row.directory,
            "facts": item.row.facts,
        }
        for item in found
    }


def directory_of(workspace: Path, prefix: str) -> Path:
    return next((workspace / ".jp" / "conversations").glob(f"{prefix}-*"))


def rewrite(path: Path, change: Callable[[list[dict[str, object]]], None]) -> None:
    entries = json.loads(path.read_bytes())
    change(entries)
    path.write_text(json.dumps(entries, indent=2))


def fresh_listing(workspace: Path) -> dict[str, dict[str, object]]:
    """What a listing without any cache says."""
    shutil.rmtree(cache_path(require_workspace(workspace)).parent)
    return listed(workspace)


def test_a_second_listing_reads_nothing(settled: Path, reads: Reads) -> None:
    first = listed(settled)
    assert sorted(reads) == sorted(first)
    reads.clear()
    assert listed(settled) == first
    assert reads == []


def test_an_appended_turn_is_read_again_alone(settled: Path, reads: Reads) -> None:
    before = listed(settled)
    reads.clear()
    events = directory_of(settled, "17800000010") / "events.json"
    ts = "2026-03-12 09:00:00.0"
    rewrite(
        events,
        lambda entries: entries.extend(
            [
                {"event_id": "n1turn0", "timestamp": ts, "type": "turn_start"},
                {"event_id": "n1req00", "timestamp": ts, "type": "chat_request", "content": "One more"},
            ]
        ),
    )
    after = listed(settled)
    assert reads == ["jp-c17800000010"]
    assert after["jp-c17800000010"]["turns"] == int(before["jp-c17800000010"]["turns"]) + 1  # type: ignore[call-overload]
    assert after == fresh_listing(settled)


def test_an_in_place_rewrite_with_size_and_mtime_restored_is_seen(settled: Path, reads: Reads) -> None:
    """Same inode, same size, the modification time put back: the change time still moves."""
    listed(settled)
    reads.clear()
    metadata = directory_of(settled, "17790000000") / "metadata.json"
    data = metadata.read_bytes()
    title = json.loads(data)["title"]
    changed = data.replace(title.encode(), title.upper().encode())
    assert changed != data
    assert len(changed) == len(data)
    with open(metadata, "r+b") as handle:
        handle.write(changed)
    os.utime(metadata, (OLD, OLD))
    after = listed(settled)
    assert reads == ["jp-c17790000000"]
    assert after["jp-c17790000000"]["title"] == title.upper()


def test_a_copy_with_the_same_mtime_is_read_again_then_trusted_by_its_identity(settled: Path, reads: Reads) -> None:
    """A listing does not hash ``events.json`` (a fifth of a cold listing): a copy with a new identity is read
    again, as a changed file is, never taken for the same bytes; then its new row holds."""
    listed(settled)
    reads.clear()
    events = directory_of(settled, "17800000030") / "events.json"
    copy = events.with_name("events.copy")
    shutil.copy2(events, copy)
    os.replace(copy, events)
    copied = listed(settled)
    assert reads == ["jp-c17800000030"]
    reads.clear()
    assert listed(settled) == copied
    assert reads == []
    data = events.read_bytes()
    copy.write_bytes(data.replace(b'"content": "', b'"content": "X', 1)[: len(data)])
    os.utime(copy, (OLD, OLD))
    os.replace(copy, events)
    after = listed(settled)
    assert reads == ["jp-c17800000030"]
    assert after == fresh_listing(settled)


def test_a_renamed_conversation_is_listed_under_its_new_id_and_a_deleted_one_is_dropped(
    settled: Path, reads: Reads
) -> None:
    listed(settled)
    reads.clear()
    old = directory_of(settled, "17800000040")
    old.rename(old.with_name("17800000050-compacted-and-hand-edited"))
    shutil.rmtree(directory_of(settled, "17790000000"))
    after = listed(settled)
    assert reads == ["jp-c17800000050"]
    assert "jp-c17800000040" not in after
    assert "jp-c17790000000" not in after
    with sqlite3.connect(cache_path(require_workspace(settled))) as connection:
        kept = {row[0] for row in connection.execute("SELECT conversation FROM conversations")}
    assert kept == set(after)


def test_a_folder_renamed_is_listed_where_it_is_now_without_a_read(settled: Path, reads: Reads) -> None:
    """A rename keeps the files' identities (their change time too): the row is kept, under its new folder."""
    listed(settled)
    reads.clear()
    folder = directory_of(settled, "17800000010")
    moved = folder.rename(folder.with_name("17800000010-renamed"))
    after = listed(settled)
    assert after["jp-c17800000010"]["directory"] == str(moved)
    assert listed(settled) == after, "the new folder written back"
    assert reads == []
    assert after == fresh_listing(settled)


def test_a_listing_hashes_only_the_events_too_young_to_trust_by_their_identity(settled: Path) -> None:
    future = 4_000_000_000
    young = directory_of(settled, "17800000010") / "events.json"
    os.utime(young, (future, future))
    listed(settled)
    with sqlite3.connect(cache_path(require_workspace(settled))) as connection:
        rows = workspace_cache.stored(connection)
    hashes = {name: row.events.sha256 for name, row in rows.items() if row.events is not None}
    assert hashes.pop("jp-c17800000010") == hashlib.sha256(young.read_bytes()).hexdigest()
    assert hashes
    assert set(hashes.values()) == {""}


def test_clock_skew_is_hashed_never_trusted(workspace: Path, reads: Reads) -> None:
    """Files stamped in the future (a clock ahead of ours) are racily clean on every look: hashed, not read
    while their bytes are the same, read when they change."""
    future = 4_000_000_000
    for path in (workspace / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (future, future))
    listed(workspace)
    reads.clear()
    listed(workspace)
    assert reads == []
    metadata = directory_of(workspace, "17800000010") / "metadata.json"
    data = metadata.read_bytes()
    title = json.loads(data)["title"]
    metadata.write_bytes(data.replace(title.encode(), title.upper().encode()))
    os.utime(metadata, (future, future))
    after = listed(workspace)
    assert reads == ["jp-c17800000010"]
    assert after["jp-c17800000010"]["title"] == title.upper()


def test_an_unreadable_conversation_is_remembered_until_it_changes(settled: Path, reads: Reads) -> None:
    events = directory_of(settled, "17800000030") / "events.json"
    events.write_text("[{")
    os.utime(events, (OLD, OLD))
    first = listed(settled)
    assert first["jp-c17800000030"]["problem"]
    reads.clear()
    assert listed(settled) == first
    assert reads == []


def test_an_unreadable_conversation_renamed_names_its_file_where_it_is_now(settled: Path, reads: Reads) -> None:
    folder = directory_of(settled, "17800000030")
    events = folder / "events.json"
    events.write_text("[{")
    os.utime(events, (OLD, OLD))
    assert folder.name in str(listed(settled)["jp-c17800000030"]["problem"])
    moved = folder.rename(folder.with_name("17800000030-renamed"))
    reads.clear()
    problem = str(listed(settled)["jp-c17800000030"]["problem"])
    assert f"{moved.name}/events.json" in problem
    assert reads == ["jp-c17800000030"], "the unreadable one read again, nothing else"


def test_a_broken_metadata_file_renamed_is_named_where_it_is_now(settled: Path, reads: Reads) -> None:
    folder = directory_of(settled, "17800000010")
    metadata = folder / "metadata.json"
    metadata.write_text("{")
    os.utime(metadata, (OLD, OLD))
    facts = listed(settled)["jp-c17800000010"]["facts"]
    assert isinstance(facts, workspace_cache.Facts)
    assert facts.metadata_error is not None
    assert folder.name in facts.metadata_error
    moved = folder.rename(folder.with_name("17800000010-renamed"))
    reads.clear()
    facts = listed(settled)["jp-c17800000010"]["facts"]
    assert isinstance(facts, workspace_cache.Facts)
    assert facts.metadata_error is not None
    assert f"{moved.name}/metadata.json" in facts.metadata_error
    assert reads == ["jp-c17800000010"]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.write_bytes(b"not a database at all" * 100), id="garbage"),
        pytest.param(lambda path: path.write_bytes(path.read_bytes()[:1500]), id="truncated"),
        pytest.param(lambda path: path.unlink(), id="removed"),
        pytest.param(lambda path: path.write_bytes(b""), id="empty"),
        pytest.param(
            lambda path: (
                sqlite3.connect(path)
                .execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
                .connection.commit()
            ),
            id="older-schema",
        ),
        pytest.param(
            lambda path: sqlite3.connect(path).execute("DROP TABLE conversations").connection.commit(),
            id="table-dropped",
        ),
    ],
)
def test_a_damaged_or_missing_cache_costs_one_slow_run_never_a_wrong_row(
    settled: Path, reads: Reads, damage: Callable[[Path], None]
) -> None:
    first = listed(settled)
    path = cache_path(require_workspace(settled))
    for side in ("-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    damage(path)
    reads.clear()
    notes: list[str] = []
    assert listed(settled, notes) == first
    assert sorted(reads) == sorted(first)
    reads.clear()
    assert listed(settled) == first
    assert reads == []
    with sqlite3.connect(path) as connection:
        version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)


def test_two_processes_listing_at_once_agree_and_leave_one_good_cache(settled: Path) -> None:
    command = [sys.executable, "-m", "turnmark.shell.cli.main", "--workspace", str(settled), "conversations"]
    command[1:3] = ["-c", "from turnmark.shell.cli.main import main; main()"]
    processes = [
        subprocess.Popen([*command, "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=120) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    listings = [json.loads(out)["conversations"] for out, _ in outputs]
    assert all(found == listings[0] for found in listings)
    again = subprocess.run([*command, "--format", "json"], capture_output=True, check=True, timeout=120)
    assert json.loads(again.stdout)["conversations"] == listings[0]


def test_check_all_keeps_its_report_until_the_files_change(settled: Path, reads: Reads) -> None:
    """A listing alone has no report: ``check --all`` reads each conversation once for it, then nothing;
    a key written twice (what only the full check sees) is found after the file changed."""
    workspace = require_workspace(settled)
    listing.list_workspace(workspace, print)
    reads.clear()
    first = listing.list_workspace(workspace, print, checks=True)
    assert sorted(reads) == sorted(item.ref.display_id for item in first)
    reads.clear()
    again = listing.list_workspace(workspace, print, checks=True)
    assert reads == []
    assert [item.report() for item in again] == [item.report() for item in first]
    events = directory_of(settled, "17800000010") / "events.json"
    events.write_bytes(
        events.read_bytes().replace(b'"type": "chat_request",', b'"type": "chat_request", "type": "chat_request",', 1)
    )
    reads.clear()
    after = {item.ref.display_id: item.report() for item in listing.list_workspace(workspace, print, checks=True)}
    assert reads == ["jp-c17800000010"]
    report = after["jp-c17800000010"]
    assert report is not None
    assert report.duplicated_keys
    assert not report.ok


def test_summarize_all_reads_only_conversations_with_turns_waiting(
    settled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an offline ``summarize --all`` every complete turn has a summary: the next run reads nothing
    but the conversations whose last turn is still open, and says the same."""
    from typer.testing import CliRunner

    from turnmark.shell.cli.main import Settings, app
    from turnmark.shell.usecases import catchup_report, summarize

    caught: list[str] = []
    real = summarize.catch_up

    def counting(ref: ConversationRef, *args: object, **kwargs: object) -> catchup_report.CatchupReport:
        caught.append(ref.display_id)
        return real(ref, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(summarize, "catch_up", counting)
    args = ["--workspace", str(settled), "summarize", "--all", "--model", "builtin/extractive", "--format", "json"]

    def run(*extra: str) -> dict[str, object]:
        result = CliRunner().invoke(app, [*args, *extra], obj=Settings(new_id=sequential_ids()))
        assert result.exit_code in (0, 1), result.output
        found: dict[str, object] = json.loads(result.stdout)
        return found

    run()
    first = sorted(caught)
    assert first == sorted(listed(settled))
    caught.clear()
    dry = run("--dry-run")
    waiting = {
        item.ref.display_id
        for item in listing.list_workspace(require_workspace(settled), print)
        if item.row.facts is not None and item.row.facts.waiting.may_need_summaries(upgrade=False)
    }
    assert sorted(caught) == sorted(waiting)
    assert len(waiting) < len(first)
    monkeypatch.setattr(summarize, "catch_up", real)
    shutil.rmtree(cache_path(require_workspace(settled)).parent)
    assert run("--dry-run") == dry


def test_watch_once_leaves_conversations_without_waiting_turns_unread(
    settled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnmark.shell.usecases import summarize
    from turnmark.shell.usecases.watcher import Watcher, WatchOptions

    caught: list[str] = []
    real = summarize.catch_up

    def counting(ref: ConversationRef, *args: object, **kwargs: object) -> object:
        caught.append(ref.display_id)
        return real(ref, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("turnmark.shell.usecases.watcher.catch_up", counting)
    (settled / ".jp" / "config.toml").write_text(
        '[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n'
    )
    lines: list[str] = []
    Watcher(
        [require_workspace(settled)], WatchOptions(settle=60), sequential_ids("o"), lambda e: lines.append(str(e))
    ).run_once()
    assert sorted(caught) == sorted(listed(settled))
    caught.clear()
    Watcher(
        [require_workspace(settled)], WatchOptions(settle=60), sequential_ids("o"), lambda e: lines.append(str(e))
    ).run_once()
    waiting = {
        item.ref.display_id
        for item in listing.list_workspace(require_workspace(settled), print)
        if item.row.facts is not None and item.row.facts.waiting.may_need_summaries(upgrade=False)
    }
    assert sorted(caught) == sorted(waiting)
    assert len(caught) < len(listed(settled))


def test_a_writer_holding_the_cache_leaves_the_listing_right_and_the_update_for_later(
    settled: Path, reads: Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from turnmark.shell.storage import cache_db

    first = listed(settled)
    events = directory_of(settled, "17800000030") / "events.json"
    events.write_bytes(events.read_bytes().replace(b'"content": "', b'"content": "Y', 1))
    monkeypatch.setattr(cache_db, "LOCK_WAIT", 0.1)
    folder = os.open(cache_path(require_workspace(settled)).parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        reads.clear()
        notes: list[str] = []
        busy = listed(settled, notes)
        assert reads == ["jp-c17800000030"]
        assert any("not updated" in note for note in notes)
    finally:
        os.close(folder)
    assert busy == fresh_listing(settled)
    assert busy.keys() == first.keys()


def test_ctrl_c_while_reading_keeps_what_was_read(settled: Path, reads: Reads) -> None:
    root = require_workspace(settled)
    everyone = {ref.display_id for ref in list_conversations(root)}

    def interrupt_after_two(done: int, count: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        listing.list_workspace(root, print, jobs=1, on_read=interrupt_after_two)
    first = list(reads)
    assert len(first) == 2
    reads.clear()
    listing.list_workspace(root, print, jobs=1)
    assert sorted(reads) == sorted(everyone - set(first))
