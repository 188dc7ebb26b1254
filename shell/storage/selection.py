"""Which conversation a command works on: the ``CONV`` argument, or the most recently active one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from turnmark.core.stream.timestamps import most_recently_active as most_recently_active_id
from turnmark.shell.errors import WorkspaceError
from turnmark.shell.storage.conversations import read_metadata
from turnmark.shell.storage.workspace import (
    ConversationRef,
    Workspace,
    conversation_at,
    list_conversations,
    require_workspace,
    select_conversation,
)


def _ignore(_message: str) -> None:
    return None


def most_recently_active(
    workspace: Workspace, refs: list[ConversationRef], warn: Callable[[str], None] = _ignore
) -> ConversationRef:
    r"""The conversation with the latest ``last_activated_at``; one whose metadata is unreadable is
    passed over, with a ``warn``\ ing."""
    dated = []
    for ref in refs:
        metadata, problem = read_metadata(ref)
        if metadata is None:
            warn(f"passed over {ref.display_id} when choosing the most recent conversation: {problem}")
            continue
        dated.append((metadata.last_activated_at, ref.id))
    chosen = most_recently_active_id(dated)
    if chosen is None:
        unreadable = " with a readable metadata.json" if refs else ""
        raise WorkspaceError(f"no conversations{unreadable} in {workspace.conversations_dir}")
    return next(ref for ref in refs if ref.id == chosen)


def pick_conversation(start: Path, wanted: str | None, warn: Callable[[str], None] = _ignore) -> ConversationRef:
    """Resolve ``CONV``: a path to a conversation folder, an ID, a directory name, or the default."""
    if wanted is not None:
        at_path = conversation_at(Path(wanted)) if Path(wanted).exists() else None
        if at_path is not None:
            return at_path
    workspace = require_workspace(start)
    refs = list_conversations(workspace)
    if wanted is None:
        return most_recently_active(workspace, refs, warn)
    return select_conversation(workspace, wanted, refs)
