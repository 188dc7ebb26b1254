"""The commands around turn summaries: ``summarize``, ``transcript``, ``summary set`` and ``summary clear``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.wording import counted
from turnmark.shell.cli.common import (
    ConversationArgument,
    FormatOption,
    ModelOption,
    OutputFormat,
    app,
    chosen,
    complete_conversation,
    conversation_json,
    pick,
    pick_turn,
    read_for_display,
    settings_of,
    upgrade_json,
    upgrade_line,
)
from turnmark.shell.cli.usage import TurnmarkSubgroup, TurnmarkTyper
from turnmark.shell.errors import WorkspaceError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, fail, note

with lazy_imports():
    from returns import result as returns_result

    from turnmark.core.links import exclusion
    from turnmark.core.stream import turns as stream_turns
    from turnmark.core.summaries import fingerprint, labels, packing
    from turnmark.core.summaries import transcript as summary_transcript
    from turnmark.shell.cli import progress
    from turnmark.shell.storage import config_files, conversations
    from turnmark.shell.usecases import catchup_report, listing, summarize_all
    from turnmark.shell.usecases import finding as finding_usecase

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream
    from turnmark.core.stream.event_ids import IdSource
    from turnmark.shell.cli.common import Settings
    from turnmark.shell.storage.workspace import ConversationRef
    from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport

SUMMARIZE_HELP = """
Each turn of a conversation gets a one-line summary on its turn_start entry,
written by the configured model (conversation.turn_summary.generate.model, else
conversation.title.generate.model, else assistant.model.id) or, with no usable
model, by the offline summarizer builtin/extractive. The model reads a stripped
transcript of each turn (request, tool names and outcomes, answers) and is
called without holding the conversation's lock; results are written under the
lock, and only for turns that did not change meanwhile. A summary you set with
`turnmark summary set` is never replaced. Turns that get no summary (model failure,
a summary refused as no summary at all: a turn ID, markup or HTML entities, cut off
inside a word at 72 characters, under two words or 8 characters, no letters, copied
from the prompt, or another turn's summary; locked conversation,
changed turn) are tried again on the next run; a turn whose answer failed three
times with the same content only once it changes, or with --retry-failed.

Without a key for the configured model, summarize offline: --model
builtin/extractive, or for the whole workspace, in .jp/config.toml:
conversation.turn_summary.generate.model.id = "builtin/extractive"
"""


def _report_lines(report: CatchupReport, dry_run: bool) -> list[str]:
    if report.error:
        return [f"{report.conversation}  not summarized: see the error above"]
    if report.skipped:
        return [f"{report.conversation}  skipped: {report.skipped}"]
    if not report.plan and not report.written and not report.save_refused:
        return [f"{report.conversation}  nothing to summarize"]
    if dry_run:
        packed = sum(1 for row in report.plan if "batch" in row)
        batches = len({row["batch"] for row in report.plan if "batch" in row})
        model = report.model or "no model"
        size = f"at most {report.budget} tokens per request" if report.budget is not None else "no size limit"
        head = (
            f"{report.conversation}  {counted(len(report.plan), 'turn')} to summarize: {packed} in "
            f"{counted(batches, 'batch', 'batches')} for {model} ({size})"
        )
        lines = [head, *upgrade_line(report.conversation, report.upgrade, done=False)]
        if report.save_refused:
            lines.append(f"  a real run would not save this conversation: {report.save_refused}")
        for row in report.plan:
            where = f"batch {row['batch']}" if "batch" in row else f"left out: {str(row['excluded']).replace('_', ' ')}"
            lines.append(f"  {row['turn']:<8} turn {row['index']:>3}  {row['tokens']:>6} tokens  {where}")
        return lines
    head = f"{report.conversation}  {len(report.written)} summarized with {report.model or 'no model'}"
    waiting = len(report.plan) - len(report.written) - len(report.too_large)
    lines = [head + (f", {waiting} left for the next run" if waiting > 0 else "")]
    lines += upgrade_line(report.conversation, report.upgrade if report.upgraded else None, done=True)
    order = {str(row["turn"]): int(str(row["index"])) for row in report.plan}
    written = sorted(report.written.items(), key=lambda pair: order.get(pair[0], 0))
    lines += [f"  {turn_id:<8} {text}" for turn_id, text in written]
    lines += [
        f"  {turn_id:<8} not summarized: {why}" for turn_id, why in {**report.too_large, **report.given_up}.items()
    ]
    return lines


def _text_lines(reports: list[CatchupReport], dry_run: bool) -> list[str]:
    """Each report's lines; conversations skipped for a cause reported earlier are one line with their count."""
    repeated: dict[str, list[CatchupReport]] = {}
    for report in reports:
        if report.repeated and report.skipped:
            repeated.setdefault(report.skipped, []).append(report)
    lines: list[str] = []
    for report in reports:
        same = repeated.get(report.skipped or "", []) if report.repeated else []
        if len(same) < 2:
            lines += _report_lines(report, dry_run)
        elif report is same[0]:
            lines.append(f"{counted(len(same), 'more conversation')} skipped: {report.skipped}")
    return lines


