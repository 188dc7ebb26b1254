"""The watch service against a real temporary workspace, with real processes holding JP's lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.shell.storage.test_locking import hold, release
from tests.support.llm_servers import Behaviour, ModelServer
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.settings import HttpSettings
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import require_workspace
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.watcher import Watcher, WatchEvent, WatchOptions

SETTLE = 0.4
TS = "2026-07-01 10:00:00.0"


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


class Running:
    def __init__(self, workspace: Path, **catchup: Any) -> None:
        self.lines: list[str] = []
        options = WatchOptions(settle=SETTLE, catchup=CatchupOptions(environ={}, **catchup))
        self.watcher = Watcher(
            [require_workspace(workspace)], options, sequential_ids("w"), lambda event: self.lines.append(str(event))
        )
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)

    def __enter__(self) -> Running:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.watcher.stop()
        self.thread.join(timeout=10)


def write_like_jp(path: Path, entries: list[dict[str, Any]]) -> None:
    """JP's write: the whole file to ``<file>.tmp``, then a rename over the target."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(entries, indent=2) + "\n")
    os.replace(temporary, path)


def new_conversation(workspace: Path, conversation_id: int, turns: int, conversations: Path | None = None) -> Path:
    directory = (conversations or workspace / ".jp" / "conversations") / str(conversation_id)
    directory.mkdir(parents=True)
    (directory / "metadata.json").write_text('{"last_activated_at": "2026-07-01 10:00:00.0"}\n')
    (directory / "base_config.json").write_text("{}\n")
    entries: list[dict[str, Any]] = []
    for n in range(turns):
        entries += [
            {"event_id": f"t{n}", "timestamp": TS, "type": "turn_start"},
            {"event_id": f"r{n}", "timestamp": TS, "type": "chat_request", "content": f"Do step {n} of the plan"},
            {
                "event_id": f"m{n}",
                "request_id": f"r{n}",
                "timestamp": TS,
                "type": "chat_response",
                "message": f"Did step {n}.",
            },
        ]
    write_like_jp(directory / "events.json", entries)
    return directory


def summaries(workspace: Path, conversation: str) -> list[str | None]:
    ref = pick_conversation(workspace, conversation)
    return [turn.summary() for turn in read_conversation(ref, sequential_ids("r")).stream.turns()]


def test_a_conversation_written_the_way_jp_writes_it_gets_summarized(workspace: Path) -> None:
    with Running(workspace):
        directory = new_conversation(workspace, 17900000000, 2)
        assert wait_for(
            lambda: summaries(workspace, "17900000000") == ["Do step 0 of the plan", "Do step 1 of the plan"]
        )
    assert (directory / "events.json").exists()
    assert not list(directory.glob("*.tmp"))


def test_a_locked_conversation_is_not_written_until_released(workspace: Path) -> None:
    directory = new_conversation(workspace, 17900000001, 2)
    ref = pick_conversation(workspace, "17900000001")
    holder: subprocess.Popen[str] | None = hold(lock_path(ref))
    try:
        with Running(workspace) as running:
            before = (directory / "events.json").read_bytes()
            time.sleep(SETTLE * 4)
            assert (directory / "events.json").read_bytes() == before
            assert any("17900000001: skipped because it is locked" in line for line in running.lines)
            assert holder is not None
            release(holder)
            holder = None
            assert wait_for(
                lambda: summaries(workspace, "17900000001") == ["Do step 0 of the plan", "Do step 1 of the plan"]
            )
    finally:
        if holder is not None:
            release(holder)


def test_twenty_rapid_appends_make_one_catch_up(workspace: Path) -> None:
    directory = new_conversation(workspace, 17900000002, 1)
    entries = json.loads((directory / "events.json").read_text())
    with Running(workspace) as running:
        assert wait_for(lambda: summaries(workspace, "17900000002") == ["Do step 0 of the plan"])
        assert wait_for(lambda: running.watcher.pending(17900000002) == 0)
        before = running.watcher.catchups[17900000002]
        for n in range(1, 21):
            entries += [
                {"event_id": f"t{n}", "timestamp": TS, "type": "turn_start"},
                {"event_id": f"r{n}", "timestamp": TS, "type": "chat_request", "content": f"Do step {n} of the plan"},
                {"event_id": f"m{n}", "request_id": f"r{n}", "timestamp": TS, "type": "chat_response", "message": "ok"},
            ]
            write_like_jp(directory / "events.json", entries)
            time.sleep(0.01)
        assert wait_for(lambda: all(summaries(workspace, "17900000002")))
        assert wait_for(lambda: running.watcher.pending(17900000002) == 0)
        assert running.watcher.catchups[17900000002] - before == 1


