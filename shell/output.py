"""Writing results (stdout) and chrome (stderr): progress, diagnostics, warnings, errors.

Every text line passes ``visible`` and every JSON document ``json_escaped``, so
nothing read from a conversation or a model acts on the terminal; and no line
shows an API key this process has read.
"""

import json
import os
import sys
from typing import Any, TextIO

import typer

from turnmark.core.text.terminal import json_escaped, visible
from turnmark.shell.secrets import redacted


def emit_json(value: Any, stream: TextIO | None = None) -> None:
    """A ``--format json`` result: one pretty JSON document on stdout (or ``stream``)."""
    (stream or sys.stdout).write(redacted(json_escaped(json.dumps(value, ensure_ascii=False, indent=2))) + "\n")


def json_line(value: Any) -> None:
    """One JSON object on one line of stdout (a stream of events, such as ``watch --format json``)."""
    sys.stdout.write(redacted(json_escaped(json.dumps(value, ensure_ascii=False))) + "\n")


def emit_line(text: str = "") -> None:
    sys.stdout.write(visible(redacted(text)) + "\n")


def styled() -> bool:
    """Whether stdout is a terminal that may show bold (``NO_COLOR`` unset)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def emit_visible_line(text: str) -> None:
    """A line already made visible (``Snippet.render``), whose only escapes are turnmark's own bold."""
    sys.stdout.write(redacted(text) + "\n")


def write_text(stream: TextIO, text: str) -> None:
    """Text as it streams (a model's answer), made visible like every other line."""
    stream.write(visible(text))


def chrome(text: str, stream: TextIO | None = None) -> None:
    """A line on the chrome channel (stderr): notes, legends, warnings."""
    (stream or sys.stderr).write(visible(redacted(text)) + "\n")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the exit to raise."""
    chrome(f"error: {message}")
    return typer.Exit(code)
