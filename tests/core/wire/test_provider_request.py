"""Provider conversions accept the shapes exclusion leaves behind (RFD 098, Risks) and real conversations."""

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import corpus_files, corpus_params
from tests.core.links.test_projection import entry, tool_call, tool_result
from tests.support.provider_rules import check_anthropic, check_ollama, check_openai
from tests.support.streams import TS, load
from turnmark.core.links.projection import project
from turnmark.core.stream.config import conversation_layers, merge_all
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.wire.chat import WireApi, model_name, request_body

CHECKS: dict[WireApi, Callable[[JsonObject], None]] = {
    "anthropic": check_anthropic,
    "openai": check_openai,
    "ollama": check_ollama,
}


def bodies(stream: ConversationStream) -> dict[WireApi, JsonObject]:
    view = project(stream).view
    return {api: request_body(view, api, {"assistant": {"model": {"id": "ollama/m"}}}) for api in CHECKS}


def accepted(stream: ConversationStream) -> dict[WireApi, JsonObject]:
    out = bodies(stream)
    for api, body in out.items():
        CHECKS[api](body)
    return out


def test_two_requests_left_adjacent_by_exclusion_become_one_user_message() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="first"),
            entry("m1", "chat_response", "deleted", message="excluded"),
            entry("r2", "chat_request", content="second"),
            entry("m2", "chat_response", "r2", message="answer"),
        ]
    )
    out = accepted(stream)
    assert out["anthropic"]["messages"][0]["content"] == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
    ]
    assert [m["role"] for m in out["openai"]["messages"]] == ["user", "assistant"]
    assert out["openai"]["messages"][0]["content"] == "first\n\nsecond"


def test_a_turn_with_no_answer_left() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="question"),
            tool_call("c1", "gone"),
            tool_result("o1", "gone"),
            entry("m1", "chat_response", "gone", message="x"),
        ]
    )
    out = accepted(stream)
    assert out["anthropic"]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "question"}]}]


def test_orphaned_tool_halves_in_a_raw_stream_are_dropped() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="go"),
            tool_call("c1", None, "never-answered"),
            tool_result("o1", None, "never-asked"),
            entry("m1", "chat_response", message="done"),
        ]
    )
    out = accepted(stream)
    assert [m["role"] for m in out["ollama"]["messages"]] == ["user", "assistant"]
    assert out["ollama"]["messages"][1] == {"role": "assistant", "content": "done"}


def test_an_interrupt_between_a_call_and_its_result_keeps_the_pair_together() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="go"),
            tool_call("c1", "r1"),
            entry("r2", "chat_request", content="wait, also check the tests"),
            tool_result("o1", "r2"),
            entry("m1", "chat_response", "r2", message="done"),
        ]
    )
    out = accepted(stream)
    user = out["anthropic"]["messages"][2]["content"]
    assert [block["type"] for block in user] == ["tool_result", "text"]


def test_a_view_starting_with_an_answer_starts_with_the_user_for_anthropic() -> None:
    stream = load(
        [
            entry("m0", "chat_response", message="leftover from a cut"),
            entry("r1", "chat_request", content="hello"),
            entry("m1", "chat_response", message="hi"),
        ]
    )
    out = accepted(stream)
    assert out["anthropic"]["messages"][0]["content"][0]["text"] == "hello"
    assert out["openai"]["messages"][0]["role"] == "assistant"


def test_reasoning_is_sent_as_signed_thinking_only_to_anthropic_and_as_thinking_to_ollama() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="q"),
            entry("s1", "chat_response", reasoning="signed", metadata={"anthropic_thinking_signature": "c2ln"}),
            entry("s2", "chat_response", reasoning="", metadata={"anthropic_redacted_thinking": "cmVk"}),
            entry("u1", "chat_response", reasoning="unsigned"),
            entry("m1", "chat_response", message="answer"),
        ]
    )
    out = accepted(stream)
    assistant = out["anthropic"]["messages"][1]["content"]
    assert assistant[:2] == [
        {"type": "thinking", "thinking": "signed", "signature": "sig"},
        {"type": "redacted_thinking", "data": "red"},
    ]
    assert "unsigned" not in str(assistant)
    assert out["ollama"]["messages"][1]["thinking"] == "signed\n\nunsigned"
    assert "thinking" not in str(out["openai"])


