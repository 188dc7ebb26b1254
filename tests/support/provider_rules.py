"""What each chat API accepts, as checks over a request body (used by unit and property tests)."""

from __future__ import annotations

import re
from collections import Counter

from turnmark.core.stream.json_value import JsonObject

TOOL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _check_anthropic_block(block: JsonObject, role: str) -> None:
    kind = block["type"]
    if kind == "text":
        assert block["text"].strip(), "an empty text block"
    elif kind == "thinking":
        assert role == "assistant"
        assert block["signature"], "thinking without a signature"
    elif kind == "redacted_thinking":
        assert role == "assistant"
        assert block["data"]
    elif kind == "tool_use":
        assert role == "assistant"
        assert TOOL_ID.fullmatch(block["id"]), f"tool_use id {block['id']!r}"
        assert isinstance(block["input"], dict)
    elif kind == "tool_result":
        assert role == "user"
        if block.get("is_error"):
            assert block["content"], "an error result with no content"
    else:
        raise AssertionError(f"unknown block type {kind}")


def check_anthropic(body: JsonObject) -> None:
    """/v1/messages: user first, strict alternation, unique tool IDs answered in the next message, results first."""
    messages = body["messages"]
    assert body["max_tokens"] > 0
    assert type(body["max_tokens"]) is int
    tool_ids = [b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"]
    assert len(tool_ids) == len(set(tool_ids)), f"repeated tool_use ids {tool_ids}"
    if messages:
        assert messages[0]["role"] == "user"
    for index, message in enumerate(messages):
        assert message["content"], f"empty message {index}"
        if index:
            assert message["role"] != messages[index - 1]["role"], f"roles do not alternate at {index}"
        for block in message["content"]:
            _check_anthropic_block(block, message["role"])
        uses = Counter(b["id"] for b in message["content"] if b["type"] == "tool_use")
        following = messages[index + 1] if index + 1 < len(messages) else None
        if uses:
            assert following is not None, "a tool_use with no message after it"
            answered = Counter(b["tool_use_id"] for b in following["content"] if b["type"] == "tool_result")
            assert answered == uses, f"tool_use ids {uses} answered by {answered}"
        kinds = [b["type"] for b in message["content"]]
        if "tool_result" in kinds:
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            assert all(k != "tool_result" for k in kinds[first_other:]), "tool_result after other content"
            assert index > 0, "tool results in the first message"
            previous = messages[index - 1]
            asked = Counter(b["id"] for b in previous["content"] if b["type"] == "tool_use")
            assert Counter(b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result") == asked
    if messages and messages[-1]["role"] == "assistant":
        last = messages[-1]["content"][-1]
        if last["type"] == "text":
            assert last["text"] == last["text"].rstrip(), "final assistant text ends in white space"


def check_openai(body: JsonObject) -> None:
    """/v1/chat/completions: each assistant tool_calls message is followed by one tool message per call."""
    pending: Counter[str] = Counter()
    for message in body["messages"]:
        role = message["role"]
        if role == "tool":
            assert pending[message["tool_call_id"]] > 0, "a tool message answering no pending call"
            pending[message["tool_call_id"]] -= 1
            continue
        assert not +pending, f"calls {dict(pending)} unanswered before a {role} message"
        if role == "assistant":
            assert message.get("content") or message.get("tool_calls"), "an empty assistant message"
            ids = [call["id"] for call in message.get("tool_calls", [])]
            assert len(ids) == len(set(ids)), f"repeated tool_call ids {ids}"
            pending = Counter(ids)
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
