"""D21 Phase 1: every event kind serializes to its editor file and parses back equal."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import corpus_files, corpus_params
from turnmark.core.editing.edit_files import _frontmatters, _parts, dumped_frontmatters, parse_event, render_event
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    ConfigDelta,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
)

TS = "2026-01-02 10:00:00.0"
NOW = "2026-02-02 00:00:00.0"
tricky = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    max_size=40,
) | st.sampled_from(
    ["---", "x---", "--- y", "no", "1.0", "2026-01-01", "```\n---\n```", "null", "key: value", "  indented", "é ✓ 漢字"]
)
metadata = st.none() | st.dictionaries(st.sampled_from(["cache", "note", "x-y"]), tricky, max_size=2)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | tricky,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)

payloads = st.one_of(
    st.builds(ChatRequest, st.just(TS), tricky, st.none(), st.none() | st.just("alice"), metadata),
    st.builds(ChatResponse, st.just(TS), st.sampled_from(["message", "reasoning"]), tricky, metadata),
    st.builds(ChatResponse, st.just(TS), st.just("data"), json_values, metadata),
    st.builds(
        ToolCallRequest,
        st.just(TS),
        st.text("abc_0123", min_size=1, max_size=8),
        st.sampled_from(["fs_read_file", "cargo test", "weird/name"]),
        st.none() | st.dictionaries(st.text(max_size=6), json_values, max_size=3),
        metadata,
    ),
    st.builds(
        ToolCallResponse, st.just(TS), st.text("abc_0123", min_size=1, max_size=8), tricky, st.booleans(), metadata
    ),
    st.builds(
        InquiryRequest,
        st.just(TS),
        st.just("call_1.apply"),
        st.just({"type": "tool", "name": "fs_modify_file"}),
        st.dictionaries(st.sampled_from(["text", "answer_type"]), tricky, max_size=2),
        metadata,
    ),
    st.builds(InquiryResponse, st.just(TS), st.just("call_1.apply"), json_values, metadata),
)


@given(payloads)
def test_every_event_round_trips_through_its_file(payload: Payload) -> None:
    file = render_event(payload)
    assert "base64" not in file.suffix
    parsed = parse_event(f"000-{file.suffix}", file.text, NOW)
    assert parsed.unwrap() == payload


def test_config_deltas_and_compactions_are_toml() -> None:
    delta = ConfigDelta({"type": "config_delta", "timestamp": TS, "delta": {"assistant": {"model": {"id": "a/b"}}}})
    compaction = Compaction({"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 5, "reasoning": "strip"})
    for payload in (delta, compaction):
        file = render_event(payload)
        assert file.suffix.endswith(".toml")
        assert parse_event(f"004-{file.suffix}", file.text, NOW).unwrap() == payload


def test_a_delta_toml_cannot_hold_is_json() -> None:
    delta = ConfigDelta({"type": "config_delta", "timestamp": TS, "delta": {"assistant": None}})
    file = render_event(delta)
    assert file.suffix == "config-delta.json"
    assert parse_event(f"004-{file.suffix}", file.text, NOW).unwrap() == delta


def test_the_files_look_as_d21_shows_them() -> None:
    call = render_event(ToolCallRequest(TS, "call_abc123", "fs_create_file", {"path": "src/main.rs"}))
    assert call.suffix == "tool-call-fs_create_file.md"
    assert call.text == (
        "---\ntype: tool-call\ntimestamp: '2026-01-02 10:00:00.0'\ntool: fs_create_file\nid: call_abc123\n---\n"
        '```json\n{\n  "path": "src/main.rs"\n}\n```\n'
    )
    request = render_event(ChatRequest(TS, "Set up the project.\n---\nwith --- inside"))
    assert request.text.endswith("---\nSet up the project.\n---\nwith --- inside\n")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no frontmatter", "it must start with a --- frontmatter line"),
        ("---\ntype: request\n", "the frontmatter has no closing --- line"),
        ("---\ntype: bogus\n---\nx\n", "unknown type 'bogus'"),
        ("---\ntype: tool-call\n---\n```json\n{}\n```\n", '"tool" is missing from the frontmatter'),
        ("---\ntype: tool-call\nid: a\ntool: t\n---\nnot json\n", "the body must be a JSON code block"),
        ("---\ntype: tool-result\nid: a\nis_error: maybe\n---\nx\n", '"is_error" must be true or false'),
    ],
)
def test_a_broken_file_is_one_line_naming_it(text: str, error: str) -> None:
    failure = parse_event("003-x.md", text, NOW).failure()
    assert failure.startswith("003-x.md: ")
    assert error in failure
    assert "\n" not in failure


def test_a_new_file_without_a_timestamp_gets_now() -> None:
    parsed = parse_event("100-request.md", "---\ntype: request\n---\nAlso check the docs.\n", NOW).unwrap()
    assert parsed == ChatRequest(NOW, "Also check the docs.")


def test_a_new_tool_call_without_an_id_gets_one_and_results_carry_the_tool_name() -> None:
    call = parse_event("100-tool-call-x.md", "---\ntype: tool-call\ntool: cargo_test\n---\n```json\n{}\n```\n", NOW)
    parsed = call.unwrap()
    assert isinstance(parsed, ToolCallRequest)
    assert parsed.id.startswith("call_")
    from turnmark.core.editing.edit_files import render_events

    files = render_events([ToolCallRequest(TS, "c1", "cargo test", {}), ToolCallResponse(TS, "c1", "ok", False)])
    assert [file.suffix for file in files] == ["tool-call-cargo_test.md", "tool-result-cargo_test.md"]


plain_words = st.text(alphabet="abcXYZ019_./+=-: ", min_size=0, max_size=12) | st.sampled_from(
    ["yes", "No", "true", "false", "null", "~", "1", "0x1F", "1_000", ".5", ".inf", "1:30", "=", "<<", "-", "- x",
     "2026-01-02 10:00:00.0", "2026-01-02", "a: b", "a #b", "/path/to", "+x", "x" * 200, "ABC=", "=x", "é"]
)  # fmt: skip
fronts = st.dictionaries(
    plain_words,
    plain_words | st.dictionaries(plain_words, plain_words | st.integers() | st.none(), max_size=3) | tricky,
    min_size=1,
    max_size=4,
)


@given(st.lists(fronts, max_size=4))
def test_frontmatters_written_directly_are_what_pyyaml_writes(documents: list[JsonObject]) -> None:
    assert _frontmatters(documents) == dumped_frontmatters(documents)


@pytest.mark.parametrize("directory", corpus_params())
def test_real_frontmatters_are_what_pyyaml_writes(directory: Path) -> None:
    events, base = corpus_files(directory)
    stream = ConversationStream.from_json(events, base, new_id=sequential_ids()).unwrap()
    payloads = [entry.payload for entry in stream.events() if not isinstance(entry.payload, TurnStart)]
    documents = [front for _, front, _ in (_parts(payload, {}) for payload in payloads) if front]
    assert _frontmatters(documents) == dumped_frontmatters(documents)
