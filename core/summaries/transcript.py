"""Stripped turn transcripts (RFD 126): what a summary model reads about a turn.

Each turn becomes one ``<turn id="...">`` block built from its raw events
(compaction overlays are ignored) less the events RFD 098 leaves out of what
a model sees (an answer whose request was deleted, and its tool-call
partner; see ``excluded_ids``): requests and answers as text, each tool
call as ``<tool_call name="..."/>`` and its outcome as ``<tool_result/>`` or
``<tool_error/>``; reasoning, ``turn_start`` and inquiries are left out. A
request or answer over ``max_message_chars`` characters (RFD 126's
``MAX_MESSAGE_CHARS``, 4,000, unless
``conversation.turn_summary.transcript.max_message_chars`` says otherwise)
keeps its first and last halves around ``[…]``. Text is escaped, so nothing
in a conversation can close or forge a block.
"""

import json
from collections.abc import Iterator

from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from turnmark.core.stream.turns import Turn

MAX_MESSAGE_CHARS = 4000
CUT = "[…]"


def shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """At most ``limit`` characters: the first and last halves around ``[…]``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}{CUT}{text[-half:]}"


def escape(text: str) -> str:
    """Text safe inside an element: ``&``, ``<`` and ``>`` as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """A double-quoted attribute value."""
    return '"' + escape(text).replace('"', "&quot;") + '"'


def _body(text: str, limit: int) -> str:
    return escape(shorten(text, limit))


def described_events(turn: Turn, excluded: frozenset[str] = frozenset()) -> Iterator[Entry]:
    """The turn's conversation events a summary model is told about: all but the excluded ones."""
    return (entry for entry in turn.events() if entry.event_id not in excluded)


def turn_transcript(
    turn: Turn, excluded: frozenset[str] = frozenset(), max_message_chars: int = MAX_MESSAGE_CHARS
) -> str:
    """The stripped transcript of one turn (it must have a ``turn_start``: its ID names the block).

    ``excluded`` holds the event IDs to leave out (``excluded_ids`` of the turn's stream);
    a request or answer longer than ``max_message_chars`` keeps its first and last halves.

    >>> from turnmark.core import (ChatRequest, ChatResponse, ConversationStream, ToolCallRequest,
    ...     ToolCallResponse, excluded_ids, sequential_ids, turn_transcript)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix <main>"))
    >>> stream = stream.extend([ToolCallRequest(ts, "call_1", "cargo_check"),
    ...                         ToolCallResponse(ts, "call_1", "error[E0432]", True),
    ...                         ChatResponse(ts, "reasoning", "The import is missing."),
    ...                         ChatResponse(ts, "message", "Fixed: added the import.")])
    >>> print(turn_transcript(stream.turns()[0], excluded_ids(stream)))
    <turn id="e000001">
    <request>Fix &lt;main&gt;</request>
    <tool_call name="cargo_check"/>
    <tool_error/>
    <response>Fixed: added the import.</response>
    </turn>

    A long request keeps its first and last halves (``max_message_chars``, here 200):

    >>> long = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "a" * 300 + "z" * 300))
    >>> request = turn_transcript(long.turns()[0], max_message_chars=200).splitlines()[1]
    >>> request == "<request>" + "a" * 100 + "[…]" + "z" * 100 + "</request>"
    True
    """
    lines = [f"<turn id={quoteattr(turn.id() or '')}>"]
    for entry in described_events(turn, excluded):
        payload = entry.payload
        if isinstance(payload, ChatRequest):
            lines.append(f"<request>{_body(payload.content, max_message_chars)}</request>")
        elif isinstance(payload, ChatResponse):
            if payload.variant == "message":
                lines.append(f"<response>{_body(payload.value, max_message_chars)}</response>")
            elif payload.variant == "data":
                data = json.dumps(payload.value, ensure_ascii=False)
                lines.append(f"<response>{_body(data, max_message_chars)}</response>")
        elif isinstance(payload, ToolCallRequest):
            lines.append(f"<tool_call name={quoteattr(payload.name)}/>")
        elif isinstance(payload, ToolCallResponse):
            lines.append("<tool_error/>" if payload.is_error else "<tool_result/>")
    lines.append("</turn>")
    return "\n".join(lines)


def transcripts(
    turns: list[Turn], excluded: frozenset[str] = frozenset(), max_message_chars: int = MAX_MESSAGE_CHARS
) -> str:
    """Several turns' transcripts, oldest first, one block after another."""
    return "\n\n".join(turn_transcript(turn, excluded, max_message_chars) for turn in turns)
