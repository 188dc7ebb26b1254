"""``turnmark mcp``: the workspace's history as MCP tools over stdio, on the official ``mcp`` SDK.

Only this command imports the SDK (and pydantic under it). Every tool is read-only; its answer is text a
model reads well and the same as structured content; what it cannot answer (an unknown conversation or
turn, an argument that is not an ID or address, a bad query) is a tool error (``isError``) that says what
exists and how to list it, and the server goes on serving. Malformed messages get JSON-RPC errors from the
SDK. stdout carries protocol messages only (the SDK moves the process's own stdout to stderr while it
serves); logs go to stderr. The server stops, exit status 0, when stdin closes, on SIGTERM, SIGHUP and
Ctrl-C.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Annotated

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import Field, ValidationError

from turnmark.core.rendering.history_tools import READ_CHARS, ToolAnswer
from turnmark.shell.errors import TurnmarkError
from turnmark.shell.usecases.history import History
from turnmark.shell.version import VERSION

INSTRUCTIONS = """\
The history of this workspace's JP conversations, turn by turn. Each turn has an address CONV:TURN \
(such as jp-c17727484633:k3m9x2a) that stays valid while the conversation is edited, and a one-line \
summary; a line marked '~' has no summary yet and shows the first line of the turn's request instead. \
Use find_turns to search every turn (ranked, best first), list_conversations and list_turns to browse, \
and read_turn to read one turn's transcript (request, tool calls and their outcomes, answers). Read-only."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

ConversationArg = Annotated[
    str, Field(description="A conversation ID as list_conversations shows it, such as jp-c17727484633.")
]


def _result(call: Callable[[], ToolAnswer]) -> CallToolResult:
    try:
        answer = call()
    except TurnmarkError as error:
        raise ToolError(str(error)) from None
    return CallToolResult(content=[TextContent(type="text", text=answer.text)], structured_content=answer.data)


def _tool(server: MCPServer) -> Callable[[Callable[..., CallToolResult]], Callable[..., CallToolResult]]:
    """Register a read-only tool, its docstring (the description a model reads) without its indentation."""

    def register(function: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
        function.__doc__ = inspect.cleandoc(function.__doc__ or "")
        server.tool(annotations=_READ_ONLY, structured_output=False)(function)
        return function

    return register


def history_server(history: History) -> MCPServer:
    """The MCP server of ``history``'s four tools."""
    server: MCPServer = MCPServer("turnmark", version=VERSION, instructions=INSTRUCTIONS, log_level="WARNING")

    @_tool(server)
    def list_conversations(
        limit: Annotated[int, Field(ge=1, le=200, description="How many conversations to list (1-200).")] = 20,
        query: Annotated[
            str | None, Field(description="Only conversations whose title or ID contains this text (any case).")
        ] = None,
    ) -> CallToolResult:
        """The workspace's conversations, most recently active first: ID, title, when it was last active, how many
        turns it has and how many of them are summarized."""
        return _result(lambda: history.list_conversations(limit, query))

    @_tool(server)
    def list_turns(
        conversation: ConversationArg,
        first: Annotated[int, Field(ge=0, description="The first turn to list (0: from the start).")] = 0,
    ) -> CallToolResult:
        """One line per turn of a conversation: its CONV:TURN address, when it happened, and its summary (or,
        marked '~', the first line of its request when it has no summary yet)."""
        return _result(lambda: history.list_turns(conversation, first))

    @_tool(server)
    def find_turns(
        query: Annotated[
            str,
            Field(
                description='Words that must all be in the turn; "a phrase", prefix* and -word (leave turns '
                "with it out) too, the query language of `turnmark find`."
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=200, description="How many hits to return, best first (1-200).")] = 10,
        conversation: Annotated[
            str | None, Field(description="Only this conversation (an ID such as jp-c17727484633).")
        ] = None,
        scope: Annotated[
            str | None,
            Field(
                description="Where to search, comma-separated: summaries, titles, requests, answers, tools, "
                "results, reasoning, or all (default: summaries, requests, answers, tools)."
            ),
        ] = None,
    ) -> CallToolResult:
        """Search every turn of the workspace, ranked best first: each hit with its CONV:TURN address, its
        summary and the text around the match. Read a hit with read_turn."""
        return _result(lambda: history.find_turns(query, limit, conversation, scope))

    @_tool(server)
    def read_turn(
        turn: Annotated[
            str,
            Field(description="The turn's CONV:TURN address, as list_turns and find_turns show it."),
        ],
        max_chars: Annotated[
            int, Field(ge=200, description="The most characters of the transcript to return.")
        ] = READ_CHARS,
        start: Annotated[
            int, Field(ge=0, description="Where to start in the transcript (to read on after a cut).")
        ] = 0,
    ) -> CallToolResult:
        """One turn's stripped transcript: the request, each tool call with its outcome, and the answers
        (reasoning left out), with the turn's summary and address. A long transcript is cut; the cut says where
        to start the next call."""
        return _result(lambda: history.read_turn(turn, max_chars, start))

    return server


def _refusal(problem: Exception) -> SessionMessage:
    """The JSON-RPC error for a line that is not a JSON-RPC message (the SDK drops such a line unanswered)."""
    unparsable = isinstance(problem, ValidationError) and any(e["type"] == "json_invalid" for e in problem.errors())
    error = (
        ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
        if unparsable
        else ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message")
    )
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


class _Tally:
    """stdout's stream, counting the answers sent (so the requests still open when stdin closes are answered
    before the server ends)."""

    def __init__(self, wire_out: WriteStream[SessionMessage]) -> None:
        self.wire_out = wire_out
        self.answered = 0
        self.sent = anyio.Event()

    async def send(self, item: SessionMessage, /) -> None:
        await self.wire_out.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError) and item.message.id is not None:
            self.answered += 1
            self.sent.set()
            self.sent = anyio.Event()

    async def aclose(self) -> None:
        await self.wire_out.aclose()

    async def __aenter__(self) -> _Tally:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


ANSWER_GRACE = 10.0
"""Seconds the requests still open when stdin closes have to be answered (a client that wrote its requests and
closed its end, as a pipe does, still reads the answers)."""


async def _answered(
    wire_in: ReadStream[SessionMessage | Exception],
    tally: _Tally,
    inbound: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    asked = 0
    async with inbound, wire_in:
        async for item in wire_in:
            if isinstance(item, Exception):
                await tally.wire_out.send(_refusal(item))
                continue
            asked += isinstance(item.message, JSONRPCRequest)
            await inbound.send(item)
        with anyio.move_on_after(ANSWER_GRACE):
            while tally.answered < asked:
                await tally.sent.wait()


STOP_GRACE = 0.3
"""Seconds a stop signal leaves the server to end by itself: a thread still blocked reading stdin cannot be
cancelled, so the process then exits (nothing is lost: the tools never write the workspace, and a write to the
cache an exit cuts short is rolled back by SQLite)."""


def _exit_after(seconds: float) -> None:
    def exit_now() -> None:
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(seconds, exit_now)
    timer.daemon = True
    timer.start()


def serve(history: History) -> None:
    """Serve ``history`` on stdin and stdout until stdin closes or a stop signal comes."""
    lowlevel = history_server(history)._lowlevel_server

    async def main() -> None:
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
                    async for _ in signals:
                        _exit_after(STOP_GRACE)
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            async with stdio_server() as (wire_in, wire_out):
                send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                tally = _Tally(wire_out)
                group.start_soon(_answered, wire_in, tally, send)
                await lowlevel.run(receive, tally, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        history.close()
