"""JSON documents as JP writes them: decoded with the place of an error (a line and column, for a one-line
message), encoded as JP lays them out; apart from reading entries (``codec``), which ``metadata.json`` and the
light reader's commands do not load."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec
from returns.result import Failure, Result, Success

from turnmark.core.stream.json_value import Json

if TYPE_CHECKING:
    from turnmark.core.errors import StreamError

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def decode_document(data: bytes, document: str) -> Json:
    """Parse JSON bytes, raising ``StreamError``-ready ``InvalidDocument`` with a line and column."""
    try:
        return _decoder.decode(data)
    except RecursionError:
        from turnmark.core.errors import InvalidDocument  # the error types, only where a document is refused

        raise InvalidDocument("the JSON is nested too deeply", 1, 1, document) from None
    except msgspec.DecodeError as error:
        from turnmark.core.errors import InvalidDocument

        message = str(error)
        raise InvalidDocument(_describe_decode_error(data, message), *_locate(data, message), document) from None


def read_document(data: bytes, document: str) -> Result[Json, StreamError]:
    """``decode_document`` as a value: the document, or the ``StreamError`` its ``InvalidDocument`` carries (a
    document that does not decode is decoded again to say where)."""
    try:
        return Success(_decoder.decode(data))
    except (msgspec.DecodeError, RecursionError):
        pass
    from turnmark.core.errors import InvalidDocument

    try:
        return Success(decode_document(data, document))
    except InvalidDocument as refused:
        return Failure(refused.error)


_entries_decoder = msgspec.json.Decoder(list[msgspec.Raw])


def decode_entries(data: bytes, document: str) -> list[msgspec.Raw] | None:
    """The elements of a JSON array, each as its bytes (``decode_entry`` decodes one), or ``None`` for a
    document that is not an array; the errors of ``decode_document``.

    A file read this way is never decoded whole: each entry's values can be dropped as soon as it is read.
    """
    try:
        return _entries_decoder.decode(data)
    except (msgspec.MsgspecError, RecursionError):
        pass
    decode_document(data, document)
    return None


def decode_entry(raw: msgspec.Raw, data: bytes, document: str) -> Json:
    """One element of ``decode_entries(data, document)``, with the errors ``decode_document`` would give."""
    try:
        return _decoder.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        pass
    decode_document(data, document)
    return decode_document(bytes(raw), document)


def _describe_decode_error(data: bytes, message: str) -> str:
    if "truncated" in message:
        return "the JSON ends early (truncated file?)"
    if "UTF-8" in message:
        return "invalid UTF-8"
    text = re.sub(r"\s*\(byte \d+\)$", "", message)
    return text.replace("JSON is malformed: ", "invalid JSON: ")


def _locate(data: bytes, message: str) -> tuple[int, int]:
    match = re.search(r"\(byte (\d+)\)", message)
    if match:
        offset = int(match.group(1))
    elif "truncated" in message:
        offset = len(data)
    else:
        try:
            data.decode("utf-8")
            offset = 0
        except UnicodeDecodeError as error:
            offset = error.start
    before = data[:offset]
    line = before.count(b"\n") + 1
    column = offset - (before.rfind(b"\n") + 1) + 1
    return line, column


def json_text(value: Json) -> str:
    """A value as compact JSON text (how a message names a value as the file has it)."""
    return _encoder.encode(value).decode()


def encode_document(value: Json) -> bytes:
    """Serialize like JP: two-space pretty JSON, raw UTF-8, one trailing newline."""
    return msgspec.json.format(_encoder.encode(value), indent=2) + b"\n"
