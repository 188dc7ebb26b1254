"""``check``'s report as the workspace cache keeps it: every report ``check`` makes reads back equal, and text of
another shape or type reads back as nothing (the conversation is read again), never as a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, corpus_root
from turnmark.core import sequential_ids
from turnmark.core.links.check import check_report
from turnmark.shell.errors import ConversationError
from turnmark.shell.storage import check_reports
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import list_conversations, require_workspace

WORKSPACES = sorted(path for path in (REPO / "fixtures").iterdir() if (path / ".jp" / "conversations").is_dir())


def _reports(root: Path) -> list[tuple[str, str]]:
    """``(conversation, stored report)`` for every readable conversation of the workspace at ``root``."""
    found = []
    for ref in list_conversations(require_workspace(root)):
        try:
            stream = read_conversation(ref, sequential_ids()).stream
        except ConversationError:
            continue
        found.append((ref.display_id, check_reports.stored(check_report(stream, stream.doubled_keys))))
    return found


@pytest.mark.parametrize("root", [*WORKSPACES, corpus_root()], ids=lambda path: path.name)
def test_every_report_reads_back_equal(root: Path) -> None:
    if not (root / ".jp" / "conversations").is_dir():
        pytest.skip(f"corpus not found at {root} (set TURNMARK_CORPUS)")
    reports = _reports(root)
    assert reports
    for conversation, text in reports:
        read = check_reports.read_back(text)
        assert read is not None, conversation
        assert check_reports.stored(read) == text, conversation


def _forged(change: str) -> str:
    """A real report of the repair fixtures (unresolved links, exclusions, orphans) with one change made."""
    text = max((text for _, text in _reports(REPO / "fixtures" / "repair-workspace")), key=len)
    value = json.loads(text)
    assert value["unresolved"], "the repair fixtures lost their unresolved links"
    assert value["exclusions"], "the repair fixtures lost their exclusions"
    match change:
        case "extra key":
            value["forged"] = 1
        case "missing key":
            del value["exclusions"]
        case "count as text":
            value["links"]["linked"] = "many"
        case "item of another shape":
            value["unresolved"][0] = {"index": "x"}
        case "nested item of another type":
            value["exclusions"][0]["excluded"][0]["by_closure"] = "yes"
        case "unknown reason":
            value["unresolved"][0]["reason"] = "forged_reason"
        case "ok that does not follow":
            value["ok"] = not value["ok"]
        case "deep nesting":
            return text[:-1] + ', "forged": ' + "[" * 100_000 + "]" * 100_000 + "}"
        case "not json":
            return text[: len(text) // 2]
    return json.dumps(value)


@pytest.mark.parametrize(
    "change",
    [
        "extra key",
        "missing key",
        "count as text",
        "item of another shape",
        "nested item of another type",
        "unknown reason",
        "ok that does not follow",
        "deep nesting",
        "not json",
    ],
)
def test_a_report_of_another_shape_reads_back_as_nothing(change: str) -> None:
    assert check_reports.read_back(_forged(change)) is None
