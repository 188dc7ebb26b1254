"""What the history tools (``turnmark mcp``) answer a model: the arguments they take, their lines, their bounds.

The assistant reads the workspace's turns through four tools: the conversations, the turns of one, a ranked
search, and one turn's stripped transcript (RFD 126). This module is their pure half: it refuses any argument
that is not a conversation ID or a ``CONV:TURN`` address (a path, ``..``, a NUL never reaches a file name), it
writes each answer as lines a model reads well, marks a label that is the request's first line rather than a
stored summary, and bounds every answer, saying what was cut and how to ask for the rest. Text from a
conversation is made ``visible`` (no control character or terminal escape reaches the client raw).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from turnmark.core.errors import ArgumentRefused
from turnmark.core.rendering.shown import minute
from turnmark.core.stream.conversation_ids import display_id, parse_conversation_id
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.text.summary_text import one_line, truncate
from turnmark.core.text.terminal import visible

RESULT_CHARS = 20_000
"""The most characters any answer holds (``turnmark mcp --max-chars`` may lower or raise it)."""
READ_CHARS = 8_000
"""What ``read_turn`` gives of a transcript unless asked for more."""
WHOLE = 1 << 40
"""``read_turn``'s transcript keeps each message whole (pages through it by ``start``) rather than cutting out
its middle as a summary request does."""
LINE_CHARS = 300
"""The most characters of a title, label or summary on one line of an answer."""
FALLBACK_MARK = "~ "
"""Before a turn's label that is the first line of its request, not a stored summary."""
FALLBACK_NOTE = "(~ marks a turn with no summary yet: the first line of its request is shown instead)"

READ_HINT = "read_turn(turn=ADDRESS) gives a turn's transcript."

_TURN = re.compile(r"[a-z0-9]{1,16}")


def conversation_argument(value: str) -> Result[int, ArgumentRefused]:
    """The conversation a tool argument names: ``jp-c17727484633`` or ``17727484633``, nothing else.

    >>> conversation_argument("jp-c17727484633").unwrap(), conversation_argument(" 17727484633 ").unwrap()
    (17727484633, 17727484633)
    >>> print(conversation_argument("../../etc").failure().describe())
    not a conversation ID: '../../etc' (give one as list_conversations shows it, such as jp-c17727484633)
    """
    conversation = parse_conversation_id(value) if _clean(value) else None
    if conversation is None:
        return Failure(
            ArgumentRefused(
                f"not a conversation ID: {visible(value)[:80]!r} (give one as list_conversations shows it, "
                "such as jp-c17727484633)"
            )
        )
    return Success(conversation)


def turn_argument(value: str) -> Result[tuple[int, str], ArgumentRefused]:
    """The conversation and turn of a ``CONV:TURN`` address (the turn: its event_id or its number).

    >>> turn_argument("jp-c17727484633:k3m9x2a").unwrap(), turn_argument("17727484633:0").unwrap()
    ((17727484633, 'k3m9x2a'), (17727484633, '0'))
    >>> print(turn_argument("jp-c1:../x").failure().describe())
    not a turn address: 'jp-c1:../x' (give CONV:TURN as list_turns or find_turns shows it, such as jp-c1:k3m9x2a)
    """
    head, colon, turn = value.strip().rpartition(":")
    conversation = parse_conversation_id(head) if colon and _clean(value) else None
    if conversation is None or _TURN.fullmatch(turn) is None:
        return Failure(
            ArgumentRefused(
                f"not a turn address: {visible(value)[:80]!r} (give CONV:TURN as list_turns or find_turns shows "
                "it, such as jp-c1:k3m9x2a)"
            )
        )
    return Success((conversation, turn))


def _clean(value: str) -> bool:
    return value.isascii() and value.isprintable() and "/" not in value and "\\" not in value and ".." not in value


def address(conversation: int, turn: str) -> str:
    """``jp-c17727484633:k3m9x2a``, as ``find --output ids`` prints a turn."""
    return f"{display_id(conversation)}:{turn}"


def data_text(text: str | None, limit: int = LINE_CHARS) -> str | None:
    """A text of a conversation as structured content carries it: visible, at most ``limit`` characters."""
    return None if text is None else truncate(visible(text), limit)


def label_text(label: str | None, source: str | None) -> str:
    """A turn's label as a line shows it: the summary, or ``~`` and the request's first line."""
    if label is None:
        return "(no request in this turn)"
    shown = truncate(visible(label), LINE_CHARS)
    return shown if source == "summary" else FALLBACK_MARK + shown


