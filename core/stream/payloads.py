"""The payload kinds of a stream entry, with the fields JP gives them.

Seven conversation events (``turn_start`` … ``inquiry_response``), the two
global entries (``config_delta``, ``compaction``) and ``Unknown`` for any
other ``type``, kept verbatim. Payloads hold decoded values: base64 storage
encoding is applied only by the codec. ``None`` on an optional field means the
key is absent.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.quick_init import quick_init

ResponseVariant: TypeAlias = Literal["message", "reasoning", "data"]


@quick_init
@dataclass(frozen=True, slots=True)
class TurnStart:
    """Opens a turn; carries the RFD 126 turn summary when one is stored.

    >>> from turnmark.core import ChatRequest, ConversationStream, TurnStart, sequential_ids
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.extend([TurnStart("2026-01-02 10:00:00.0", summary="Build fixed")])
    >>> stream = stream.push(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> turn = stream.turns()[0]
    >>> turn.start.payload, turn.summary()
    (TurnStart(timestamp='2026-01-02 10:00:00.0', summary='Build fixed', metadata=None), 'Build fixed')
    """

    timestamp: str
    summary: str | None = None
    metadata: JsonObject | None = None

    type_tag = "turn_start"


@quick_init
@dataclass(frozen=True, slots=True)
class ChatRequest:
    """The user's request: the originating request of the events that answer it.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> stream = stream.push(ChatResponse("2026-01-02 10:00:05.0", "message", "Fixed."))
    >>> request, answer = stream.entries[1:]
    >>> request.payload.content, answer.request_id == request.event_id
    ('Fix the build', True)
    """

    timestamp: str
    content: str
    schema: JsonObject | None = None
    author: str | None = None
    metadata: JsonObject | None = None

    type_tag = "chat_request"


@quick_init
@dataclass(frozen=True, slots=True)
class ChatResponse:
    """An assistant answer: a message, reasoning, or structured data (``variant``).

    >>> from turnmark.core import ChatResponse
    >>> thought = ChatResponse("2026-01-02 10:00:05.0", "reasoning", "The import is missing.")
    >>> answer = ChatResponse("2026-01-02 10:00:06.0", "message", "Fixed.")
    >>> (thought.message, thought.reasoning), (answer.message, answer.reasoning)
    ((None, 'The import is missing.'), ('Fixed.', None))
    """

    timestamp: str
    variant: ResponseVariant
    value: Json
    metadata: JsonObject | None = None

    type_tag = "chat_response"

    @property
    def message(self) -> str | None:
        return self.value if self.variant == "message" else None

    @property
    def reasoning(self) -> str | None:
        return self.value if self.variant == "reasoning" else None


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call made by the assistant; ``id`` pairs it with its response.

    >>> from turnmark.core import ChatRequest, ConversationStream, ToolCallRequest, ToolCallResponse, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Check it"))
    >>> stream = stream.push(ToolCallRequest(ts, "call_1", "cargo_check", {"package": "core"}))
    >>> call = stream.entries[-1]
    >>> call.payload.name, call.payload.arguments, call.request_id
    ('cargo_check', {'package': 'core'}, 'e000002')
    """

    timestamp: str
    id: str
    name: str
    arguments: JsonObject | None = None
    metadata: JsonObject | None = None

    type_tag = "tool_call_request"


class StoredText:
    """A string as a file stored it (JP's base64) and the text it stands for, decoded on first use, once."""

    __slots__ = ("_decode", "_text", "stored")

    def __init__(self, stored: str, decode: Callable[[str], str]) -> None:
        self.stored = stored
        self._decode: Callable[[str], str] | None = decode
        self._text = ""

    def text(self) -> str:
        decode = self._decode
        if decode is not None:
            self._text = decode(self.stored)
            self._decode = None
        return self._text


class _StoredContent:
    """``ToolCallResponse.content``: the text, read from a file as ``StoredText`` (decoded when first asked for).

    ``turns``, ``check`` and a save of an unchanged entry never need a tool's output; the stored form is
    written back as read while the output is unchanged.
    """

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, instance: object, owner: object = None) -> str:
        if instance is None:
            raise AttributeError  # no default: a dataclass field the caller must give
        value = self.slot.__get__(instance)
        text: str = value.text() if type(value) is StoredText else value
        return text

    def __set__(self, instance: object, value: str | StoredText) -> None:
        self.slot.__set__(instance, value)


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallResponse:
    """The output of a tool call (``is_error`` for the error variant).

    A response needs its call in the same turn; the turn builder refuses one without:

    >>> from turnmark.core import ChatRequest, ConversationStream, ToolCallRequest, ToolCallResponse, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Check it"))
    >>> stream.turn_builder().add(ToolCallResponse(ts, "call_9", "ok", False)).build().failure().describe()
    "orphaned tool call response 'call_9' (buffered event 0)"
    >>> builder = stream.turn_builder().add(ToolCallRequest(ts, "call_1", "cargo_check"))
    >>> built = builder.add(ToolCallResponse(ts, "call_1", "error: unresolved import", True)).build().unwrap()
    >>> result = built.entries[-1].payload
    >>> result.id, result.is_error, result.content
    ('call_1', True, 'error: unresolved import')
    """

    timestamp: str
    id: str
    content: str
    is_error: bool
    metadata: JsonObject | None = None

    type_tag = "tool_call_response"

    @classmethod
    def read(
        cls,
        timestamp: str,
        call_id: str,
        stored: str,
        is_error: bool,
        metadata: JsonObject | None,
        *,
        decode: Callable[[str], str],
    ) -> "ToolCallResponse":
        """A response as read from a file, ``content`` still ``stored``: ``decode`` makes it on first use."""
        payload = cls(timestamp, call_id, "", is_error, metadata)
        _CONTENT_SLOT.__set__(payload, StoredText(stored, decode))
        return payload

    @property
    def stored(self) -> str | None:
        """The output exactly as the file stored it, while it is unchanged since the read."""
        value = _CONTENT_SLOT.__get__(self)
        return value.stored if type(value) is StoredText else None

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, ToolCallResponse)
        if (self.timestamp, self.id, self.is_error, self.metadata) != (
            other.timestamp,
            other.id,
            other.is_error,
            other.metadata,
        ):
            return False
        stored = self.stored
        return (stored is not None and stored == other.stored) or self.content == other.content

    def __hash__(self) -> int:
        return hash((self.timestamp, self.id, self.content, self.is_error))


