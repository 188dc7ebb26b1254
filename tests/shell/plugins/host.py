"""A test host that speaks JP's command plugin protocol (version 1) as ``jp`` does, and checks every message.

It spawns an installed plugin executable (``jp-turns`` beside ``sys.executable``) with stdin, stdout and
stderr piped in a new process group, sends ``describe`` or ``init``, answers ``list_conversations``,
``read_events`` and ``read_config``, sends ``shutdown`` where ``jp`` would relay a Ctrl-C, and kills the
group 5 s after a shutdown (the run then fails). Every line on the plugin's stdout must be one JSON message
of the reference's table with exactly its fields and their types; a run ends with exactly one ``exit`` and
nothing after it (a ``describe`` run with the one answer). Anything else fails the test, naming the line.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.reliability.processes import isolated_env

BIN = Path(sys.executable).parent
GRACE = 5.0
"""How long ``jp`` waits after ``shutdown`` before it kills the plugin."""
HANG_GUARD = 120.0

Fields = Mapping[str, tuple[type, ...]]
FROM_PLUGIN: dict[str, tuple[Fields, Fields]] = {
    "ready": ({}, {}),
    "list_conversations": ({}, {"id": (str,)}),
    "read_events": ({"conversation": (str,)}, {"id": (str,)}),
    "read_config": ({}, {"id": (str,), "path": (str,)}),
    "print": ({"text": (str,)}, {"channel": (str,), "format": (str,), "language": (str,)}),
    "log": ({"level": (str,), "message": (str,)}, {"fields": (dict,)}),
    "describe": (
        {"name": (str,), "version": (str,), "description": (str,)},
        {"command": (list,), "author": (str,), "help": (str,), "repository": (str,)},
    ),
    "exit": ({"code": (int,)}, {"reason": (str,)}),
}
"""The reference's table of messages from the plugin: required fields, optional fields, with their JSON types."""
LOG_LEVELS = {"trace", "debug", "info", "warn", "error"}


def check_message(line: bytes) -> dict[str, Any]:
    """The message on one stdout line; an ``AssertionError`` naming the line when it is not one of the table."""
    shown = line[:300].decode("utf-8", "replace")
    try:
        message = json.loads(line)
    except ValueError:
        raise AssertionError(f"not JSON on the plugin's stdout: {shown!r}") from None
    assert isinstance(message, dict), f"not a JSON object: {shown!r}"
    kind = message.get("type")
    assert kind in FROM_PLUGIN, f"unknown message type {kind!r}: {shown!r}"
    required, optional = FROM_PLUGIN[kind]
    for name, value in message.items():
        if name == "type":
            continue
        types = required.get(name) or optional.get(name)
        assert types is not None, f"unknown field {name!r} in {kind}: {shown!r}"
        assert isinstance(value, types), f"{kind}.{name} of the wrong type: {shown!r}"
        assert not isinstance(value, bool), f"{kind}.{name} of the wrong type: {shown!r}"
    missing = set(required) - set(message)
    assert not missing, f"{kind} without {sorted(missing)}: {shown!r}"
    if kind == "exit":
        assert 0 <= message["code"] <= 255, f"exit code out of range: {shown!r}"
        assert "\n" not in message.get("reason", ""), f"a reason of more than one line: {shown!r}"
    if kind == "log":
        assert message["level"] in LOG_LEVELS, f"unknown log level: {shown!r}"
    if kind == "describe":
        assert "\n" not in message["description"], f"a description of more than one line: {shown!r}"
        assert all(isinstance(part, str) for part in message.get("command", [])), shown
    if kind == "print":
        assert "\x1b" not in message["text"], f"a terminal escape in print: {shown!r}"
    return message


@dataclass
class Run:
    """What a plugin sent, in order, and how its process ended."""

    messages: list[dict[str, Any]]
    stderr: str
    returncode: int
    shutdown_sent: bool = False
    requests_answered: int = 0

    @property
    def exit(self) -> dict[str, Any]:
        return self.messages[-1]

    @property
    def printed(self) -> str:
        return "".join(message["text"] for message in self.messages if message["type"] == "print")

    def logged(self, level: str | None = None) -> list[str]:
        return [m["message"] for m in self.messages if m["type"] == "log" and level in (None, m["level"])]


def init_message(
    root: Path,
    args: list[str],
    *,
    config: Mapping[str, Any] | None = None,
    user_workspace: Path | None = None,
    user_data: Path | None = None,
    version: int = 1,
) -> dict[str, Any]:
    """An ``init`` as ``jp`` sends it for ``jp <name> ARGS`` in the workspace ``root``."""
    paths = {"user_config": str(root / "no-user-config")}
    if user_data is not None:
        paths["user_data"] = str(user_data)
    if user_workspace is not None:
        paths["user_workspace"] = str(user_workspace)
    return {
        "type": "init",
        "version": version,
        "workspace": {"root": str(root), "storage": str(root / ".jp"), "id": "t3st1"},
        "paths": paths,
        "config": dict(config or {}),
        "args": args,
        "log_level": 1,
    }


