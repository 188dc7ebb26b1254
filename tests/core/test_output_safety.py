"""Nothing raw reaches a terminal, and no key reaches any output: the pure functions behind the boundary."""

from __future__ import annotations

import base64
import json
import os
import random
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.streams import load
from turnmark.core.links.check import check_report
from turnmark.core.text import terminal
from turnmark.core.text.redaction import MASK, key_runs, redact
from turnmark.core.text.terminal import json_escaped, not_utf8, visible
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.errors import ModelError
from turnmark.shell.secrets import keep_secret

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\r\x08\x7f\x9b31m\x85\u202e\u2066\u2069\x00"


def test_every_control_and_bidi_character_is_shown_escaped() -> None:
    shown = visible("title " + ESCAPES + " end\n\tnext")
    assert shown == (
        "title \\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{d}\\u{8}\\u{7f}\\u{9b}31m\\u{85}\\u{202e}\\u{2066}\\u{2069}\\u{0}"
        " end\n\tnext"
    )
    assert not any(ord(char) < 32 and char not in "\n\t" for char in shown)


def test_json_output_escapes_c1_and_bidi_and_still_round_trips() -> None:
    document = json_escaped(json.dumps({"t": ESCAPES}, ensure_ascii=False))
    assert not any(
        "\x7f" <= char <= "\x9f" or "\u202a" <= char <= "\u202e" or "\u2066" <= char <= "\u2069" for char in document
    )
    assert json.loads(document) == {"t": ESCAPES}


def test_plain_text_and_unicode_are_left_alone() -> None:
    text = "Add retry backoff — ünïcode, emoji 👩‍💻, Arabic مرحبا"
    assert visible(text) == text
    assert json_escaped(json.dumps(text, ensure_ascii=False)) == json.dumps(text, ensure_ascii=False)


def _samples() -> list[str]:
    """Every character of the first 0x3000 and the bidi and surrogate ranges alone, inside ASCII text, and
    random mixes of ASCII with a few odd characters."""
    singles = [chr(code) for code in (*range(0x3000), *range(0xD800, 0xE000, 37))]
    rng = random.Random(97)
    alphabet = string.printable + "\x00\x07\x1b\x7f\x85\x9b\u202e\u2066é👩\udcff"
    mixes = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300))) for _ in range(500)]
    return [*singles, *(f"plain {char} text" for char in singles), *mixes, base64.b64encode(os.urandom(900)).decode()]


def test_the_shortcuts_for_safe_ascii_agree_with_the_long_way() -> None:
    for text in _samples():
        assert visible(text) == terminal._UNSAFE.sub(lambda match: terminal._shown(match.group()), text), repr(text)
        expected = terminal._UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
        assert json_escaped(text) == expected, repr(text)


NOT_UTF8 = os.fsdecode(b"17800000010-\xff\xfe")
"""A folder name with bytes that are not UTF-8, as Python holds it (``\\udcff\\udcfe``)."""


def test_bytes_that_are_not_utf8_are_shown_as_the_bytes() -> None:
    assert visible(NOT_UTF8) == "17800000010-\\xff\\xfe"
    assert visible("lone \ud800 surrogate") == "lone \\u{d800} surrogate"
    visible(NOT_UTF8 + "\ud800").encode("ascii")


def test_json_output_writes_bytes_that_are_not_utf8_as_escapes_that_give_the_name_back() -> None:
    document = json_escaped(json.dumps({"dirname": NOT_UTF8, "title": "ünïcode"}, ensure_ascii=False))
    assert '"17800000010-\\udcff\\udcfe"' in document
    document.encode("utf-8")
    assert os.fsencode(json.loads(document)["dirname"]) == b"17800000010-\xff\xfe"


def test_not_utf8_names_the_bytes_that_are_not() -> None:
    assert not_utf8(f"bad {NOT_UTF8}") == "\\xff\\xfe"
    assert not_utf8("Add retry backoff — ünïcode 👩‍💻") == ""


KEY = "sk-ant-" + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=40))


def leaks(text: str, key: str = KEY) -> list[str]:
    """Every 8-character run of the key, reversed or base64-encoded, found in ``text``."""
    forms = [key, key[::-1]]
    for offset in range(3):
        encoded = base64.b64encode(key.encode()[offset:]).decode()[:-4]
        forms += [encoded, encoded.replace("+", "-").replace("/", "_")]
    return [form[i : i + 8] for form in forms for i in range(len(form) - 7) if form[i : i + 8] in text]


@pytest.mark.parametrize("offset", range(280, 320))
def test_a_key_across_the_cut_is_redacted_at_every_offset(offset: int) -> None:
    body = "x" * offset + KEY + " trailing"
    shown = redact(body, key_runs([KEY]))[:300]
    assert not leaks(shown)


@pytest.mark.parametrize(
    "body",
    [
        json.dumps({"error": {"message": f"invalid x-api-key {KEY}"}}),
        KEY[::-1],
        base64.b64encode(f"Bearer {KEY}".encode()).decode(),
        base64.urlsafe_b64encode(f"k={KEY}".encode()).decode(),
        base64.b64encode(f"ab{KEY}".encode()).decode(),
        "prefix only: " + KEY[:12],
        "suffix only: " + KEY[-9:],
    ],
)
def test_every_form_of_the_key_is_redacted(body: str) -> None:
    shown = redact(body, key_runs([KEY]))
    assert not leaks(shown)
    assert MASK in shown


def test_text_without_the_key_is_unchanged() -> None:
    text = "anthropic answered HTTP 401: authentication_error"
    assert redact(text, key_runs([KEY])) == text


def test_a_model_error_redacts_before_it_is_made_one_line_and_cut() -> None:
    keep_secret(KEY)
    spread = "y" * 390 + KEY[:4] + "\x00" + KEY[4:]
    message = str(ModelError(spread))
    assert not leaks(message)
    assert len(message) <= 400


def test_check_warns_about_ids_not_in_rfd_097_form() -> None:
    stream = load(
        [
            {
                "event_id": "AB CD\u001b]0;x\u0007",
                "type": "chat_request",
                "timestamp": "2025-01-01T00:00:00Z",
                "content": "hi",
            },
            {
                "event_id": "m000001",
                "request_id": "AB CD\u001b]0;x\u0007",
                "type": "chat_response",
                "timestamp": "2025-01-01T00:00:01Z",
                "message": "hello",
            },
        ]
    )
    report = check_report(stream)
    assert [(item["index"], item["key"]) for item in report.malformed_ids] == [(0, "event_id"), (1, "request_id")]
    assert report.ok


def test_check_shows_an_off_format_id_escaped_with_status_warnings(workspace: Path) -> None:
    directory = next((workspace / ".jp" / "conversations").glob("17800000010*"))
    events = json.loads((directory / "events.json").read_text())
    hostile = "AB CD\u001b]0;x\u0007\u202e"
    events[2]["event_id"] = hostile
    (directory / "events.json").write_text(json.dumps(events, indent=2))
    result = CliRunner().invoke(app, ["--workspace", str(workspace), "check", "17800000010"], obj=Settings())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("jp-c17800000010  WARNINGS")
    assert "is not in the form turnmark and JP write" in result.stdout
    assert "\x1b" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "\\u{202e}" in result.stdout