def _report_chrome(report: CatchupReport) -> None:
    """What a catch-up says on stderr, as soon as it is done (above the progress bar on a terminal)."""
    for line in report.notes:
        note(f"{report.conversation}: {line}")
    if report.error and not report.repeated:
        chrome(f"error: {report.conversation}: {report.error}")
    for turn_id, reason in {**report.refused, **report.dropped}.items():
        note(f"{report.conversation}: no summary for {turn_id}: {reason}; retried next time")


@app.command(epilog=SUMMARIZE_HELP)
def summarize(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    all_conversations: Annotated[
        bool, typer.Option("--all", "-a", help="Every conversation of the workspace.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show the turns, their sizes and the batches; call no model, write nothing."),
    ] = False,
    upgrade: Annotated[
        bool,
        typer.Option("--upgrade", help="Also rewrite summaries made by builtin/extractive, now that a model is set."),
    ] = False,
    model: ModelOption = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed", help="Also ask again for turns whose answers failed 3 times (they are skipped otherwise)."
        ),
    ] = False,
    output_format: FormatOption = None,
) -> None:
    """Write the missing turn summaries now (catch-up), with a progress bar over conversations and batches.

    Exit status: 0 when every conversation was summarized or had nothing to do, 1 when one failed or
    was skipped (locked by a running jp, or its model failed earlier in the run) or, with --dry-run,
    would not be saved, 2 on bad input, 130 on Ctrl-C (what was done so far is shown first).
    """
    settings = settings_of(ctx)
    refs = chosen(settings, conversation, all_conversations)
    options = catchup_report.CatchupOptions.using(
        settings.run(model), dry_run=dry_run, upgrade=upgrade, retry_failed=retry_failed
    )
    known = listing.known(settings.workspace_root(), note) if all_conversations else None
    reports, interrupted = _catch_up_all(refs, options, settings.new_id, known, settings.jobs)
    _report_run(settings.resolve_format(output_format), reports, len(refs), interrupted=interrupted, dry_run=dry_run)


def _report_run(
    output: OutputFormat, reports: list[CatchupReport], asked: int, *, interrupted: bool, dry_run: bool
) -> None:
    """What the run did, and its exit status (130 after Ctrl-C, 1 when a conversation is not done)."""
    if output is OutputFormat.json:
        emit_json(
            {"ok": all(r.done for r in reports) and not interrupted, "conversations": [r.to_json() for r in reports]}
        )
    else:
        for line in _text_lines(reports, dry_run):
            emit_line(line)
    if interrupted:
        chrome(
            f"interrupted: {len(reports)} of {asked} conversations reported; the rest are left for the next run "
            "(each saved whole or not at all)"
        )
        raise typer.Exit(130)
    if not all(report.done for report in reports):
        raise typer.Exit(1)


def _catch_up_all(
    refs: list[ConversationRef],
    options: CatchupOptions,
    new_id: IdSource,
    known: listing.Known | None,
    jobs: int | None,
) -> tuple[list[CatchupReport], bool]:
    """Catch up each conversation under a progress bar; the reports so far, and whether Ctrl-C stopped it.

    The conversations ``known`` to have no turn that can want a summary (the workspace cache's rows) are not
    read; the others are read once, by their catch-up.
    """
    reports: list[CatchupReport] = []
    with progress.progress_bar() as bar:
        overall = bar.add_task("conversations", total=len(refs))
        batches = bar.add_task("batches", total=None)

        def on_batch(done: int, total: int) -> None:
            bar.update(batches, completed=done, total=total)

        done = summarize_all.catch_up_all(refs, options, new_id, known, on_batch=on_batch, jobs=jobs, note=note)
        try:
            for report in done:
                bar.update(overall, description=report.conversation)
                _report_chrome(report)
                reports.append(report)
                bar.advance(overall)
        except KeyboardInterrupt:
            done.close()
            return reports, True
    return reports, False


@app.command()
def transcript(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    turn: Annotated[
        str | None,
        typer.Option(
            "--turn",
            "-t",
            help="Only this turn: its event_id or its number, as `turnmark turns` shows, or CONV:TURN as "
            "`turnmark find --output ids` prints it.",
        ),
    ] = None,
    output_format: FormatOption = None,
) -> None:
    """Print the stripped transcripts a summary model reads: request, tool names and outcomes, answers.

    A first turn with no turn_start is shown with the one catch-up inserts (its ID is not yet saved).
    A request or answer longer than conversation.turn_summary.transcript.max_message_chars (default
    4000) keeps its first and last halves around […], as the model would read it.
    """
    settings = settings_of(ctx)
    ref, turn = pick_turn(settings, conversation, turn)
    loaded = read_for_display(settings, ref)
    layers = config_files.config_layers(loaded.ref.workspace, loaded.stream, settings.cfg, settings.environ)
    limit = config_files.transcript_limit(layers)
    prepared = labels.ensure_first_turn_start(loaded.stream)
    try:
        wanted = None if turn is None else _turn_id(prepared, turn)
    except WorkspaceError as error:
        raise fail(f"{loaded.ref.display_id}: {error}") from error
    turns = [t for t in prepared.turns() if t.id() is not None and (wanted is None or t.id() == wanted)]
    excluded = exclusion.excluded_ids(prepared)
    texts = [summary_transcript.turn_transcript(t, excluded, limit) for t in turns]
    if settings.resolve_format(output_format) is OutputFormat.json:
        rows = [
            {
                "id": t.id(),
                "index": t.index,
                "tokens": packing.estimate_tokens(text),
                "fingerprint": fingerprint.turn_fingerprint(t, excluded, limit),
                "transcript": text,
            }
            for t, text in zip(turns, texts, strict=True)
        ]
        emit_json({"conversation": conversation_json(loaded), "turns": rows})
        return
    emit_line("\n\n".join(texts))


