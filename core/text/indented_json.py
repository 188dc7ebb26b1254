"""JSON as turnmark writes it for people and scripts: ``json.dumps(value, ensure_ascii=False, indent=2)``.

The standard library's indenting encoder is written in Python (its C encoder only writes compact JSON),
which made ``show --format json`` of a long conversation mostly encoding. Here the C encoder writes the
compact text and ``msgspec`` indents it, copying every number and string token as written, so the text is
the same character for character. What ``msgspec`` cannot read (``NaN``, ``Infinity``, a lone surrogate
that is not UTF-8) takes the standard library's own way.
"""

import json

import msgspec


def indented(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``, faster."""
    compact = json.dumps(value, ensure_ascii=False)
    try:
        return msgspec.json.format(compact.encode("utf-8"), indent=2).decode("utf-8")
    except (UnicodeEncodeError, msgspec.DecodeError):
        return json.dumps(value, ensure_ascii=False, indent=2)
