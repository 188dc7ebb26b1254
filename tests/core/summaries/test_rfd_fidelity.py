"""RFD 098 and 126 in the summary path: what a summary model is told, and what catch-up may change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core.links.test_projection_properties import written_streams
from tests.support.streams import TS, load
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.links.projection import project
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.catchup import extractive_answer, summary_candidates
from turnmark.core.summaries.fingerprint import turn_fingerprint
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.transcript import turn_transcript
from turnmark.core.wire.chat import request_body
from turnmark.core.wire.parameters import answer_limit, reasoning_fields


def entries_with_a_deleted_request() -> list[dict[str, object]]:
    return [
        {"event_id": "t000001", "timestamp": TS, "type": "turn_start"},
        {"event_id": "r000002", "timestamp": TS, "type": "chat_request", "content": "Run the tests"},
        {"event_id": "c000003", "request_id": "gone000", "timestamp": TS, "type": "tool_call_request",
         "id": "call_1", "name": "secret_tool", "arguments": {}},
        {"event_id": "o000004", "request_id": "r000002", "timestamp": TS, "type": "tool_call_response",
         "id": "call_1", "content": "b2s=", "is_error": False},
        {"event_id": "m000005", "request_id": "gone000", "timestamp": TS, "type": "chat_response",
         "message": "Answer to a deleted request"},
        {"event_id": "m000006", "request_id": "r000002", "timestamp": TS, "type": "chat_response",
         "message": "All tests pass."},
        {"event_id": "t000007", "timestamp": TS, "type": "turn_start"},
        {"event_id": "r000008", "timestamp": TS, "type": "chat_request", "content": "thanks"},
        {"event_id": "m000009", "request_id": "r000008", "timestamp": TS, "type": "chat_response", "message": "ok"},
    ]  # fmt: skip


def test_a_transcript_leaves_out_what_rfd_098_excludes_with_its_tool_partner() -> None:
    stream = load(entries_with_a_deleted_request())
    assert excluded_ids(stream) == {"c000003", "o000004", "m000005"}
    text = turn_transcript(stream.turns()[0], excluded_ids(stream))
    assert "Answer to a deleted request" not in text
    assert "secret_tool" not in text
    assert "<tool_result/>" not in text
    assert (
        text == '<turn id="t000001">\n<request>Run the tests</request>\n<response>All tests pass.</response>\n</turn>'
    )
    candidate = summary_candidates(stream, last_turn_may_be_open=False)[0]
    assert candidate.transcript == text
    assert "Answer to a deleted request" not in extractive_answer(stream, ("t000001",))


def test_the_fingerprint_follows_the_described_events() -> None:
    original = entries_with_a_deleted_request()
    edited = [dict(entry) for entry in original]
    edited[4]["message"] = "Edited, but still excluded"
    before, after = load(original), load(edited)
    assert turn_fingerprint(before.turns()[0], excluded_ids(before)) == turn_fingerprint(
        after.turns()[0], excluded_ids(after)
    )
    edited[5]["message"] = "Some tests fail."
    changed = load(edited)
    assert turn_fingerprint(changed.turns()[0], excluded_ids(changed)) != turn_fingerprint(
        before.turns()[0], excluded_ids(before)
    )


@st.composite
def older_streams(draw: st.DrawFn) -> ConversationStream:
    """A conversation JP wrote before turn_starts (none leading), maybe with events before the first request,
    and compaction overlays over random turn ranges."""
    entries = [entry for entry in draw(written_streams()) if isinstance(entry, dict)]
    first_start = next(i for i, entry in enumerate(entries) if entry["type"] == "turn_start")
    del entries[first_start]
    leading = draw(st.sampled_from([[], [{"timestamp": TS, "type": "chat_response", "message": "early"}]]))
    return load([*leading, *entries])


def view(stream: ConversationStream) -> list[tuple[int, str, str]]:
    return [(event.turn, event.event_id, event.payload.type_tag) for event in project(stream).view.events]


@given(older_streams())
def test_catch_up_never_changes_what_the_provider_is_sent(stream: ConversationStream) -> None:
    prepared = ensure_first_turn_start(stream)
    assert prepared.turns()[0].id() is not None
    assert len(prepared.turns()) == len(stream.turns())
    assert view(prepared) == view(stream)
    assert request_body(project(prepared).view, "openai", {}) == request_body(project(stream).view, "openai", {})


LOW = {"reasoning": {"effort": "low", "exclude": True}}


@pytest.mark.parametrize(
    ("provider", "name", "parameters", "fields"),
    [
        ("anthropic", "claude-haiku-4-5", LOW, {"thinking": {"type": "disabled"}}),
        ("anthropic", "claude-sonnet-4-5", {"reasoning": {"effort": "high", "budget_tokens": 2048}},
         {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        ("anthropic", "claude-3-5-haiku", LOW, {}),
        ("openai", "gpt-5-mini", LOW, {"reasoning_effort": "low"}),
        ("openai", "o4-mini", {"reasoning": {"effort": "medium"}}, {"reasoning_effort": "medium"}),
        ("openai", "gpt-4o-mini", LOW, {}),
        ("openrouter", "any/model", LOW, {"reasoning": {"effort": "low", "exclude": True}}),
        ("ollama", "qwen3:4b", LOW, {"think": False}),
        ("ollama", "gpt-oss:20b", LOW, {"think": "low"}),
        ("llamacpp", "any", LOW, {"chat_template_kwargs": {"enable_thinking": False}}),
        ("ollama", "llama3.2:3b", {}, {}),
    ],
)  # fmt: skip
def test_reasoning_is_sent_in_each_apis_terms(
    provider: str, name: str, parameters: JsonObject, fields: JsonObject
) -> None:
    assert reasoning_fields(provider, name, parameters) == fields


def test_max_tokens_replaces_the_computed_answer_budget() -> None:
    assert answer_limit({"max_tokens": 900}, 144) == 900
    assert answer_limit({}, 144) == 144
    assert answer_limit({"max_tokens": True}, 144) == 144


def test_packing_mixed_turn_sizes_takes_whole_turns_newest_first() -> None:
    from turnmark.core.summaries.packing import Candidate, pack

    sizes = {0: 300, 1: 5_000, 2: 900, 3: 2_500, 4: 100, 5: 700}
    candidates = [Candidate(f"t{i}", i, "x", tokens, f"f{i}") for i, tokens in sizes.items()]
    packing = pack(candidates, budget=4_000, batch_size=4)
    assert [c.turn_id for c in packing.packed] == ["t0", "t3", "t4", "t5"]
    assert {c.turn_id: why for c, why in packing.left_out} == {"t1": "too_large", "t2": "over_budget"}
    assert packing.tokens == 3_600
