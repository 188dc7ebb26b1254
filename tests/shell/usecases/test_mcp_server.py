"""``turnmark mcp`` through the SDK's own stdio client (a real subprocess) and through plain JSON-RPC lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from tests.conftest import corpus_params

TURNMARK = str(Path(sys.executable).parent / "turnmark")
TOOLS = ["list_conversations", "list_turns", "find_turns", "read_turn"]
REFUSED = ["../../etc/passwd", "/etc/passwd", "jp-c1/../2", "jp-c17820000010\x00", "..", "C:\\x", ""]


def _environment() -> dict[str, str]:
    keep = ("PATH", "HOME", "TURNMARK_CACHE_DIR", "TURNMARK_STATE_DIR", "JP_USER_DATA_DIR", "XDG_CACHE_HOME")
    return {name: os.environ[name] for name in keep if name in os.environ}


def with_server(workspace: Path, body: Callable[[ClientSession], Awaitable[Any]], *options: str) -> Any:
    """``body``'s result with a session on ``turnmark --workspace WORKSPACE mcp`` (started and stopped here)."""

    async def main() -> Any:
        parameters = StdioServerParameters(
            command=TURNMARK, args=["--workspace", str(workspace), "mcp", *options], env=_environment()
        )
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def turnmark_json(workspace: Path, *arguments: str) -> Any:
    done = subprocess.run(
        [TURNMARK, "--workspace", str(workspace), *arguments, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(done.stdout)


def files_of(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_the_tools_are_listed_with_schemas_written_for_a_model(show_workspace: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = with_server(show_workspace, body)
    assert [tool.name for tool in tools] == TOOLS
    for tool in tools:
        assert tool.description
        assert "\n " not in tool.description, "no docstring indentation in what a model reads"
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    read_turn = next(tool for tool in tools if tool.name == "read_turn")
    assert read_turn.input_schema["required"] == ["turn"]
    assert read_turn.input_schema["properties"]["max_chars"]["default"] == 8000


def test_every_tool_answers_as_the_commands_do(show_workspace: Path) -> None:
    listing = turnmark_json(show_workspace, "conversations")["conversations"]
    first = listing[0]["id"]
    turns = turnmark_json(show_workspace, "turns", first)["turns"]
    transcript = turnmark_json(show_workspace, "transcript", first, "--turn", turns[1]["id"])["turns"][0]
    found = subprocess.run(
        [TURNMARK, "--workspace", str(show_workspace), "find", "lock", "--output", "ids"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("list_conversations", {}),
            await session.call_tool("list_turns", {"conversation": first}),
            await session.call_tool("find_turns", {"query": "lock"}),
            await session.call_tool("read_turn", {"turn": f"{first}:{turns[1]['id']}", "max_chars": 20_000}),
        ]

    conversations, turn_list, hits, turn = with_server(show_workspace, body)
    assert not any(result.is_error for result in (conversations, turn_list, hits, turn))
    assert {row["id"]: (row["turns"], row["summarized_turns"]) for row in listing} == {
        row["id"]: (row["turns"], row["summarized_turns"]) for row in conversations.structured_content["conversations"]
    }
    assert [row["address"] for row in turn_list.structured_content["turns"]] == [
        f"{first}:{row['id']}" for row in turns
    ]
    assert [row["label"] for row in turn_list.structured_content["turns"]] == [row["label"] for row in turns]
    assert [hit["address"] for hit in hits.structured_content["hits"]] == found
    assert turn.structured_content["transcript"] == transcript["transcript"]
    assert transcript["transcript"] in text_of(turn)
    assert turn.structured_content["next"] is None


def test_a_label_that_is_the_request_s_first_line_is_marked(show_workspace: Path) -> None:
    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("list_turns", {"conversation": "jp-c17820000010"})

    result = with_server(show_workspace, body)
    rows = result.structured_content["turns"]
    assert {row["label_source"] for row in rows} == {"summary", "fallback"}
    for row in rows:
        line = next(line for line in text_of(result).splitlines() if line.startswith(row["address"]))
        assert ("  ~ " in line) is (row["label_source"] == "fallback")
    assert "~ marks a turn with no summary yet" in text_of(result)


def test_unknown_things_and_path_like_arguments_are_tool_errors_and_the_server_goes_on(
    show_workspace: Path,
) -> None:
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("list_turns", {"conversation": "jp-c17899999999"}, "no conversation jp-c17899999999"),
        ("read_turn", {"turn": "jp-c17820000010:zzzzzzz"}, "no turn 'zzzzzzz' in jp-c17820000010"),
        ("read_turn", {"turn": "jp-c17820000010:99"}, "list_turns"),
        ("find_turns", {"query": '"unclosed'}, "find"),
        ("find_turns", {"query": "lock", "scope": "nowhere"}, "nowhere"),
        ("find_turns", {"query": "lock", "conversation": "../x"}, "not a conversation ID"),
        *(("list_turns", {"conversation": bad}, "not a conversation ID") for bad in REFUSED),
        *(("read_turn", {"turn": bad}, "not a turn address") for bad in REFUSED),
        ("read_turn", {"turn": "jp-c17820000010:../../x"}, "not a turn address"),
        ("list_conversations", {"limit": -1}, "limit"),
        ("read_turn", {"turn": 5}, "turn"),
    ]

    async def body(session: ClientSession) -> tuple[list[CallToolResult], CallToolResult]:
        results = [await session.call_tool(name, arguments) for name, arguments, _ in calls]
        return results, await session.call_tool("list_conversations", {})

    results, after = with_server(show_workspace, body)
    for (name, arguments, said), result in zip(calls, results, strict=True):
        assert result.is_error, (name, arguments)
        assert said in text_of(result), (name, arguments, text_of(result))
        assert "Traceback" not in text_of(result)
        assert "http" not in text_of(result), "no web address a model would follow"
    assert not after.is_error
    assert "2 of 2 conversations" in text_of(after)


def test_conversation_folders_and_files_that_are_links_are_not_read(show_workspace: Path, tmp_path: Path) -> None:
    conversations = show_workspace / ".jp" / "conversations"
    source = next(conversations.glob("17820000010-*"))
    outside = tmp_path / "outside"
    shutil.copytree(source, outside / "folder")
    (outside / "folder" / "metadata.json").write_text('{"title": "OUTSIDE SECRET"}')
    (conversations / "17830000001-linked-folder").symlink_to(outside / "folder", target_is_directory=True)
    linked_file = conversations / "17830000002-linked-file"
    linked_file.mkdir()
    (linked_file / "events.json").symlink_to(outside / "folder" / "events.json")
    (linked_file / "metadata.json").write_text('{"title": "own folder, linked file"}')

    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("list_conversations", {}),
            await session.call_tool("list_turns", {"conversation": "jp-c17830000001"}),
            await session.call_tool("list_turns", {"conversation": "jp-c17830000002"}),
            await session.call_tool("read_turn", {"turn": "jp-c17830000002:0"}),
        ]

    listed, folder, file, turn = with_server(show_workspace, body)
    assert "OUTSIDE SECRET" not in text_of(listed)
    assert "jp-c17830000001" not in text_of(listed)
    assert folder.is_error
    assert "its folder is a link" in text_of(folder)
    for result in (file, turn):
        assert result.is_error
        assert "link" in text_of(result)
        assert "OUTSIDE" not in text_of(result)


def test_an_unreadable_conversation_is_a_tool_error_naming_its_file_from_the_workspace(show_workspace: Path) -> None:
    events = next((show_workspace / ".jp" / "conversations").glob("17820000010-*")) / "events.json"
    events.write_text('[{"type": "chat_request"')

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("list_turns", {"conversation": "jp-c17820000010"})

    result = with_server(show_workspace, body)
    assert result.is_error
    assert f".jp/conversations/{events.parent.name}/events.json" in text_of(result)
    assert str(show_workspace) not in text_of(result)


def test_a_long_transcript_is_cut_with_where_to_read_on(show_workspace: Path) -> None:
    address = "jp-c17820000020:h0turn0"

    async def body(session: ClientSession) -> list[CallToolResult]:
        first = await session.call_tool("read_turn", {"turn": address, "max_chars": 300})
        rest = await session.call_tool("read_turn", {"turn": address, "max_chars": 20_000, "start": 0})
        parts = [first]
        while (following := parts[-1].structured_content["next"]) is not None:
            parts.append(await session.call_tool("read_turn", {"turn": address, "max_chars": 300, "start": following}))
        return [rest, *parts]

    whole, *parts = with_server(show_workspace, body)
    assert len(parts) > 2
    assert "".join(part.structured_content["transcript"] for part in parts) == whole.structured_content["transcript"]
    assert f"call read_turn with turn='{address}', start=" in text_of(parts[0])
    assert all(len(part.structured_content["transcript"]) <= 300 for part in parts)


def test_escapes_never_reach_the_client_raw(show_workspace: Path) -> None:
    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("read_turn", {"turn": "jp-c17820000020:h0turn0", "max_chars": 20_000}),
            await session.call_tool("list_conversations", {}),
        ]

    for result in with_server(show_workspace, body):
        text = text_of(result) + json.dumps(result.structured_content, ensure_ascii=False)
        assert "\x1b" not in text
        assert "\u202e" not in text
        assert "\x07" not in text
    assert "\\u{1b}[2J" in text_of(with_server(show_workspace, body)[0])


def test_every_answer_stays_within_the_bound(show_workspace: Path) -> None:
    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("read_turn", {"turn": "jp-c17820000020:h0turn0", "max_chars": 1_000_000}),
            await session.call_tool("list_turns", {"conversation": "jp-c17820000010"}),
            await session.call_tool("find_turns", {"query": "the", "limit": 200, "scope": "all"}),
        ]

    for result in with_server(show_workspace, body, "--max-chars", "2000"):
        assert not result.is_error
        assert len(text_of(result)) <= 2_000


def test_concurrent_calls_each_get_their_own_answer(show_workspace: Path) -> None:
    calls = [
        ("list_conversations", {}),
        ("list_turns", {"conversation": "jp-c17820000010"}),
        ("list_turns", {"conversation": "jp-c17820000020"}),
        ("find_turns", {"query": "lock"}),
        ("read_turn", {"turn": "jp-c17820000010:s0turn0"}),
        ("read_turn", {"turn": "jp-c17820000020:h1turn0"}),
        ("list_turns", {"conversation": "jp-c1"}),
    ] * 3

    async def body(session: ClientSession) -> tuple[list[str], list[str]]:
        one_by_one = [text_of(await session.call_tool(name, arguments)) for name, arguments in calls]
        together: list[str] = [""] * len(calls)

        async def call(index: int) -> None:
            name, arguments = calls[index]
            together[index] = text_of(await session.call_tool(name, arguments))

        async with anyio.create_task_group() as group:
            for index in range(len(calls)):
                group.start_soon(call, index)
        return one_by_one, together

    one_by_one, together = with_server(show_workspace, body)
    assert together == one_by_one


def test_a_conversation_changed_while_the_server_runs_is_seen_on_the_next_call(show_workspace: Path) -> None:
    async def body(session: ClientSession) -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        before = await session.call_tool("list_turns", {"conversation": "jp-c17820000010"})
        subprocess.run(
            [TURNMARK, "--workspace", str(show_workspace), "summary", "set", "17820000010", "1", "Ran the tests"],
            check=True,
            capture_output=True,
        )
        after = await session.call_tool("list_turns", {"conversation": "jp-c17820000010"})
        found = await session.call_tool("find_turns", {"query": "ran tests", "scope": "summaries"})
        return before, after, found

    before, after, found = with_server(show_workspace, body)
    assert before.structured_content["turns"][1]["label_source"] == "fallback"
    assert after.structured_content["turns"][1]["label"] == "Ran the tests"
    assert after.structured_content["turns"][1]["label_source"] == "summary"
    assert [hit["address"] for hit in found.structured_content["hits"]] == [
        after.structured_content["turns"][1]["address"]
    ]


def test_nothing_in_the_workspace_changes(show_workspace: Path) -> None:
    before = files_of(show_workspace)

    async def body(session: ClientSession) -> None:
        await session.call_tool("list_conversations", {})
        await session.call_tool("find_turns", {"query": "lock", "scope": "all"})
        for conversation in ("jp-c17820000010", "jp-c17820000020"):
            turns = await session.call_tool("list_turns", {"conversation": conversation})
            for row in turns.structured_content["turns"]:
                await session.call_tool("read_turn", {"turn": row["address"]})

    with_server(show_workspace, body)
    assert files_of(show_workspace) == before


@pytest.mark.parametrize("conversation", corpus_params())
def test_every_turn_of_a_corpus_conversation_reads(conversation: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".jp" / "conversations").mkdir(parents=True)
    copy = workspace / ".jp" / "conversations" / conversation.name
    copy.mkdir()
    for path in conversation.iterdir():
        if path.is_file():
            (copy / path.name).write_bytes(path.read_bytes())
    expected = turnmark_json(workspace, "turns", conversation.name.split("-")[0])["turns"]

    async def body(session: ClientSession) -> tuple[CallToolResult, list[CallToolResult]]:
        listed = await session.call_tool("list_turns", {"conversation": conversation.name.split("-")[0]})
        rows = listed.structured_content["turns"]
        chosen = [rows[0], rows[-1]] if rows else []
        return listed, [await session.call_tool("read_turn", {"turn": row["address"]}) for row in chosen]

    listed, read = with_server(workspace, body)
    assert not listed.is_error
    assert [row["label"] for row in listed.structured_content["turns"]] == [row["label"] for row in expected]
    for result in read:
        assert not result.is_error, text_of(result)
        assert result.structured_content["transcript"].startswith("<turn id=")


# Plain JSON-RPC, and stopping -------------------------------------------------------------------------


def _server(workspace: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [TURNMARK, "--workspace", str(workspace), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(),
    )


def _send(process: subprocess.Popen[bytes], message: dict[str, Any] | bytes) -> None:
    assert process.stdin is not None
    line = message if isinstance(message, bytes) else json.dumps(message).encode()
    process.stdin.write(line + b"\n")
    process.stdin.flush()


def _receive(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    message = json.loads(line)
    assert message["jsonrpc"] == "2.0", line
    return message  # type: ignore[no-any-return]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "plain", "version": "1"}},
}


def _initialized(workspace: Path) -> subprocess.Popen[bytes]:
    process = _server(workspace)
    _send(process, INITIALIZE)
    answer = _receive(process)
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "turnmark"
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def test_a_plain_json_rpc_exchange_of_lines_works_and_stdout_holds_only_protocol_messages(
    show_workspace: Path,
) -> None:
    process = _initialized(show_workspace)
    _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert [tool["name"] for tool in _receive(process)["result"]["tools"]] == TOOLS
    call = {"name": "list_turns", "arguments": {"conversation": "jp-c17820000010"}}
    _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    answer = _receive(process)
    assert answer["id"] == 3
    assert answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["total_turns"] == 4
    _send(process, b"{not json")
    assert _receive(process)["error"]["code"] == -32700
    _send(process, {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"})
    assert _receive(process)["error"]["code"] == -32601
    bad = {"name": "read_turn", "arguments": {"turn": "../../etc/passwd"}}
    _send(process, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": bad})
    refused = _receive(process)
    assert refused["result"]["isError"] is True
    assert "not a turn address" in refused["result"]["content"][0]["text"]
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0
    for line in out.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert b"Traceback" not in err


def test_requests_written_before_stdin_closes_are_all_answered(show_workspace: Path) -> None:
    process = _server(show_workspace)
    assert process.stdin is not None
    calls = [
        {"name": "find_turns", "arguments": {"query": "lock"}},
        {"name": "list_turns", "arguments": {"conversation": "jp-c17820000010"}},
        {"name": "read_turn", "arguments": {"turn": "jp-c17820000010:0"}},
    ]
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": call} for n, call in enumerate(calls)]
    out, _err = process.communicate(b"".join(json.dumps(line).encode() + b"\n" for line in lines), timeout=60)
    assert process.returncode == 0
    answers = {message["id"]: message for message in map(json.loads, out.splitlines())}
    assert sorted(answers) == [1, 10, 11, 12]
    assert not any(answers[n]["result"]["isError"] for n in (10, 11, 12))


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM", "SIGINT"])
def test_the_server_stops_cleanly(show_workspace: Path, how: str) -> None:
    """How fast is measured by bench/mcp.py (no timed assertions here)."""
    process = _initialized(show_workspace)
    assert process.stdin is not None
    if how == "stdin closed":
        process.stdin.close()
    else:
        process.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
    process.wait(timeout=30)
    assert process.returncode == 0
    assert process.stderr is not None
    assert b"Traceback" not in process.stderr.read()
