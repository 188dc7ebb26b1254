"""Writing results (stdout) and chrome (stderr): progress, diagnostics, warnings, errors.

One rule for everything turnmark prints. Every text line passes ``visible`` and every JSON document
``json_escaped``, so nothing read from a conversation or a model acts on the terminal, and a name or
argument that is not UTF-8 shows its bytes escaped (``\\xff`` in text, ``\\udcff`` in JSON), never
raw. What the stream's encoding cannot hold (an ASCII pipe) is escaped too: ``\\u{e9}`` in text,
``\\u00e9`` in JSON. No line shows an API key this process has read.
"""

import codecs
import json
import sys
from collections.abc import Iterable
from typing import Any, TextIO

import typer

from turnmark.core.text.terminal import escaped, json_escaped, visible, visible_styled
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.secrets import redacted

with lazy_imports():
    from turnmark.core.text import indented_json

TEXT_ERRORS = "turnmark-text"
JSON_ERRORS = "turnmark-json"


def _unencodable(error: UnicodeError, escape: Any) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return escape(error.object[error.start : error.end]), error.end


codecs.register_error(TEXT_ERRORS, lambda error: _unencodable(error, escaped))
codecs.register_error(JSON_ERRORS, lambda error: _unencodable(error, lambda text: json.dumps(text)[1:-1]))


def _write(stream: TextIO, text: str, errors: str) -> None:
    """``text`` on ``stream``, with what its encoding cannot hold escaped by ``errors``."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    if codecs.lookup(encoding).name != "utf-8":
        text = text.encode(encoding, errors).decode(encoding)
    stream.write(text)


def emit_json(value: Any, stream: TextIO | None = None) -> None:
    """A ``--format json`` result: one pretty JSON document on stdout (or ``stream``)."""
    document = json_shown(indented_json.indented(value))
    _write(stream or sys.stdout, document + "\n", JSON_ERRORS)


def json_shown(chunk: str) -> str:
    """A piece of a JSON document as ``emit_json`` writes the whole: escaped, keys redacted (a key never spans
    two pieces, each being whole JSON values or punctuation)."""
    return redacted(json_escaped(chunk))


def write_json_prepared(chunks: Iterable[str], stream: TextIO | None = None) -> None:
    """A JSON document made in pieces already ``json_shown``, on stdout (or ``stream``), ending in a line feed."""
    target = stream or sys.stdout
    for chunk in chunks:
        _write(target, chunk, JSON_ERRORS)
    _write(target, "\n", JSON_ERRORS)


def json_line(value: Any) -> None:
    """One JSON object on one line of stdout (a stream of events, such as ``watch --format json``)."""
    _write(sys.stdout, json_shown(json.dumps(value, ensure_ascii=False)) + "\n", JSON_ERRORS)


def emit_line(text: str = "") -> None:
    _write(sys.stdout, visible(redacted(text)) + "\n", TEXT_ERRORS)


def shown(text: str) -> str:
    """``text`` as every line turnmark prints shows it: controls made visible, kept keys redacted."""
    return visible(redacted(text))


def styled(text: str) -> str:
    """Text turnmark styled for a terminal: its colour codes (SGR) kept, every other control made visible."""
    return visible_styled(redacted(text))


def write_prepared(text: str) -> None:
    """Text already made safe for a terminal (``styled``) on stdout, as its encoding allows."""
    _write(sys.stdout, text, TEXT_ERRORS)


def write_text(stream: TextIO, text: str) -> None:
    """Text as it streams (a model's answer), made visible like every other line."""
    _write(stream, visible(text), TEXT_ERRORS)


def chrome(text: str, stream: TextIO | None = None) -> None:
    """A line on the chrome channel (stderr): notes, legends, warnings."""
    _write(stream or sys.stderr, visible(redacted(text)) + "\n", TEXT_ERRORS)


def note(line: str) -> None:
    """``note: line`` on the chrome channel."""
    chrome(f"note: {line}")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the exit to raise."""
    chrome(f"error: {message}")
    return typer.Exit(code)
