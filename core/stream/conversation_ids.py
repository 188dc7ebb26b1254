"""Conversation IDs (jp-format §1.2): a UTC time in deciseconds since the epoch, displayed as
``jp-c<deciseconds>``; its directory is ``<deciseconds>[-<title slug>]``. Apart from ``metadata``: listing a
workspace needs the IDs, not the reading of ``metadata.json``."""

import re

_DISPLAY = re.compile(r"jp-c([0-9]+)(?:-[0-9a-z]+)?")


def parse_conversation_id(text: str) -> int | None:
    """``17727484633`` or ``jp-c17727484633`` → the ID; anything else → ``None``."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    match = _DISPLAY.fullmatch(text)
    return int(match.group(1)) if match else None


def id_from_dirname(name: str) -> int | None:
    """The ID a conversation directory name starts with (the part before the first ``-``, ASCII digits: ``str.isdigit``
    alone also takes ``²``, which ``int`` refuses)."""
    head = name.split("-", 1)[0]
    return int(head) if head.isascii() and head.isdigit() else None


def display_id(conversation_id: int) -> str:
    return f"jp-c{conversation_id}"


def split_turn_reference(text: str) -> tuple[str, str] | None:
    """``CONV:TURN`` (as ``find --output ids`` prints a hit) as its conversation and turn; ``None`` otherwise.

    >>> from turnmark.core.stream.conversation_ids import split_turn_reference
    >>> split_turn_reference("jp-c17738348630:p8q2r4b"), split_turn_reference("17738348630-fix-it:3")
    (('jp-c17738348630', 'p8q2r4b'), ('17738348630-fix-it', '3'))
    >>> split_turn_reference("p8q2r4b") is None, split_turn_reference("notes:p8q2r4b") is None
    (True, True)
    """
    head, colon, tail = text.strip().rpartition(":")
    if not colon or not tail.isalnum() or not tail.isascii():
        return None
    if parse_conversation_id(head) is None and id_from_dirname(head) is None:
        return None
    return head, tail
