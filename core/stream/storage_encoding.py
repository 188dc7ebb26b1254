"""JP's base64 storage encoding of tool arguments, tool output and metadata.

On disk every string leaf of ``metadata`` and ``tool_call_request.arguments``
and the ``tool_call_response.content`` string are standard base64 (``+/``,
``=`` padded) of UTF-8. Reading is lenient: a string that is not canonical
standard base64 of valid UTF-8 (hand-typed text, URL-safe base64 from an older
JP, base64 of bytes that are not UTF-8) is read exactly as written. Such a
string is remembered (``kept``) and written back as it was while its value is
unchanged, so an entry nobody touched keeps its bytes; any other string is
encoded as JP encodes it.
"""

import binascii

import msgspec

from turnmark.core.stream.json_value import Json

_LOW_FOUR_BITS_ZERO = frozenset("AQgw")
_LOW_TWO_BITS_ZERO = frozenset("AEIMQUYcgkosw048")
_strict_base64 = msgspec.json.Decoder(bytes)


def decode_string(text: str) -> str:
    """Decode one stored string, or return it unchanged when it is not canonical base64 of UTF-8.

    msgspec's strict base64 decoder (twice as fast as ``binascii`` here) rejects
    foreign characters and bad padding; the one non-canonical form it accepts,
    non-zero bits in the last quantum, is checked here (Rust's ``STANDARD``
    engine rejects it too). Quotes and backslashes are never base64, and would
    otherwise be read as JSON escapes.
    """
    if not text.isascii() or '"' in text or "\\" in text:
        return text
    try:
        raw = _strict_base64.decode(b'"' + text.encode("ascii") + b'"')
    except msgspec.MsgspecError:
        return text
    if text.endswith("=="):
        if text[-3] not in _LOW_FOUR_BITS_ZERO:
            return text
    elif text.endswith("=") and text[-2] not in _LOW_TWO_BITS_ZERO:
        return text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return text


def encode_string(text: str, kept: frozenset[str] = frozenset()) -> str:
    """Encode one string the way JP stores it (a ``kept`` string, read as written, is written as read)."""
    if text in kept:
        return text
    return binascii.b2a_base64(text.encode("utf-8"), newline=False).decode("ascii")


def decode_kept(text: str, kept: set[str]) -> str:
    """``decode_string``, adding a string read as written to ``kept``."""
    decoded = decode_string(text)
    if decoded is text:
        kept.add(text)
    return decoded


def decode_leaves(value: Json, kept: set[str]) -> Json:
    """Decode every string leaf of a JSON tree (object keys are never encoded); see ``decode_kept``."""
    if isinstance(value, str):
        return decode_kept(value, kept)
    if isinstance(value, dict):
        return {key: decode_leaves(item, kept) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_leaves(item, kept) for item in value]
    return value


def encode_leaves(value: Json, kept: frozenset[str] = frozenset()) -> Json:
    """Encode every string leaf of a JSON tree."""
    if isinstance(value, str):
        return encode_string(value, kept)
    if isinstance(value, dict):
        return {key: encode_leaves(item, kept) for key, item in value.items()}
    if isinstance(value, list):
        return [encode_leaves(item, kept) for item in value]
    return value
