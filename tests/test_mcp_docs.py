"""docs/mcp.md's registration snippets, run: each command line starts a server that serves the tools it names."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

DOC = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"
TOOLS = ["list_conversations", "list_turns", "find_turns", "read_turn"]


def _block(language: str) -> str:
    [block] = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    return str(block)


def _served(command: str, arguments: list[str], cwd: Path) -> tuple[list[str], Any]:
    """The tools a server started as ``command arguments`` in ``cwd`` lists, and its answer to list_conversations
    (``command`` found on a PATH that holds this environment's ``turnmark``)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

    async def main() -> tuple[list[str], Any]:
        parameters = StdioServerParameters(command=command, args=arguments, cwd=cwd, env={**os.environ, "PATH": path})
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            return tools, (await session.call_tool("list_conversations", {})).structured_content

    return anyio.run(main)


def test_jp_s_configuration_names_the_server_and_every_tool(show_workspace: Path) -> None:
    config = tomllib.loads(_block("toml"))
    server = config["providers"]["mcp"]["turnmark"]
    assert server["type"] == "stdio"
    tools = config["conversation"]["tools"]
    assert sorted(tools) == sorted(TOOLS)
    assert {tool["source"] for tool in tools.values()} == {"mcp.turnmark"}
    served, listing = _served(server["command"], server["arguments"], show_workspace / ".jp")
    assert served == TOOLS
    assert listing["total"] == 2


def test_the_claude_code_line_runs_the_server(show_workspace: Path) -> None:
    [line] = [line for line in _block("sh").splitlines() if line.startswith("claude mcp add")]
    words = shlex.split(line)
    assert words[:4] == ["claude", "mcp", "add", "turnmark"]
    assert words[4] == "--"
    served, _ = _served(words[5], words[6:], show_workspace)
    assert served == TOOLS


def test_the_mcp_servers_file_runs_the_server(show_workspace: Path) -> None:
    server = json.loads(_block("json"))["mcpServers"]["turnmark"]
    served, _ = _served(server["command"], server["args"], show_workspace)
    assert served == TOOLS


def test_the_readme_s_registration_is_quoted_from_the_tested_snippets() -> None:
    """The README names the keys and the command inline: each is in a snippet the tests above run."""
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## For the assistant: `turnmark mcp`", 1)[1].split("\n## ", 1)[0]
    quoted = [span for span in re.findall(r"`([^`]+)`", section) if "=" in span or span.startswith(("[", "claude"))]
    assert len(quoted) >= 6
    tested = _block("toml") + _block("sh")
    for span in quoted:
        assert span in tested, span
