"""Where turnmark remembers turns whose summary answers keep failing: a small JSON file per conversation
under the user's state directory (``state_dirs.failures_path``; never inside the workspace), written through
the safe-write path."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.errors import ConversationError
from turnmark.shell.storage import state_dirs
from turnmark.shell.storage.files import METADATA_LIMIT, read_file, write_if_changed
from turnmark.shell.storage.workspace import ConversationRef


def memory_path(ref: ConversationRef) -> Path:
    return state_dirs.failures_path(ref)


def load_memory(ref: ConversationRef) -> JsonObject:
    """The conversation's failure memory; empty when absent or unreadable (it is only a hint)."""
    try:
        data = read_file(memory_path(ref), METADATA_LIMIT)
        value = json.loads(data) if data else {}
    except (ConversationError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def save_memory(ref: ConversationRef, memory: JsonObject) -> None:
    """Write the memory (removing nothing else); a fault is ignored: the memory is only a hint."""
    path = memory_path(ref)
    with contextlib.suppress(ConversationError):
        data = (json.dumps(memory, indent=2, sort_keys=True) + "\n").encode()
        write_if_changed(path, data, state_dirs.conversation_anchor(ref, path), create=True, mode=state_dirs.PRIVATE)
