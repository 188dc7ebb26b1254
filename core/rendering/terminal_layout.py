"""The terminal's layout of ``show``, turn by turn: lines of styled runs, Markdown laid out for a terminal.

A turn's lines depend on nothing after it, so ``show`` writes each turn as soon as it is laid out (the first
screen costs the load, ``| head`` ends early). Markdown is parsed by markdown-it with raw HTML off (it shows
as text) and tables and strikethrough on; paragraphs and list items wrap at the width, code keeps its lines
and is highlighted by pygments' tokens; a link shows its target beside its text, an image its alt text. Text
in which Markdown marks nothing skips the parser (``plain_paragraphs``). Every string from the conversation
is made ``visible`` first; styles are names (``bold``, ``dim``, ``italic``, ``underline``, ``reverse``,
``strike`` and colours) the shell turns into a terminal's codes, or drops.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from turnmark.core.rendering.shown import (
    ShownConversation,
    ShownEvent,
    ShownStream,
    ShownTurn,
    answer_text,
    cut,
    minute,
)
from turnmark.core.text.indented_json import indented
from turnmark.core.text.terminal import visible

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

Run = tuple[str, str]
"""A piece of text and its style (space-separated names; ``""``: plain)."""
Line = tuple[Run, ...]

_EVENT_STYLE = {"request": "bold cyan", "message": "bold green", "data": "bold green"}
_OUTCOME_STYLE = {"ok": "green", "error": "bold red", "pending": "yellow"}
_OUTPUT_CHARS = 1_500
_MARKS = {"strong_open": "bold", "em_open": "italic", "s_open": "strike"}


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes (wide East Asian characters and emoji two, combining marks none)."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _joined(*styles: str) -> str:
    return " ".join(style for style in styles if style)


def wrap(runs: list[Run], width: int) -> list[Line]:
    """``runs`` as lines of at most ``width`` cells, broken at spaces (a word longer than a line stays whole);
    a ``\n`` in a run breaks the line there. Spaces between words are kept, at a break dropped."""
    if len(runs) == 1 and runs[0][0].isascii() and "\n" not in runs[0][0]:
        return _wrap_plain(*runs[0], width)
    return wrap_words(runs, width)


def _wrap_plain(text: str, style: str, width: int) -> list[Line]:
    """``wrap`` of one plain run of ASCII, found by searching for the spaces rather than walking the words."""
    text = text.strip(" ")
    lines: list[Line] = []
    while len(text) > width:
        cut = text.rfind(" ", 0, width + 1)
        if cut == -1:
            cut = text.find(" ", width)
            if cut == -1:
                break
        lines.append(((text[:cut].rstrip(" "), style),))
        text = text[cut:].lstrip(" ")
    lines.append(((text, style),) if text else ())
    return lines


def wrap_words(runs: list[Run], width: int) -> list[Line]:
    """``wrap``, word by word (any runs)."""
    lines: list[Line] = []
    line: list[Run] = []
    used = 0
    spaces = 0
    for text, style in runs:
        for part_index, part in enumerate(text.split("\n")):
            if part_index:
                lines.append(tuple(line))
                line, used, spaces = [], 0, 0
            for word_index, word in enumerate(part.split(" ")):
                spaces += word_index > 0
                if not word:
                    continue
                size = cells(word)
                gap = spaces if line else 0
                if line and used + gap + size > width:
                    lines.append(tuple(line))
                    line, used, gap = [], 0, 0
                if gap:
                    line.append((" " * gap, line[-1][1]))
                line.append((word, style))
                used += gap + size
                spaces = 0
    if line or not lines:
        lines.append(tuple(line))
    return lines


def _indented(lines: list[Line], first: str, rest: str | None = None, style: str = "") -> list[Line]:
    """``lines`` behind a prefix (``first`` on the first line, ``rest`` on the others)."""
    later = first if rest is None else rest
    return [((first if index == 0 else later, style), *line) for index, line in enumerate(lines)]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """The Markdown parser (loaded with the first text Markdown marks: ``plain_paragraphs`` needs none)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return None


@lru_cache(maxsize=1)
def _token_styles() -> tuple[tuple[_TokenType, str], ...]:
    from pygments.token import Comment, Keyword, Literal, Name, Number, Operator, String

    return (
        (Comment, "dim italic"),
        (Keyword, "magenta bold"),
        (String, "green"),
        (Number, "cyan"),
        (Literal, "cyan"),
        (Name.Function, "blue"),
        (Name.Class, "blue bold"),
        (Name.Builtin, "cyan"),
        (Operator, "yellow"),
    )


def _token_style(kind: _TokenType) -> str:
    for parent, style in _token_styles():
        if kind[: len(parent)] == parent:
            return style
    return ""


