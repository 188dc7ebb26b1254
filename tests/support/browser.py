"""Headless Chromium driven through the DevTools protocol over a pipe (no websocket library needed).

``Browser`` starts Debian's ``chromium`` with ``--remote-debugging-pipe`` (commands on fd 3, answers
and events on fd 4, each message ending in a NUL byte), opens one page, records every console
message, log entry and network request, and can evaluate JavaScript and take a screenshot. Every
request is sent through a loopback proxy that only counts what reaches it, and host names resolve
to nothing, so a page that tried to fetch anything is seen and cannot reach anywhere.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
INSTALL_HINT = "headless Chromium is needed: `just browser` (apt-get install chromium)"


class RefusingProxy:
    """A loopback TCP listener standing in as the browser's proxy: it records each request line and closes."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.asked: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.socket.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    first = connection.recv(4096).split(b"\r\n", 1)[0]
                except OSError:
                    first = b"?"
                self.asked.append(first.decode("latin-1"))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.socket.close()


PIPE_ENDS_AT_3_AND_4 = """
import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]
os.dup2(ends[0], 3)
os.dup2(ends[1], 4)
os.execv(sys.argv[3], sys.argv[3:])
"""
"""Run in the child before Chromium: the pipe ends where ``--remote-debugging-pipe`` expects them (moved
above 10 first, so neither overwrites the other); no ``preexec_fn``, which is unsafe beside threads."""


class Browser:
    """One headless Chromium with one page; ``events`` holds every protocol event seen so far."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900) -> None:
        assert CHROMIUM is not None, INSTALL_HINT
        self.proxy = RefusingProxy()
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                PIPE_ENDS_AT_3_AND_4,
                str(commands_read),
                str(answers_write),
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-features=Translate,MediaRouter,OptimizationHints",
                "--hide-scrollbars",
                f"--window-size={width},{height}",
                f"--user-data-dir={profile}",
                f"--proxy-server=http://{self.proxy.address}",
                "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(commands_read, answers_write),
        )
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = self._attach()

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._answers, 65536)
            if not chunk:
                said = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"chromium exited: {said}")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> dict[str, Any]:
        """Send a command (to the page unless ``browser``) and wait for its result; events are kept."""
        sent = self._send(method, params, None if browser else self.session)
        deadline = time.monotonic() + 30
        while True:
            message = self._message(deadline)
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """The first event ``method`` (already seen or still to come)."""
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + timeout
        while True:
            message = self._message(deadline)
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message

    def _attach(self) -> str:
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        session: str = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)[
            "sessionId"
        ]
        self.session = session
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        return session

    def open(self, url: str) -> None:
        """Navigate and wait until the page has loaded."""
        self.events = [event for event in self.events if event["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(answer["exceptionDetails"])
        return answer["result"].get("value")

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def settle(self, seconds: float = 0.5) -> None:
        """Collect the events that arrive within ``seconds`` (late console messages, requests)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.evaluate("1")
            time.sleep(0.05)

    def console_problems(self) -> list[str]:
        """Console messages and log entries of level warning or error, one line each."""
        problems = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                problems.append(f"console.{params['type']}: {params.get('args')}")
            elif event["method"] == "Runtime.exceptionThrown":
                problems.append(f"exception: {params.get('exceptionDetails')}")
            elif event["method"] == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                problems.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        return problems

    def requests(self) -> list[str]:
        """Every URL the page asked for, the page itself included."""
        return [
            event["params"]["request"]["url"] for event in self.events if event["method"] == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._commands)
            os.close(self._answers)
            self.proxy.close()


CHROMIUM_SERVICES = (".google.com", ".googleapis.com", ".gvt1.com", ".gstatic.com")
"""Where Chromium itself calls home (time, component updates, accounts) even with background networking off."""


def foreign_requests(asked: list[str]) -> list[str]:
    """The proxy's request lines that Chromium's own services do not explain: what a page asked for."""
    found = []
    for line in asked:
        target = line.split(" ")[1] if line.count(" ") >= 2 else line
        host = target.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        if not host.endswith(CHROMIUM_SERVICES):
            found.append(line)
    return found


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows (RGB or RGBA bytes) of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, b"", b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks += body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0), "only 8-bit, non-interlaced"
    assert colour in (2, 6), "only RGB or RGBA"
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * step
    rows: list[bytes] = []
    previous = bytearray(stride)
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for index in range(stride):
            left = line[index - step] if index >= step else 0
            up = previous[index]
            corner = previous[index - step] if index >= step else 0
            if kind == 1:
                line[index] = (line[index] + left) & 0xFF
            elif kind == 2:
                line[index] = (line[index] + up) & 0xFF
            elif kind == 3:
                line[index] = (line[index] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[index] = (line[index] + nearest[2]) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def grey_levels(data: bytes) -> list[int]:
    """The grey level of every 4th pixel of every 4th row of a PNG (enough to tell a blank page)."""
    width, _, rows = png_pixels(data)
    step = len(rows[0]) // width
    return [sum(row[x * step : x * step + 3]) // 3 for row in rows[::4] for x in range(0, width, 4)]