def _turn_id(stream: ConversationStream, wanted: str) -> str:
    """A turn given by its event_id, or by its number as `turnmark turns` counts them (from 0)."""
    found = stream_turns.find_turn(stream.turns(), wanted)
    if found is not None and found.id() is not None:
        return str(found.id())
    raise WorkspaceError(f"no turn {wanted!r} with a turn_start (give its event_id or number; see `turnmark turns`)")


SUMMARY_JSON = """
With --format json: {"conversation", "turn", "summary", "by", "upgraded", "upgrade"}
("summary" and "by" are null after summary clear; "upgrade" says what a save of
a conversation in JP's older format changed, or is null). The conversation is
written under its lock; if `jp` holds the lock, nothing is written.
"""

summary_app = TurnmarkTyper(
    cls=TurnmarkSubgroup,
    name="summary",
    help="Set your own summary for a turn (catch-up never replaces it), or clear it.",
    epilog=SUMMARY_JSON,
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(summary_app)

ConversationOf = Annotated[
    str,
    typer.Argument(
        metavar="CONV", autocompletion=complete_conversation, help="The conversation (ID, directory or path)."
    ),
]
TurnOf = Annotated[str, typer.Argument(metavar="TURN", help="The turn: its event_id, or its number (from 0).")]


@summary_app.command("set", epilog=SUMMARY_JSON)
def summary_set(
    ctx: typer.Context,
    conversation: ConversationOf,
    turn: TurnOf,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The summary, one line.")],
) -> None:
    """Set your own summary for a turn; catch-up never replaces it.

    The text is stored as one line: control characters and escape sequences are removed.
    """
    _store_summary(settings_of(ctx), conversation, turn, text, "summary set")


@summary_app.command("clear", epilog=SUMMARY_JSON)
def summary_clear(ctx: typer.Context, conversation: ConversationOf, turn: TurnOf) -> None:
    """Remove a turn's summary (the next catch-up writes a new one)."""
    _store_summary(settings_of(ctx), conversation, turn, None, "summary clear")


@app.command(hidden=True)
def label(
    ctx: typer.Context,
    conversation: ConversationOf,
    turn: TurnOf,
    text: Annotated[str | None, typer.Argument(metavar="TEXT", help="The summary, one line.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the turn's summary instead.")] = False,
) -> None:
    """The former name of `turnmark summary set` and `turnmark summary clear`."""
    chrome(
        "note: 'turnmark label' is now 'turnmark summary set CONV TURN TEXT' ('summary clear CONV TURN' for --clear)"
    )
    if clear == (text is not None):
        raise fail("give either TEXT or --clear")
    _store_summary(settings_of(ctx), conversation, turn, text, "summary clear" if clear else "summary set")


def _store_summary(settings: Settings, conversation: str, turn: str, text: str | None, command: str) -> None:
    """Set (``text``) or clear (``None``) the summary of ``turn``, and say what is stored now."""
    clear = text is None
    chosen: list[str] = []

    def change(stream: ConversationStream) -> ConversationStream:
        prepared = labels.ensure_first_turn_start(stream)
        turn_id = _turn_id(prepared, turn)
        chosen.append(turn_id)
        result = (
            labels.unlabel_turn(prepared, turn_id)
            if clear
            else labels.label_turn(prepared, turn_id, text or "", "user")
        )
        if isinstance(result, returns_result.Failure):
            raise WorkspaceError(result.failure().describe())
        return result.unwrap()

    ref = pick(settings, conversation)
    stream, saved = conversations.edit_conversation(
        ref,
        change,
        settings.new_id,
        persist_ids=True,
        announce=lambda line: note(f"{ref.display_id}: {line}"),
        command=command,
    )
    problem = finding_usecase.refresh_conversation(ref)
    if problem:
        note(problem)
    turn_id = chosen[-1]
    stored = next((t.summary() for t in stream.turns() if t.id() == turn_id), None)
    if settings.format is OutputFormat.json:
        by = None if clear else "user"
        upgraded = upgrade_json(saved.upgrade, done=True)
        emit_json({"conversation": ref.display_id, "turn": turn_id, "summary": stored, "by": by, **upgraded})
        return
    emit_line(f"{turn_id}  {stored}" if stored is not None else f"{turn_id}  (summary cleared)")
    for line in upgrade_line(ref.display_id, saved.upgrade, done=True):
        emit_line(line)