def test_errors_are_marked_for_anthropic_and_structured_data_is_sent_as_json_text() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="q"),
            tool_call("c1", "r1"),
            {**tool_result("o1", "r1"), "is_error": True},
            entry("d1", "chat_response", "r1", data={"name": "Alice"}),
        ]
    )
    out = accepted(stream)
    assert out["anthropic"]["messages"][2]["content"][0]["is_error"] is True
    assert out["openai"]["messages"][-1]["content"] == '{"name": "Alice"}'


def test_model_system_prompt_and_limits_come_from_the_config() -> None:
    view = project(load([entry("r1", "chat_request", content="q")])).view
    config: JsonObject = {
        "assistant": {
            "model": {"id": {"provider": "anthropic", "name": "claude-x"}, "parameters": {"max_tokens": 1000}},
            "system_prompt": "Be brief.",
        }
    }
    body = request_body(view, "anthropic", config)
    assert (body["model"], body["max_tokens"], body["system"]) == ("claude-x", 1000, "Be brief.")
    assert request_body(view, "openai", config)["messages"][0] == {"role": "system", "content": "Be brief."}
    assert model_name("openrouter/anthropic/claude-x") == "anthropic/claude-x"
    assert model_name("haiku") == "haiku"
    assert model_name(None) is None


def test_config_layers_merge_later_over_earlier() -> None:
    stream = load(
        [
            {"type": "config_delta", "timestamp": TS, "delta": {"assistant": {"model": {"id": "ollama/b"}}}},
            {"type": "config_delta", "timestamp": TS, "delta": "not an object"},
        ]
    )
    config = merge_all(
        [{"assistant": {"model": {"id": "ollama/a"}, "system_prompt": "s"}}, *conversation_layers(stream)]
    )
    assert config == {"assistant": {"model": {"id": "ollama/b"}, "system_prompt": "s"}}


@pytest.mark.parametrize("directory", corpus_params())
def test_every_corpus_conversation_converts_to_bodies_each_api_accepts(directory: Path) -> None:
    stream = ConversationStream.from_json(*corpus_files(directory), new_id=sequential_ids()).unwrap()
    out = accepted(stream)
    assert out["anthropic"]["messages"]


def test_reused_and_malformed_tool_ids_are_renamed_with_their_results() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="go"),
            tool_call("c1", "r1", "fs_modify_file_0"),
            tool_result("o1", "r1", "fs_modify_file_0"),
            tool_call("c2", "r1", "fs_modify_file_0"),
            tool_result("o2", "r1", "fs_modify_file_0"),
            tool_call("c3", "r1", "bad id!"),
            tool_result("o3", "r1", "bad id!"),
            entry("m1", "chat_response", "r1", message="done"),
        ]
    )
    out = accepted(stream)
    uses = [b["id"] for m in out["anthropic"]["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert uses[0] == "fs_modify_file_0"
    assert len(set(uses)) == 3


def test_an_error_without_output_and_a_final_answer_ending_in_white_space() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="go"),
            tool_call("c1", "r1"),
            {**tool_result("o1", "r1"), "content": "", "is_error": True},
            entry("m1", "chat_response", "r1", message="it failed\n"),
        ]
    )
    out = accepted(stream)
    assert out["anthropic"]["messages"][2]["content"][0]["content"] == "(the tool failed without output)"
    assert out["anthropic"]["messages"][-1]["content"][-1]["text"] == "it failed"


def test_a_boolean_max_tokens_is_not_a_limit() -> None:
    view = project(load([entry("r1", "chat_request", content="q")])).view
    body = request_body(view, "anthropic", {"assistant": {"model": {"parameters": {"max_tokens": True}}}})
    assert body["max_tokens"] == 4096
