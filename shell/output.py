"""Writing results (stdout) and chrome (stderr): progress, diagnostics, warnings, errors."""

import json
import sys
from typing import Any

import typer


def emit_json(value: Any) -> None:
    """A ``--format json`` result: one pretty JSON document on stdout."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def emit_line(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def chrome(text: str) -> None:
    """A line on the chrome channel (stderr): notes, legends, warnings."""
    sys.stderr.write(text + "\n")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the exit to raise."""
    chrome(f"error: {message}")
    return typer.Exit(code)
