"""Streamed answers read as parts, for each API, as plain values (no server): text, reasoning, tool calls,
why the answer stopped, and protocol errors as a last ``error`` part."""

import json
from collections.abc import Iterator

from turnmark.core.wire.answers import (
    CUT_OFF,
    ChatPart,
    answer_text,
    anthropic_parts,
    ollama_parts,
    openai_parts,
    parse_arguments,
    sse_data,
)


def sse(*events: tuple[str | None, object]) -> list[str]:
    lines: list[str] = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines += [f"data: {json.dumps(data)}", ""]
    return lines


def kinds(parts: Iterator[ChatPart]) -> list[tuple[str, str]]:
    return [(part.kind, part.text) for part in parts]


def test_sse_data_names_events_and_stops_at_done_or_at_data_that_is_not_json() -> None:
    lines = ["event: ping", "data: {}", ": comment", "data: [1]", "data: [DONE]", "data: {}"]
    assert list(sse_data(lines)) == [("ping", {}), ("message", [1])]
    bad = list(sse_data(["data: {}", "data: " + "[" * 100_000, "data: {}"]))
    assert bad[0] == ("message", {})
    assert bad[1:] == [ChatPart("error", f"a streamed event is not JSON: {'[' * 80!r}")]


def test_openai_deltas_and_tool_calls_assembled_by_index() -> None:
    lines = sse(
        (None, {"choices": [{"delta": {"reasoning_content": "hmm", "content": "He"}}]}),
        (None, {"choices": [{"delta": {"content": "llo"}}]}),
        (None, {"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"arguments": '{"b"'}}]}}]}),
        (None, {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c0", "function": {"name": "ls"}}]}}]}),
        (None, {"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "c1", "function": {"arguments": ": 2}"}}]}}]}),
        (None, {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
    )
    parts = list(openai_parts([*lines, "data: [DONE]"], "openai"))
    assert [(part.kind, part.text) for part in parts[:4]] == [
        ("reasoning", "hmm"),
        ("text", "He"),
        ("text", "llo"),
        ("stop", "tool_calls"),
    ]
    assert parts[4:] == [
        ChatPart("tool_call", call_id="c0", name="ls", arguments={}),
        ChatPart("tool_call", call_id="c1", name="tool", arguments={"b": 2}),
    ]


def test_openai_a_nameless_call_without_id_gets_one_by_index() -> None:
    lines = sse((None, {"choices": [{"delta": {"tool_calls": [{"index": 3, "function": {"arguments": "[1"}}]}}]}))
    assert list(openai_parts(lines, "llamacpp")) == [
        ChatPart("tool_call", call_id="call_3", name="tool", arguments={"raw": "[1"})
    ]


def test_openai_errors_and_refusals_are_a_last_error_part_naming_the_provider() -> None:
    text = (None, {"choices": [{"delta": {"content": "a"}}]})
    assert kinds(openai_parts(sse(text, (None, {"error": {"message": "overloaded"}}), text), "openrouter")) == [
        ("text", "a"),
        ("error", "openrouter: overloaded"),
    ]
    assert kinds(openai_parts(sse((None, {"error": "plain"})), "openai")) == [("error", "openai: plain")]
    refused = (None, {"choices": [{"delta": {"refusal": "no"}}]})
    assert kinds(openai_parts(sse(refused, text), "openai")) == [("error", "openai: the model refused: no")]
    assert kinds(openai_parts(["data: nope"], "openai")) == [("error", "a streamed event is not JSON: 'nope'")]


def test_openai_an_answer_cut_off_by_the_token_limit_says_length() -> None:
    lines = sse((None, {"choices": [{"delta": {"content": '{"a'}, "finish_reason": "length"}]}))
    assert kinds(openai_parts(lines, "openai")) == [("stop", CUT_OFF), ("text", '{"a')]


def anthropic_answer(*middle: tuple[str, object], stop_reason: str = "end_turn") -> list[str]:
    return sse(
        ("message_start", {"type": "message_start"}),
        *middle,
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason}}),
        ("message_stop", {"type": "message_stop"}),
    )


def test_anthropic_text_thinking_and_a_tool_call_once_its_input_is_complete() -> None:
    lines = anthropic_answer(
        ("content_block_start", {"index": 0, "content_block": {"type": "thinking"}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        ("content_block_start", {"index": 1, "content_block": {"type": "text"}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_stop", {"index": 1}),
        ("content_block_start", {"index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "ls"}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"p'}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "input_json_delta", "partial_json": '": 1}'}}),
        ("content_block_stop", {"index": 2}),
        stop_reason="tool_use",
    )
    assert list(anthropic_parts(lines)) == [
        ChatPart("reasoning", "hmm"),
        ChatPart("text", "Hi"),
        ChatPart("tool_call", call_id="toolu_1", name="ls", arguments={"p": 1}),
        ChatPart("stop", "tool_use"),
    ]


def test_anthropic_max_tokens_is_the_cut_off() -> None:
    assert kinds(anthropic_parts(anthropic_answer(stop_reason="max_tokens"))) == [("stop", CUT_OFF)]


def test_anthropic_errors_are_a_last_error_part() -> None:
    overloaded = ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert kinds(anthropic_parts(anthropic_answer(overloaded))) == [("error", "anthropic: Overloaded")]
    assert kinds(anthropic_parts(sse(("error", {"error": {}})))) == [("error", "anthropic: error")]
    assert kinds(anthropic_parts(sse((None, {"type": "error", "error": "plain"})))) == [("error", "anthropic: plain")]
    ended = sse(("content_block_delta", {"delta": {"type": "text_delta", "text": "Hi"}}))
    assert kinds(anthropic_parts(ended)) == [
        ("text", "Hi"),
        ("error", "anthropic: the answer ended before message_stop"),
    ]
    assert kinds(anthropic_parts(["event: message_stop", "data: {"])) == [
        ("error", "a streamed event is not JSON: '{'")
    ]


def ndjson(*chunks: object) -> list[str]:
    return [json.dumps(chunk) for chunk in chunks]


def test_ollama_chunks_text_thinking_and_numbered_tool_calls() -> None:
    lines = ndjson(
        {"message": {"thinking": "hmm"}},
        {"message": {"content": "Hi"}},
        {"message": {"tool_calls": [{"function": {"name": "ls", "arguments": {"p": 1}}}, {"function": {}}]}},
        {"message": {"tool_calls": [{"function": {"name": "ls", "arguments": "not an object"}}]}},
        {"done": True, "done_reason": "stop"},
    )
    assert list(ollama_parts(["", *lines])) == [
        ChatPart("reasoning", "hmm"),
        ChatPart("text", "Hi"),
        ChatPart("tool_call", call_id="ls_0", name="ls", arguments={"p": 1}),
        ChatPart("tool_call", call_id="tool_1", name="tool", arguments={}),
        ChatPart("tool_call", call_id="ls_2", name="ls", arguments={}),
        ChatPart("stop", "stop"),
    ]


def test_ollama_length_is_the_cut_off() -> None:
    lines = ndjson({"message": {"content": '{"a'}}, {"done": True, "done_reason": "length"})
    assert kinds(ollama_parts(lines)) == [("text", '{"a'), ("stop", CUT_OFF)]


def test_ollama_errors_are_a_last_error_part() -> None:
    text = '{"message": {"content": "a"}}'
    assert kinds(ollama_parts([text, '{"error": "model not found"}', text])) == [
        ("text", "a"),
        ("error", "ollama: model not found"),
    ]
    assert kinds(ollama_parts(["[" * 100_000, text])) == [
        ("error", f"ollama sent a line that is not JSON: {'[' * 80!r}")
    ]
    assert kinds(ollama_parts([text])) == [("text", "a"), ("error", "ollama: the answer ended before it was done")]


def test_answer_text_joins_the_text_and_stops_reading_at_the_cut_off() -> None:
    assert answer_text([ChatPart("reasoning", "x"), ChatPart("text", "a"), ChatPart("text", "b")]) == "ab"

    def cut_off() -> Iterator[ChatPart]:
        yield ChatPart("text", "a")
        yield ChatPart("stop", CUT_OFF)
        raise AssertionError("read past the cut-off")

    assert answer_text(cut_off()) is None


def test_parse_arguments_keeps_what_is_not_an_object() -> None:
    assert parse_arguments("") == {}
    assert parse_arguments('{"a": [1]}') == {"a": [1]}
    assert parse_arguments("3") == {"value": 3}
    assert parse_arguments('{"a"') == {"raw": '{"a"'}
