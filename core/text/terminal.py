"""Text that cannot act on a terminal or break its encoding: control and bidi characters, and bytes
that were not UTF-8, shown escaped, never raw.

As JP's RFD 096 does, the user sees that something was there: ESC becomes ``\\u{1b}``, a
right-to-left override ``\\u{202e}``. Line feeds and tabs stay. A byte of a name or argument that is
not UTF-8 (Python holds it as a lone surrogate, ``\\udcff``, by PEP 383's surrogateescape) is shown
as the byte, ``\\xff``; any other lone surrogate as ``\\u{d800}``. JSON output escapes the same
characters as ``\\u`` sequences (``\\udcff`` for the byte), so a JSON reader gets the string back.
"""

import re

_SURROGATES = "\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_SURROGATES}]")
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f\u202a-\u202e\u2066-\u2069{_SURROGATES}]")
_NOT_UTF8 = re.compile(f"[{_SURROGATES}]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)
_SAFE_ASCII = bytes([9, 10, *range(32, 127)])


def _shown(character: str) -> str:
    code = ord(character)
    if code in _ESCAPED_BYTES:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{{{code:x}}}"


def visible(text: str) -> str:
    """``text`` with every C0 control (but line feed and tab), DEL, C1 control, bidi control and lone
    surrogate escaped."""
    if text.isascii() and not text.encode("ascii").translate(None, _SAFE_ASCII):
        return text
    return _UNSAFE.sub(lambda match: _shown(match.group()), text)


def json_escaped(document: str) -> str:
    """A JSON document with DEL, C1, bidi controls and lone surrogates written as ``\\uXXXX`` (C0 is
    already escaped)."""
    if document.isascii() and "\x7f" not in document:
        return document
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", document)


def escaped(text: str) -> str:
    """Every character of ``text`` escaped (``\\u{e9}``), for a stream whose encoding cannot hold it."""
    return "".join(map(_shown, text))


def not_utf8(text: str) -> str:
    """What of ``text`` is not UTF-8 (its lone surrogates), shown as :func:`visible` shows it; empty when
    ``text`` is all UTF-8."""
    return escaped("".join(_NOT_UTF8.findall(text)))


_SGR = re.compile("(\x1b\\[[0-9;]*m)")


def visible_styled(text: str) -> str:
    r"""``visible`` for text a renderer styled: its SGR colour and weight codes (``ESC [ … m``) are kept.

    >>> visible_styled("\x1b[1mbold\x1b[0m \x1b]0;title\x07")
    '\x1b[1mbold\x1b[0m \\u{1b}]0;title\\u{7}'
    """
    return "".join(part if index % 2 else visible(part) for index, part in enumerate(_SGR.split(text)))
