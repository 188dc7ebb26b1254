"""Every error type of the core.

Fallible core functions return these as values (``returns.result.Failure``); the three exceptions
below never leave the core (``InvalidEntry``, ``InvalidDocument``) or mean a caller's bug (``IdSourceExhausted``).
"""

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class StreamError:
    """``events.json`` (or ``base_config.json``) cannot be read as a JP stream.

    ``index`` is the 0-based entry index when the problem is inside one entry;
    ``line``/``column`` are set when the JSON itself is malformed.

    >>> from turnmark.core import ConversationStream, sequential_ids
    >>> bad = b'[{"type": "chat_request", "timestamp": "2026-01-02 10:00:00.0"}]'
    >>> error = ConversationStream.from_json(bad, b"{}", new_id=sequential_ids()).failure()
    >>> error.index, error.type_tag, error.describe()
    (0, 'chat_request', 'entry 0 (chat_request): missing "content"')
    >>> ConversationStream.from_json(b"[{", b"{}", new_id=sequential_ids()).failure().describe()
    'line 1, column 3: the JSON ends early (truncated file?)'
    """

    message: str
    index: int | None = None
    type_tag: str | None = None
    line: int | None = None
    column: int | None = None
    document: str = "events.json"

    def place(self) -> str:
        """Where the problem is, for a one-line error message."""
        if self.line is not None:
            return f"line {self.line}, column {self.column}"
        if self.index is not None:
            kind = f" ({self.type_tag})" if self.type_tag else ""
            return f"entry {self.index}{kind}"
        return "top level"

    def describe(self) -> str:
        return f"{self.place()}: {self.message}"


@dataclass(frozen=True, slots=True)
class ConfigError:
    """A config file, variable or assignment turnmark cannot use; ``source`` names it."""

    source: str
    message: str

    def describe(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass(frozen=True, slots=True)
class TurnSummaryError:
    """Why a turn summary was not stored or cleared.

    >>> from turnmark.core import ChatRequest, ConversationStream, sequential_ids
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> error = stream.set_turn_summary("nosuch1", "Fixed the build").failure()
    >>> error.reason, error.describe()
    ('unknown_turn', "no turn_start with event_id 'nosuch1'")
    >>> stream.set_turn_summary("e000001", " \\n ").failure().reason
    'blank_summary'
    """

    reason: Literal["unknown_turn", "blank_summary"]
    turn_id: str

    def describe(self) -> str:
        if self.reason == "unknown_turn":
            return f"no turn_start with event_id {self.turn_id!r}"
        return "the summary is blank once normalized to one line"


BuildErrorKind = Literal[
    "orphaned_tool_call_response",
    "duplicate_tool_call_response",
    "orphaned_inquiry_response",
    "duplicate_inquiry_response",
]


@dataclass(frozen=True, slots=True)
class TurnBuildError:
    """Why a buffered turn was not flushed; ``position`` is the offending event's place in the buffer."""

    kind: BuildErrorKind
    id: str
    position: int

    def describe(self) -> str:
        what = self.kind.replace("_", " ")
        return f"{what} {self.id!r} (buffered event {self.position})"


@dataclass(frozen=True, slots=True)
class AnswerError:
    """The answer as a whole is unusable (not JSON, not the schema's shape).

    >>> from turnmark.core import parse_summaries
    >>> parse_summaries("Sure! Here are your summaries.", ("a1aaaaa",)).failure().message
    'the answer is not JSON'
    >>> parse_summaries('{"a1aaaaa": "Build fixed"}', ("a1aaaaa",)).failure().message
    'the answer has no "summaries" object'
    """

    message: str


@dataclass(frozen=True, slots=True)
class QueryError:
    """A ``find`` query (or option) that cannot be searched for; ``position`` counts characters from 1.

    >>> QueryError("unbalanced quote", 7, "query", 'a phrase is "two words"').describe()
    'query: unbalanced quote at position 7 (a phrase is "two words")'
    """

    message: str
    position: int
    what: str = "query"
    hint: str | None = None

    def describe(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.what}: {self.message} at position {self.position}{hint}"


class InvalidEntry(Exception):
    """Raised inside the codec, turned into a ``StreamError`` at its boundary."""

    def __init__(self, message: str, index: int | None = None, type_tag: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.index = index
        self.type_tag = type_tag


class InvalidDocument(Exception):
    """Malformed JSON: ``message`` at ``line``/``column`` of ``document``."""

    def __init__(self, message: str, line: int, column: int, document: str) -> None:
        super().__init__(message)
        self.error = StreamError(message, line=line, column=column, document=document)


class IdSourceExhausted(RuntimeError):
    """The injected ID source kept returning IDs already in use."""


@dataclass(frozen=True, slots=True)
class TurnSelectionError:
    """A ``--turn``, ``--last`` or ``--turns`` choice that names no turn of the conversation.

    >>> from turnmark.core.rendering.shown import TurnSelection, select_turns
    >>> select_turns((), TurnSelection(turn="k3m9x2a")).failure().describe()
    "no turn 'k3m9x2a' (give a turn's event_id or its number, as 'turnmark turns' shows them)"
    """

    message: str

    def describe(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class ArgumentRefused:
    """A history tool's argument that is not a conversation ID or a ``CONV:TURN`` address (a path, ``..``).

    >>> from turnmark.core.rendering.history_tools import conversation_argument
    >>> conversation_argument("../x").failure().describe()[:34]
    "not a conversation ID: '../x' (giv"
    """

    message: str

    def describe(self) -> str:
        return self.message
