"""Summary request bodies, sampling and context windows for each API, as plain values (no server)."""

import pytest

from turnmark.core.summaries.packing import Candidate
from turnmark.core.summaries.request import build_summary_request
from turnmark.core.wire.context_windows import (
    anthropic_context_window,
    listed_context_window,
    llamacpp_context_window,
    ollama_context_window,
    openai_context_window,
)
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.parameters import sampling
from turnmark.core.wire.summary_bodies import ANTHROPIC_MIN_TOKENS, response_format, summary_body

REQUEST = build_summary_request(
    (Candidate("k3m9x2a", 0, "<turn/>", 3, "fp"), Candidate("p8q2r4b", 1, "<turn/>", 3, "fp")), context_window=16_384
)
SYSTEM_AND_USER = [{"role": "system", "content": REQUEST.system}, {"role": "user", "content": REQUEST.user}]
LOW = {"reasoning": {"effort": "low", "exclude": True}}


def test_openai_counts_max_completion_tokens_and_gets_a_strict_json_schema() -> None:
    body = summary_body(ModelSpec("openai", "gpt-5-mini", {**LOW, "temperature": 0.2}), REQUEST)
    assert body == {
        "model": "gpt-5-mini",
        "messages": SYSTEM_AND_USER,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "structured_output", "schema": REQUEST.schema, "strict": True},
        },
        "stream": True,
        "max_completion_tokens": REQUEST.answer_tokens,
        "temperature": 0.2,
        "reasoning_effort": "low",
    }
    assert list(body) == [
        "model",
        "messages",
        "response_format",
        "stream",
        "max_completion_tokens",
        "temperature",
        "reasoning_effort",
    ]


def test_llama_cpp_gets_a_json_object_with_its_schema_and_max_tokens() -> None:
    body = summary_body(ModelSpec("llamacpp", "small", {**LOW, "max_tokens": 700}), REQUEST)
    assert body["response_format"] == {"type": "json_object", "schema": REQUEST.schema}
    assert response_format("llamacpp", REQUEST.schema) == body["response_format"]
    assert body["max_tokens"] == 700
    assert "max_completion_tokens" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


def test_openrouter_gets_max_tokens_and_its_reasoning_object() -> None:
    body = summary_body(ModelSpec("openrouter", "some/model", LOW), REQUEST)
    assert body["response_format"]["type"] == "json_schema"
    assert body["max_tokens"] == REQUEST.answer_tokens
    assert body["reasoning"] == {"effort": "low", "exclude": True}


def test_anthropic_answer_room_has_a_floor_and_sampling_without_thinking() -> None:
    body = summary_body(ModelSpec("anthropic", "claude-haiku-4-5", {**LOW, "top_p": 0.9}), REQUEST)
    assert body == {
        "model": "claude-haiku-4-5",
        "max_tokens": ANTHROPIC_MIN_TOKENS,
        "system": REQUEST.system,
        "messages": [{"role": "user", "content": REQUEST.user}],
        "output_config": {"format": {"type": "json_schema", "schema": REQUEST.schema}},
        "stream": True,
        "top_p": 0.9,
        "thinking": {"type": "disabled"},
    }
    assert list(body)[:6] == ["model", "max_tokens", "system", "messages", "output_config", "stream"]
    roomy = summary_body(ModelSpec("anthropic", "claude-haiku-4-5", {"max_tokens": 1000}), REQUEST)
    assert roomy["max_tokens"] == 1000
    assert "thinking" not in roomy


def test_anthropic_thinking_budget_comes_on_top_of_the_answer_and_drops_sampling() -> None:
    parameters = {"reasoning": {"effort": "high", "budget_tokens": 2048}, "temperature": 0.2}
    body = summary_body(ModelSpec("anthropic", "claude-sonnet-4-5", parameters), REQUEST)
    assert body["max_tokens"] == ANTHROPIC_MIN_TOKENS + 2048
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body


def test_ollama_is_told_the_window_and_the_answer_room_in_options() -> None:
    body = summary_body(ModelSpec("ollama", "llama3.2:3b", {**LOW, "temperature": 0.2}), REQUEST)
    assert body == {
        "model": "llama3.2:3b",
        "messages": SYSTEM_AND_USER,
        "format": REQUEST.schema,
        "options": {"num_ctx": 16_384, "num_predict": 64 + 40 * 2, "temperature": 0.2},
        "stream": True,
        "think": False,
    }
    assert list(body) == ["model", "messages", "format", "options", "stream", "think"]


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ({"temperature": 0.2, "top_p": 1, "max_tokens": 9}, {"temperature": 0.2, "top_p": 1}),
        ({"temperature": True, "top_p": "0.9"}, {}),
        ({}, {}),
    ],
)
def test_sampling_takes_numeric_temperature_and_top_p_only(parameters: dict[str, object], expected: object) -> None:
    assert sampling(parameters) == expected


def test_context_windows_are_read_out_of_each_answer() -> None:
    assert openai_context_window("gpt-4o-mini") == 128_000
    assert openai_context_window("unknown") is None
    assert anthropic_context_window({"max_input_tokens": 200_000}) == 200_000
    assert llamacpp_context_window({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    listing = {"data": [{"id": "a", "context_length": 10}, {"id": "b", "top_provider": {"context_length": 20}}]}
    assert listed_context_window(listing, "a") == 10
    assert listed_context_window(listing, "b") == 20
    assert listed_context_window(listing, "c") is None
    tags = {"models": [{"name": "x"}, {"model": "y:1b", "details": {"context_length": 8192}}]}
    assert ollama_context_window(tags, "y:1b") == 8192
    assert ollama_context_window(tags, "x") is None


@pytest.mark.parametrize("answer", [None, [], "props", {"max_input_tokens": 0}, {"max_input_tokens": "9"}])
def test_a_window_that_is_missing_or_not_a_positive_integer_is_none(answer: object) -> None:
    assert anthropic_context_window(answer) is None
    assert llamacpp_context_window({"default_generation_settings": answer}) is None
    assert listed_context_window({"data": [{"id": "m", "context_length": answer}]}, "m") is None
    assert ollama_context_window({"models": [{"name": "m", "details": answer}]}, "m") is None
