"""``turnmark mcp``: the workspace's history served to an assistant as MCP tools."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from turnmark.shell.cli.common import app, settings_of
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome

with lazy_imports():
    from turnmark.shell.usecases import history as history_service
    from turnmark.shell.usecases import mcp_server

MCP_HELP = """
An MCP server on stdin and stdout (JSON-RPC, one message per line) for an
assistant to read this workspace's history: list_conversations, list_turns,
find_turns (the ranked search of `turnmark find`) and read_turn (a turn's
stripped transcript, as `turnmark transcript` shows it). Read-only: it writes
nothing in the workspace (its cache and search index live in turnmark's cache
folder, as for `find`), reads nothing but the workspace's conversations and
JP's user-local copies, and refuses any argument that is not a conversation
ID or a CONV:TURN address. Conversations changed while it runs are read again
on the next call. It stops when stdin closes, on SIGTERM and on Ctrl-C. Logs
go to stderr. Register it with JP ([providers.mcp.turnmark] in
.jp/config.toml) or another client: see docs/mcp.md.
"""


@app.command(epilog=MCP_HELP)
def mcp(
    ctx: typer.Context,
    max_chars: Annotated[
        int,
        typer.Option("--max-chars", min=2_000, metavar="N", help="The most characters of any tool's answer."),
    ] = 20_000,
) -> None:
    """Serve this workspace's turns to an assistant as MCP tools over stdio (read-only)."""
    settings = settings_of(ctx)
    workspace = settings.workspace_root()
    os.environ.setdefault("PYDANTIC_ERRORS_OMIT_URL", "1")
    history = history_service.History(
        workspace, settings.new_id, jobs=settings.jobs, limit=max_chars, note=lambda line: chrome(f"note: {line}")
    )
    mcp_server.serve(history)