def test_a_write_by_another_process_during_catch_up_is_never_lost(workspace: Path) -> None:
    directory = new_conversation(workspace, 17900000003, 2)
    events = directory / "events.json"

    def append_while_answering(body: dict[str, Any]) -> str:
        entries = json.loads(events.read_text())
        entries.append({"event_id": "late", "timestamp": TS, "type": "turn_start"})
        write_like_jp(events, entries)
        ids = body["format"]["properties"]["summaries"]["required"]
        return json.dumps({"summaries": {i: f"Summary of {i}" for i in ids}})

    with ModelServer() as server:
        server.queue.append(Behaviour(content=append_while_answering))
        (workspace / ".jp" / "config.toml").write_text(
            '[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
            f'[providers.llm.ollama]\nbase_url = "{server.url}"\n'
        )
        with Running(workspace, http=HttpSettings(retries=0, read_timeout=5)):
            assert wait_for(lambda: summaries(workspace, "17900000003")[:2] == ["Summary of t0", "Summary of t1"])
    assert '"event_id": "late"' in events.read_text()


def test_one_broken_conversation_never_stops_the_service(workspace: Path) -> None:
    (workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script" / "events.json").write_text("[{")
    with Running(workspace) as running:
        new_conversation(workspace, 17900000004, 1)
        assert wait_for(lambda: summaries(workspace, "17900000004") == ["Do step 0 of the plan"])
        assert any("17790000000" in line for line in running.lines)


def test_once_processes_everything_pending_and_returns(workspace: Path) -> None:
    new_conversation(workspace, 17900000005, 2)
    lines: list[str] = []
    watcher = Watcher(
        [require_workspace(workspace)],
        WatchOptions(settle=60),
        sequential_ids("o"),
        lambda event: lines.append(str(event)),
    )
    watcher.run_once()
    assert summaries(workspace, "17900000005") == ["Do step 0 of the plan", "Do step 1 of the plan"]
    assert any("17900000005: summarized 2 turns with builtin/extractive" in line for line in lines)


def test_a_save_that_arrives_only_as_a_rename_is_seen(workspace: Path) -> None:
    directory = new_conversation(workspace, 17900000006, 1)
    with Running(workspace):
        assert wait_for(lambda: summaries(workspace, "17900000006") == ["Do step 0 of the plan"])
        entries = json.loads((directory / "events.json").read_text())
        entries += [
            {"event_id": "t9", "timestamp": TS, "type": "turn_start"},
            {"event_id": "r9", "timestamp": TS, "type": "chat_request", "content": "Write the release notes"},
            {"event_id": "m9", "request_id": "r9", "timestamp": TS, "type": "chat_response", "message": "Written."},
        ]
        outside = workspace / "events.json.tmp"
        outside.write_text(json.dumps(entries, indent=2) + "\n")
        os.replace(outside, directory / "events.json")
        assert wait_for(lambda: summaries(workspace, "17900000006")[-1] == "Write the release notes")


def test_a_folder_renamed_by_jp_is_followed(workspace: Path) -> None:
    directory = new_conversation(workspace, 17900000007, 1)
    with Running(workspace):
        assert wait_for(lambda: summaries(workspace, "17900000007") == ["Do step 0 of the plan"])
        renamed = directory.with_name("17900000007-a-title")
        directory.rename(renamed)
        entries = json.loads((renamed / "events.json").read_text())
        entries += [
            {"event_id": "t9", "timestamp": TS, "type": "turn_start"},
            {"event_id": "r9", "timestamp": TS, "type": "chat_request", "content": "Name the conversation"},
            {"event_id": "m9", "request_id": "r9", "timestamp": TS, "type": "chat_response", "message": "Named."},
        ]
        write_like_jp(renamed / "events.json", entries)
        assert wait_for(lambda: summaries(workspace, "17900000007")[-1] == "Name the conversation")


def test_a_silo_jp_creates_after_the_start_is_followed_and_its_locks_respected(
    workspace: Path, user_data: Path
) -> None:
    silo = user_data / "workspace" / "ws-fx001"
    holder: subprocess.Popen[str] | None = None
    with Running(workspace) as running:
        assert wait_for(lambda: running.watcher.pending() == 0 and running.watcher.catchups.total() >= 4)
        (silo / "locks").mkdir(parents=True)
        holder = hold(silo / "locks" / "jp-c17900000010.lock")
        try:
            directory = new_conversation(workspace, 17900000010, 2, silo / "conversations")
            before = (directory / "events.json").read_bytes()
            assert wait_for(lambda: any("following JP's user-local storage" in line for line in running.lines))
            assert wait_for(lambda: any("17900000010: skipped because it is locked" in line for line in running.lines))
            assert (directory / "events.json").read_bytes() == before
            release(holder)
            holder = None
            assert wait_for(
                lambda: summaries(workspace, "17900000010") == ["Do step 0 of the plan", "Do step 1 of the plan"]
            )
        finally:
            if holder is not None:
                release(holder)


def test_a_save_landing_while_the_watcher_finishes_its_own_write_is_still_seen(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher remembers its own write as it stood under the lock, not as the file stands a moment later."""
    directory = new_conversation(workspace, 17900000008, 1)
    landed = threading.Event()

    def jp_saves_meanwhile(ref: Any) -> str | None:
        if not landed.is_set() and summaries(workspace, "17900000008") == ["Do step 0 of the plan"]:
            landed.set()
            entries = json.loads((directory / "events.json").read_text())
            entries += [
                {"event_id": "t9", "timestamp": TS, "type": "turn_start"},
                {"event_id": "r9", "timestamp": TS, "type": "chat_request", "content": "Tag the release"},
                {"event_id": "m9", "request_id": "r9", "timestamp": TS, "type": "chat_response", "message": "Tagged."},
            ]
            write_like_jp(directory / "events.json", entries)
        return None

    monkeypatch.setattr("turnmark.shell.usecases.watcher.refresh_conversation", jp_saves_meanwhile)
    with Running(workspace) as running:
        assert wait_for(landed.is_set), running.lines
        assert wait_for(lambda: len(summaries(workspace, "17900000008")) == 2)
        assert wait_for(lambda: summaries(workspace, "17900000008")[-1] is not None), running.lines


def turn(n: int, request: str, answer: str) -> list[dict[str, Any]]:
    """Turn ``n`` as JP writes it: its start, the request and the answer."""
    return [
        {"event_id": f"t{n}", "timestamp": TS, "type": "turn_start"},
        {"event_id": f"r{n}", "timestamp": TS, "type": "chat_request", "content": request},
        {"event_id": f"m{n}", "request_id": f"r{n}", "timestamp": TS, "type": "chat_response", "message": answer},
    ]


def test_a_turn_landing_as_the_watcher_reads_waits_for_the_settle_period(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JP's save lands after the watcher heard of the last change but before its catch-up reads the file: the
    turn it adds is complete, yet has not rested, so the catch-up leaves it for a later pass."""
    from turnmark.shell.storage import conversations, files

    directory = new_conversation(workspace, 17900000009, 1)
    events = directory / "events.json"
    armed, landed = threading.Event(), threading.Event()
    real_read = files.read_file

    def jp_saves_just_before_the_read(path: Path, limit: int, **options: bool) -> bytes | None:
        if armed.is_set() and not landed.is_set() and path == events and threading.current_thread() is watching:
            landed.set()
            write_like_jp(events, json.loads(events.read_text()) + turn(2, "Tag the release", "Done."))
        return real_read(path, limit, **options)

    monkeypatch.setattr(conversations, "read_file", jp_saves_just_before_the_read)
    written: list[dict[str, str]] = []
    with Running(workspace) as running:
        watching = running.thread

        def log(event: WatchEvent) -> None:
            found = event.details.get("summaries")
            if event.conversation == "jp-c17900000009" and isinstance(found, dict):
                written.append(found)

        running.watcher.log = log
        assert wait_for(lambda: summaries(workspace, "17900000009") == ["Do step 0 of the plan"])
        assert wait_for(lambda: running.watcher.pending(17900000009) == 0)
        written.clear()
        armed.set()
        write_like_jp(events, json.loads(events.read_text()) + turn(1, "Write the changelog", "Written."))
        assert wait_for(lambda: len(summaries(workspace, "17900000009")) == 3)
        assert wait_for(lambda: None not in summaries(workspace, "17900000009"))
    assert landed.is_set()
    catchups = [list(summaries) for summaries in written if summaries]
    assert catchups[:2] == [["t1"], ["t2"]], "the turn that landed as the file was read waited for its settle period"


def test_a_missing_key_is_said_once_and_waits_for_the_configuration_to_change(workspace: Path) -> None:
    """No retries for a cause no retry can cure (the old back-off asked again after 5 s, 10 s, ... for ever)."""
    config = workspace / ".jp" / "config.toml"
    config.write_text('[conversation.turn_summary.generate.model]\nid = "anthropic/claude-haiku-4-5"\n')
    time.sleep(SETTLE * 2)  # the files have settled: only a retry could start a second catch-up
    now = [1_000.0]
    lines: list[WatchEvent] = []
    options = WatchOptions(settle=SETTLE, catchup=CatchupOptions(environ={}))
    watcher = Watcher([require_workspace(workspace)], options, sequential_ids("w"), lines.append, clock=lambda: now[0])
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        assert wait_for(lambda: any("until the configuration changes" in str(line) for line in lines))
        for _ in range(8):
            now[0] += 400
            time.sleep(0.2)
        said = [str(line) for line in lines if "until the configuration changes" in str(line)]
        assert len(said) == 1, lines
        assert "ANTHROPIC_API_KEY" in said[0]
        assert set(watcher.catchups.values()) == {1}
        config.write_text('[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n')
        assert wait_for(lambda: any(summaries(workspace, "17800000040")[1:]))
        assert any("the configuration changed" in str(line) for line in lines)
    finally:
        watcher.stop()
        thread.join(timeout=10)


def test_sighup_tries_again_the_conversations_that_wait_for_the_configuration(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").write_text('[conversation.turn_summary.generate.model]\nid = "openai/gpt-5"\n')
    turnmark = Path(sys.executable).parent / "turnmark"
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    service = subprocess.Popen(
        [str(turnmark), "--workspace", str(workspace), "watch", "--settle", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(service.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        assert wait_for(lambda: any("until the configuration changes" in line for line in lines), 30)
        service.send_signal(signal.SIGHUP)
        assert wait_for(lambda: any("the configuration changed" in line for line in lines), 30)
        assert wait_for(lambda: sum("until the configuration changes" in line for line in lines) == 2, 30)
        assert service.poll() is None
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=30)