_CONTENT_SLOT: Any = vars(ToolCallResponse)["content"]
setattr(ToolCallResponse, "content", _StoredContent(_CONTENT_SLOT))  # noqa: B010


@quick_init
@dataclass(frozen=True, slots=True)
class InquiryRequest:
    """A question put to the user or a model while a tool runs.

    Inquiries belong to their turn but are never sent to a provider:

    >>> from turnmark.core import (ChatRequest, ConversationStream, InquiryRequest, InquiryResponse,
    ...     ToolCallRequest, ToolCallResponse, project, sequential_ids)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Delete old.log"))
    >>> stream = stream.extend([
    ...     ToolCallRequest(ts, "call_1", "fs_delete_file", {"path": "old.log"}),
    ...     InquiryRequest(ts, "call_1.confirm", {"source": "tool", "name": "fs_delete_file"},
    ...                    {"text": "Delete old.log?", "answer_type": {"type": "boolean"}}),
    ...     InquiryResponse(ts, "call_1.confirm", True),
    ...     ToolCallResponse(ts, "call_1", "deleted", False),
    ... ])
    >>> [entry.type_tag for entry in stream.turns()[0].events()][-3:]
    ['inquiry_request', 'inquiry_response', 'tool_call_response']
    >>> [entry.type_tag for entry in project(stream).view.entries]
    ['chat_request', 'tool_call_request', 'tool_call_response']
    """

    timestamp: str
    id: str
    source: JsonObject
    question: JsonObject
    metadata: JsonObject | None = None

    type_tag = "inquiry_request"


