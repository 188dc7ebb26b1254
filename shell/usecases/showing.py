"""``turnmark show``: a conversation rendered to read or share.

The view and the Markdown, HTML and JSON documents come from the core (``core/rendering``), the
terminal's text from ``terminal_text``; each format's renderer is loaded only when it is asked for.
``export`` writes a document to a file of the user's choosing through the safe-write path (never through a
link, atomically).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec
from returns.result import Result

from turnmark.core.errors import InvalidEntry, TurnSelectionError
from turnmark.core.rendering import shown
from turnmark.core.rendering.shown import (
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
        )
    )


def _guarded(turns: Iterator[ShownTurn], unreadable: Callable[[], Exception]) -> Iterator[ShownTurn]:
    try:
        yield from turns
    except (msgspec.MsgspecError, RecursionError, InvalidEntry):
        raise unreadable() from None


def text_chunks(conversation: ShownStream, width: int, color: bool) -> Iterator[str]:
    """The terminal's text, turn by turn, as ``rendered(..., "text")`` gives it whole."""
    return terminal_text.terminal_chunks(conversation, width, color)


def document_chunks(conversation: ShownStream, output_format: Literal["md", "html"]) -> Iterator[str]:
    """The Markdown or HTML document, turn by turn, as ``rendered`` gives it whole."""
    if output_format == "md":
        return markdown_export.markdown_chunks(conversation)
    return html_page.html_chunks(conversation)


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
