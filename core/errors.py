"""Typed errors the core returns (never raises) for bad input."""

from dataclasses import dataclass


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
