"""The terminal's text of ``turnmark show``: the core's layout (``core/rendering/terminal_layout.py``) with
its style names as SGR codes (bold, dim, italic, underline, reverse, eight colours), or plain, turn by turn.

Every string from the conversation was made ``visible`` by the layout; the only escape sequences here are
the SGR codes added below.
"""

from __future__ import annotations

from turnmark.core.rendering.shown import Document, ShownConversation, ShownStream
from turnmark.core.rendering.terminal_layout import Line, title_lines, turn_lines

_CODES = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "underline": "4",
    "reverse": "7",
    "strike": "9",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
_RESET = "\x1b[0m"


def _sgr(style: str) -> str:
    codes = [_CODES[name] for name in style.split() if name in _CODES]
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def _line(line: Line, color: bool) -> str:
    if not color:
        return "".join(text for text, _ in line).rstrip(" ")
    parts = []
    for text, style in line:
        start = _sgr(style)
        parts.append(f"{start}{text}{_RESET}" if start else text)
    return "".join(parts).rstrip(" ")


def terminal_document(conversation: ShownConversation | ShownStream, width: int, color: bool) -> Document:
    """The reader's view for a terminal as a ``Document``: the title, then one chunk per turn, ending in one line
    feed."""
    tools = conversation.options.tools

    def text(lines: list[Line]) -> str:
        return "".join(_line(line, color) + "\n" for line in lines)

    return Document(
        text(title_lines(conversation, width)), lambda turn, _: text(turn_lines(turn, tools, width)), once=True
    )


def terminal_text(conversation: ShownConversation, width: int, color: bool) -> str:
    """The whole view as one text."""
    return "".join(terminal_document(conversation, width, color).chunks(conversation.turns))
