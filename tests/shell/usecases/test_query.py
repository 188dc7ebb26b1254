"""``turnmark query`` with loopback models: RFD 126 Phase 4 and the exit budget."""

from __future__ import annotations

import gc
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_servers import Behaviour, ModelServer
from turnmark.core.links.resolution import count_links, resolve_links
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.turns import summary_source
from turnmark.shell.errors import QueryError
from turnmark.shell.settings import HttpSettings
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.undo import undo
from turnmark.shell.usecases.query import NOT_RUN, QueryOptions, run_query

FAST = HttpSettings(connect_timeout=0.5, read_timeout=5.0, retries=0)


@pytest.fixture
def server(workspace: Path) -> Iterator[ModelServer]:
    with ModelServer() as running:
        (workspace / ".jp" / "config.toml").write_text(
            '[assistant.model]\nid = "ollama/llama3.2:3b"\n'
            '[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
            f'[providers.llm.ollama]\nbase_url = "{running.url}"\n'
        )
        yield running


def is_summary_request(body: dict[str, Any]) -> bool:
    return "format" in body


def script(server: ModelServer, chat: str, summary: Any = None, summary_delay: float = 0.0) -> None:
    """Answer chat requests with ``chat`` and summary requests with one line per turn (or ``summary``)."""

    def answer(body: dict[str, Any]) -> str:
        if is_summary_request(body):
            if summary_delay:
                time.sleep(summary_delay)
            if summary is not None:
                return str(summary(body))
            ids = body["format"]["properties"]["summaries"]["required"]
            return json.dumps({"summaries": {i: f"Summary of {i}" for i in ids}})
        return chat

    server.queue.extend([Behaviour(content=answer)] * 4)