@dataclass(frozen=True, slots=True)
class Cut:
    """A text bounded to a number of characters from ``start``: what is shown, and the rest's size."""

    text: str
    start: int
    total: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    @property
    def rest(self) -> int:
        return self.total - self.end


def cut_text(text: str, limit: int, start: int = 0) -> Cut:
    """``text[start:]`` cut to ``limit`` characters, at a line end when one is in the last quarter.

    >>> piece = cut_text("one\\ntwo\\nthree", 9)
    >>> piece.text, piece.rest
    ('one\\ntwo\\n', 5)
    """
    rest = text[start:]
    if len(rest) <= limit:
        return Cut(rest, start, len(text))
    head = rest[:limit]
    line_end = head.rfind("\n")
    if line_end >= limit * 3 // 4:
        head = head[: line_end + 1]
    return Cut(head, start, len(text))


def bounded_lines(lines: Sequence[str], limit: int, more: str) -> tuple[list[str], int]:
    """The ``lines`` that fit in ``limit`` characters with the ``more`` line after them, and how many fit; all of
    them when they all fit."""
    total = sum(len(line) + 1 for line in lines)
    if total <= limit:
        return list(lines), len(lines)
    kept: list[str] = []
    used = len(more) + 1
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    return kept, len(kept)


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A tool's answer: the text a model reads, and the same as structured content."""

    text: str
    data: JsonObject


@dataclass(frozen=True, slots=True)
class ConversationItem:
    """One conversation as ``list_conversations`` lists it (``error``: why it cannot be read)."""

    id: str
    title: str | None
    last_active: str | None
    turns: int
    summarized_turns: int
    error: str | None = None

    def line(self) -> str:
        when = minute(self.last_active) if self.last_active else "-"
        if self.error is not None:
            return f"{self.id}  {when}  unreadable: {truncate(visible(one_line(self.error)), 2 * LINE_CHARS)}"
        title = truncate(visible(one_line(self.title)), LINE_CHARS) if self.title else "(untitled)"
        return f"{self.id}  {when}  {self.turns} turns ({self.summarized_turns} summarized)  {title}"

    def to_json(self) -> JsonObject:
        return {
            "id": self.id,
            "title": data_text(self.title),
            "last_active": data_text(self.last_active),
            "turns": self.turns,
            "summarized_turns": self.summarized_turns,
            "error": data_text(self.error, 2 * LINE_CHARS),
        }


@dataclass(frozen=True, slots=True)
class TurnItem:
    """One turn as ``list_turns`` and ``find_turns`` show it: its address, when, and its label."""

    address: str
    index: int
    turn_id: str | None
    when: str | None
    label: str | None
    label_source: str | None

    def line(self) -> str:
        when = minute(self.when) if self.when else "-"
        return f"{self.address}  {when}  {label_text(self.label, self.label_source)}"

    def to_json(self) -> JsonObject:
        return {
            "address": self.address,
            "index": self.index,
            "turn_id": self.turn_id,
            "when": data_text(self.when),
            "label": data_text(self.label),
            "label_source": self.label_source,
            "summarized": self.label_source == "summary",
        }


@dataclass(frozen=True, slots=True)
class Hit:
    """A turn ``find_turns`` found: the turn, its conversation's title, the text around the match, its score."""

    turn: TurnItem
    title: str | None
    snippet: str | None
    score: float

    def to_json(self) -> JsonObject:
        return {
            **self.turn.to_json(),
            "title": data_text(self.title),
            "snippet": data_text(self.snippet, 2 * LINE_CHARS),
            "score": round(self.score, 6),
        }


def conversations_answer(items: Sequence[ConversationItem], total: int, limit: int) -> ToolAnswer:
    """``list_conversations``: newest first, one line each, within ``limit`` characters."""
    head = f"{len(items)} of {total} conversations, most recently active first:" if items else "no conversation"
    more = f"[cut: more conversations than fit in {limit:,} characters; pass a smaller limit or a query]"
    lines, kept = bounded_lines([item.line() for item in items], limit - len(head) - 1, more)
    text = "\n".join([head, *lines, *([more] if kept < len(items) else [])])
    data = {"total": total, "conversations": [item.to_json() for item in items[:kept]], "cut": kept < len(items)}
    return ToolAnswer(text, data)


