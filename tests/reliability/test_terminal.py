"""Terminal safety: every command, in text and in JSON, on a conversation carrying the escape set.

The escape set (escape sequences, the other C0 controls, DEL, the C1 controls and the bidi
controls) is put into the title, a request, a response, a tool name, tool arguments and output,
an ``event_id``, a ``request_id``, and a loopback model's streamed answer and summaries. No raw
character of the set may reach stdout or stderr; JSON output must still parse and give back the
original strings, and text output shows them visibly escaped (``\\u{1b}``).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_servers import Behaviour, ModelServer

from .hostile_cli import Outcome, Tally, invoke, strings

SEQUENCES = ("\x1b]0;pwned\x07", "\x1b[2J", "\x1b[31m", "\x1bP1;2|x\x1b\\", "\x1b]8;;http://127.0.0.1/\x1b\\")
C0 = "".join(chr(code) for code in range(0x20) if chr(code) not in "\t\n\x1b")
C1 = "".join(chr(code) for code in range(0x80, 0xA0))
BIDI = "".join(chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
ESCAPE_SET = "".join(SEQUENCES) + C0 + "\x7f" + C1 + BIDI
FORBIDDEN = frozenset(C0 + "\x1b\x7f" + C1 + BIDI)
"""Every character that may not reach a terminal raw (tab and newline may)."""

ARGUMENT_SET = ESCAPE_SET.replace("\x00", "")
"""The set as a command-line argument can carry it (no NUL)."""

CONVERSATION = "17800000010"
TITLE = "Backoff " + ESCAPE_SET
REQUEST = "Add backoff " + ESCAPE_SET
RESPONSE = "Added backoff " + ESCAPE_SET
TOOL_NAME = "fs_read" + ESCAPE_SET
ARGUMENT = "crates/" + ESCAPE_SET
ARGUMENT_KEY = "why" + ESCAPE_SET
TOOL_OUTPUT = "fn retry() " + ESCAPE_SET
EVENT_ID = "ab" + ESCAPE_SET
REQUEST_ID = "cd" + ESCAPE_SET
ANSWER = "Streamed " + ESCAPE_SET
SUMMARY = "Summary " + ESCAPE_SET
LABEL = "Mine " + ARGUMENT_SET
MODELS = {"ollama": "ollama/llama3.2:3b", "openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}
KEYS = {"OPENAI_API_KEY": "sk-terminal-probe", "ANTHROPIC_API_KEY": "sk-ant-terminal-probe"}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def make_hostile(workspace: Path) -> None:
    """Put the escape set into every field of the conversation that a command shows."""
    folder = next((workspace / ".jp" / "conversations").glob(f"{CONVERSATION}-*"))
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata["title"] = TITLE
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    events = json.loads((folder / "events.json").read_text())
    by_id = {entry["event_id"]: entry for entry in events}
    by_id["r1a2b3c"]["content"] = REQUEST
    by_id["e1r2t3y"]["message"] = RESPONSE
    by_id["t1y2u3i"]["name"] = TOOL_NAME
    by_id["t1y2u3i"]["arguments"] = {"path": _b64(ARGUMENT), ARGUMENT_KEY: _b64("v")}
    by_id["o4p5a6s"]["content"] = _b64(TOOL_OUTPUT)
    by_id["a7s8d9f"]["event_id"] = EVENT_ID
    by_id["g1h2j3k"]["request_id"] = EVENT_ID
    by_id["q7w8e9r"]["request_id"] = REQUEST_ID
    (folder / "events.json").write_text(json.dumps(events, indent=2) + "\n")


def _answer(body: dict[str, Any]) -> str:
    """Hostile summaries for a summary request, a hostile chat answer otherwise."""
    schema = (
        body.get("format")
        or body.get("response_format", {}).get("json_schema", {}).get("schema")
        or body.get("output_config", {}).get("format", {}).get("schema")
    )
    if not schema:
        return ANSWER
    return json.dumps({"summaries": dict.fromkeys(schema["properties"]["summaries"]["required"], SUMMARY)})


COMMANDS: dict[str, tuple[str, ...]] = {
    "conversations": ("conversations",),
    "turns": ("turns", CONVERSATION),
    "check": ("check", CONVERSATION),
    "check-all": ("check", "--all"),
    "transcript": ("transcript", CONVERSATION),
    "project": ("project", CONVERSATION),
    "show": ("show", CONVERSATION, "--reasoning", "--tools", "full"),
    "project-ollama": ("project", CONVERSATION, "--provider", "ollama"),
    "project-openai": ("project", CONVERSATION, "--provider", "openai"),
    "project-anthropic": ("project", CONVERSATION, "--provider", "anthropic"),
    "summarize-dry-run": ("summarize", CONVERSATION, "--dry-run"),
    "summarize": ("summarize", CONVERSATION, "--model", "builtin/extractive"),
    "summarize-model": ("summarize", CONVERSATION, "--model", MODELS["ollama"]),
    "label": ("label", CONVERSATION, "0", LABEL),
    "query-ollama": ("query", CONVERSATION, "go on", "--model", MODELS["ollama"]),
    "query-openai": ("query", CONVERSATION, "go on", "--model", MODELS["openai"]),
    "query-anthropic": ("query", CONVERSATION, "go on", "--model", MODELS["anthropic"]),
    "watch-once": ("watch", "--once"),
}
ROUND_TRIP: dict[str, tuple[str, ...]] = {
    "conversations": (TITLE,),
    "turns": (TITLE,),
    "check": (TITLE,),
    "check-all": (TITLE,),
    "transcript": (TITLE,),
    "project": (TITLE, REQUEST, RESPONSE, TOOL_NAME, ARGUMENT, ARGUMENT_KEY, EVENT_ID),
    "show": (TITLE, REQUEST, RESPONSE, TOOL_NAME, ARGUMENT, ARGUMENT_KEY, TOOL_OUTPUT, EVENT_ID),
    "project-ollama": (REQUEST, RESPONSE, TOOL_NAME, ARGUMENT, ARGUMENT_KEY),
    "project-openai": (REQUEST, RESPONSE, TOOL_NAME, ARGUMENT, ARGUMENT_KEY),
    "project-anthropic": (REQUEST, RESPONSE, TOOL_NAME, ARGUMENT, ARGUMENT_KEY),
}
"""Strings each JSON output holds (as a value, a key, or inside one) and must give back unchanged."""
NOT_JSON = {"label", "query-ollama", "query-openai", "query-anthropic", "watch-once"}
"""Commands with no JSON shape: ``query`` streams the answer, ``label`` prints the stored line, ``watch`` logs."""
VISIBLE = ("conversations", "turns", "project", "show")
"""Text outputs that show the title or an ID: the escape must be visible there."""


def forbidden(text: str) -> list[str]:
    """The forbidden characters in ``text``, each with a little context."""
    found = []
    for index, character in enumerate(text):
        if character in FORBIDDEN:
            found.append(f"U+{ord(character):04X} at {index} in {text[max(0, index - 20) : index + 5]!r}")
    return found


def output_problems(outcome: Outcome) -> list[str]:
    problems = []
    if (trace := outcome.traceback()) is not None:
        problems.append(f"traceback:\n{trace}")
    if outcome.code not in (0, 1, 2):
        problems.append(f"exit status {outcome.code}")
    for channel, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(f"{channel} is not UTF-8: {error}")
            text = data.decode("utf-8", "replace")
        found = forbidden(text)
        if found:
            shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
            problems.append(f"{channel}: {len(found)} raw control characters: {shown}")
    return problems


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "terminal: the escape set (ESC sequences, C0, DEL, C1, bidi) in a title, request, response, tool name and "
        "arguments, IDs, and a model's streamed answer and summaries",
        "no raw ESC, C0 (but tab and newline), DEL, C1 or bidi character on stdout or stderr, no traceback; "
        "JSON parses and gives back the original strings",
    )
    yield tally
    tally.publish(f"{tally.runs} command runs: {len(COMMANDS)} commands x text and JSON, and a real `query` process")


def _config(server: ModelServer) -> tuple[str, ...]:
    return tuple(
        part
        for provider in ("ollama", "openai", "anthropic")
        for part in ("--cfg", f"providers.llm.{provider}.base_url={server.url}")
    )


@pytest.mark.parametrize("output", ["text", "json"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_nothing_raw_reaches_the_terminal(
    name: str, output: str, workspace: Path, server: ModelServer, tally: Tally
) -> None:
    make_hostile(workspace)
    server.queue.clear()
    server.queue.extend([Behaviour(content=_answer)] * 8)
    outcome = invoke(workspace, *_config(server), "--format", output, *COMMANDS[name], environ=KEYS)
    tally.runs += 1
    problems = output_problems(outcome)
    if output == "json" and name not in NOT_JSON:
        try:
            document = json.loads(outcome.stdout)
        except ValueError as error:
            problems.append(f"stdout is not JSON: {error}")
        else:
            found = list(strings(document))
            for expected in ROUND_TRIP.get(name, ()):
                if not any(expected in text for text in found):
                    problems.append(f"JSON does not give back {expected[:12]!r}…")
    if output == "text" and name in VISIBLE and "\\u{1b}" not in outcome.out + outcome.err:
        problems.append("the escape is not shown visibly (as \\u{1b}) in the text output")
    tally.case(f"{name}/{output}", problems)
    assert not problems, "\n".join([*problems, outcome.describe()])


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_real_query_process_streams_nothing_raw(
    output: str, workspace: Path, user_data: Path, server: ModelServer, tally: Tally
) -> None:
    """The streamed answer as a real process writes it to its own stdout."""
    make_hostile(workspace)
    server.queue.clear()
    server.queue.extend([Behaviour(content=_answer)] * 8)
    command = [
        sys.executable,
        "-c",
        "from turnmark.shell.cli.main import main; main()",
        "--workspace",
        str(workspace),
        *_config(server),
        "--format",
        output,
        "query",
        CONVERSATION,
        "go on " + ARGUMENT_SET,
        "--model",
        MODELS["ollama"],
    ]
    environ = {
        key: value for key, value in os.environ.items() if key in ("PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL")
    }
    environ |= {"JP_USER_DATA_DIR": str(user_data), "NO_COLOR": "1", "LC_ALL": "C.UTF-8"}
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, env=environ, timeout=60, check=False)
    tally.runs += 1
    outcome = Outcome(tuple(command[3:]), done.returncode, done.stdout, done.stderr, None)
    problems = output_problems(outcome)
    if ANSWER[:8] not in outcome.out:
        problems.append("the streamed answer did not reach stdout")
    tally.case(f"query-process/{output}", problems)
    assert not problems, "\n".join([*problems, outcome.describe(), f"{time.monotonic() - started:.1f}s"])
