"""``turnmark edit``: D21's interactive editing of a conversation, with undo."""

from __future__ import annotations

from typing import Annotated

import typer

from .cli_common import ConversationArgument, app, pick, settings_of
from .errors import ConversationError
from .output import chrome, emit_line, fail
from .undo import undo
from .workspace import WorkspaceError

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

Examples:
  turnmark edit -i                  edit the most recent conversation
  turnmark edit -i 17727484633      edit one conversation
  turnmark edit --undo 17727484633  take the last edit back
"""


@app.command(epilog=EDIT_HELP)
def edit(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Edit the conversation's events in your editor (D21).")
    ] = False,
    undo_last: Annotated[bool, typer.Option("--undo", help="Restore the copy kept before the last edit.")] = False,
    no_summary: Annotated[
        bool, typer.Option("--no-summary", help="Do not summarize the newest turn before opening the editor.")
    ] = False,
) -> None:
    """Restructure a conversation like `git rebase -i`: one line per event, grouped by turn."""
    from .edit_session import EditAborted, EditOptions, edit_interactively

    settings = settings_of(ctx)
    if interactive == undo_last:
        raise fail("give -i (edit) or --undo")
    try:
        ref = pick(settings, conversation)
        if undo_last:
            emit_line(undo(ref, settings.new_id))
            return
        options = EditOptions(tuple(settings.cfg), settings.environ, settings.http, summarize_first=not no_summary)
        emit_line(edit_interactively(ref, options, settings.new_id, lambda line: chrome(f"note: {line}")))
    except EditAborted as error:
        chrome(f"aborted: {error}")
        raise typer.Exit(1) from error
    except (WorkspaceError, ConversationError) as error:
        raise fail(str(error)) from error
