"""``turnmark edit``: the interactive editing of a conversation, with undo."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.shell.cli.common import (
    ConversationArgument,
    FormatOption,
    OutputFormat,
    app,
    pick,
    pick_turn,
    read_for_display,
    settings_of,
)
from turnmark.shell.errors import ConversationError, EditAborted, TurnmarkError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, fail

if TYPE_CHECKING:
    from turnmark.shell.cli.common import Settings
    from turnmark.shell.storage.workspace import ConversationRef

with lazy_imports():
    from turnmark.core.stream import turns as stream_turns
    from turnmark.shell.storage import undo
    from turnmark.shell.usecases import edit_session, forking

EDIT_HELP = """
edit -i writes the conversation to a temporary folder: CONVERSATION (the plan,
one line per event file, grouped under "# Turn N (<turn id>): <summary>") and one
file per event (markdown with a frontmatter; config deltas and compactions as
TOML). Delete lines to drop events, reorder lines to reorder them, edit a file to
change an event, add a file and its line to insert one. Your editor
(JP_EDITOR, VISUAL or EDITOR) opens the folder. On save, problems (a tool result
before its call, an orphaned result, two requests in a row) are written at the top
of CONVERSATION and the editor reopens; clear the plan, or exit the editor with an
error, to abort. Turns you did not touch keep their summaries; changed turns are
summarized again by the next catch-up. The conversation stays locked (JP's lock)
while you edit. edit --undo restores the copy kept before the last edit (also
before repair --apply and strip --apply), if nothing changed since.
"""


@app.command(epilog=EDIT_HELP)
def edit(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Edit the conversation's events in your editor.")
    ] = False,
    undo_last: Annotated[bool, typer.Option("--undo", help="Restore the copy kept before the last edit.")] = False,
    no_summary: Annotated[
        bool, typer.Option("--no-summary", help="Do not summarize the newest turn before opening the editor.")
    ] = False,
) -> None:
    """Restructure a conversation like `git rebase -i`: one line per event, grouped by turn."""
    settings = settings_of(ctx)
    if interactive == undo_last:
        raise fail("give -i (edit) or --undo")
    try:
        ref = pick(settings, conversation)
        if undo_last:
            outcome = undo.undo(ref)
        else:
            reference = stream_turns.split_turn_reference(conversation) if conversation else None
            if reference is not None:
                _note(f"turn {reference[1]} is the block '# Turn N ({reference[1]}): …' in the plan")
            options = edit_session.EditOptions.using(settings.run(), summarize_first=not no_summary)
            outcome = edit_session.edit_interactively(ref, options, settings.new_id, _note)
    except EditAborted as error:
        chrome(f"aborted: {error}")
        raise typer.Exit(1) from error
    except TurnmarkError as error:
        raise fail(str(error)) from error
    if settings.format is OutputFormat.json:
        emit_json({"conversation": ref.display_id, "action": "undo" if undo_last else "edit", "outcome": outcome})
    else:
        emit_line(outcome)


FORK_HELP = """
A new conversation from some or all turns of this one, as JP's fork does (the
original is untouched): metadata.json is cloned with last_activated_at set to
now, the kept turns keep their IDs and summaries. The fork records where it
came from (conversations shows ⑂ and the parent); compaction overlays that lie
wholly inside the kept turns are kept, the others are dropped and named.
"""


@app.command(epilog=FORK_HELP)
def fork(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    first: Annotated[int | None, typer.Option("--first", min=0, metavar="N", help="Keep the first N turns.")] = None,
    last: Annotated[int | None, typer.Option("--last", min=0, metavar="N", help="Keep the last N turns.")] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            metavar="TURN",
            help="Keep every turn up to this one (ID or number, or CONV:TURN as `find --output ids` prints it).",
        ),
    ] = None,
    open_editor: Annotated[bool, typer.Option("--edit", help="Open the fork in edit -i.")] = False,
    output_format: FormatOption = None,
) -> None:
    """Start a new conversation from some or all turns of one, keeping its lineage."""
    settings = settings_of(ctx)
    if sum(option is not None for option in (first, last, until)) > 1:
        raise fail("give at most one of --first, --last, --until")
    ref, until = pick_turn(settings, conversation, until)
    forked = forking.fork_conversation(read_for_display(settings, ref), first=first, last=last, until=until)
    for event_id in forked.dropped_overlays:
        chrome(f"note: compaction {event_id} reaches a turn the fork leaves out; not kept")
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json(
            {
                "source": ref.display_id,
                "fork": forked.ref.display_id,
                "kept_turns": list(forked.kept),
                "dropped_overlays": list(forked.dropped_overlays),
            }
        )
    else:
        span = f"turns {forked.kept.start}-{forked.kept.stop - 1}" if forked.kept else "no turns"
        emit_line(f"{forked.ref.display_id}  forked from {ref.display_id} ({span})")
    if open_editor:
        _edit_fork(settings, forked.ref)


def _edit_fork(settings: Settings, new: ConversationRef) -> None:
    options = edit_session.EditOptions.using(settings.run())
    try:
        emit_line(edit_session.edit_interactively(new, options, settings.new_id, _note))
    except EditAborted as error:
        chrome(f"aborted: {error} (the fork {new.display_id} is kept)")
        raise typer.Exit(1) from error
    except ConversationError as error:
        raise fail(str(error)) from error


def _note(line: str) -> None:
    chrome(f"note: {line}")
