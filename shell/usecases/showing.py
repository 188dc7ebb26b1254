"""``turnmark show``: a conversation rendered to read or share.

The view and the Markdown, HTML and JSON documents come from the core (``core/rendering``), the
terminal's text from ``terminal_text``; each format's renderer is loaded only when it is asked for.
``export`` writes a document to a file of the user's choosing through the safe-write path (never through a
link, atomically).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec
from returns.result import Result

from turnmark.core.errors import InvalidEntry, TurnSelectionError
from turnmark.core.rendering import shown
from turnmark.core.rendering.shown import (
    Document,
    ShownConversation,
    ShownStream,
    ShownTurn,
    ShowOptions,
    TurnSelection,
    select_turns,
    show_turns,
    shown_turns,
    turn_heads,
)
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.light import LazyTurns
from turnmark.core.text.indented_json import indented
from turnmark.core.text.terminal import json_escaped
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.storage import files
from turnmark.shell.usecases.forked_chunks import forked_chunks
from turnmark.shell.usecases.parallel import default_jobs

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

with lazy_imports():
    from turnmark.core.rendering import html_page, markdown_export
    from turnmark.shell.usecases import terminal_text

ShowFormat = Literal["text", "md", "html", "json"]
FORMATS: dict[str, ShowFormat] = {"text": "text", "md": "md", "html": "html", "json": "json"}
SUFFIX_FORMATS: dict[str, ShowFormat] = {
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
}
"""The format ``-o FILE`` implies when ``--format`` is not given."""


def shown_conversation(
    stream: ConversationStream, conversation: JsonObject, selection: TurnSelection, options: ShowOptions
) -> Result[ShownConversation, TurnSelectionError]:
    turns = stream.turns()
    return select_turns(turns, selection).map(
        lambda chosen: ShownConversation(conversation, show_turns(stream, chosen, options), len(turns), options)
    )


def shown_stream(
    stream: ConversationStream, conversation: JsonObject, selection: TurnSelection, options: ShowOptions
) -> Result[ShownStream, TurnSelectionError]:
    """``shown_conversation`` with its turns made one at a time, as they are written."""
    turns = stream.turns()
    return select_turns(turns, selection).map(
        lambda chosen: shown.streamed(
            conversation,
            chosen,
            heads=partial(turn_heads, chosen),
            turns=shown_turns(stream, chosen, options),
            total_turns=len(turns),
            options=options,
        )
    )


def shown_lazily(
    lazy: LazyTurns,
    conversation: JsonObject,
    selection: TurnSelection,
    options: ShowOptions,
    unreadable: Callable[[], Exception],
) -> Result[ShownStream, TurnSelectionError]:
    """``shown_stream`` of a file read lazily (``shown.plainly_shown``): each turn read as it is written; a turn
    that cannot be read then raises ``unreadable()`` (the error the full read gives), after the turns before
    it were written."""
    turns = partial(shown.shown_lazily, lazy, options=options)
    return select_turns(lazy.turns, selection).map(
        lambda chosen: shown.streamed(
            conversation,
            chosen,
            heads=partial(shown.lazy_heads, lazy, chosen),
            turns=_guarded(turns(chosen), unreadable),
            total_turns=len(lazy.turns),
            options=options,
            blocks=lambda start, stop: _guarded(turns(chosen[start:stop]), unreadable),
        )
    )


def _guarded(turns: Iterator[ShownTurn], unreadable: Callable[[], Exception]) -> Iterator[ShownTurn]:
    try:
        yield from turns
    except (msgspec.MsgspecError, RecursionError, InvalidEntry):
        raise unreadable() from None


FORK_BYTES = 2_000_000
"""A file this long or longer (``events.json``) is shown on every core allowed (``forked_chunks``): smaller ones
take less time than a child costs."""
BLOCK_BYTES = 256_000
"""About how much of the file each block of turns a process makes at a time holds."""


def helpers_for(file_bytes: int, turns: int, jobs: int | None) -> tuple[int, int]:
    """How many children help make a shown file's turns, and how many turns each block holds: none for a short
    file, ``--jobs 1`` or one core; else one per other core allowed."""
    processes = default_jobs() if jobs is None else jobs
    if file_bytes < FORK_BYTES or processes < 2 or turns < 2:
        return 0, max(1, turns)
    return processes - 1, max(1, BLOCK_BYTES * turns // file_bytes)


def written_chunks(
    view: ShownStream, document: Document, prepare: Callable[[str], str], *, children: int = 0, block: int = 1
) -> Iterator[str]:
    """``document``'s chunks of ``view``, each made safe for its medium by ``prepare``; its turns made in blocks
    by ``children`` forked processes too, when the view can make its turns apart (``ShownStream.blocks``). Such
    a view's turns take the same way with no child (``forked_chunks`` makes them all here): the same stack, so
    the same nesting is too deep with children or without."""
    ready = document.prepared(prepare)
    blocks = view.blocks
    if blocks is None:
        return ready.chunks(view.turns)

    def make(start: int, stop: int) -> Iterator[str]:
        return (ready.turn(turn, ordinal) for ordinal, turn in enumerate(blocks(start, stop), start))

    forked = forked_chunks(make, len(view.indices), block, children)
    return _closing(ready.around(forked), forked)


def _closing(chunks: Iterator[str], forked: Generator[str, None, None]) -> Iterator[str]:
    """``chunks``; closing them (or their end) ends ``forked`` too, at once: its children are gone when this is."""
    try:
        yield from chunks
    finally:
        forked.close()


def format_document(view: ShownStream, output_format: ShowFormat, width: int = 100, color: bool = False) -> Document:
    """The ``Document`` of ``view`` in ``output_format`` (``text``: laid out in ``width`` cells, styled with
    ``color``)."""
    if output_format == "json":
        return shown.json_document(view)
    if output_format == "md":
        return markdown_export.markdown_document(view)
    if output_format == "html":
        return html_page.html_document(view)
    return terminal_text.terminal_document(view, width, color)


def rendered(conversation: ShownConversation, output_format: ShowFormat, width: int = 100, color: bool = False) -> str:
    """The document in ``output_format``; ``text`` is styled for a terminal only with ``color``."""
    if output_format == "json":
        return json_escaped(indented(conversation.to_json())) + "\n"
    if output_format == "md":
        return markdown_export.render_markdown(conversation)
    if output_format == "html":
        return html_page.render_html(conversation)
    return terminal_text.terminal_text(conversation, width, color)


def export(path: Path, document: str) -> None:
    """Write ``document`` to ``path`` (a regular file or none yet; never through a link)."""
    target = path.absolute()
    files.write_if_changed(target, document.encode("utf-8"), target.parent)