@dataclass
class Host:
    """One plugin run, as ``jp`` drives it."""

    plugin: str
    env: dict[str, str]
    cwd: Path | None = None
    workspace: Path | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> Run:
        return self._run({"type": "describe"}, describe=True)

    def init(self, message: dict[str, Any], shutdown_when: Callable[[list[dict[str, Any]]], bool] | None = None) -> Run:
        """Send ``message`` (an ``init``); ``shutdown`` when ``shutdown_when`` (asked after every message and
        every 20 ms) first says so, as ``jp`` relays a Ctrl-C."""
        self.config = message.get("config", {})
        return self._run(message, describe=False, shutdown_when=shutdown_when)

    def _run(
        self,
        first: dict[str, Any],
        describe: bool,
        shutdown_when: Callable[[list[dict[str, Any]]], bool] | None = None,
    ) -> Run:
        process = subprocess.Popen(
            [str(BIN / f"jp-{self.plugin}")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            process_group=0,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
        stderr: list[bytes] = []
        errors = process.stderr
        drain = threading.Thread(target=lambda: stderr.append(errors.read()), daemon=True)
        drain.start()
        self._send(process, first)
        if describe:
            process.stdin.close()
        run = Run([], "", 0)
        shutdown_at: float | None = None
        started = time.monotonic()
        while True:
            if shutdown_when is not None and shutdown_at is None and shutdown_when(run.messages):
                self._send(process, {"type": "shutdown"})
                run.shutdown_sent, shutdown_at = True, time.monotonic()
            try:
                line = lines.get(timeout=0.02)
            except queue.Empty:
                waited = time.monotonic() - (shutdown_at if shutdown_at is not None else started)
                if waited > (GRACE if shutdown_at is not None else HANG_GUARD):
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    raise AssertionError(
                        f"jp-{self.plugin} killed: no exit {waited:.0f} s after {run.messages[-3:]}"
                    ) from None
                continue
            if line is None:
                break
            if not line.strip():
                continue
            message = check_message(line)
            assert not run.messages or run.messages[-1]["type"] not in ("exit", "describe"), (
                f"a message after {run.messages[-1]['type']}: {message}"
            )
            run.messages.append(message)
            if describe:
                assert message["type"] == "describe", f"the answer to describe is {message}"
            else:
                assert run.messages[0]["type"] in ("ready", "exit"), f"the first message is {run.messages[0]}"
            run.requests_answered += self._answer(process, message)
        process.wait(timeout=GRACE)
        run.returncode = process.returncode
        drain.join(GRACE)
        run.stderr = b"".join(stderr).decode("utf-8", "replace")
        assert run.messages, f"jp-{self.plugin} sent nothing; stderr: {run.stderr[-2000:]}"
        expected = "describe" if describe else "exit"
        assert run.messages[-1]["type"] == expected, f"the run did not end with {expected}: {run.messages[-3:]}"
        assert sum(m["type"] == "exit" for m in run.messages) == (0 if describe else 1)
        assert run.returncode >= 0, f"jp-{self.plugin} ended by signal {-run.returncode}: {run.stderr[-2000:]}"
        assert "Traceback" not in run.stderr, run.stderr[-2000:]
        assert "Fatal Python error" not in run.stderr, run.stderr[-2000:]
        return run

    @staticmethod
    def _send(process: subprocess.Popen[bytes], message: Mapping[str, Any]) -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass

    def _answer(self, process: subprocess.Popen[bytes], message: dict[str, Any]) -> int:
        """Answer a request as ``jp`` would; 1 when one was answered."""
        kind, ident = message["type"], message.get("id")
        answer: dict[str, Any]
        if kind == "list_conversations":
            answer = {"type": "conversations", "data": _summaries(self.workspace)}
        elif kind == "read_events":
            folder = next(_folders(self.workspace, message["conversation"]), None)
            if folder is None:
                answer = {"type": "error", "request": kind, "message": "conversation not found"}
            else:
                events = json.loads((folder / "events.json").read_bytes())
                answer = {"type": "events", "conversation": message["conversation"], "data": events}
        elif kind == "read_config":
            answer = {"type": "config", "data": self.config}
            if "path" in message:
                answer["path"] = message["path"]
        else:
            return 0
        if ident is not None:
            answer["id"] = ident
        self._send(process, answer)
        return 1


def _pump(stream: Any, lines: queue.Queue[bytes | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _folders(workspace: Path | None, conversation: str | None = None) -> Any:
    root = (workspace or Path.cwd()) / ".jp" / "conversations"
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and not folder.name.startswith(".") and conversation in (None, folder.name.split("-")[0]):
            yield folder


def _summaries(workspace: Path | None) -> list[dict[str, Any]]:
    found = []
    for folder in _folders(workspace):
        metadata = json.loads((folder / "metadata.json").read_text()) if (folder / "metadata.json").exists() else {}
        events = json.loads((folder / "events.json").read_bytes())
        found.append(
            {
                "id": folder.name.split("-")[0],
                "title": metadata.get("title"),
                "last_activated_at": metadata.get("last_activated_at", "2026-01-01T00:00:00Z"),
                "events_count": len(events) if isinstance(events, list) else 0,
            }
        )
    return found


def plugin_env(home: Path) -> dict[str, str]:
    """An isolated environment: JP's user data and config and turnmark's cache and state under ``home``."""
    return isolated_env(home)
