"""What of a turn the index holds: one text per scope, where each event's text starts, and the turn's line.

A turn's document is built from its raw events (compaction overlays hide nothing), excluded events
(RFD 098) included and remembered as such, so a hit on one is marked. Texts of a scope are joined
with a line feed; ``spans`` say at which offset each event's text starts, so a match found in a
column is traced back to its event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    InquiryRequest,
    InquiryResponse,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
)
from turnmark.core.stream.timestamps import sort_key
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.turn_rows import turn_row
from turnmark.core.text.summary_text import normalize_summary

from .scopes import SCOPES

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
"""Private-use characters that bracket a match in a highlighted column; removed from indexed text."""

_SEPARATOR = "\n"


class Span(NamedTuple):
    """Where an event's text starts in its scope's column (a tuple: a document makes one per event)."""

    offset: int
    event_id: str | None
    excluded: bool


@dataclass(frozen=True, slots=True)
class TurnLine:
    """What a hit says of its turn: where it is, its date, and its line (the label or the fallback)."""

    conversation: str
    title: str | None
    turn_index: int
    turn_id: str | None
    id_transient: bool
    date: str | None
    label: str | None
    label_source: str | None

    @property
    def reference(self) -> str:
        """``CONV:TURN`` as ``transcript --turn``, ``show --turn``, ``fork --until`` and ``edit -i`` take it (a
        turn without a ``turn_start`` by its number)."""
        turn = self.turn_id if self.turn_id is not None else str(self.turn_index)
        return f"{self.conversation}:{turn}"

    def to_json(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "title": self.title,
            "turn_index": self.turn_index,
            "turn_id": self.turn_id,
            "id_transient": self.id_transient,
            "reference": self.reference,
            "date": self.date,
            "label": self.label,
            "label_source": self.label_source,
        }


@dataclass(frozen=True, slots=True)
class TurnDocument:
    """One turn as indexed: its place, its line (label or fallback), its date and its scope texts."""

    turn_index: int
    turn_id: str | None
    id_transient: bool
    label: str | None
    label_source: str | None
    started_at: int | None
    """UTC seconds of the turn's first timestamp (``sort_key``'s scale), for ``--since``."""
    date: str | None
    texts: tuple[str, ...]
    """One text per scope, in ``SCOPES`` order."""
    spans: tuple[tuple[Span, ...], ...]

    def line(self, conversation: str, title: str | None) -> TurnLine:
        return TurnLine(
            conversation,
            title,
            self.turn_index,
            self.turn_id,
            self.id_transient,
            self.date,
            self.label,
            self.label_source,
        )

    def spans_json(self) -> str:
        return msgspec.json.encode(self.spans).decode()

    def digest(self) -> str:
        """Changes whenever anything stored for the turn changes (its row is rewritten only then)."""
        parts = [self.turn_id, self.id_transient, self.label, self.label_source, self.started_at, self.date]
        digest = hashlib.sha256()
        for part in (msgspec.json.encode(parts).decode(), self.spans_json(), *self.texts):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        return digest.hexdigest()


_StoredSpans = list[list[tuple[int, str | None, bool]]]


def spans_from_json(text: str) -> tuple[tuple[Span, ...], ...] | None:
    """The spans ``spans_json`` wrote; ``None`` for text of another shape (one list per scope, each span typed).

    >>> spans_from_json('[[[0, "e1", false]], [], [], [], [], [], []]')[0]
    (Span(offset=0, event_id='e1', excluded=False),)
    >>> spans_from_json('not json'), spans_from_json('[[["0", null, false]]]'), spans_from_json('[[]]')
    (None, None, None)
    """
    try:
        decoded = msgspec.json.decode(text, type=_StoredSpans)
    except msgspec.DecodeError:
        return None
    if len(decoded) != len(SCOPES):
        return None
    return tuple(tuple(Span(offset, event_id, excluded) for offset, event_id, excluded in spans) for spans in decoded)


def clean(text: str) -> str:
    """Text as indexed: without the match markers (they could not be told from real ones)."""
    return text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "")


def json_text(value: Json) -> str:
    """A JSON value as searched and shown: JSON's shape, each string as its text (a line break in a tool's
    argument is a line break, not ``\\n``, so the words on both sides of it are found).

    >>> print(json_text({"path": "a.rs", "old": "fn main() {\\n    run(\\"x\\")", "n": [1, None]}))
    {"path":"a.rs","old":"fn main() {
        run("x")","n":[1,null]}
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "{" + ",".join(f'"{key}":{_nested(item)}' for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_nested(item) for item in value) + "]"
    return msgspec.json.encode(value).decode()


def _nested(value: Json) -> str:
    return f'"{value}"' if isinstance(value, str) else json_text(value)


def event_text(entry: Entry, scopes: Collection[str] = SCOPES) -> tuple[str, str] | None:
    """The ``(scope, text)`` an event contributes to ``scopes``, if any (a text is made only for a scope asked
    for: a tool's output is decoded only for ``results``)."""
    payload = entry.payload
    scope = _scope_of(payload)
    if scope is None or scope not in scopes:
        return None
    if isinstance(payload, ChatRequest | ToolCallResponse):
        return scope, payload.content
    if isinstance(payload, ChatResponse):
        return scope, json_text(payload.value)
    if isinstance(payload, ToolCallRequest):
        arguments = json_text(payload.arguments) if payload.arguments else ""
        return scope, f"{payload.name} {arguments}".strip()
    if isinstance(payload, TurnStart):
        summary = normalize_summary(payload.summary) if payload.summary is not None else None
        return (scope, summary) if summary else None
    if isinstance(payload, InquiryRequest):
        return scope, json_text(payload.question.get("text", payload.question))
    if isinstance(payload, InquiryResponse):
        return scope, json_text(payload.answer)
    return None


def _scope_of(payload: object) -> str | None:
    """The scope an event's text belongs to (``None``: it has none)."""
    if isinstance(payload, ChatResponse):
        return "reasoning" if payload.variant == "reasoning" else "answers"
    return _SCOPE_OF_KIND.get(type(payload))


_SCOPE_OF_KIND: dict[type, str] = {
    TurnStart: "summaries",
    ChatRequest: "requests",
    ToolCallRequest: "tools",
    ToolCallResponse: "results",
    InquiryRequest: "tools",
    InquiryResponse: "tools",
}


def _started_at(turn: Turn) -> tuple[int | None, str | None]:
    for entry in turn.events():
        stamp = getattr(entry.payload, "timestamp", None)
        if isinstance(stamp, str):
            moment, _ = sort_key(stamp)
            if moment > 0:
                return moment, stamp[:10]
    return None, None


def turn_document(
    turn: Turn, title: str | None, excluded: frozenset[str] = frozenset(), scopes: Collection[str] = SCOPES
) -> TurnDocument:
    """The document of one turn; ``title`` is the conversation's (kept with every turn for ``--in titles``). A
    scope not in ``scopes`` is left empty (the index keeps only the light ones until a search asks for more)."""
    texts: dict[str, list[str]] = {scope: [] for scope in SCOPES}
    spans: dict[str, list[Span]] = {scope: [] for scope in SCOPES}
    lengths = dict.fromkeys(SCOPES, 0)
    for entry in turn.events():
        found = event_text(entry, scopes)
        if found is None:
            continue
        scope, raw = found
        text = clean(raw)
        if texts[scope]:
            lengths[scope] += len(_SEPARATOR)
        spans[scope].append(Span(lengths[scope], entry.event_id, entry.event_id in excluded))
        texts[scope].append(text)
        lengths[scope] += len(text)
    if title and "titles" in scopes:
        texts["titles"].append(clean(title))
        spans["titles"].append(Span(0, None, False))
    row = turn_row(turn)
    started_at, date = _started_at(turn)
    start = turn.start
    return TurnDocument(
        turn_index=turn.index,
        turn_id=row.id,
        id_transient=bool(start and start.transient_id),
        label=row.label,
        label_source=row.label_source,
        started_at=started_at,
        date=date,
        texts=tuple(_SEPARATOR.join(texts[scope]) for scope in SCOPES),
        spans=tuple(tuple(spans[scope]) for scope in SCOPES),
    )


def conversation_documents(
    stream: ConversationStream, title: str | None, scopes: Collection[str] = SCOPES
) -> tuple[TurnDocument, ...]:
    """Every turn's document (its texts of ``scopes``), in turn order.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-03-05 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the lock"))
    >>> stream = stream.push(ChatResponse(ts, "message", "Fixed.")).set_turn_summary("e000001", "Lock fixed").unwrap()
    >>> [document] = conversation_documents(stream, "Locks")
    >>> texts = dict(zip(SCOPES, document.texts))
    >>> texts["summaries"], document.label, document.date, document.line("c", None).reference
    ('Lock fixed', 'Lock fixed', '2026-03-05', 'c:e000001')
    """
    excluded = excluded_ids(stream)
    return tuple(turn_document(turn, title, excluded, scopes) for turn in stream.turns())
