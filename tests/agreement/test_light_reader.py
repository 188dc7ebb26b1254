"""The light reader against the full load (issue 40): the same facts, or both refuse, on every fixture and corpus
conversation, on generated ones and on hand edits of every kind (issue 39's odd fields), legacy and current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure

from tests.agreement.workspaces import FIXTURE_WORKSPACES, conversation_entries, conversation_shapes
from tests.conftest import REPO, corpus_files, corpus_params
from tests.support.hand_edits import Drawn, encode, hand_edited
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.summaries.facts import ConversationFacts, facts_of, light_facts

CONVERSATION = "jp-c17800000099"


def agree(events: bytes, base_config: bytes | None, what: str = "") -> None:
    light = light_facts(events, base_config, CONVERSATION)
    loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids(), conversation=CONVERSATION)
    if isinstance(loaded, Failure):
        assert light is None, f"{what}: the light reader read a file the full reader refuses"
        return
    assert light is not None, f"{what}: the light reader refused a file the full reader reads"
    long_way = facts_of(loaded.unwrap())
    assert light == long_way, what
    assert light.waiting == long_way.waiting, what
    assert light.rows() == long_way.rows(), what
    counted = light_facts(events, base_config, CONVERSATION, ids=False)
    assert counted is not None, what
    assert listing_facts(counted) == listing_facts(long_way), what


def listing_facts(facts: ConversationFacts) -> tuple[object, ...]:
    """What the listing keeps of a conversation's facts (a read without ``ids`` must give the same)."""
    return (
        facts.legacy,
        facts.entries,
        len(facts.turns),
        facts.unresolved_links,
        facts.duplicated_ids,
        facts.waiting,
        facts.summarized,
        facts.first_turn_start is None,
        [(turn.id is None, turn.requests, turn.complete, turn.summary, turn.source) for turn in facts.turns],
    )


def _fixture_folders() -> list[Path]:
    return sorted(
        folder
        for name in FIXTURE_WORKSPACES
        for folder in (REPO / "fixtures" / name / ".jp" / "conversations").iterdir()
        if folder.is_dir()
    )


@pytest.mark.parametrize("folder", _fixture_folders(), ids=lambda folder: f"{folder.parts[-4]}/{folder.name}")
def test_every_fixture(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@pytest.mark.parametrize("folder", corpus_params())
def test_every_corpus_conversation(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=hand_edited(max_edits=6))
def test_hand_edited_conversations(drawn: Drawn) -> None:
    agree(drawn.events, drawn.base_config, repr(drawn.edits))


@settings(max_examples=100, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shape=conversation_shapes(), number=st.integers(0, 9))
def test_generated_conversations(shape: object, number: int) -> None:
    entries = conversation_entries(shape, number)  # type: ignore[arg-type]
    if getattr(shape, "legacy", False):
        entries.insert(0, {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}})
        agree(encode(entries), None)
    else:
        agree(encode(entries), b"{}\n")


BROKEN = [
    b"",
    b"{}",
    b"[1]",
    b'[{"timestamp": "2026-01-01 10:00:00.0"}]',
    b'[{"type": "chat_request"}]',
    b'[{"type": "chat_request", "timestamp": "yesterday", "content": "x"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": 5}]',
    b'[{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "metadata": null}]',
    b'[{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "summary": 3}]',
    b'[{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 5}]',
    b'[{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "name": "n", "arguments": null}]',
    b'[{"type": "tool_call_response", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "content": "x"}]',
    b'[{"type": "inquiry_request", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "source": {}, "question": {}}]',
    b'[{"type": "inquiry_response", "timestamp": "2026-01-01 10:00:00.0", "id": "i"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": -1, "to_turn": 2}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 2, "reasoning": "x"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": true}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 1, "summary": "s"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 1, '
    b'"tool_calls": {"policy": "strip"}}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x", "schema": []}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "\xff"}]',
]


@pytest.mark.parametrize("events", BROKEN)
@pytest.mark.parametrize("legacy", [False, True])
def test_a_file_the_full_reader_refuses_is_refused(events: bytes, legacy: bool) -> None:
    if legacy and events.startswith(b"[{"):
        head = b'[{"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}}, '
        agree(head + events[1:], None, repr(events))
    else:
        agree(events, None if legacy else b"{}\n", repr(events))


def test_an_upgrade_stopped_between_its_writes() -> None:
    delta = {"assistant": {"name": "x"}}
    head: dict[str, object] = {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": delta}
    request: dict[str, object] = {"type": "chat_request", "timestamp": "2026-01-01 10:00:01.0", "content": "Hi"}
    agree(encode([head, request]), json.dumps(delta).encode())
    agree(encode([head, request]), b'{"other": 1}')
    agree(encode([head, request]), b"[]")
