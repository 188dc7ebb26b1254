"""The one line shown under a hit: the best-matching text around its first match, with the matches marked.

The index (or a regex scan) hands over a column with each match between ``MARK_OPEN`` and
``MARK_CLOSE``; the heaviest scope with a match is chosen, its first match traced to its event through
the spans, and a window of about ``WIDTH`` characters of that event's text kept: its line breaks kept as
``\n`` (JSON gives them so), each line made one line, empty lines dropped; on a terminal a line break is
shown as ``⏎``, so a snippet is one line there.
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from turnmark.core.text.summary_text import one_line
from turnmark.core.text.terminal import visible

from .documents import MARK_CLOSE, MARK_OPEN, Span

WIDTH = 100
LEAD = 30
_MARKERS = re.compile(f"([{MARK_OPEN}{MARK_CLOSE}])")
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
LINE_BREAK_SHOWN = "⏎"


@dataclass(frozen=True, slots=True)
class Snippet:
    """Where a turn matched: the scope and event, and the text around the match (markers included)."""

    scope: str
    event_id: str | None
    excluded: bool
    marked: str

    @property
    def text(self) -> str:
        return _unmark(self.marked)[0]

    def marks(self) -> list[tuple[int, int]]:
        """The matches as ``[start, end)`` offsets in ``text``."""
        return _unmark(self.marked)[1]

    def render(self, opening: str, closing: str) -> str:
        """The snippet safe for a terminal, on one line, each match between ``opening`` and ``closing``.

        >>> Snippet("answers", "e000003", False, "the \\x1b[31mlock\\ue000 timeout\\ue001 was\\nset").render("[", "]")
        'the \\\\u{1b}[31mlock[ timeout] was⏎set'
        """
        shown = visible(self.marked).replace("\n", LINE_BREAK_SHOWN)
        return shown.replace(MARK_OPEN, opening).replace(MARK_CLOSE, closing)


def _unmark(marked: str) -> tuple[str, list[tuple[int, int]]]:
    plain: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    start = 0
    for piece in _MARKERS.split(marked):
        if piece == MARK_OPEN:
            start = length
        elif piece == MARK_CLOSE:
            marks.append((start, length))
        else:
            plain.append(piece)
            length += len(piece)
    return "".join(plain), marks


def _window(text: str, marks: list[tuple[int, int]], low: int, high: int) -> str:
    first = marks[0][0]
    start = max(low, min(first - LEAD, high - WIDTH))
    end = min(high, max(start + WIDTH, marks[0][1]))
    pieces: list[str] = []
    cursor = start
    for mark_start, mark_end in marks:
        if mark_end <= start or mark_start >= end:
            continue
        low_end, high_end = max(mark_start, start), min(mark_end, end)
        pieces += [text[cursor:low_end], MARK_OPEN, text[low_end:high_end], MARK_CLOSE]
        cursor = high_end
    pieces.append(text[cursor:end])
    lines = "\n".join(line for line in map(one_line, _LINE_BREAK.split("".join(pieces))) if line)
    return ("…" if start > low else "") + lines + ("…" if end < high else "")


def snippet(scope: str, highlighted: str, spans: Sequence[Span]) -> Snippet | None:
    """The snippet of one highlighted column, or ``None`` when nothing in it is marked.

    >>> spans = (Span(0, "e000002", False), Span(12, "e000005", True))
    >>> found = snippet("answers", "Looked at it\\nThe \\ue000lock\\ue001 waits\\n\\n  for it", spans)
    >>> found.event_id, found.excluded, found.text, found.marks()
    ('e000005', True, 'The lock waits\\nfor it', [(4, 8)])
    """
    text, marks = _unmark(highlighted)
    if not marks:
        return None
    first = marks[0][0]
    index = max((i for i, span in enumerate(spans) if span.offset <= first), default=0)
    low = spans[index].offset if spans else 0
    high = spans[index + 1].offset - 1 if index + 1 < len(spans) else len(text)
    span = spans[index] if spans else Span(0, None, False)
    return Snippet(scope, span.event_id, span.excluded, _window(text, marks, low, high))


def best_snippet(columns: Sequence[tuple[str, str, Sequence[Span]]]) -> Snippet | None:
    """The snippet of the first column (heaviest scope first) with a match."""
    for scope, highlighted, spans in columns:
        found = snippet(scope, highlighted, spans)
        if found is not None:
            return found
    return None


class Found(Protocol):
    """Where a match is (``re.Match`` and ``re2``'s match have it)."""

    def start(self) -> int: ...

    def end(self) -> int: ...


class Pattern(Protocol):
    """A compiled regex: ``re.Pattern`` or a linear-time one (``re2``)."""

    def finditer(self, text: str) -> Iterator[Found]: ...


def regex_marked(text: str, pattern: Pattern) -> str | None:
    """``text`` with every non-empty match of ``pattern`` marked, or ``None`` when it has none.

    >>> regex_marked("retry after 100 ms, then 200 ms", re.compile(r"\\d+ ms"))
    'retry after \\ue000100 ms\\ue001, then \\ue000200 ms\\ue001'
    """
    pieces: list[str] = []
    cursor = 0
    for match in pattern.finditer(text):
        if match.end() == match.start():
            continue
        pieces += [text[cursor : match.start()], MARK_OPEN, text[match.start() : match.end()], MARK_CLOSE]
        cursor = match.end()
    if not pieces:
        return None
    pieces.append(text[cursor:])
    return "".join(pieces)