def code_lines(code: str, language: str = "", style: str = "") -> list[Line]:
    """A code block's lines, each token styled by its kind when the language is known."""
    code = code.rstrip("\n")
    lexer = _lexer(language.strip().split(" ")[0].lower()) if language.strip() else None
    if lexer is None:
        return [((line, style),) if line else () for line in code.split("\n")]
    lines: list[list[Run]] = [[]]
    for kind, value in lexer.get_tokens(code):
        token_style = _joined(style, _token_style(kind))
        for index, piece in enumerate(value.split("\n")):
            if index:
                lines.append([])
            if piece:
                lines[-1].append((piece, token_style))
    while lines and not lines[-1]:
        lines.pop()
    return [tuple(line) for line in lines]


@dataclass
class _Inline:
    """The runs of one inline token stream, with the styles open at each point."""

    base: str
    runs: list[Run] = field(default_factory=list)
    open: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def style(self, *more: str) -> str:
        return _joined(self.base, *self.open, *more)

    def add(self, token: Token) -> None:
        kind = token.type
        if kind == "text":
            self.runs.append((token.content, self.style()))
        elif kind == "code_inline":
            self.runs.append((token.content, self.style("cyan")))
        elif kind in ("softbreak",):
            self.runs.append((" ", self.style()))
        elif kind == "hardbreak":
            self.runs.append(("\n", self.style()))
        elif kind in _MARKS:
            self.open.append(_MARKS[kind])
        elif kind in ("strong_close", "em_close", "s_close") and self.open:
            self.open.pop()
        elif kind == "link_open":
            self.links.append(str(token.attrGet("href") or ""))
            self.open.append("underline")
        elif kind == "link_close":
            if self.open:
                self.open.pop()
            target = self.links.pop() if self.links else ""
            if target:
                self.runs.append((f" ({target})", self.style("dim")))
        elif kind == "image":
            self.runs.append((f"🌆 {token.content}", self.style()))


def _inline_runs(token: Token, style: str) -> list[Run]:
    inline = _Inline(style)
    for child in token.children or ():
        inline.add(child)
    return inline.runs


@dataclass
class _Container:
    """An open list item or quote: the prefix of its first line, then of the others."""

    first: str
    rest: str
    style: str = ""
    started: bool = False


_PLAIN = re.compile(r"[A-Za-z0-9 \n.,;:'\"?()/%@$]*")
_NOT_PLAIN_LINE = re.compile(r"^(?: {4}| *\d+[.)]|.* $)", re.MULTILINE)


def plain_paragraphs(text: str) -> list[str] | None:
    """The paragraphs of a text in which Markdown marks nothing (no mark character, no indented code, no
    list number, no line break by trailing spaces), each on one line as markdown-it joins it; ``None`` for
    any other text. The layout's shortcut past the parser, held equal to it in the tests."""
    if _PLAIN.fullmatch(text) is None or _NOT_PLAIN_LINE.search(text) is not None:
        return None
    paragraphs: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def markdown_lines(text: str, width: int, style: str = "") -> list[Line]:
    """A message's Markdown laid out in ``width`` cells; blocks apart by a blank line (a tight list's items
    together)."""
    plain = plain_paragraphs(text)
    if plain is not None:
        return _spaced([(wrap([(paragraph, style)], max(10, width)), False, False) for paragraph in plain])
    tokens = _parser().parse(visible(text))
    blocks: list[tuple[list[Line], bool, bool]] = []
    """Each block's lines, whether it follows the one before with no blank line, and whether it is tight."""
    open_ones: list[_Container] = []
    numbers: list[int | None] = []
    heading = ""
    cells_of_row: list[list[Run]] = []

    apart = False
    """A list just ended: the next block stands apart from it, tight or not."""

    def place(lines: list[Line], tight: bool = False) -> None:
        nonlocal apart
        joins = tight and not apart and bool(blocks) and blocks[-1][2]
        apart = False
        first: list[Run] = [(c.rest if c.started else c.first, c.style) for c in open_ones]
        rest: list[Run] = [(c.rest, c.style) for c in open_ones]
        for container in open_ones:
            container.started = True
        placed = [tuple(first if index == 0 else rest) + line for index, line in enumerate(lines)]
        blocks.append((placed, joins, tight))

    def room() -> int:
        return max(10, width - sum(cells(container.rest) for container in open_ones))

    for index, token in enumerate(tokens):
        kind = token.type
        quoted = "dim" if any(container.first == "▌ " for container in open_ones) else ""
        if kind == "heading_open":
            heading = "bold underline" if token.tag == "h1" else "bold"
        elif kind == "heading_close":
            heading = ""
        elif kind == "inline" and cells_of_row and tokens[index - 1].type in ("th_open", "td_open"):
            cells_of_row[-1] = _inline_runs(token, _joined(style, quoted))
        elif kind == "inline":
            tight = index > 0 and tokens[index - 1].type == "paragraph_open" and tokens[index - 1].hidden
            place(wrap(_inline_runs(token, _joined(style, heading, quoted)), room()), tight)
        elif kind in ("fence", "code_block"):
            info = token.info if kind == "fence" else ""
            place([((" ", ""), *line) for line in code_lines(token.content, info, style)] or [()])
        elif kind == "hr":
            place([(("─" * room(), _joined(style, "dim")),)])
        elif kind == "blockquote_open":
            open_ones.append(_Container("▌ ", "▌ ", "dim"))
        elif kind in ("blockquote_close", "list_item_close"):
            open_ones.pop()
        elif kind in ("bullet_list_open", "ordered_list_open"):
            numbers.append(int(token.attrGet("start") or 1) if kind == "ordered_list_open" else None)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            numbers.pop()
            apart = not numbers
        elif kind == "list_item_open":
            number = numbers[-1] if numbers else None
            marker = "• " if number is None else f"{number}. "
            if number is not None:
                numbers[-1] = number + 1
            open_ones.append(_Container(marker, " " * len(marker)))
        elif kind == "tr_open":
            cells_of_row = []
        elif kind in ("th_open", "td_open"):
            cells_of_row.append([])
        elif kind == "tr_close":
            row: list[Run] = []
            for position, cell in enumerate(cells_of_row):
                if position:
                    row.append((" │ ", _joined(style, "dim")))
                row += cell
            place(wrap(row, room()), tight=True)
            cells_of_row = []
    return _spaced(blocks)


