"""Turn summary text (RFD 126): normalizing a stored summary and the mechanical fallback."""

import re
import unicodedata

FALLBACK_MAX_CHARS = 72

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI, e.g. colours and cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, e.g. terminal titles and hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)


def _invisible(char: str) -> bool:
    """Control and format characters (bidi overrides, zero-width spaces), except the emoji joiner."""
    category = unicodedata.category(char)
    return category == "Cc" or (category == "Cf" and char != "\u200d")


_ASCII_CONTROLS = {code: (" " if chr(code).isspace() else None) for code in (*range(0x20), 0x7F) if code != 0x1B}
"""ASCII's invisible characters (all controls): a space for whitespace, removed otherwise (ESC is left to
``_ESCAPE_SEQUENCE``)."""


def one_line(text: str) -> str:
    """One line: escape sequences and invisible characters removed, whitespace runs collapsed to one space."""
    if text.isascii() and text.isprintable():
        return " ".join(text.split())
    without_escapes = _ESCAPE_SEQUENCE.sub("", text) if "\x1b" in text or "\x9b" in text else text
    if without_escapes.isascii():
        kept = without_escapes.translate(_ASCII_CONTROLS).replace("\x1b", "")
    else:
        kept = without_escapes.translate(_table(without_escapes))
    return " ".join(kept.split())


def _table(text: str) -> dict[int, str | None]:
    """What ``one_line`` does to each character of ``text``: whitespace becomes a space, invisible characters go
    (decided once per distinct character, not once per character)."""
    table: dict[int, str | None] = {**_ASCII_CONTROLS, 0x1B: None}
    for char in set(text):
        if char > "\x7f":
            if char.isspace():
                table[ord(char)] = " "
            elif _invisible(char):
                table[ord(char)] = None
    return table


def normalize_summary(text: str) -> str | None:
    """The form a turn summary is stored in, or ``None`` when nothing visible is left."""
    line = one_line(text)
    return line or None


def line_start(text: str, limit: int) -> str:
    """``truncate(one_line(text), limit)``, reading no more of a long text than it needs.

    Without an escape sequence, the one line of a text's start is the start of the text's one line.

    >>> line_start("Fix  the\\nbuild " * 400, 12) == truncate(one_line("Fix  the\\nbuild " * 400), 12)
    True
    """
    window = 2 * limit
    while window < len(text):
        head = text[:window]
        if "\x1b" in head or "\x9b" in head:
            break
        line = one_line(head)
        if len(line) > limit:
            return truncate(line, limit)
        window *= 4
    return truncate(one_line(text), limit)


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters, marking a cut with ``…``."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def cut_at_word(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary when one is near, marked with ``…``."""
    return text if len(text) <= limit else _cut(text[: limit - 1], limit)


def _cut(head: str, limit: int) -> str:
    space = head.rfind(" ")
    if space >= limit * 2 // 3:
        head = head[:space]
    return head.rstrip(" ,;:-—") + "…"


def width(text: str) -> int:
    """Characters, a wide (East Asian) one counting as two columns."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


def cut_to_width(text: str, columns: int) -> str:
    """At most ``columns`` columns (a wide character counts two), cut at a word boundary when one is near,
    marked with ``…``.

    >>> cut_to_width("Fix the retry loop in the stream handler", 20)
    'Fix the retry loop…'
    >>> cut_to_width("修复构建错误并添加测试", 9)
    '修复构建…'
    """
    if text.isascii():
        return cut_at_word(text, columns)
    used, fits = 0, None
    for end, char in enumerate(text):
        used += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        if fits is None and used > columns - 1:
            fits = end
        if used > columns:
            return _cut(text[:fits], columns)
    return text


def salvage_summary(text: str, limit: int) -> str | None:
    """What can be kept of a model's summary: its first non-empty line, on one clean line, cut at a word
    boundary to ``limit`` characters; ``None`` when nothing visible is left."""
    for line in text.splitlines():
        collapsed = one_line(line)
        if collapsed:
            return cut_at_word(collapsed, limit)
    return None


def mechanical_summary(request_content: str) -> str | None:
    """RFD 126's fallback: the first non-empty line of a request, on one line, at most 72 characters.

    Lines end at ``\\n`` only, as in JP (Rust's ``str::lines``).
    """
    start, size = 0, len(request_content)
    while start <= size:
        end = request_content.find("\n", start)
        if end < 0:
            end = size
        line = line_start(request_content[start:end], FALLBACK_MAX_CHARS)
        if line:
            return line
        start = end + 1
    return None