def ask(
    workspace: Path, message: str, conversation: str | None = "17800000040", **options: Any
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options.setdefault("model", "ollama/llama3.2:3b")
    status = run_query(
        workspace,
        QueryOptions(message=message, conversation=conversation, http=FAST, **options),
        sequential_ids("q"),
        out,
        err,
    )
    return status, out.getvalue(), err.getvalue()


def test_a_turn_is_streamed_appended_with_links_and_persisted(workspace: Path, server: ModelServer) -> None:
    script(server, "Use a non-blocking flock.")
    status, out, err = ask(workspace, "How should turnmark lock?")
    assert (status, out) == (0, "Use a non-blocking flock.\n")
    ref = pick_conversation(workspace, "17800000040")
    stream = read_conversation(ref, sequential_ids("r")).stream
    last = stream.turns()[-1]
    assert [e.type_tag for e in last.events()] == ["turn_start", "chat_request", "chat_response"]
    assert last.events()[2].request_id == last.events()[1].event_id
    assert "warning: left out of the request: a2call0, a2res00" in err
    chat = next(p for p in server.posts() if not is_summary_request(p.body or {}))
    assert chat.body is not None
    assert chat.body["messages"][-1] == {
        "role": "user",
        "content": "How should turnmark lock?",
    }


def test_turn_one_is_summarized_during_turn_twos_query(workspace: Path, server: ModelServer) -> None:
    script(server, "First answer.")
    ask(workspace, "First question", None, new=True)
    [ref_id] = [p.name for p in (workspace / ".jp" / "conversations").iterdir() if "-" not in p.name]
    ref = pick_conversation(workspace, ref_id)
    first = read_conversation(ref, sequential_ids("r")).stream.turns()[0]
    assert first.summary() is None, "nothing to summarize during turn 1"
    script(server, "Second answer.")
    ask(workspace, "Second question", ref_id)
    turns = read_conversation(ref, sequential_ids("r")).stream.turns()
    assert turns[0].summary() == f"Summary of {first.id()}"
    assert summary_source(turns[0]) == "ollama/llama3.2:3b"
    assert turns[1].summary() is None, "the new turn is summarized one query later"


def test_an_edit_to_turn_one_between_spawn_and_sync_leaves_its_summary_empty(
    workspace: Path, server: ModelServer
) -> None:
    ref = pick_conversation(workspace, "17800000040")
    events = ref.directories[0] / "events.json"

    def edit_then_answer(body: dict[str, Any]) -> str:
        deadline = time.monotonic() + 5
        while lock_path(ref).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        events.write_text(events.read_text().replace("And the locks?", "And where are the locks?"))
        ids = body["format"]["properties"]["summaries"]["required"]
        return json.dumps({"summaries": {i: f"Summary of {i}" for i in ids}})

    script(server, "ok", summary=edit_then_answer)
    status, _, _err = ask(workspace, "one more")
    assert status == 0
    turns = {t.id(): t for t in read_conversation(ref, sequential_ids("r")).stream.turns()}
    assert turns["a1turn0"].summary() is None
    assert turns["a2turn0"].summary() == "Summary of a2turn0"
    assert "And where are the locks?" in events.read_text()


def test_a_summary_model_slower_than_the_budget_is_cancelled_and_writes_nothing(
    workspace: Path, server: ModelServer
) -> None:
    def answer(body: dict[str, Any]) -> str:
        ids = body.get("format", {}).get("properties", {}).get("summaries", {}).get("required")
        return json.dumps({"summaries": dict.fromkeys(ids, "late")}) if ids else "fast answer"

    slow_summaries = Behaviour(content=answer, chunk_delay=lambda body: 0.4 if "format" in body else 0.0)
    server.queue.extend([slow_summaries] * 2)
    started = time.monotonic()
    status, out, err = ask(workspace, "quick", soft_timeout=0.5, grace=1.0)
    elapsed = time.monotonic() - started
    assert (status, out) == (0, "fast answer\n")
    assert elapsed < 4.0, "the command exits within the budget and the grace, not when the model answers"
    assert "did not stop in time" not in err, "the task saw the cancellation and stopped by itself"
    ref = pick_conversation(workspace, "17800000040")
    turns = read_conversation(ref, sequential_ids("r")).stream.turns()
    assert [t.summary() for t in turns[1:4]] == [None, None, None]


def test_no_persist_writes_nothing(workspace: Path, server: ModelServer) -> None:
    script(server, "hello")
    ref = pick_conversation(workspace, "17800000040")
    before = {p.name: p.read_bytes() for p in ref.directories[0].iterdir()}
    status, out, _ = ask(workspace, "hi", persist=False)
    assert (status, out) == (0, "hello\n")
    assert {p.name: p.read_bytes() for p in ref.directories[0].iterdir()} == before
    assert all(not is_summary_request(p.body or {}) for p in server.posts())


def test_a_tool_call_is_recorded_and_reported_as_not_run(workspace: Path, server: ModelServer) -> None:
    server.queue.append(
        Behaviour(
            raw_stream=(
                json.dumps(
                    {
                        "message": {
                            "role": "assistant",
                            "content": "Let me look.",
                            "tool_calls": [{"function": {"name": "fs_read_file", "arguments": {"path": "a.rs"}}}],
                        },
                        "done": False,
                    }
                )
                + "\n"
                + json.dumps({"message": {"content": ""}, "done": True})
                + "\n"
            ).encode()
        )
    )
    no_summaries = ("conversation.turn_summary.generate.auto=false",)
    status, _, err = ask(workspace, "read a.rs", "17790000000", cfg=no_summaries)
    assert status == 0
    assert f"the model asked to run fs_read_file; {NOT_RUN}" in err
    ref = pick_conversation(workspace, "17790000000")
    stream = read_conversation(ref, sequential_ids("r")).stream
    kinds = [e.type_tag for e in stream.turns()[-1].events()]
    assert kinds[-3:] == ["chat_response", "tool_call_request", "tool_call_response"]
    assert count_links(resolve_links(stream.entries, stream.duplicated_ids)).unresolved == 0


def test_a_model_failure_keeps_the_request_and_exits_1(workspace: Path, server: ModelServer) -> None:
    server.queue.extend([Behaviour(status=400)] * 4)
    status, _, err = ask(workspace, "anyone there?")
    assert status == 1
    assert "error: ollama/llama3.2:3b:" in err
    ref = pick_conversation(workspace, "17800000040")
    last = read_conversation(ref, sequential_ids("r")).stream.turns()[-1]
    assert [e.type_tag for e in last.events()] == ["turn_start", "chat_request"]


@pytest.mark.parametrize("new", [False, True])
def test_a_model_without_its_key_is_refused_before_anything_is_written(
    workspace: Path, user_data: Path, server: ModelServer, new: bool
) -> None:
    def files() -> dict[Path, bytes]:
        found = [path for root in (workspace, user_data) for path in root.rglob("*")]
        return {path: path.read_bytes() for path in found if path.is_file()}

    before = files()
    conversation = None if new else "17800000040"
    with pytest.raises(QueryError, match=r"^ANTHROPIC_API_KEY is not set \(needed for anthropic/claude-x\); nothing"):
        ask(workspace, "anyone there?", conversation, new=new, model="anthropic/claude-x", environ={})
    assert files() == before
    assert server.posts() == [], "no background summary was started"


def test_an_interrupted_last_turn_is_summarized_during_the_next_query(workspace: Path, server: ModelServer) -> None:
    ref = pick_conversation(workspace, "17800000040")
    events_path = ref.directories[0] / "events.json"
    events = json.loads(events_path.read_text())
    events.append({"event_id": "i0turn0", "timestamp": "2026-05-21 09:00:00.0", "type": "turn_start"})
    events.append({"event_id": "i0req00", "timestamp": "2026-05-21 09:00:00.1", "type": "chat_request",
                   "content": "Refactor the lock module"})  # fmt: skip
    events_path.write_text(json.dumps(events, indent=2))
    script(server, "Done.")
    status, _, err = ask(workspace, "Continue")
    assert status == 0, err
    [summary_post] = [p for p in server.posts() if is_summary_request(p.body or {})]
    assert "i0turn0" in summary_post.body["format"]["properties"]["summaries"]["required"]  # type: ignore[index]
    stream = read_conversation(ref, sequential_ids("r")).stream
    assert {t.id(): t.summary() for t in stream.turns()}["i0turn0"] == "Summary of i0turn0"


def test_auto_false_sends_no_summary_request(workspace: Path, server: ModelServer) -> None:
    script(server, "Fine.")
    status, _, _ = ask(workspace, "Hello", cfg=("conversation.turn_summary.generate.auto=false",))
    assert status == 0
    assert [p for p in server.posts() if is_summary_request(p.body or {})] == []
    assert len(server.posts()) == 1


def test_query_sends_at_most_one_summary_batch(workspace: Path, server: ModelServer) -> None:
    script(server, "Fine.")
    status, _, _ = ask(workspace, "Hello", cfg=("conversation.turn_summary.generate.batch_size=1",))
    assert status == 0
    assert len([p for p in server.posts() if is_summary_request(p.body or {})]) == 1


def test_the_summary_request_overlaps_the_chat_answer(workspace: Path, server: ModelServer) -> None:
    script(server, "A slow answer, streamed in many small pieces so that it takes a while to arrive.")
    for behaviour in list(server.queue):
        behaviour.chunk_delay = lambda body: 0.0 if is_summary_request(body) else 0.05
    status, _, _ = ask(workspace, "Explain the lock")
    assert status == 0
    [summary] = [p for p in server.posts() if is_summary_request(p.body or {})]
    [chat] = [p for p in server.posts() if not is_summary_request(p.body or {})]
    assert chat.finished is not None
    assert summary.started < chat.finished, "the summary request was sent while the chat answer streamed"


def test_a_lone_surrogate_from_the_model_is_stored_as_a_replacement_character(
    workspace: Path, server: ModelServer
) -> None:
    """JSON's ``"\\ud800"`` decodes to a string no UTF-8 file can hold: the answer and its summary are still saved."""
    script(
        server,
        "Half a pair: \ud800 here.",
        summary=lambda body: json.dumps(
            {
                "summaries": dict.fromkeys(
                    body["format"]["properties"]["summaries"]["required"], "Lone \udc00 surrogate summary"
                )
            }
        ),
    )
    status, out, _ = ask(workspace, "What now?")
    assert status == 0
    assert "Half a pair: \ufffd here." in out
    stored = (next((workspace / ".jp" / "conversations").glob("17800000040*")) / "events.json").read_text("utf-8")
    assert "Half a pair: \ufffd here." in stored
    assert "\ud800" not in stored


def test_a_query_on_a_legacy_conversation_says_it_upgraded_and_undo_takes_the_whole_query_back(
    workspace: Path, server: ModelServer
) -> None:
    script(server, "It generates the version string.")
    ref = pick_conversation(workspace, "17790000000")
    directory = ref.directories[0]
    before = {path.name: path.read_bytes() for path in directory.iterdir() if path.name != "metadata.json"}
    no_summaries = ("conversation.turn_summary.generate.auto=false",)
    status, out, err = ask(workspace, "And build.rs?", "17790000000", cfg=no_summaries, as_json=True)
    assert status == 0
    result = json.loads(out)
    assert result["upgraded"] is True
    assert result["upgrade"] == {"ids_stamped": 9, "config_split_out": True, "turn_start_inserted": True}
    assert "note: jp-c17790000000: upgraded from JP's older format (base_config.json split out" in err
    said = undo(ref)
    assert said.startswith("jp-c17790000000: restored the copy kept before query, in JP's older format")
    assert {path.name: path.read_bytes() for path in directory.iterdir() if path.name != "metadata.json"} == before


def test_a_query_leaves_no_connection_open(workspace: Path, server: ModelServer) -> None:
    """The assistant's client is closed once the answer is in (a long-lived process asks many): with the cyclic
    collector off, the server sees every connection closed, the summaries' task's too."""
    script(server, "First answer.")
    ask(workspace, "First question", None, new=True)
    [ref_id] = [p.name for p in (workspace / ".jp" / "conversations").iterdir() if "-" not in p.name]
    script(server, "Second answer.")
    gc.disable()
    try:
        status, _, _ = ask(workspace, "Second question", ref_id)
        assert status == 0
        assert any(is_summary_request(post.body or {}) for post in server.posts()), "the summaries' task asked too"
        assert server.open_connections() == 0
    finally:
        gc.enable()