@quick_init
@dataclass(frozen=True, slots=True)
class InquiryResponse:
    """The answer to an inquiry (any JSON value).

    >>> from turnmark.core import ChatRequest, ConversationStream, InquiryRequest, InquiryResponse, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Deploy"))
    >>> question = InquiryRequest(ts, "q1", {"source": "assistant"}, {"text": "Which region?"})
    >>> stream = stream.extend([question, InquiryResponse(ts, "q1", "eu-west-1")])
    >>> answer = stream.entries[-1]
    >>> answer.payload.answer, answer.request_id
    ('eu-west-1', 'e000002')
    """

    timestamp: str
    id: str
    answer: Json
    metadata: JsonObject | None = None

    type_tag = "inquiry_response"


@quick_init
@dataclass(frozen=True, slots=True)
class ConfigDelta:
    """A config change, kept as written: JP never fails on a delta, and neither do we.

    A global entry: it belongs to the turn it stands in but is not a conversation event.

    >>> from turnmark.core import ChatRequest, ConfigDelta, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Hi"))
    >>> change = {"type": "config_delta", "timestamp": ts, "delta": {"assistant": {"model": {"id": "ollama/qwen3"}}}}
    >>> stream = stream.push(ConfigDelta(change))
    >>> stream.entries[-1].payload.delta, len(stream.entries), len(stream)
    ({'assistant': {'model': {'id': 'ollama/qwen3'}}}, 3, 2)
    """

    fields: JsonObject

    type_tag = "config_delta"

    @property
    def timestamp(self) -> Json:
        return self.fields.get("timestamp")

    @property
    def delta(self) -> Json:
        return self.fields.get("delta")


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallsPolicy:
    """A compaction's tool-call policy: ``omit``, or ``strip`` of requests and/or responses."""

    policy: Literal["strip", "omit"]
    request: bool = False
    response: bool = False

    @property
    def stripped(self) -> str:
        """What a ``strip`` policy takes out of the calls: ``arguments``, ``output``, both, or ``""``.

        >>> ToolCallsPolicy("strip", request=True, response=True).stripped
        'arguments and output'
        """
        parts = (("arguments", self.request), ("output", self.response))
        return " and ".join(part for part, on in parts if on) if self.policy == "strip" else ""


