"""The ``show`` command: a conversation to read on the terminal or to share as Markdown, HTML or JSON."""

from __future__ import annotations

import enum
import os
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from turnmark.shell.cli.common import (
    ConversationArgument,
    OutputFormat,
    Settings,
    app,
    conversation_json,
    pick_turn,
    read_for_display,
    settings_of,
    warn,
)
from turnmark.shell.cli.pager import page_chunks
from turnmark.shell.errors import WorkspaceError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import json_shown, styled, write_json_prepared, write_prepared
from turnmark.shell.output import shown as text_shown

if TYPE_CHECKING:
    from turnmark.core.errors import TurnSelectionError
    from turnmark.shell.storage.workspace import ConversationRef

T = TypeVar("T")

with lazy_imports():
    from returns import result as returns_result

    from turnmark.core.rendering import shown
    from turnmark.shell.storage import conversations
    from turnmark.shell.usecases import showing


class ShowFormat(enum.StrEnum):
    text = "text"
    md = "md"
    html = "html"
    json = "json"


class ToolDetail(enum.StrEnum):
    none = "none"
    names = "names"
    args = "args"
    full = "full"


SHOW_HELP = """
Turns count from 0, as 'turnmark turns' shows them; TURN, A and B are a turn's
event_id or its number. --tools: none hides tool calls; names shows each as one
line (name, the telling argument such as a path, ✓ or ✗, output size); args adds
the arguments; full adds the output (cut at 4,000 characters in md and html, the
cut said; JSON keeps it whole). The default is names for text, full otherwise.
Reasoning is shown only with --reasoning. Events left out of what the model sees
(a hand edit broke their request link) are marked with the reason, and
compaction overlays are noted on the turns they cover.

The HTML page is one self-contained file (no script, font or image is fetched;
it works opened from disk and printed): a table of contents by turn, anchors
#turn-<id> and #event-<id>. Content is untrusted: everything is escaped, raw
HTML shows as text, only http(s) and mailto links are kept. Without --format,
-o FILE takes the format from its suffix (.md, .html, .json). Long text on a
terminal goes through $PAGER (default less). The turns of a long conversation
are made on every core allowed (--jobs; --jobs 1: one process), written in
order as they come: the same output.
"""


def _chosen_format(local: ShowFormat | None, global_format: OutputFormat, output: Path | None) -> ShowFormat:
    if local is not None:
        return local
    if output is not None and output.suffix.lower() in showing.SUFFIX_FORMATS:
        return ShowFormat(showing.SUFFIX_FORMATS[output.suffix.lower()])
    return ShowFormat(global_format.value)


def _color(environ: dict[str, str]) -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in environ and environ.get("TERM") != "dumb"


@app.command(epilog=SHOW_HELP)
def show(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    turn: Annotated[
        str | None,
        typer.Option(
            "--turn", "-t", metavar="TURN", help="Show only this turn (or CONV:TURN, as `find --output ids` prints it)."
        ),
    ] = None,
    last: Annotated[int | None, typer.Option("--last", "-n", metavar="N", help="Show the last N turns.")] = None,
    span: Annotated[
        str | None, typer.Option("--turns", metavar="A-B", help="Show turns A to B (both included).")
    ] = None,
    output_format: Annotated[
        ShowFormat | None,
        typer.Option("--format", "-F", metavar="FORMAT", help="text (the terminal), md, html or json."),
    ] = None,
    reasoning: Annotated[bool, typer.Option("--reasoning", help="Show the assistant's reasoning too.")] = False,
    tools: Annotated[
        ToolDetail | None, typer.Option("--tools", metavar="LEVEL", help="Tool calls: none, names, args or full.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout (-: stdout).")
    ] = None,
) -> None:
    """Show a conversation to read or share: turns with their summaries, requests, answers and tool calls."""
    settings = settings_of(ctx)
    output = None if output == Path("-") else output
    chosen, options = _chosen(settings, output, output_format, tools, reasoning, (turn, last, span))
    ref, turn = pick_turn(settings, conversation, turn)
    selection = shown.TurnSelection(turn=turn, last=last, span=span)
    lazy = _lazily(ref) if output is None else None
    if lazy is None:
        loaded = read_for_display(settings, ref)
        if output is not None:
            view = _unwrapped(showing.shown_conversation(loaded.stream, conversation_json(loaded), selection, options))
            showing.export(output, showing.rendered(view, showing.FORMATS[chosen.value]))
            return
        streamed = _unwrapped(showing.shown_stream(loaded.stream, conversation_json(loaded), selection, options))
    else:
        unreadable = partial(conversations.unreadable, lazy)
        streamed = _unwrapped(showing.shown_lazily(lazy.turns, conversation_json(lazy), selection, options, unreadable))
    _write(settings, chosen, streamed, lazy)


def _write(
    settings: Settings, chosen: ShowFormat, streamed: shown.ShownStream, lazy: conversations.LazyConversation | None
) -> None:
    """The view on stdout in the chosen format as it is made, through the pager when it is long text for a
    terminal; a conversation read lazily made on every core allowed (``showing.helpers_for``)."""
    environ = dict(settings.environ if settings.environ is not None else os.environ)
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 100
    document = showing.format_document(streamed, chosen.value, min(width, 120), _color(environ))
    children, block = showing.helpers_for(len(lazy.events), len(lazy.turns.turns), settings.jobs) if lazy else (0, 1)
    prepare = {ShowFormat.json: json_shown, ShowFormat.text: styled}.get(chosen, text_shown)
    chunks = showing.written_chunks(streamed, document, prepare, children=children, block=block)
    if chosen is ShowFormat.json:
        write_json_prepared(chunks)
    elif chosen is ShowFormat.text:
        page_chunks(chunks, environ)
    else:
        for chunk in chunks:
            write_prepared(chunk)


def _chosen(
    settings: Settings,
    output: Path | None,
    output_format: ShowFormat | None,
    tools: ToolDetail | None,
    reasoning: bool,
    choices: tuple[str | None, int | None, str | None],
) -> tuple[ShowFormat, shown.ShowOptions]:
    """The format and what of each turn is shown; one of ``--turn``, ``--last`` and ``--turns`` at most."""
    if sum(choice is not None for choice in choices) > 1:
        raise WorkspaceError("give one of --turn, --last and --turns")
    chosen = _chosen_format(output_format, settings.format, output)
    detail = tools or (ToolDetail.names if chosen is ShowFormat.text else ToolDetail.full)
    return chosen, shown.ShowOptions(reasoning=reasoning, tools=detail.value)


def _lazily(ref: ConversationRef) -> conversations.LazyConversation | None:
    """The conversation read to be shown turn by turn, when the file allows (``shown.plainly_shown``);
    ``None``: load the whole stream first (``read_for_display``, called where it always was)."""
    lazy = conversations.read_lazily(ref)
    if lazy is None or not shown.plainly_shown(lazy.turns):
        return None
    if lazy.metadata_error:
        warn(lazy.metadata_error)
    return lazy


def _unwrapped(result: returns_result.Result[T, TurnSelectionError]) -> T:
    if isinstance(result, returns_result.Failure):
        raise WorkspaceError(result.failure().describe())
    return result.unwrap()