def turns_answer(conversation: str, title: str | None, items: Sequence[TurnItem], first: int, limit: int) -> ToolAnswer:
    """``list_turns``: one line per turn from turn ``first``, within ``limit`` characters."""
    chosen = items[first:]
    named = truncate(visible(one_line(title)), LINE_CHARS) if title else "(untitled)"
    head = f"{conversation}  {named}: {len(items)} turns"
    if first:
        head += f", from turn {first}"
    lines = [item.line() for item in chosen]
    more_line = f"[cut: {{rest}} more turns; call list_turns with conversation={conversation!r}, first={{next}}]"
    kept_lines, kept = bounded_lines(lines, limit - len(head) - len(FALLBACK_NOTE) - 24, more_line)
    tail: list[str] = []
    if kept < len(chosen):
        tail.append(more_line.format(rest=len(chosen) - kept, next=first + kept))
    if any(item.label_source != "summary" for item in chosen[:kept]):
        tail.append(FALLBACK_NOTE)
    if first >= len(items) and items:
        tail.insert(0, f"[no turn from {first}: the conversation has turns 0-{len(items) - 1}]")
    data = {
        "conversation": conversation,
        "title": data_text(title),
        "total_turns": len(items),
        "first": first,
        "turns": [item.to_json() for item in chosen[:kept]],
        "next": first + kept if kept < len(chosen) else None,
    }
    return ToolAnswer("\n".join([head, *kept_lines, *tail]), data)


def hits_answer(query: str, hits: Sequence[Hit], total: int, limit: int) -> ToolAnswer:
    """``find_turns``: the best hits first, each its line and the text around the match."""
    asked = data_text(one_line(query)) or ""
    if not hits:
        return ToolAnswer(f"no turn matches {asked!r}", {"query": asked, "total": 0, "hits": []})
    head = f"{len(hits)} of {total} matching turns for {asked!r}, best first:"
    blocks = []
    for rank, hit in enumerate(hits, 1):
        title = f"  [{truncate(visible(one_line(hit.title)), LINE_CHARS)}]" if hit.title else ""
        block = f"{rank}. {hit.turn.line()}{title}"
        if hit.snippet:
            block += "\n   " + truncate(visible(one_line(hit.snippet)), 2 * LINE_CHARS)
        blocks.append(block)
    more = "[cut: more hits than fit; pass a smaller limit]"
    kept_blocks, kept = bounded_lines(blocks, limit - len(head) - len(FALLBACK_NOTE) - len(READ_HINT) - 3, more)
    tail = [more] if kept < len(hits) else []
    if any(hit.turn.label_source != "summary" for hit in hits[:kept]):
        tail.append(FALLBACK_NOTE)
    text = "\n".join([head, *kept_blocks, *tail, READ_HINT])
    return ToolAnswer(text, {"query": asked, "total": total, "hits": [hit.to_json() for hit in hits[:kept]]})


def turn_answer(turn: TurnItem, transcript: str, start: int, max_chars: int) -> ToolAnswer:
    """``read_turn``: the turn's line and summary, then its transcript from ``start``, cut at ``max_chars`` (both
    counted in the transcript as shown: control characters escaped)."""
    summary = (
        f"summary: {truncate(visible(turn.label or ''), LINE_CHARS)}"
        if turn.label_source == "summary"
        else "no summary yet; the request's first line: " + truncate(visible(turn.label or "(no request)"), LINE_CHARS)
    )
    head = f"{turn.address}  turn {turn.index}  {minute(turn.when) if turn.when else '-'}\n{summary}"
    shown = visible(transcript)
    piece = cut_text(shown, max_chars, min(max(0, start), len(shown)))
    parts = [head]
    if piece.start and not piece.text:
        parts.append(f"[nothing from character {start:,}: the transcript has {piece.total:,}; read it from start=0]")
    elif piece.start:
        parts.append(f"[the transcript from character {piece.start:,} of {piece.total:,}]")
    parts.append(piece.text.rstrip("\n"))
    if piece.rest:
        parts.append(
            f"[cut: characters {piece.start:,}-{piece.end:,} of {piece.total:,} shown, {piece.rest:,} more; call "
            f"read_turn with turn={turn.address!r}, start={piece.end}]"
        )
    data = {
        **turn.to_json(),
        "transcript": piece.text,
        "start": piece.start,
        "end": piece.end,
        "total_chars": piece.total,
        "next": piece.end if piece.rest else None,
    }
    return ToolAnswer("\n".join(parts), data)


def clamped(answer: ToolAnswer, limit: int) -> ToolAnswer:
    """``answer`` with its text at most ``limit`` characters: a last bound, should a part have outgrown its own.

    >>> clamped(ToolAnswer("x" * 80, {}), 60).text
    'xxxxxxxxxxxxxxxxxxxx [cut: the answer outgrew 60 characters]'
    """
    if len(answer.text) <= limit:
        return answer
    marker = f" [cut: the answer outgrew {limit:,} characters]"
    return ToolAnswer(answer.text[: max(0, limit - len(marker))] + marker, answer.data)
