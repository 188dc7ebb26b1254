"""``turnmark edit``: the interactive editing of a conversation, with undo."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.wording import counted, turn_range
from turnmark.shell.cli.common import (
    ConversationArgument,
    FormatOption,
    OutputFormat,
    app,
    pick,
    pick_turn,
    read_for_display,
    settings_of,
    turn_reference,
)
from turnmark.shell.errors import ConversationError, TurnmarkError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, fail, note

if TYPE_CHECKING:
    from turnmark.core.editing.repair import Backfill
    from turnmark.shell.cli.common import Settings
    from turnmark.shell.storage.workspace import ConversationRef

with lazy_imports():
    from turnmark.shell.storage import state_dirs, undo
    from turnmark.shell.usecases import edit_session, forking

EDIT_HELP = """
edit -i writes the conversation to a private temporary folder: CONVERSATION (the
plan, one line per event file, grouped under "# Turn N (<turn id>): <summary>",
each line ending in a "# ..." comment saying what the event is: a request's
first line, a tool call's name and path or command, a result's status and size)
and one file per event (markdown with a frontmatter; config deltas and
compactions as TOML). Delete lines to drop events (in vim, :g/fs_read_file/d
drops every fs_read_file call and result), reorder lines to reorder them, edit a
file to change an event, add a file and its line to insert one. Your editor
(JP_EDITOR, VISUAL or EDITOR) opens the plan, in the folder (gf opens an event
file); code, codium, cursor, subl, zed and the JetBrains IDEs get the folder and
the plan, with --wait. On save, problems (a tool result before its call, an
orphaned result, two requests in a row) are written at the top of CONVERSATION
and the editor reopens; clear the plan, or exit the editor with an error, to
abort. An edit that drops what you did not delete (a compaction overlay whose
turns no longer lie together) lists it and asks; without a terminal it is
refused unless --yes is given. Turns you did not touch keep their summaries;
changed turns are summarized again by the next catch-up. Answers written before
JP linked them to their requests cannot show a request the edit deletes or
moves: edit -i first offers to link them (as repair --backfill --apply does, its
own undo step; Enter accepts); --backfill or --no-backfill answers for scripts,
and without a terminal nothing is linked unless --backfill is given. The
conversation stays locked (JP's lock) while you edit. The outcome is saved,
unchanged, aborted or invalid (still invalid after 20 rounds). edit --undo
restores the copy kept before the last edit -i, repair or strip --apply (and the
links and summary edit -i writes before the editor opens), or before a save that
upgraded the conversation from JP's older format (events.json as it was,
base_config.json removed), if nothing changed since.
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
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Save an edit that drops entries you did not delete, without asking.")
    ] = False,
    backfill: Annotated[
        bool | None,
        typer.Option(
            "--backfill/--no-backfill",
            help="Link answers that carry no request link before the plan opens, or not "
            "(default: asked on a terminal, not done otherwise).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Restructure a conversation like `git rebase -i`: one line per event, grouped by turn."""
    settings = settings_of(ctx)
    if interactive == undo_last:
        raise fail("give -i (edit) or --undo")
    try:
        ref = pick(settings, conversation)
        if undo_last:
            for line in state_dirs.leftovers(ref.workspace) if ref.workspace is not None else []:
                note(line)
            restored = undo.undo(ref)
            if settings.format is OutputFormat.json:
                emit_json(
                    {"conversation": ref.display_id, "action": "undo", "outcome": "restored", "message": restored}
                )
            else:
                emit_line(restored)
            return
        reference = turn_reference(conversation)
        if reference is not None and ref.dirname != conversation:
            note(f"turn {reference[1]} is the block '# Turn N ({reference[1]}): …' in the plan")
        options = edit_session.EditOptions.using(settings.run(), summarize_first=not no_summary)
        offer = _backfill_offer(ref.display_id, backfill)
        result = edit_session.edit_interactively(ref, options, settings.new_id, note, _confirmation(yes), offer=offer)
    except TurnmarkError as error:
        raise fail(str(error)) from error
    _report(settings, result)


def _report(settings: Settings, result: edit_session.EditResult, *, kept_fork: str | None = None) -> None:
    """The result on stdout (JSON, or the line for saved and unchanged); an abort on stderr, with status 1."""
    failed = result.outcome in ("aborted", "invalid")
    if settings.format is OutputFormat.json:
        emit_json(result.to_json())
    elif failed:
        chrome(f"aborted: {result.message}" + (f" (the fork {kept_fork} is kept)" if kept_fork else ""))
    else:
        emit_line(result.message)
    if failed:
        raise typer.Exit(1)


def _confirmation(yes: bool) -> edit_session.Confirm:
    """``--yes`` saves; on a terminal the user is asked; otherwise the edit is refused."""

    def confirm(dropped: tuple[object, ...]) -> edit_session.Decision:
        if yes:
            return "save"
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return "refuse"
        while True:
            sys.stderr.write(f"save without {'it' if len(dropped) == 1 else 'them'}? [y]es, [e]dit the plan, [N]o: ")
            sys.stderr.flush()
            answer = sys.stdin.readline().strip().lower()
            if answer in ("y", "yes"):
                return "save"
            if answer in ("e", "edit"):
                return "edit"
            if answer in ("", "n", "no", "q"):
                return "abort"

    return confirm


def _backfill_offer(conversation: str, wanted: bool | None) -> edit_session.OfferBackfill:
    """``--backfill`` or ``--no-backfill`` decides; else a terminal is asked (Enter links); without one, nothing is
    linked and a note says how to."""

    def offer(planned: Backfill) -> bool:
        if wanted is not None:
            return wanted
        said, some, details = _backfill_words(conversation, planned)
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            note(f"{said}; --backfill links {some} first (--no-backfill: not asked)")
            return False
        while True:
            whose = "its" if planned.answers == 1 else "their"
            sys.stderr.write(f"{said}.\nLink {some} to {whose} request first (its own undo step{details})? [Y/n]: ")
            sys.stderr.flush()
            answer = sys.stdin.readline()
            if not answer or answer.strip().lower() in ("n", "no", "q"):
                return False
            if answer.strip().lower() in ("", "y", "yes"):
                return True

    return offer


def _backfill_words(conversation: str, planned: Backfill) -> tuple[str, str, str]:
    """What the offer says: the unlinked answers and what they hide, which of them it links, what else happens."""
    verb = "carries" if planned.unlinked == 1 else "carry"
    said = (
        f"{conversation}: {counted(planned.unlinked, 'answer')} {verb} no request link (written before JP linked "
        "answers to requests), so a request this edit deletes or moves cannot be detected"
    )
    some = "it" if planned.unlinked == 1 else "them" if planned.answers == planned.unlinked else f"{planned.answers}"
    if some.isdecimal():
        some += " of them"
    details = ""
    if planned.turns_left:
        stays = "stays" if planned.turns_left == 1 else "stay"
        details += f"; {counted(planned.turns_left, 'turn')} with several requests {stays} unlinked"
    if planned.summaries_cleared:
        details += f"; {counted(planned.summaries_cleared, 'summary', 'summaries')} cleared"
    return said, some, details


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
    first: Annotated[int | None, typer.Option("--first", min=1, metavar="N", help="Keep the first N turns.")] = None,
    last: Annotated[int | None, typer.Option("--last", min=1, metavar="N", help="Keep the last N turns.")] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            metavar="TURN",
            help="Keep every turn up to this one (ID or number, or CONV:TURN as `find --output ids` prints it).",
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", metavar="TEXT", help="The fork's title (default: the source's).")
    ] = None,
    open_editor: Annotated[bool, typer.Option("--edit", help="Open the fork in edit -i.")] = False,
    output_format: FormatOption = None,
) -> None:
    """Start a new conversation from some or all turns of one, keeping its lineage."""
    settings = settings_of(ctx)
    if sum(option is not None for option in (first, last, until)) > 1:
        raise fail("give at most one of --first, --last, --until")
    if title is not None and (not title.strip() or "\n" in title or "\r" in title):
        raise fail("--title: give one line of text")
    ref, until = pick_turn(settings, conversation, until)
    loaded = read_for_display(settings, ref)
    forked = forking.fork_conversation(loaded, first=first, last=last, until=until, title=title and title.strip())
    asked = first if first is not None else last
    if asked is not None and asked > len(forked.kept):
        option = "--first" if first is not None else "--last"
        note(f"{option} {asked}: {ref.display_id} has {counted(len(forked.kept), 'turn')}; all are forked")
    for event_id in forked.dropped_overlays:
        note(f"compaction {event_id} reaches a turn the fork leaves out; not kept")
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
        span = turn_range(forked.kept.start, forked.kept.stop - 1) if forked.kept else "no turns"
        emit_line(f"{forked.ref.display_id}  forked from {ref.display_id} ({span})")
    if open_editor:
        _edit_fork(settings, forked.ref)


def _edit_fork(settings: Settings, new: ConversationRef) -> None:
    options = edit_session.EditOptions.using(settings.run())
    try:
        offer = _backfill_offer(new.display_id, None)
        result = edit_session.edit_interactively(new, options, settings.new_id, note, _confirmation(False), offer=offer)
    except ConversationError as error:
        raise fail(str(error)) from error
    _report(settings, result, kept_fork=new.display_id)
