"""``turnmark fork``: a new conversation from some or all turns of one, as JP's fork does, keeping its lineage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.editing.fork import cut_at, fork_metadata, fork_stream, kept_turns
from turnmark.core.errors import InvalidDocument
from turnmark.core.stream.json_document import decode_document, encode_document
from turnmark.core.stream.turns import find_turn
from turnmark.shell.clock import now_timestamp
from turnmark.shell.errors import WorkspaceError
from turnmark.shell.storage.conversations import LoadedConversation, create_conversation, refuse_unsavable
from turnmark.shell.storage.files import METADATA_LIMIT, read_file
from turnmark.shell.storage.workspace import METADATA, ConversationRef, require_workspace

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True)
class Forked:
    """The new conversation, the source turns it kept, and the compaction overlays it could not keep."""

    ref: ConversationRef
    kept: range
    dropped_overlays: tuple[str, ...]


def turn_index(stream: ConversationStream, wanted: str) -> int:
    """A turn given by its ``turn_start`` ID or its number (as ``turns`` shows them)."""
    found = find_turn(stream.turns(), wanted)
    if found is not None:
        return found.index
    raise WorkspaceError(f"no turn {wanted!r} (give its event_id or number; see `turnmark turns`)")


def fork_conversation(
    loaded: LoadedConversation,
    *,
    first: int | None = None,
    last: int | None = None,
    until: str | None = None,
    title: str | None = None,
) -> Forked:
    """Write the fork of ``loaded`` keeping the chosen turns (named ``title``, else as the source); the source is
    not touched.

    Refused by the save rule (``refuse_unsavable``) as any other write is; a failure leaves no new folder.
    """
    ref, stream = loaded.ref, loaded.stream
    keep = kept_turns(stream, first=first, last=last, until=None if until is None else turn_index(stream, until))
    forked = fork_stream(stream, keep)
    refuse_unsavable(loaded, forked.stream)
    current = forked.stream.upgraded()
    source = read_file(loaded.directory / METADATA, METADATA_LIMIT)
    try:
        parsed = decode_document(source, METADATA) if source else None
    except InvalidDocument:
        parsed = None
    document = fork_metadata(parsed, ref.display_id, cut_at(stream.turns(), keep), now_timestamp(), title)
    new = create_conversation(
        ref.workspace or require_workspace(loaded.directory),
        encode_document(document),
        current.base_config_json() or b"{}\n",
        current.to_json(),
    )
    return Forked(new, keep, tuple(forked.dropped_overlays))
