"""A conversation's ``metadata.json`` (jp-format §1.4); its ID and folder name are ``conversation_ids``'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from returns.result import Failure, Result, Success

from turnmark.core.stream.json_document import read_document
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.timestamps import is_timestamp

if TYPE_CHECKING:
    from turnmark.core.errors import StreamError


@dataclass(frozen=True, slots=True)
class Metadata:
    """What turnmark reads from ``metadata.json``; the file itself is never rewritten by it."""

    last_activated_at: str
    title: str | None = None
    archived_at: str | None = None
    forked_from: str | None = None
    """The conversation this one was forked from (``turnmark fork`` records it as ``forked_from.conversation``)."""


def parse_metadata(data: bytes) -> Result[Metadata, StreamError]:
    read = read_document(data, "metadata.json")
    if isinstance(read, Failure):
        return read
    document = read.unwrap()
    if not isinstance(document, dict):
        return _refused("metadata.json must be a JSON object")
    return _metadata(document)


def _refused(message: str) -> Result[Metadata, StreamError]:
    from turnmark.core.errors import StreamError  # the error types, only where metadata.json is refused

    return Failure(StreamError(message, document="metadata.json"))


def _metadata(document: JsonObject) -> Result[Metadata, StreamError]:
    activated = document.get("last_activated_at")
    if not isinstance(activated, str) or not is_timestamp(activated):
        return _refused('"last_activated_at" must be a timestamp')
    title = document.get("title")
    if title is not None and not isinstance(title, str):
        return _refused('"title" must be a string')
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