@quick_init
@dataclass(frozen=True, slots=True)
class Compaction:
    """A non-destructive compaction overlay over turns ``from_turn..=to_turn`` (RFD 064).

    Kept as written (``fields``); the codec validates the shape at load, so the
    accessors can rely on it. A summary overlay stands in for the turns it covers:

    >>> from turnmark.core import ChatRequest, ChatResponse, Compaction, ConversationStream, project, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Where are locks kept?")).push(ChatResponse(ts, "message", "Here."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Show the lock code.")).push(ChatResponse(ts, "message", "Now."))
    >>> stream = stream.push(Compaction.new(ts, 0, 0, summary="The user asked where locks are kept."))
    >>> overlay = stream.entries[-1].payload
    >>> overlay.from_turn, overlay.to_turn, overlay.summary
    (0, 0, 'The user asked where locks are kept.')
    >>> [(event.turn, event.event_id, event.synthetic) for event in project(stream).view.events]
    [(0, '~summary0.request', True), (0, '~summary0.answer', True), (1, 'e000005', False), (1, 'e000006', False)]
    """

    fields: JsonObject

    type_tag = "compaction"

    @classmethod
    def new(
        cls,
        timestamp: str,
        from_turn: int,
        to_turn: int,
        *,
        summary: str | None = None,
        reasoning_strip: bool = False,
        tool_calls: ToolCallsPolicy | None = None,
    ) -> "Compaction":
        fields: JsonObject = {"type": "compaction", "timestamp": timestamp, "from_turn": from_turn, "to_turn": to_turn}
        if summary is not None:
            fields["summary"] = {"summary": summary}
        if reasoning_strip:
            fields["reasoning"] = "strip"
        if tool_calls is not None:
            fields["tool_calls"] = (
                {"policy": "omit"}
                if tool_calls.policy == "omit"
                else {"policy": "strip", "request": tool_calls.request, "response": tool_calls.response}
            )
        return cls(fields)

    @property
    def timestamp(self) -> str:
        return str(self.fields["timestamp"])

    @property
    def from_turn(self) -> int:
        return int(self.fields["from_turn"])

    @property
    def to_turn(self) -> int:
        return int(self.fields["to_turn"])

    @property
    def summary(self) -> str | None:
        policy = self.fields.get("summary")
        return str(policy["summary"]) if isinstance(policy, dict) else None

    @property
    def reasoning_strip(self) -> bool:
        return self.fields.get("reasoning") == "strip"

    @property
    def tool_calls(self) -> ToolCallsPolicy | None:
        policy = self.fields.get("tool_calls")
        if not isinstance(policy, dict):
            return None
        if policy.get("policy") == "omit":
            return ToolCallsPolicy("omit")
        return ToolCallsPolicy("strip", bool(policy.get("request")), bool(policy.get("response")))


@quick_init
@dataclass(frozen=True, slots=True)
class Unknown:
    """An entry of a ``type`` this version does not know, kept verbatim (minus its ``event_id``).

    >>> from turnmark.core import ConversationStream, Unknown, sequential_ids
    >>> events = b'''[{"event_id": "f1aaaaa", "type": "future_kind", "timestamp": "2026-01-02 10:00:00.0", "x": [1]}]
    ... '''
    >>> stream = ConversationStream.from_json(events, b"{}", new_id=sequential_ids()).unwrap()
    >>> payload = stream.entries[0].payload
    >>> isinstance(payload, Unknown), payload.type_tag, payload.fields["x"]
    (True, 'future_kind', [1])
    >>> b'"x": [' in stream.to_json()
    True
    """

    fields: JsonObject

    @property
    def type_tag(self) -> str:
        tag = self.fields.get("type")
        return tag if isinstance(tag, str) else ""

    @property
    def timestamp(self) -> Json:
        return self.fields.get("timestamp")


ConversationEvent: TypeAlias = (
    TurnStart | ChatRequest | ChatResponse | ToolCallRequest | ToolCallResponse | InquiryRequest | InquiryResponse
)
Payload: TypeAlias = ConversationEvent | ConfigDelta | Compaction | Unknown

CONVERSATION_EVENT_TYPES: tuple[type, ...] = (
    TurnStart,
    ChatRequest,
    ChatResponse,
    ToolCallRequest,
    ToolCallResponse,
    InquiryRequest,
    InquiryResponse,
)

LINKABLE_TYPES: tuple[type, ...] = (
    ChatResponse,
    ToolCallRequest,
    ToolCallResponse,
    InquiryRequest,
    InquiryResponse,
)
"""The five answering families that carry a request link (RFD 098)."""

PROVIDER_VISIBLE_TYPES: tuple[type, ...] = (
    ChatRequest,
    ChatResponse,
    ToolCallRequest,
    ToolCallResponse,
)
"""JP's allowlist of events a provider sees; everything else is invisible."""


def is_conversation_event(payload: Payload) -> bool:
    """True for the seven event kinds (the ones that make up turns)."""
    return isinstance(payload, CONVERSATION_EVENT_TYPES)


def is_linkable(payload: Payload) -> bool:
    """True for the answering families stamped with a ``request_id``."""
    return isinstance(payload, LINKABLE_TYPES)
