"""What the hostile probes share: the CLI run in-process, its outcome, a tally published as figures, and the
strings of a JSON output."""

from __future__ import annotations

import contextlib
import json
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import typer.testing
from typer.main import get_command
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.settings import HttpSettings

from .figures import record

ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1"}
FAST = HttpSettings(connect_timeout=1.0, read_timeout=3.0, retries=1, backoff=0.001, backoff_cap=0.001)
FIXTURE_IDS = ("17790000000", "17800000010", "17800000030", "17800000040")


@dataclass(frozen=True)
class Outcome:
    """One command run: its arguments, exit status, raw output and any exception that escaped it."""

    args: tuple[str, ...]
    code: int
    stdout: bytes
    stderr: bytes
    exception: BaseException | None

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def traceback(self) -> str | None:
        """What a real run would have printed as a traceback, or ``None``."""
        if self.exception is not None and not isinstance(self.exception, SystemExit):
            return "".join(traceback.format_exception(self.exception))
        for text in (self.out, self.err):
            if "Traceback (most recent call last)" in text:
                return text
        return None

    def describe(self) -> str:
        return (
            f"turnmark {' '.join(map(repr, self.args))} -> exit {self.code}\nstdout: {self.out!r}\nstderr: {self.err!r}"
        )


_COMMAND = get_command(app)


@contextmanager
def _in_process() -> Iterator[None]:
    """Build the click command only once (typer rebuilds it on every ``invoke``)."""
    if not hasattr(typer.testing, "_get_command"):
        yield
        return
    with mock.patch.object(typer.testing, "_get_command", return_value=_COMMAND):
        yield


def invoke(
    workspace: Path,
    *args: str,
    environ: Mapping[str, str] | None = None,
    http: HttpSettings = FAST,
) -> Outcome:
    """Run ``turnmark --workspace WORKSPACE ARGS`` in this process (no ambient environment reaches it)."""
    settings = Settings(new_id=sequential_ids("h"), environ=dict(environ or {}), http=http)
    full = ("--workspace", str(workspace), *args)
    with _in_process():
        result = CliRunner().invoke(app, list(full), obj=settings, env=ENV)
    return Outcome(full, result.exit_code, result.stdout_bytes, result.stderr_bytes or b"", result.exception)


@dataclass
class Tally:
    """What one probe ran and found, published with ``record`` when its module is done."""

    probe: str
    must_show: str
    started: float = field(default_factory=time.monotonic)
    runs: int = 0
    cases: int = 0
    failed: list[str] = field(default_factory=list)

    def case(self, name: str, problems: list[str]) -> None:
        self.cases += 1
        if problems:
            self.failed.append(name)

    def publish(self, count: str) -> None:
        if self.failed:
            shown = ", ".join(self.failed[:8]) + (", ..." if len(self.failed) > 8 else "")
            result = f"FAILED: {len(self.failed)} of {self.cases} cases ({shown})"
        else:
            result = f"0 problems in {self.cases} cases"
        record(self.probe, count, result, self.must_show, self.started, setups=self.cases)


def strings(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value, keys included, and in JSON documents held as strings."""
    if isinstance(value, str):
        yield value
        if value.startswith(("{", "[")):
            with contextlib.suppress(ValueError):
                yield from strings(json.loads(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
