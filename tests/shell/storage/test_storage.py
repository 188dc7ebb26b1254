"""Loading and saving real conversation folders the way JP does."""

import difflib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from tests.conftest import corpus_params
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import ChatResponse
from turnmark.shell.errors import ConversationError, SaveRefused
from turnmark.shell.storage.conversations import edit_conversation, read_conversation, save_stream
from turnmark.shell.storage.files import write_if_changed
from turnmark.shell.storage.locking import try_lock
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import ConversationRef, list_conversations, require_workspace

CLEAN = "17800000010"
LEGACY = "17790000000"
EDITED = "17800000030"


def ref_for(workspace: Path, wanted: str) -> ConversationRef:
    return pick_conversation(workspace, wanted)


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in sorted(directory.iterdir())}


def set_summary(turn_id: str, text: str) -> Callable[[ConversationStream], ConversationStream]:
    return lambda stream: stream.set_turn_summary(turn_id, text).unwrap()


def test_an_edit_changes_only_what_changed(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    directory = ref.directories[0]
    before = (directory / "events.json").read_bytes()
    _stream, written = edit_conversation(
        ref, set_summary("p8q2r4b", "Cap the backoff and test the limit"), sequential_ids()
    )
    assert written.files == [directory / "events.json"]
    after = (directory / "events.json").read_bytes()
    changes = [
        line
        for line in difflib.ndiff(before.decode().splitlines(), after.decode().splitlines())
        if line.startswith(("+ ", "- "))
    ]
    assert changes == [
        '-     "type": "turn_start"',
        '+     "type": "turn_start",',
        '+     "summary": "Cap the backoff and test the limit"',
    ]
    assert not list(directory.glob("*.tmp"))


def test_an_unchanged_stream_writes_nothing(workspace: Path) -> None:
    ref = ref_for(workspace, LEGACY)
    before = snapshot(ref.directories[0])
    _, written = edit_conversation(ref, lambda stream: stream, sequential_ids())
    assert written.files == []
    assert snapshot(ref.directories[0]) == before


def test_identical_bytes_are_not_rewritten(tmp_path: Path) -> None:
    target = tmp_path / "events.json"
    target.write_bytes(b"[]\n")
    mtime = target.stat().st_mtime_ns
    assert not write_if_changed(target, b"[]\n", tmp_path)
    assert target.stat().st_mtime_ns == mtime
    assert write_if_changed(target, b"[1]\n", tmp_path)
    assert target.read_bytes() == b"[1]\n"


def test_a_legacy_conversation_is_upgraded_on_its_first_save(workspace: Path) -> None:
    ref = ref_for(workspace, LEGACY)
    directory = ref.directories[0]
    original = msgspec.json.decode((directory / "events.json").read_bytes())
    loaded = read_conversation(ref, sequential_ids())
    turn_id = loaded.stream.turns()[1].id()
    assert turn_id is not None
    edit_conversation(ref, set_summary(turn_id, "Thanks"), sequential_ids())
    events = msgspec.json.decode((directory / "events.json").read_bytes())
    assert msgspec.json.decode((directory / "base_config.json").read_bytes()) == original[0]["delta"]
    assert [entry["type"] for entry in events] == [entry["type"] for entry in original[1:]]
    assert all("event_id" in entry for entry in events)
    reread = read_conversation(ref, sequential_ids("z"))
    assert not reread.stream.is_legacy
    assert [t.summary() for t in reread.stream.turns()] == [None, "Thanks"]
    assert [e.event_id for e in reread.stream.entries] == [e.event_id for e in loaded.stream.entries]


def test_saving_a_link_to_a_duplicated_id_is_refused_and_nothing_is_written(workspace: Path) -> None:
    ref = ref_for(workspace, EDITED)
    before = snapshot(ref.directories[0])
    with pytest.raises(SaveRefused, match=r"entry 13 \(event_id m4ddddd\) -> c4ddddd") as refused:
        edit_conversation(ref, set_summary("t4ddddd", "Run the tests"), sequential_ids())
    assert snapshot(ref.directories[0]) == before
    assert str(refused.value).endswith(
        "; to fix: turnmark repair -i jp-c17800000030 (it asks which request each answers)"
    ), "its turn holds both copies of the request: a person decides"


def test_a_stream_read_before_the_lock_was_taken_is_never_saved(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    stale = read_conversation(ref, sequential_ids())
    meanwhile = stale.stream.push(ChatResponse("2026-06-01 10:10:00.0", "message", "appended by jp"))
    events.write_bytes(meanwhile.to_json())
    changed = stale.stream.set_turn_summary("p8q2r4b", "x").unwrap()
    lock = try_lock(ref)
    assert lock is not None
    with lock, pytest.raises(ConversationError, match="not read under the lock held now"):
        save_stream(lock, stale, changed)
    assert b"appended by jp" in events.read_bytes()


def test_a_save_after_the_lock_was_released_is_refused(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    lock = try_lock(ref)
    assert lock is not None
    with lock:
        loaded = read_conversation(ref, sequential_ids(), lock)
    changed = loaded.stream.set_turn_summary("p8q2r4b", "x").unwrap()
    with pytest.raises(ConversationError, match="not read under the lock held now"):
        save_stream(lock, loaded, changed)


def test_a_key_written_twice_blocks_the_save_that_would_drop_it(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    events.write_bytes(
        events.read_bytes().replace(b'"content": "continue"', b'"content": "go on",\n    "content": "continue"')
    )
    before = events.read_bytes()
    with pytest.raises(SaveRefused) as refused:
        edit_conversation(ref, set_summary("p8q2r4b", "x"), sequential_ids())
    assert str(refused.value) == (
        f"{events}: refusing to save: entry 12: key 'content' is written twice, and a save keeps only the last "
        "value; to fix: remove one of them from events.json by hand"
    )
    assert events.read_bytes() == before


def test_an_unreadable_optional_file_is_a_one_line_error(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    base = ref.directories[0] / "base_config.json"
    base.unlink()
    base.mkdir()
    with pytest.raises(ConversationError, match=r"base_config.json: cannot read"):
        read_conversation(ref, sequential_ids())


def test_bad_events_json_is_reported_with_file_and_place_and_left_untouched(workspace: Path) -> None:
    ref = ref_for(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    events.write_bytes(events.read_bytes().replace(b'"is_error": false', b'"is_error": "no"', 1))
    before = snapshot(ref.directories[0])
    with pytest.raises(ConversationError) as raised:
        edit_conversation(ref, lambda stream: stream, sequential_ids())
    assert str(raised.value) == f'{events}: entry 4 (tool_call_response): "is_error" must be a boolean, found a string'
    assert snapshot(ref.directories[0]) == before


def make_user_copy(workspace: Path, user_data: Path, dirname: str) -> Path:
    silo = user_data / "workspace" / "ws-fx001"
    copy = silo / "conversations" / dirname
    shutil.copytree(workspace / ".jp" / "conversations" / dirname, copy)
    return copy


def test_the_newer_of_the_workspace_and_user_local_copies_is_read(workspace: Path, user_data: Path) -> None:
    dirname = "17800000010-add-retry-backoff-to-the-stream-handler"
    local = make_user_copy(workspace, user_data, dirname)
    ref = ref_for(workspace, CLEAN)
    assert ref.user_dir == local
    newer = read_conversation(ref, sequential_ids()).stream.set_turn_summary("p8q2r4b", "From the local copy").unwrap()
    (local / "events.json").write_bytes(newer.to_json())
    old = os.stat(local / "events.json").st_mtime_ns - 10_000_000_000
    os.utime(workspace / ".jp" / "conversations" / dirname / "events.json", ns=(old, old))
    assert read_conversation(ref, sequential_ids()).stream.turns()[1].summary() == "From the local copy"
    os.utime(local / "events.json", ns=(old - 1, old - 1))
    os.utime(local / "base_config.json", ns=(old - 1, old - 1))
    assert read_conversation(ref, sequential_ids()).stream.turns()[1].summary() is None


def test_an_edit_writes_every_copy(workspace: Path, user_data: Path) -> None:
    dirname = "17800000010-add-retry-backoff-to-the-stream-handler"
    local = make_user_copy(workspace, user_data, dirname)
    ref = ref_for(workspace, CLEAN)
    edit_conversation(ref, set_summary("p8q2r4b", "Both"), sequential_ids())
    shared = workspace / ".jp" / "conversations" / dirname / "events.json"
    assert (local / "events.json").read_bytes() == shared.read_bytes()
    assert b'"summary": "Both"' in shared.read_bytes()
    assert (user_data / "workspace" / "ws-fx001" / "locks").is_dir(), "the lock lives in the user-local silo"


def test_listing_skips_dot_directories_and_non_conversations(workspace: Path) -> None:
    conversations = workspace / ".jp" / "conversations"
    (conversations / ".trash" / "17000000000-broken").mkdir(parents=True)
    (conversations / ".archive" / "17000000001").mkdir(parents=True)
    (conversations / "notes").mkdir()
    ids = [ref.id for ref in list_conversations(require_workspace(workspace))]
    assert ids == [17790000000, 17800000010, 17800000030, 17800000040]


@pytest.mark.parametrize("directory", corpus_params())
def test_corpus_conversations_load_through_the_shell(directory: Path) -> None:
    from turnmark.shell.storage.workspace import conversation_at

    ref = conversation_at(directory)
    assert ref is not None
    loaded = read_conversation(ref, sequential_ids())
    assert loaded.metadata is not None
    assert loaded.metadata.title


def test_an_upgrade_interrupted_between_its_two_writes_is_finished_by_the_next_save(workspace: Path) -> None:
    ref = ref_for(workspace, LEGACY)
    directory = ref.directories[0]
    legacy_events = (directory / "events.json").read_bytes()
    head = msgspec.json.decode(legacy_events)[0]
    (directory / "base_config.json").write_bytes(msgspec.json.format(msgspec.json.encode(head["delta"]), indent=2))
    interrupted = read_conversation(ref, sequential_ids())
    assert interrupted.stream.is_legacy
    assert interrupted.stream.entries[0].type_tag == "chat_request"
    turn_id = interrupted.stream.turns()[1].id()
    assert turn_id is not None
    edit_conversation(ref, set_summary(turn_id, "Thanks"), sequential_ids())
    events = msgspec.json.decode((directory / "events.json").read_bytes())
    assert events[0]["type"] == "chat_request"
    assert not any(entry["type"] == "config_delta" and entry.get("delta") == head["delta"] for entry in events)
