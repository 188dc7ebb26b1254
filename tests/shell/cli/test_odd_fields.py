"""Odd fields through the CLI (issue 39): the reading commands read a hand-edited conversation the way RFD
097/098 define, ``check`` says what is odd, writes keep the raw values they do not repair, the workspace cache
keys on every file a row comes from, and no hand edit makes a reading command refuse (exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tests.support.hand_edits import TS, Drawn, as_files, hand_edited, two_turns
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app

ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200", "NO_COLOR": "1", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
CONV = "17800000099"
READS = (
    ("conversations",),
    ("turns", CONV),
    ("check", CONV),
    ("check", "--all"),
    ("project", CONV),
    ("transcript", CONV),
    ("show", CONV),
    ("repair", CONV),
    ("summarize", CONV, "--dry-run", "--model", "builtin/extractive"),
)
"""Every command that reads a conversation without writing it."""


def write(root: Path, events: bytes, base_config: bytes | None) -> Path:
    folder = root / ".jp" / "conversations" / f"{CONV}-odd"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.json").write_bytes(events)
    if base_config is not None:
        (folder / "base_config.json").write_bytes(base_config)
    (folder / "metadata.json").write_text('{"title": "Odd", "last_activated_at": "2026-06-02 09:30:00.0"}\n')
    return folder


def workspace(root: Path, entries: list[dict[str, Any]], form: str) -> Path:
    write(root, *as_files(entries, form))
    return root


def tm(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--workspace", str(root), *args], obj=Settings(new_id=sequential_ids()), env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".jp").rglob("*")) if p.is_file()}


def odd(form: str) -> list[dict[str, Any]]:
    """Every odd field at once: a link on a turn_start and a request, a null, a number, an empty link, a
    number event_id."""
    entries = two_turns()
    entries[0]["request_id"] = "nowhere"
    entries[4]["request_id"] = "c1aaaaa"
    entries[2]["request_id"] = None
    entries[5]["request_id"] = 5
    entries[1]["event_id"] = 42
    entries.append(
        {"event_id": "m3ccccc", "request_id": "", "timestamp": TS.format(6), "type": "chat_response", "message": "?"}
    )
    return entries


@pytest.mark.parametrize("form", ["current", "legacy"])
def test_every_reading_command_reads_a_conversation_with_every_odd_field(form: str, tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", odd(form), form)
    before = files(root)
    for args in READS:
        for output in ("text", "json"):
            code, out, err = tm(root, "--format", output, *args)
            assert code in (0, 1), (args, output, code, err)
            if output == "json":
                json.loads(out)
    assert {k: v for k, v in files(root).items() if "/locks/" not in k} == before


@pytest.mark.parametrize("form", ["current", "legacy"])
def test_check_reports_what_is_odd_with_the_place_and_the_fix(
    form: str, tmp_path: Path, snapshot: SnapshotAssertion
) -> None:
    root = workspace(tmp_path / "ws", odd(form), form)
    code, out, _ = tm(root, "--format", "json", "check", CONV)
    assert code == 1
    (report,) = json.loads(out)["conversations"]
    assert report["links"]["linked"] == 2
    assert report["links"]["resolved"] == 0
    assert report["links"]["unresolved_by_reason"] == {"not_an_id": 2}
    assert [(item["key"], item["reading"]) for item in report["odd_fields"]] == [
        ("request_id", "ignored"),
        ("event_id", "stand_in"),
        ("request_id", "absent"),
        ("request_id", "ignored"),
        ("request_id", "unresolved"),
        ("request_id", "unresolved"),
    ]
    assert out == snapshot
    code, text, _ = tm(root, "check", CONV)
    assert code == 1
    assert text == snapshot


def test_a_warning_only_check_exits_0(tmp_path: Path) -> None:
    entries = two_turns()
    entries[0]["request_id"] = "nowhere"
    entries[5]["request_id"] = None
    root = workspace(tmp_path / "ws", entries, "current")
    code, out, _ = tm(root, "check", CONV)
    assert code == 0
    assert out.startswith(f"jp-c{CONV}  WARNINGS  1 linked (1 resolved, 0 unresolved)")
    assert 'request_id "nowhere": this kind never links' in out


@pytest.mark.parametrize("form", ["current", "legacy"])
def test_a_save_keeps_every_raw_value_it_does_not_repair(form: str, tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", odd(form), form)
    code, _, err = tm(root, "summary", "set", CONV, "t2bbbbb", "The second turn")
    assert code == 0, err
    written = json.loads((root / ".jp" / "conversations" / f"{CONV}-odd" / "events.json").read_bytes())
    entries = written[1:] if form == "legacy" and written[0]["type"] == "config_delta" else written
    assert [entry.get("event_id", "-") for entry in entries][1] == 42
    assert [entry.get("request_id", "-") for entry in entries] == ["nowhere", "-", None, "-", "c1aaaaa", 5, ""]
    assert entries[3]["summary"] == "The second turn"


def test_repair_apply_fixes_every_odd_field(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", odd("current"), "current")
    code, out, err = tm(root, "repair", CONV, "--apply")
    assert code == 0, (out, err)
    code, out, _ = tm(root, "--format", "json", "check", CONV)
    (report,) = json.loads(out)["conversations"]
    assert (code, report["odd_fields"], report["unresolved"]) == (0, [], [])
    written = json.loads((root / ".jp" / "conversations" / f"{CONV}-odd" / "events.json").read_bytes())
    assert all(isinstance(entry["event_id"], str) for entry in written)
    assert [entry.get("request_id") for entry in written] == [None, None, None, None, None, "c2bbbbb", "c2bbbbb"]


@pytest.mark.parametrize(
    "change",
    ["removed", "made invalid", "added", "replaced"],
)
def test_the_cache_keys_on_base_config(change: str, tmp_path: Path) -> None:
    """A warm listing answers as a clean copy does after ``base_config.json`` changes."""
    root = workspace(tmp_path / "ws", two_turns(), "current")
    folder = root / ".jp" / "conversations" / f"{CONV}-odd"
    base = folder / "base_config.json"
    if change == "added":
        head = {"type": "config_delta", "timestamp": TS.format(0), "delta": {}}
        (folder / "events.json").write_text(json.dumps([head, *two_turns()], indent=2) + "\n")
        base.unlink()
    tm(root, "--format", "json", "conversations")
    if change == "removed":
        base.unlink()
    elif change == "made invalid":
        base.write_text("{")
    elif change == "added":
        base.write_text('{"assistant": {"name": "x"}}\n')
    else:
        replacement = folder / "new.json"
        replacement.write_text('["not an object"]\n')
        os.replace(replacement, base)
    warm = tm(root, "--format", "json", "conversations")
    clean = tmp_path / "clean"
    shutil.copytree(root, clean)
    cold = tm(clean, "--format", "json", "conversations")
    assert warm[0] == cold[0]
    assert warm[1].replace(str(root), "<ws>") == cold[1].replace(str(clean), "<ws>")


@settings(max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=hand_edited())
def test_no_hand_edit_makes_a_reading_command_refuse(drawn: Drawn) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write(root, drawn.events, drawn.base_config)
        for args in READS:
            code, _, err = tm(root, "--format", "json", *args)
            assert code in (0, 1), (args, code, err, drawn.edits)


@pytest.mark.parametrize("stamp", ["0000-01-01 00:00:00.0", "0000-02-29T10:00:00Z"])
def test_a_year_zero_activity_time_lists_and_is_the_default(stamp: str, tmp_path: Path) -> None:
    """chrono reads year 0; a metadata.json that says it once made ``conversations`` fail in ``date``."""
    folder = write(tmp_path, *as_files(two_turns(), "current"))
    (folder / "metadata.json").write_text(json.dumps({"title": "Zero", "last_activated_at": stamp}))
    code, out, err = tm(tmp_path, "conversations")
    assert (code, err) == (0, "")
    assert f"jp-c{CONV}*  0000-" in out
    for args in READS:
        assert tm(tmp_path, *args)[0] in (0, 1), args
