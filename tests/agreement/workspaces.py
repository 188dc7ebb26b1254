"""The workspaces every agreement test runs on: the bundled fixtures, the real corpus and generated ones.

A generated workspace is written as JP writes one (``events.json``, ``base_config.json`` or the legacy
head, ``metadata.json``, JP's user-local copy), from conversation shapes drawn by hypothesis: legacy
without ``turn_start``, one turn, an interrupted last turn, a pending tool call, compaction overlays,
labelled turns, duplicated event IDs, user-local copies and local-only conversations.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import strategies as st

from tests.conftest import REPO, corpus_root
from tests.support.copies import writable_copy
from tests.support.hand_edits import Drawn

FIXTURE_WORKSPACES = ("workspace", "legacy-workspace", "repair-workspace", "show-workspace")
WORKSPACE_ID = "agree01"
WORDS = ("lock", "build", "parser", "cache", "retry", "config", "index", "summary", "stream", "test")
LABELS = ("Fix the lock test", "Explain the parser", "Add a retry to the cache", "Rename the config")
SOURCES = (None, "user", "builtin/extractive", "ollama/qwen3:4b")
OLD = 1_700_000_000


@dataclass(frozen=True)
class TurnShape:
    request: str
    answered: bool = True
    tool: bool = False
    pending_tool: bool = False
    reasoning_last: bool = False
    summary: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class ConversationShape:
    turns: tuple[TurnShape, ...]
    legacy: bool = False
    turn_starts: bool = True
    linked: bool = True
    duplicated_id: bool = False
    compaction: bool = False
    copies: str = "workspace"
    """``workspace``, ``both`` (JP's user-local copy too) or ``local`` (only the user-local copy)."""


def fixture_folders() -> list[Path]:
    """Every conversation folder of the fixture workspaces, in order."""
    return sorted(
        folder
        for name in FIXTURE_WORKSPACES
        for folder in (REPO / "fixtures" / name / ".jp" / "conversations").iterdir()
        if folder.is_dir()
    )


def copy_fixture(name: str, destination: Path) -> Path:
    """A copy of ``fixtures/<name>`` (a workspace root) at ``destination``."""
    shutil.copytree(REPO / "fixtures" / name, destination)
    return destination


def copy_corpus(destination: Path) -> Path:
    """A workspace holding a copy of the corpus' conversations (the test is skipped when the corpus is absent)."""
    conversations = corpus_root() / ".jp" / "conversations"
    if not conversations.is_dir():
        pytest.skip(f"corpus not found at {corpus_root()} (set TURNMARK_CORPUS to a folder holding .jp/conversations)")
    writable_copy(conversations, destination / ".jp" / "conversations")
    return destination


def conversation_folders(root: Path) -> list[Path]:
    """Every conversation folder of the workspace at ``root``, and of its user-local silo (``JP_USER_DATA_DIR``)."""
    places = [root / ".jp" / "conversations"]
    marker = root / ".jp" / ".id"
    user_data = os.environ.get("JP_USER_DATA_DIR")
    if marker.is_file() and user_data:
        places += sorted(Path(user_data).glob(f"workspace/*-{marker.read_text().split()[-1]}/conversations"))
    return sorted(
        folder
        for place in places
        if place.is_dir()
        for folder in place.iterdir()
        if folder.is_dir() and not folder.name.startswith(".")
    )


def conversation_files(root: Path) -> dict[str, dict[str, bytes]]:
    """Each conversation folder's files (a user-local copy's under ``local/``), as bytes."""
    found: dict[str, dict[str, bytes]] = {}
    for folder in conversation_folders(root):
        where = "" if folder.is_relative_to(root) else "local/"
        found[where + folder.name] = {
            path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()
        }
    return found


def first_difference(what: str, left: Mapping[str, object], right: Mapping[str, object]) -> str | None:
    """``None`` when both sides agree; else which conversation differs first, and where."""
    for key in sorted(set(left) | set(right)):
        a, b = left.get(key, "<absent>"), right.get(key, "<absent>")
        if a != b:
            return f"{what}: {key}: {_where(a, b)}"
    return None


def _where(a: object, b: object) -> str:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return f"{key}: {_where(a.get(key, '<absent>'), b.get(key, '<absent>'))}"
    if isinstance(a, bytes) and isinstance(b, bytes):
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return f"byte {at}: {a[max(0, at - 40) : at + 40]!r} != {b[max(0, at - 40) : at + 40]!r}"
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"[{index}]: {_where(x, y)}"
        return f"{len(a)} items != {len(b)} items"
    return f"{_short(a)} != {_short(b)}"


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 120 else f"{shown[:100]}… ({len(shown)} characters)"


def _requests() -> st.SearchStrategy[str]:
    sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
    follow_up = st.sampled_from(("continue", "yes", "thanks", "go ahead with 2"))
    return st.one_of(sentence.map(lambda text: f"Fix the {text}"), follow_up)


@st.composite
def turn_shapes(draw: st.DrawFn) -> TurnShape:
    summary = draw(st.one_of(st.none(), st.sampled_from(LABELS)))
    return TurnShape(
        request=draw(_requests()),
        answered=draw(st.booleans()) or draw(st.booleans()),
        tool=draw(st.booleans()),
        pending_tool=draw(st.integers(0, 5)) == 0,
        reasoning_last=draw(st.integers(0, 5)) == 0,
        summary=summary,
        source=draw(st.sampled_from(SOURCES)) if summary is not None else None,
    )


@st.composite
def conversation_shapes(draw: st.DrawFn) -> ConversationShape:
    """One conversation's shape (``turns`` of 1 to 4; a legacy one has no ``turn_start`` and no summary)."""
    legacy = draw(st.integers(0, 3)) == 0
    turns = draw(st.lists(turn_shapes(), min_size=1, max_size=4))
    if legacy:
        turns = [TurnShape(t.request, t.answered, t.tool, t.pending_tool, t.reasoning_last) for t in turns]
    return ConversationShape(
        turns=tuple(turns),
        legacy=legacy,
        turn_starts=not legacy and draw(st.integers(0, 4)) > 0,
        linked=not legacy and draw(st.booleans()),
        duplicated_id=not legacy and draw(st.integers(0, 5)) == 0,
        compaction=draw(st.integers(0, 4)) == 0 and len(turns) > 1,
        copies=draw(st.sampled_from(("workspace", "workspace", "both", "local"))),
    )


workspace_shapes = st.lists(conversation_shapes(), min_size=1, max_size=5)
"""A generated workspace: its conversations' shapes."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _timestamp(conversation: int, position: int) -> str:
    return f"2026-0{1 + conversation % 9}-1{conversation % 10} 10:{position // 60:02d}:{position % 60:02d}.5"


def conversation_entries(shape: ConversationShape, number: int) -> list[dict[str, object]]:
    """The ``events.json`` entries of a conversation of ``shape`` (without a legacy head)."""
    entries: list[dict[str, object]] = []

    def add(kind: str, **fields: object) -> str:
        event_id = f"g{number}e{len(entries):03d}"
        entry: dict[str, object] = {"timestamp": _timestamp(number, len(entries)), "type": kind, **fields}
        if not shape.legacy:
            entry = {"event_id": event_id, **entry}
        entries.append(entry)
        return event_id

    for index, turn in enumerate(shape.turns):
        if shape.turn_starts and not shape.legacy:
            fields: dict[str, object] = {"summary": turn.summary} if turn.summary is not None else {}
            if turn.source is not None:
                fields["metadata"] = {"summary_source": _b64(turn.source)}
            add("turn_start", **fields)
        request = add("chat_request", content=f"{turn.request} (turn {index} of conversation {number})")
        link = {"request_id": request} if shape.linked else {}
        last = index == len(shape.turns) - 1
        if turn.tool:
            call_id = f"call_{number}_{index}"
            add("tool_call_request", **link, id=call_id, name="fs_read_file", arguments={"path": _b64("src/lib.rs")})
            if not (last and turn.pending_tool):
                add("tool_call_response", **link, id=call_id, content=_b64("fn lock() {}"), is_error=False)
        if turn.answered and not (last and turn.pending_tool):
            add("chat_response", **link, message=f"Done: the {WORDS[index % len(WORDS)]} works now.")
        if turn.reasoning_last and last:
            add("chat_response", **link, reasoning="Thinking about the next step.")
    if shape.duplicated_id and len(entries) > 2:
        entries[-1]["event_id"] = entries[-2]["event_id"]
    if shape.compaction:
        entries.append(
            {
                "event_id": f"g{number}c000",
                "type": "compaction",
                "timestamp": _timestamp(number, len(entries)),
                "from_turn": 0,
                "to_turn": 0,
                "summary": {"summary": "The user asked about the lock."},
            }
        )
    return entries


def write_workspace(root: Path, shapes: list[ConversationShape], user_data: Path) -> Path:
    """A workspace at ``root`` (and its user-local silo under ``user_data``) holding one conversation per shape,
    every file old enough to be trusted by its identity."""
    (root / ".jp" / "conversations").mkdir(parents=True)
    (root / ".jp" / ".id").write_text(WORKSPACE_ID + "\n")
    silo = user_data / "workspace" / f"{root.name}-{WORKSPACE_ID}" / "conversations"
    base = {"assistant": {"model": {"id": "ollama/qwen3:4b"}}}
    for number, shape in enumerate(shapes):
        entries = conversation_entries(shape, number)
        if shape.legacy:
            entries.insert(0, {"type": "config_delta", "timestamp": _timestamp(number, 0), "delta": base})
        name = f"{17_900_000_000 + number * 10}-generated-{number}"
        places = {"workspace": [root / ".jp" / "conversations"], "both": [root / ".jp" / "conversations", silo]}
        for place in places.get(shape.copies, [silo]):
            folder = place / name
            folder.mkdir(parents=True)
            meta = {"title": f"Generated {number}", "last_activated_at": _timestamp(number, 59)}
            (folder / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
            if not shape.legacy:
                (folder / "base_config.json").write_text(json.dumps(base, indent=2) + "\n")
            (folder / "events.json").write_text(json.dumps(entries, indent=2) + "\n")
    for path in [*root.rglob("*.json"), *user_data.rglob("*.json")]:
        os.utime(path, (OLD, OLD))
    return root


def write_hand_edited(root: Path, drawn: list[Drawn]) -> Path:
    """A workspace at ``root`` of the hand-edited conversations ``drawn`` (``tests/support/hand_edits.py``), one
    folder each with a title."""
    for number, conversation in enumerate(drawn):
        folder = root / ".jp" / "conversations" / f"{17_900_000_000 + number * 10}-edited-{number}"
        folder.mkdir(parents=True)
        (folder / "events.json").write_bytes(conversation.events)
        if conversation.base_config is not None:
            (folder / "base_config.json").write_bytes(conversation.base_config)
        (folder / "metadata.json").write_text(f'{{"title": "Edited {number}"}}\n')
    return root
