"""The commands that read conversations: ``conversations``, ``turns``, ``check``, ``project``."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.summary_text import line_start
from turnmark.core.text.wording import counted
from turnmark.shell.cli.common import (
    EDITING_HELP,
    ConversationArgument,
    FormatOption,
    OutputFormat,
    app,
    chosen,
    conversation_json,
    pick,
    read_for_display,
    read_or_report,
    settings_of,
    warn,
)
from turnmark.shell.errors import ConfigProblem
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, note

with lazy_imports():
    from turnmark.core.links import check as link_check
    from turnmark.core.links import projection as link_projection
    from turnmark.core.links import resolution
    from turnmark.core.stream import json_document, previews
    from turnmark.core.summaries import failures, transcript
    from turnmark.core.wire import chat
    from turnmark.shell.cli import listing_layout, progress
    from turnmark.shell.storage import config_files, failure_memory
    from turnmark.shell.storage import conversations as conversation_files
    from turnmark.shell.usecases import listing

if TYPE_CHECKING:
    from turnmark.core.links.check import CheckReport
    from turnmark.core.links.projection import ViewEvent
    from turnmark.core.summaries.turn_rows import TurnRow
    from turnmark.shell.cli.common import Settings
    from turnmark.shell.storage.conversations import LoadedConversation, ReadFacts
    from turnmark.shell.storage.workspace import ConversationRef

    Checked = tuple[dict[str, object], CheckReport] | dict[str, object]

# turns --------------------------------------------------------------------------------------------

TRANSIENT_MARK = "*"
FALLBACK_MARK = "~ "


def _turn_line(row: TurnRow) -> str:
    identifier = row.id if row.id is not None else "(none)"
    identifier += TRANSIENT_MARK if row.id_transient else ""
    if row.label_source == "summary":
        text = (row.label or "") + (f"  [{row.source}]" if row.source else "")
    elif row.label is not None:
        text = FALLBACK_MARK + row.label + (f"  [not summarized: {row.failure}]" if row.failure else "")
    else:
        text = FALLBACK_MARK + ("(empty turn)" if row.events <= 1 else "(no request in this turn)")
    return f"{identifier:<8} {text}"


@app.command(
    epilog="Lines are rebase-style: <event_id> <summary> [who wrote it]. Markers: '~' = no summary stored yet, "
    "the first line of the turn's request is shown instead; '*' = event_id not yet saved (assigned at load, "
    "the same on every read, written by the next save); '(none)' = an implicit first "
    "turn with no turn_start (it cannot carry a summary until "
    "one is inserted).",
)
def turns(ctx: typer.Context, conversation: ConversationArgument = None, output_format: FormatOption = None) -> None:
    """List the turns of a conversation, one line per turn: <event_id> <summary>."""
    settings = settings_of(ctx)
    ref = pick(settings, conversation)
    memory = failure_memory.load_memory(ref)
    loaded: LoadedConversation | ReadFacts
    if memory:
        full = read_for_display(settings, ref)
        rows = failures.turn_rows(full.stream, memory, _transcript_limit(settings, full))
        loaded = full
    else:
        loaded = conversation_files.read_facts(ref, settings.new_id)
        if loaded.metadata_error:
            warn(loaded.metadata_error)
        rows = loaded.facts.rows()
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json({"conversation": conversation_json(loaded), "turns": [row.to_json() for row in rows]})
        return
    title = f"  {loaded.title}" if loaded.title else ""
    chrome(f"{loaded.ref.display_id}{title} ({counted(len(rows), 'turn')})")
    if rows:
        emit_line("\n".join(map(_turn_line, rows)))
    if any(row.label_source != "summary" for row in rows):
        chrome("~ no summary stored: the first line of the turn's request is shown instead")
    if any(row.id_transient for row in rows):
        chrome("* event_id not yet saved: assigned at load (the same on every read), written by the next save")


# check --------------------------------------------------------------------------------------------


def _transcript_limit(settings: Settings, loaded: LoadedConversation) -> int:
    """The transcript limit catch-up would use (its remembered fingerprints were taken with it).

    A configuration that cannot be read only loses the failure notes: the default is used, with a warning.
    """
    try:
        layers = config_files.config_layers(loaded.ref.workspace, loaded.stream, settings.cfg, settings.environ)
        return config_files.transcript_limit(layers)
    except ConfigProblem as error:
        chrome(f"warning: {error}; why turns were not summarized may not be shown")
        return transcript.MAX_MESSAGE_CHARS


def _excluded_text(event: dict[str, object]) -> str:
    pair = ", the other half of its tool call" if event["by_closure"] else ""
    return f"entry {event['index']} {event['type']} {event['event_id']}{pair}"


def _diagnostic_lines(diagnostic: dict[str, object]) -> tuple[str, str]:
    """A diagnostic as two lines: the unresolved link and why, then what is left out."""
    reason = str(diagnostic["reason"])
    excluded = diagnostic["excluded"]
    assert isinstance(excluded, list)
    return (
        f"request_id {diagnostic['request_id']!r} does not resolve ({reason}: {resolution.REASON_TEXT[reason]})",
        "left out of what the model sees: " + ", ".join(_excluded_text(event) for event in excluded),
    )


def _check_lines(report: CheckReport) -> list[str]:
    links = report.links
    lines = [
        f"{links['linked']} linked ({links['resolved']} resolved, {links['unresolved']} unresolved), "
        f"{links['unlinked']} unlinked, {report.entries} entries"
    ]
    excluded: set[object] = set()
    for diagnostic in report.exclusions:
        head, body = _diagnostic_lines(diagnostic)
        lines += [f"  {head}", f"    {body}"]
        excluded.update(event["event_id"] for event in diagnostic["excluded"])
    for item in report.unresolved:
        if item["event_id"] not in excluded:
            lines.append(
                f"  entry {item['index']} ({item['type']}, event_id {item['event_id']}): request_id "
                f"{item['request_id']!r} does not resolve ({item['reason']})"
            )
    lines += _odd_field_lines(report)
    for item in report.duplicated_ids:
        entries = ", ".join(str(index) for index in item["entries"])
        lines.append(
            f"  event_id {item['event_id']!r} was on entries {entries}: the later copies got new IDs at load "
            "(written on the next save)"
        )
    for item in report.duplicated_keys:
        lines.append(
            f"  entry {item['index']}: key {item['key']!r} is written twice in {item['path']}; only the last "
            "value is read, and turnmark refuses to save until one is removed"
        )
    for item in report.save_blocked_by:
        lines.append(
            f"  entry {item['index']} (event_id {item['event_id']}) links to the duplicated ID "
            f"{item['request_id']!r}: turnmark refuses to save this conversation until request_id names "
            "exactly one chat_request"
        )
    for item in report.orphaned_tool_halves:
        lines.append(f"  entry {item['index']} ({item['type']} {item['event_id']}): {item['why']}")
    for item in report.malformed_ids:
        if not isinstance(item["value"], str):
            continue
        lines.append(
            f"  warning: entry {item['index']}: {item['key']} '{item['value']}' is not in the form turnmark and JP "
            "write (7 lowercase letters and digits); was it edited by hand?"
        )
    return lines


def _odd_field_lines(report: CheckReport) -> list[str]:
    """One line per odd field (an unresolved one is already told by its exclusion)."""
    return [
        f"  {'' if item['reading'] == 'stand_in' else 'warning: '}entry {item['index']} ({item['type']}, event_id "
        f"{item['event_id']}): {item['key']} {json_document.json_text(item['value'])}: {item['meaning']}; "
        f"to fix: {item['fix']}"
        for item in report.odd_fields
        if item["reading"] != "unresolved"
    ]


def transient_note(transient: int, entries: int) -> str:
    """The one calm line about entries whose event_id is not in the file yet (most of JP's older ones)."""
    some = f"{transient} of {entries} entries" if transient != entries else f"all {entries} entries"
    return (
        f"note: {some} {'has' if transient == 1 else 'have'} no event_id of their own in the file yet "
        "(written before JP kept IDs, or copied): turnmark assigns the same ones on every read and the next "
        "save writes them. Nothing to fix."
    )


def unlinked_note(answers: int, conversations: list[str]) -> str:
    """The one calm line about answers that carry no request link: what check cannot see there, and the fix."""
    where = conversations[0] if len(conversations) == 1 else "--all"
    inside = "" if len(conversations) == 1 else f" in {counted(len(conversations), 'conversation')}"
    return (
        f"note: {counted(answers, 'answer')}{inside} {'carries' if answers == 1 else 'carry'} no request link "
        "(written before JP linked answers to requests): a request deleted or moved there cannot be detected. "
        f"To make such edits detectable: turnmark repair {where} --backfill --apply"
    )


def _checked(
    settings: Settings, conversation: str | None, all_conversations: bool
) -> Iterator[tuple[ConversationRef, Checked]]:
    """Each conversation with its head (ID, folder, title, format) and report, or its error row.

    ``--all`` goes through the workspace cache: a conversation whose files did not change is not read.
    """
    if not all_conversations:
        for ref in chosen(settings, conversation, all_conversations):
            loaded = read_or_report(settings, ref)
            if isinstance(loaded, dict):
                yield ref, loaded
            else:
                yield (
                    ref,
                    (
                        conversation_json(loaded),
                        link_check.check_report(loaded.stream, loaded.stream.doubled_keys),
                    ),
                )
        return
    if conversation is not None:
        chosen(settings, conversation, all_conversations)
    workspace = settings.workspace_root()
    with progress.reading("reading conversations") as on_read:
        found = listing.list_workspace(workspace, note, checks=True, jobs=settings.jobs, on_read=on_read)
    for listed in found:
        row: dict[str, object] = dict(listing_layout.listing_json(workspace, listed))
        report = listed.report()
        if row["error"] is not None or report is None:
            chrome(f"error: {row['error']}")
            yield listed.ref, row
            continue
        if row["metadata_error"]:
            warn(str(row["metadata_error"]))
        yield listed.ref, ({key: row[key] for key in ("id", "dirname", "title", "format")}, report)


@app.command(epilog=EDITING_HELP)
def check(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    all_conversations: Annotated[bool, typer.Option("--all", "-a", help="Check every conversation.")] = False,
    output_format: FormatOption = None,
) -> None:
    """Check request links, event IDs and tool calls: unresolved links, duplicated IDs, orphaned tool halves.

    The status is ok, PROBLEMS, or WARNINGS when the only findings are IDs not in the form JP
    writes (7 lowercase letters and digits) or odd fields read as absent (a null request_id, one on a
    kind that never links). Exit status: 0 when every link resolves, 1 when something is unresolved,
    an event_id is not a string, a tool call lacks its other half or a save would be refused, 2 when a
    conversation cannot be read.
    """
    settings = settings_of(ctx)
    results: list[dict[str, object]] = []
    problems = errors = transient = stand_ins = entries = 0
    unlinked: dict[str, int] = {}
    for ref, found in _checked(settings, conversation, all_conversations):
        if isinstance(found, dict):
            errors += 1
            results.append(found)
            if all_conversations and settings.resolve_format(output_format) is OutputFormat.text:
                emit_line(f"{ref.display_id}  UNREADABLE  {ref.dirname}: see the error above")
            continue
        head, report = found
        problems += 0 if report.ok else 1
        transient += report.transient_ids
        stand_ins += sum(1 for item in report.odd_fields if item["reading"] == "stand_in")
        entries += report.entries
        if answers := int(str(report.links.get("unlinked_answers", 0))):
            unlinked[ref.display_id] = answers
        results.append({**head, **report.to_json(), "error": None})
        if settings.resolve_format(output_format) is OutputFormat.text:
            status = "PROBLEMS" if not report.ok else "WARNINGS" if report.malformed_ids or report.odd_fields else "ok"
            lines = _check_lines(report)
            if not report.ok:
                lines.append(f"  to fix: turnmark repair {ref.display_id} (shows the plan; --apply or -i makes it)")
            emit_line(f"{ref.display_id}  {status}  " + "\n".join(lines))
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json({"ok": problems == 0 and errors == 0, "transient_ids": transient, "conversations": results})
    else:
        if transient > stand_ins:
            chrome(transient_note(transient - stand_ins, entries))
        if unlinked:
            chrome(unlinked_note(sum(unlinked.values()), list(unlinked)))
    if errors:
        raise typer.Exit(2)
    if problems:
        raise typer.Exit(1)


# project ----------------------------------------------------------------------------------------------


class Provider(enum.StrEnum):
    ollama = "ollama"
    openai = "openai"
    anthropic = "anthropic"


PROJECT_HELP = """
The provider view is what a model is sent for this conversation: requests,
answers, reasoning, tool calls and results, after compaction overlays, without
turn_start, inquiries and config entries. Events whose request_id does not
resolve are left out, each with a warning on stderr saying which request_id and
why; when one half of a tool call is left out, so is the other half. Why a link
no longer resolves and how to fix it: `turnmark check --help`; `turnmark repair`
makes the fixes.
"""


def _view_line(event: ViewEvent) -> str:
    kind, text = previews.provider_preview(event.payload)
    run = event.summary_run
    if run is not None and kind == "request":
        text = f"{text} (turns {run.from_turn}-{run.to_turn})"
    return f"{event.turn:>4}  {kind:<11} {event.event_id:<8} {line_start(text, PREVIEW_CHARS)}"


PREVIEW_CHARS = 72


@app.command(epilog=PROJECT_HELP)
def project(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    provider: Annotated[
        Provider | None,
        typer.Option("--provider", "-p", help="Print the exact request body this provider's API would receive."),
    ] = None,
    output_format: FormatOption = None,
) -> None:
    """Show what the model would be sent for a conversation, and which events are left out and why.

    Text: one line per event (turn, kind, event_id, a preview). JSON: the events and the diagnostics.
    With --provider: the request body for ollama (/api/chat), openai (/v1/chat/completions) or
    anthropic (/v1/messages).
    """
    settings = settings_of(ctx)
    loaded = read_for_display(settings, pick(settings, conversation))
    stream = loaded.stream
    projection = link_projection.project(stream)
    for diagnostic in projection.diagnostics:
        head, body = _diagnostic_lines(link_check.diagnostic_json(diagnostic, stream.file_index))
        chrome(f"warning: {head}; {body}")
    if provider is not None:
        config = config_files.effective_config(loaded.ref.workspace, stream, settings.cfg, settings.environ)
        emit_json(chat.request_body(projection.view, provider.value, config))
    elif settings.resolve_format(output_format) is OutputFormat.json:
        emit_json(
            {"conversation": conversation_json(loaded), **link_check.projection_json(projection, stream.file_index)}
        )
    else:
        for event in projection.view.events:
            emit_line(_view_line(event))


# conversations --------------------------------------------------------------------------------------


@app.command()
def conversations(ctx: typer.Context, output_format: FormatOption = None) -> None:
    """List the workspace's conversations: ID, turns, summarized turns, link problems, title.

    A conversation is read only when its files changed since the last listing (the workspace cache).
    """
    settings = settings_of(ctx)
    workspace = settings.workspace_root()
    as_json = settings.resolve_format(output_format) is OutputFormat.json
    layout = listing_layout.ListingLayout(workspace)
    with progress.reading("reading conversations") as on_read:
        printed = listing.printed_listing(
            workspace, note, layout, text_only=not as_json, jobs=settings.jobs, on_read=on_read
        )
    rows = printed.rows or []
    for row in rows:
        if row.chrome is not None:
            chrome(row.chrome)
    if as_json:
        emit_json({"workspace": str(workspace.root), "conversations": layout.json_rows(rows)})
    else:
        emit_line(printed.text if printed.text is not None else layout.text(rows))
    if any(row.chrome is not None for row in rows):
        raise typer.Exit(2)
