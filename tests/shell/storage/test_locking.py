"""JP's lock protocol against real processes: turnmark never writes a conversation another process holds."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.errors import ConversationLocked
from turnmark.shell.storage.conversations import edit_conversation
from turnmark.shell.storage.locking import is_locked, lock_names, lock_path, try_lock
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import ConversationRef

HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys
    path = sys.argv[1]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b'{"pid": %d}' % os.getpid())
    print("locked", flush=True)
    sys.stdin.readline()
    os.close(fd)
    os.unlink(path)
    """
)


@pytest.fixture
def conversation(workspace: Path) -> ConversationRef:
    return pick_conversation(workspace, "17800000010")


def hold(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked"
    return process


def release(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("\n")
    process.stdin.flush()
    process.wait(timeout=10)


def test_a_conversation_held_by_another_process_is_not_written(conversation: ConversationRef) -> None:
    events = conversation.directories[0] / "events.json"
    before = events.read_bytes()
    holder = hold(lock_path(conversation))
    try:
        assert try_lock(conversation) is None
        with pytest.raises(ConversationLocked, match=rf"jp-c17800000010 is locked by pid {holder.pid}"):
            edit_conversation(conversation, lambda s: s.set_turn_summary("p8q2r4b", "x").unwrap(), sequential_ids())
        assert events.read_bytes() == before
    finally:
        release(holder)
    _, written = edit_conversation(
        conversation, lambda s: s.set_turn_summary("p8q2r4b", "x").unwrap(), sequential_ids()
    )
    assert written.files == [events]


def test_the_lock_file_holds_diagnostics_and_is_removed_on_release(conversation: ConversationRef) -> None:
    lock = try_lock(conversation)
    assert lock is not None
    with lock:
        assert b'"pid"' in lock.path.read_bytes()
        assert b'"acquired_at"' in lock.path.read_bytes()
        assert try_lock(conversation) is None, "flock is per open file: a second attempt fails even in-process"
    assert not lock.path.exists()
    assert conversation.workspace is not None
    assert lock.path == conversation.workspace.storage / "locks" / "jp-c17800000010.lock"


def test_a_lock_released_by_a_crashed_holder_can_be_taken(conversation: ConversationRef) -> None:
    path = lock_path(conversation)
    holder = hold(path)
    holder.kill()
    holder.wait(timeout=10)
    assert path.exists(), "the crashed holder left its lock file behind"
    lock = try_lock(conversation)
    assert lock is not None
    lock.release()


def test_a_write_by_another_process_while_unlocked_is_never_lost(conversation: ConversationRef) -> None:
    from turnmark.core.stream.payloads import ChatResponse
    from turnmark.shell.storage.conversations import read_conversation

    stale = read_conversation(conversation, sequential_ids())
    events = conversation.directories[0] / "events.json"
    appended = stale.stream.push(ChatResponse("2026-06-01 10:10:00.0", "message", "written by jp meanwhile"))
    events.write_bytes(appended.to_json())
    edit_conversation(conversation, lambda s: s.set_turn_summary("p8q2r4b", "Label").unwrap(), sequential_ids())
    assert b"written by jp meanwhile" in events.read_bytes()
    assert b'"summary": "Label"' in events.read_bytes()


def test_the_lock_folders_listed_once_tell_the_same_as_a_look_each(conversation: ConversationRef) -> None:
    assert conversation.workspace is not None
    other = pick_conversation(conversation.workspace.root, "17800000030")
    holder = hold(lock_path(conversation))
    try:
        names = lock_names(conversation.workspace)
        assert f"{conversation.display_id}.lock" in names
        assert is_locked(conversation, names) is is_locked(conversation) is True
        assert is_locked(other, names) is is_locked(other) is False
    finally:
        release(holder)
    assert not is_locked(conversation, lock_names(conversation.workspace))
