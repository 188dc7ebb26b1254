"""``turnmark query``: one chat turn, streamed, with background turn-summary catch-up."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turnmark.shell.cli.common import OutputFormat, app, settings_of
from turnmark.shell.cli.usage import must_be_utf8
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import fail

with lazy_imports():
    from turnmark.shell.usecases import query as query_usecase

QUERY_HELP = """
The conversation's lock is taken without waiting (if `jp` holds it, nothing
happens). While the assistant answers, completed turns without a summary are
summarized in the background (conversation.turn_summary.generate.auto); at
exit turnmark waits up to 10 s for that, showing "Finishing background
tasks…" after 1 s on a terminal (Ctrl-C cancels it; a second Ctrl-C exits).
turnmark runs no tools: a tool call is recorded with an error result.

With --format json nothing streams: at the end one JSON document says what was
asked and stored: {"conversation", "model", "answer", "tool_calls", "error",
"stored": {"turn", "events": [{"event_id", "type", "request_id"}]}} ("stored" is
null with --no-persist).
"""


@app.command(epilog=QUERY_HELP)
def query(
    ctx: typer.Context,
    words: Annotated[
        list[str], typer.Argument(metavar="[CONV] MESSAGE", help="Conversation (optional), then the message.")
    ],
    new: Annotated[bool, typer.Option("--new", "-n", help="Start a new conversation.")] = False,
    no_persist: Annotated[
        bool, typer.Option("--no-persist", "-P", help="Write nothing: no turn, no summaries.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", "-m", metavar="ID", help="Use this model (provider/name or alias).")
    ] = None,
) -> None:
    """Ask the assistant model one question in a conversation and stream the answer to stdout."""
    settings = settings_of(ctx)
    if len(words) > 2 or (new and len(words) > 1):
        raise fail("give [CONV] MESSAGE (quote the message); --new takes only the message")
    conversation, message = (words[0], words[1]) if len(words) == 2 else (None, words[0])
    if not message.strip():
        raise fail("the message is empty")
    if problem := must_be_utf8(message):
        raise fail(f"MESSAGE {problem} (see 'turnmark query --help')")
    options = query_usecase.QueryOptions.using(
        settings.run(model),
        message=message,
        conversation=conversation,
        new=new,
        persist=not no_persist,
        as_json=settings.format is OutputFormat.json,
    )
    status = query_usecase.run_query(settings.workspace or Path.cwd(), options, settings.new_id)
    if status:
        raise typer.Exit(status)