def _spaced(blocks: list[tuple[list[Line], bool, bool]]) -> list[Line]:
    """The blocks one after another, a blank line before each that does not join the one before."""
    lines: list[Line] = []
    for index, (block, joins, _) in enumerate(blocks):
        if index and not joins:
            lines.append(())
        lines += block
    return lines


def _event(event: ShownEvent, detail: str, width: int) -> list[Line]:
    dim = "dim" if event.excluded is not None else ""
    why: list[Line] = []
    if event.excluded is not None:
        why = _indented(wrap([("⊘ " + visible(event.excluded.text), "dim red")], width - 2), "  ")
    if event.kind == "tool" and event.tool is not None:
        tool = event.tool
        runs = [(visible(tool.call) + " ", dim or "bold"), (visible(tool.outcome), dim or _OUTCOME_STYLE[tool.status])]
        shown = _indented(wrap([("🔧 ", dim or "bold"), *runs], width - 2), "  ") + why
        if detail in ("args", "full") and tool.arguments:
            arguments = visible(indented(tool.arguments))
            shown += [(("     ", ""), (line, "dim")) for line in arguments.split("\n")]
        if detail == "full" and tool.output is not None:
            output, said = cut(tool.output, _OUTPUT_CHARS)
            shown += [(("     ", ""), (line, "dim")) if line else () for line in visible(output).split("\n")]
            if said is not None:
                shown.append((("     ", ""), (f"[{visible(said)}]", "italic dim")))
        return shown
    when = minute(event.timestamp).rpartition(" ")[2]
    if event.kind == "inquiry":
        answered = f"→ {visible(answer_text(event.answer))}"
        if "\n" not in event.text.strip():
            return (
                _indented(wrap([(f"{visible(event.title)}: {visible(event.text)} {answered}", dim)], width - 2), "  ")
                + why
            )
        question = _indented(markdown_lines(event.text, width - 4, dim), "    ")
        return [(("  ", ""), (f"{event.title}:", dim)), *question, (("    ", ""), (answered, dim)), *why]
    if event.kind == "reasoning":
        style, body_style = "italic dim", "italic dim"
    else:
        style, body_style = _EVENT_STYLE.get(event.kind, "bold"), dim
    text = f"```json\n{event.text}\n```" if event.kind == "data" else event.text
    head: list[Run] = [("▌ ", style), (event.title, dim or style), (f" · {when}", "dim")]
    if event.excluded is not None:
        head.append(("  (left out of what the model sees)", "dim red"))
    body = _indented(markdown_lines(text, width - 2, body_style), "  ")
    return [tuple(head), *why, *body, ()]


def turn_lines(turn: ShownTurn, detail: str, width: int) -> list[Line]:
    """One turn's lines: its heading, the compaction notes, then each event."""
    lines = wrap([(visible(turn.heading), "bold reverse")], width)
    lines.append(())
    for note in turn.notes:
        lines += wrap([("↯ " + visible(note), "yellow")], width)
    if turn.summary_run is not None:
        lines += _indented(wrap([(visible(turn.summary_run.text), "yellow dim")], width - 2), "  ")
    if turn.notes:
        lines.append(())
    one_line = False
    for event in turn.events:
        block = event.kind not in ("tool", "inquiry")
        if block and one_line:
            lines.append(())
        lines += _event(event, detail, width)
        one_line = not block
    if one_line:
        lines.append(())
    return lines


def title_lines(conversation: ShownConversation | ShownStream, width: int) -> list[Line]:
    """The page's title: the conversation's, its ID and which turns are shown, then a blank line."""
    identity = visible(str(conversation.conversation.get("id", "")))
    title = wrap([(visible(conversation.title), "bold"), (f"  {identity} · {conversation.scope}", "dim")], width)
    return [*title, ()]
