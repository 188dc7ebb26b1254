"""Text that cannot act on a terminal: control and bidi characters shown escaped, never raw.

As JP's RFD 096 does, the user sees that something was there: ESC becomes
``\\u{1b}``, a right-to-left override ``\\u{202e}``. Line feeds and tabs stay.
JSON output escapes the same characters as ``\\u`` sequences.
"""

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with every C0 control (but line feed and tab), DEL, C1 control and bidi control escaped."""
    return _UNSAFE.sub(lambda match: f"\\u{{{ord(match.group()):x}}}", text)


def json_escaped(document: str) -> str:
    """A JSON document with DEL, C1 and bidi controls written as ``\\uXXXX`` (C0 is already escaped)."""
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", document)


_SGR = re.compile("(\x1b\\[[0-9;]*m)")


def visible_styled(text: str) -> str:
    r"""``visible`` for text a renderer styled: its SGR colour and weight codes (``ESC [ … m``) are kept.

    >>> visible_styled("\x1b[1mbold\x1b[0m \x1b]0;title\x07")
    '\x1b[1mbold\x1b[0m \\u{1b}]0;title\\u{7}'
    """
    return "".join(part if index % 2 else visible(part) for index, part in enumerate(_SGR.split(text)))
