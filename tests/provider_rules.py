"""What each chat API accepts, as checks over a request body (used by unit and property tests)."""

from __future__ import annotations

from collections import Counter

from turnmark.core.json_value import JsonObject


def check_anthropic(body: JsonObject) -> None:
    """/v1/messages: user first, strict alternation, tool_use answered in the next message, results first."""
    messages = body["messages"]
    assert body["max_tokens"] > 0
    if not messages:
        return
    assert messages[0]["role"] == "user"
    for index, message in enumerate(messages):
        assert message["content"], f"empty message {index}"
        if index:
            assert message["role"] != messages[index - 1]["role"], f"roles do not alternate at {index}"
        for block in message["content"]:
            if block["type"] == "text":
                assert block["text"].strip()
            if block["type"] == "thinking":
                assert block["signature"]
                assert message["role"] == "assistant"
        uses = Counter(b["id"] for b in message["content"] if b["type"] == "tool_use")
        if uses:
            assert message["role"] == "assistant"
            following = messages[index + 1] if index + 1 < len(messages) else None
            assert following is not None, "a tool_use with no message after it"
            results = Counter(b["tool_use_id"] for b in following["content"] if b["type"] == "tool_result")
            assert results == uses, f"tool_use ids {uses} answered by {results}"
        kinds = [b["type"] for b in message["content"]]
        if "tool_result" in kinds:
            assert message["role"] == "user"
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            assert all(k != "tool_result" for k in kinds[first_other:]), "tool_result after other content"
            previous = messages[index - 1]
            asked = Counter(b["id"] for b in previous["content"] if b["type"] == "tool_use")
            assert Counter(b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result") == asked


def check_openai(body: JsonObject) -> None:
    """/v1/chat/completions: each assistant tool_calls message is followed by one tool message per call."""
    messages = body["messages"]
    pending: Counter[str] = Counter()
    for message in messages:
        role = message["role"]
        if role == "tool":
            assert pending[message["tool_call_id"]] > 0, "a tool message answering no pending call"
            pending[message["tool_call_id"]] -= 1
            continue
        assert not +pending, f"calls {dict(pending)} unanswered before a {role} message"
        if role == "assistant":
            assert message.get("content") or message.get("tool_calls"), "an empty assistant message"
            pending = Counter(call["id"] for call in message.get("tool_calls", []))
    assert not +pending, "calls unanswered at the end"


def check_ollama(body: JsonObject) -> None:
    """/api/chat: tool messages only right after an assistant message with as many tool calls."""
    pending = 0
    for message in body["messages"]:
        if message["role"] == "tool":
            assert pending > 0, "a tool message answering no call"
            pending -= 1
            continue
        assert pending == 0, "tool calls left unanswered"
        if message["role"] == "assistant":
            pending = len(message.get("tool_calls", []))
    assert pending == 0
