"""The facts the workspace cache keeps for each conversation are the long way's answers, computed by the same rule:
whether turns wait for a summary (``waiting`` against ``summary_candidates``), link problems (against ``check``'s
report) and turn counts (against ``turns``' rows), on every fixture and corpus conversation and on generated ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from returns.result import Success

from tests.agreement.workspaces import ConversationShape, conversation_entries, conversation_shapes
from tests.conftest import REPO, corpus_conversations
from turnmark.core.links.check import check_report
from turnmark.core.links.resolution import link_problems
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.summaries.catchup import catchup_stream, summary_candidates, waiting
from turnmark.core.summaries.failures import turn_rows
from turnmark.core.summaries.turn_rows import summarized_turns

BASE = b'{"assistant": {"model": {"id": "ollama/qwen3:4b"}}}'


def disagreement(stream: ConversationStream) -> str | None:
    """``None`` when every cached fact of ``stream`` is what the long way finds; else the first that is not."""
    planned = catchup_stream(stream)
    facts = waiting(stream)

    def candidates(*, last_turn_may_be_open: bool, upgrade: bool) -> list[int]:
        found = summary_candidates(planned, last_turn_may_be_open=last_turn_may_be_open, upgrade=upgrade)
        return [candidate.index for candidate in found]

    open_turn = candidates(last_turn_may_be_open=True, upgrade=False)
    closed = candidates(last_turn_may_be_open=False, upgrade=False)
    upgraded = candidates(last_turn_may_be_open=False, upgrade=True)
    if facts.before_last != len(open_turn):
        return f"waiting.before_last {facts.before_last}, candidates with the last turn open: turns {open_turn}"
    if facts.last != (len(closed) > len(open_turn)):
        return f"waiting.last {facts.last}, candidates with the last turn closed: turns {closed}"
    if facts.extractive != len(upgraded) - len(closed):
        return f"waiting.extractive {facts.extractive}, --upgrade adds turns {sorted(set(upgraded) - set(closed))}"
    for upgrade in (False, True):
        if facts.may_need_summaries(upgrade=upgrade) != bool(upgraded if upgrade else closed):
            return f"may_need_summaries(upgrade={upgrade}) {not facts.may_need_summaries(upgrade=upgrade)}"
    report = check_report(stream, stream.doubled_keys)
    reported = (len(report.unresolved), len(report.duplicated_ids))
    if link_problems(stream) != reported:
        return f"link problems {link_problems(stream)}, check's report {reported}"
    rows = turn_rows(stream)
    long_way = (len(rows), sum(1 for row in rows if row.label_source == "summary"))
    if summarized_turns(stream) != long_way:
        return f"turns and summarized turns {summarized_turns(stream)}, turns' rows {long_way}"
    return None


def stored_conversations() -> list[object]:
    """Every fixture conversation and, when present, every corpus conversation."""
    folders = sorted(path.parent for path in REPO.glob("fixtures/*/.jp/conversations/*/events.json"))
    return [pytest.param(folder, id=folder.name[:24]) for folder in [*folders, *corpus_conversations()]]


@pytest.mark.parametrize("folder", stored_conversations())
def test_the_cached_facts_of_a_stored_conversation_are_the_long_ways(folder: Path) -> None:
    base = folder / "base_config.json"
    loaded = ConversationStream.from_json(
        (folder / "events.json").read_bytes(), base.read_bytes() if base.exists() else None, new_id=sequential_ids()
    )
    if not isinstance(loaded, Success):
        pytest.skip(f"{folder.name} does not load (a fixture for that)")
    assert disagreement(loaded.unwrap()) is None, folder.name


def test_a_legacy_conversation_without_turn_start_waits_for_its_summaries() -> None:
    folder = REPO / "fixtures" / "workspace" / ".jp" / "conversations" / "17790000000-explain-the-build-script"
    stream = ConversationStream.from_json((folder / "events.json").read_bytes(), None, new_id=sequential_ids())
    facts = waiting(stream.unwrap())
    assert facts.may_need_summaries(upgrade=False)
    assert (facts.before_last, facts.last) == (1, True)


@given(conversation_shapes())
def test_the_cached_facts_of_a_generated_conversation_are_the_long_ways(shape: ConversationShape) -> None:
    entries = conversation_entries(shape, 0)
    if shape.legacy:
        entries.insert(0, {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": json.loads(BASE)})
    loaded = ConversationStream.from_json(
        json.dumps(entries).encode(), None if shape.legacy else BASE, new_id=sequential_ids()
    )
    assert isinstance(loaded, Success), loaded
    assert disagreement(loaded.unwrap()) is None, shape
