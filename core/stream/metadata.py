"""A conversation's ``metadata.json`` (jp-format §1.4); its ID and folder name are ``conversation_ids``'."""

from dataclasses import dataclass

from returns.result import Failure, Result, Success

from turnmark.core.errors import InvalidDocument, StreamError
from turnmark.core.stream.json_document import decode_document
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.timestamps import is_timestamp


@dataclass(frozen=True, slots=True)
class Metadata:
    """What turnmark reads from ``metadata.json``; the file itself is never rewritten by it."""

    last_activated_at: str
    title: str | None = None
    archived_at: str | None = None
    forked_from: str | None = None
    """The conversation this one was forked from (``turnmark fork`` records it as ``forked_from.conversation``)."""


def parse_metadata(data: bytes) -> Result[Metadata, StreamError]:
    try:
        document = decode_document(data, "metadata.json")
    except InvalidDocument as error:
        return Failure(error.error)
    if not isinstance(document, dict):
        return Failure(StreamError("metadata.json must be a JSON object", document="metadata.json"))
    return _metadata(document)


def _metadata(document: JsonObject) -> Result[Metadata, StreamError]:
    activated = document.get("last_activated_at")
    if not isinstance(activated, str) or not is_timestamp(activated):
        return Failure(StreamError('"last_activated_at" must be a timestamp', document="metadata.json"))
    title = document.get("title")
    if title is not None and not isinstance(title, str):
        return Failure(StreamError('"title" must be a string', document="metadata.json"))
    archived = document.get("archived_at")
    lineage = document.get("forked_from")
    parent = lineage.get("conversation") if isinstance(lineage, dict) else None
    return Success(
        Metadata(
            activated,
            title,
            archived if isinstance(archived, str) else None,
            parent if isinstance(parent, str) else None,
        )
    )
