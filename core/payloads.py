"""The payload kinds of a stream entry, with the fields JP gives them.

Seven conversation events (``turn_start`` … ``inquiry_response``), the two
global entries (``config_delta``, ``compaction``) and ``Unknown`` for any
other ``type``, kept verbatim. Payloads hold decoded values: base64 storage
encoding is applied only by the codec. ``None`` on an optional field means the
key is absent.
"""

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .json_value import Json, JsonObject

ResponseVariant: TypeAlias = Literal["message", "reasoning", "data"]


@dataclass(frozen=True, slots=True)
class TurnStart:
    """Opens a turn; carries the RFD 126 turn summary when one is stored."""

    timestamp: str
    summary: str | None = None
    metadata: JsonObject | None = None

    type_tag = "turn_start"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """The user's request: the originating request of the events that answer it."""

    timestamp: str
    content: str
    schema: JsonObject | None = None
    author: str | None = None
    metadata: JsonObject | None = None

    type_tag = "chat_request"


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """An assistant answer: a message, reasoning, or structured data (``variant``)."""

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


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call made by the assistant; ``id`` pairs it with its response."""

    timestamp: str
    id: str
    name: str
    arguments: JsonObject | None = None
    metadata: JsonObject | None = None

    type_tag = "tool_call_request"


@dataclass(frozen=True, slots=True)
class ToolCallResponse:
    """The output of a tool call (``is_error`` for the error variant)."""

    timestamp: str
    id: str
    content: str
    is_error: bool
    metadata: JsonObject | None = None

    type_tag = "tool_call_response"


@dataclass(frozen=True, slots=True)
class InquiryRequest:
    """A question put to the user or a model while a tool runs."""

    timestamp: str
    id: str
    source: JsonObject
    question: JsonObject
    metadata: JsonObject | None = None

    type_tag = "inquiry_request"


@dataclass(frozen=True, slots=True)
class InquiryResponse:
    """The answer to an inquiry (any JSON value)."""

    timestamp: str
    id: str
    answer: Json
    metadata: JsonObject | None = None

    type_tag = "inquiry_response"


@dataclass(frozen=True, slots=True)
class ConfigDelta:
    """A config change, kept as written: JP never fails on a delta, and neither do we."""

    fields: JsonObject

    type_tag = "config_delta"

    @property
    def timestamp(self) -> Json:
        return self.fields.get("timestamp")

    @property
    def delta(self) -> Json:
        return self.fields.get("delta")


@dataclass(frozen=True, slots=True)
class ToolCallsPolicy:
    """A compaction's tool-call policy: ``omit``, or ``strip`` of requests and/or responses."""

    policy: Literal["strip", "omit"]
    request: bool = False
    response: bool = False


@dataclass(frozen=True, slots=True)
class Compaction:
    """A non-destructive compaction overlay over turns ``from_turn..=to_turn`` (RFD 064).

    Kept as written (``fields``); the codec validates the shape at load, so the
    accessors can rely on it.
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


@dataclass(frozen=True, slots=True)
class Unknown:
    """An entry of a ``type`` this version does not know, kept verbatim (minus its ``event_id``)."""

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
