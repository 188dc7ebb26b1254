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
