"""``turnmark find``: ranked full-text search over every turn of the workspace, landing on a turn."""

from __future__ import annotations

import enum
import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.wording import counted
from turnmark.shell.cli.common import FormatOption, OutputFormat, app, pick, settings_of
from turnmark.shell.errors import QueryError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, styled, write_prepared

with lazy_imports():
    import re2

    from turnmark.core.search import scopes as search_scopes
    from turnmark.core.search import terms as search_terms
    from turnmark.shell import clock
    from turnmark.shell.cli import progress
    from turnmark.shell.usecases import finding

if TYPE_CHECKING:
    from turnmark.core.search.snippets import Pattern
    from turnmark.shell.usecases.finding import FindResult, Hit

MAX_LIMIT = 1_000_000
"""The largest ``--limit`` (SQLite takes 64-bit integers; no workspace holds this many turns)."""

FIND_HELP = """
QUERY: words (all must be in the turn), "a phrase", prefix* and -word or
-"a phrase" to leave turns out (a QUERY that starts with - goes after --,
options before it: turnmark find -o ids -- '-draft lock'). A result is a turn, best first: a word in the
turn's summary counts most, then its request, its answers, then tool names and
arguments; tool results, reasoning and the conversation's title are searched
only when --in names them (--in all: every scope). Under each hit, the best
matching text with the match marked; "(excluded)" when that event is left
out of what the model sees (a hand edit broke its request link).

The index is a SQLite FTS5 database in turnmark's cache folder for the
workspace (under $TURNMARK_CACHE_DIR or ~/.cache/turnmark; see turnmark --help):
only conversations whose files changed are read again, `watch` and `label` keep
it fresh, and deleting it loses nothing.
--regex scans the conversations instead (exact, slower), with RE2's syntax (as
Python's, without backreferences or lookarounds; \\w and \\d are ASCII: \\pL is a
letter), in time linear in the text, whatever the pattern. A QUERY has at most
64 terms. --output ids prints
CONV:TURN lines that `transcript --turn`, `show --turn`, `fork --until` and
`edit -i` take.

With --format json: {"query", "scopes", "regex", "since", "total", "hits":
[{"conversation", "title", "turn_index", "turn_id", "id_transient", "reference",
"date", "label", "label_source", "scope", "event_id", "excluded", "snippet",
"marks", "score"}], "skipped": [{"conversation", "error"}]}. Exit status: 0 with
hits, 1 with none, 2 on bad input.
"""


def _on_terminal() -> bool:
    """Whether matches may be shown in bold: stdout is a terminal and ``NO_COLOR`` is unset."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


class OutputKind(enum.StrEnum):
    hits = "hits"
    ids = "ids"
    count = "count"  # type: ignore[assignment]


def _hit_lines(hit: Hit) -> tuple[str, str | None]:
    line = hit.line
    turn = line.turn_id + ("*" if line.id_transient else "") if line.turn_id is not None else "no turn_start"
    label = line.label or "(no request in this turn)"
    shown = label if line.label_source == "summary" else f"~{label}"
    head = f"{line.conversation}  turn {line.turn_index} ({turn})  {line.date or '-':<10}  {shown}"
    if hit.snippet is None:
        return head, None
    opening, closing = ("\x1b[1m", "\x1b[22m") if _on_terminal() else ("[", "]")
    excluded = "(excluded) " if hit.snippet.excluded else ""
    return head, f"    {excluded}{hit.snippet.render(opening, closing)}"


def _json(result: FindResult, text: str, scopes: tuple[str, ...], regex: bool, since: str | None) -> dict[str, object]:
    return {
        "query": text,
        "scopes": list(scopes),
        "regex": regex,
        "since": since,
        "total": result.total,
        "hits": [hit.to_json() for hit in result.hits],
        "skipped": [{"conversation": conversation, "error": error} for conversation, error in result.skipped],
    }


def _options(
    text: str, scopes: str | None, regex: bool, since: str | None, limit: int, jobs: int | None
) -> finding.FindOptions:
    chosen = search_scopes.parse_scopes(scopes)
    if not isinstance(chosen, tuple):
        raise QueryError(chosen.describe())
    moment = None
    if since is not None:
        parsed = search_terms.parse_since(since, clock.now_timestamp())
        moment = parsed.value_or(None)
        if moment is None:
            raise QueryError(parsed.failure().describe())
    return finding.FindOptions(chosen, limit, moment, _pattern(text) if regex else None, jobs)


def _pattern(text: str) -> Pattern:
    """``--regex``'s QUERY compiled by RE2 (linear time: no pattern can make a scan hang), or why it cannot be."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(text, options=options)  # type: ignore[no-any-return]
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else error
        raise QueryError(f"regex: {reason} (RE2 syntax: no backreferences or lookarounds)") from None


@app.command(epilog=FIND_HELP)
def find(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for (see below).", show_default=False)],
    conversations: Annotated[
        list[str] | None,
        typer.Argument(metavar="[CONV]...", help="Only these conversations (default: all).", show_default=False),
    ] = None,
    scopes: Annotated[
        str | None,
        typer.Option(
            "--in",
            metavar="SCOPES",
            help="Where to look, comma-separated: labels, requests, answers, tools (the default), results, "
            "reasoning, titles, or all.",
        ),
    ] = None,
    regex: Annotated[
        bool,
        typer.Option(
            "--regex", help="QUERY is a regex (RE2: no backreferences or lookarounds); scan instead of the index."
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="DATE", help="Only turns from DATE on: 2026-03-05, 2026-03-05T14:30, 36h, 7d, 2w."
        ),
    ] = None,
    limit: Annotated[
        int,
        typer.Option("--limit", "-n", min=1, max=MAX_LIMIT, metavar="N", help="Show at most N hits (N up to 1000000)."),
    ] = 20,
    output: Annotated[
        OutputKind,
        typer.Option("--output", "-o", metavar="KIND", help="hits (default), ids (CONV:TURN lines) or count."),
    ] = OutputKind.hits,
    output_format: FormatOption = None,
) -> None:
    """Search every turn of the workspace, ranked; each hit is a turn you can open with the next command."""
    settings = settings_of(ctx)
    options = _options(text, scopes, regex, since, limit, settings.jobs)
    workspace = settings.workspace_root()
    refs = [pick(settings, wanted) for wanted in conversations] if conversations else None
    if regex:
        result = finding.scan(workspace, options, settings.new_id, refs)
    else:
        parsed = search_terms.parse_query(text)
        query = parsed.value_or(None)
        if query is None:
            raise QueryError(parsed.failure().describe())
        with progress.reading("indexing conversations") as on_read:
            result = finding.find(
                workspace, query, options, refs=refs, note=lambda line: chrome(f"note: {line}"), on_read=on_read
            )
    for conversation, error in result.skipped:
        chrome(f"note: skipped {conversation}: {error}")
    if result.skipped:
        chrome(f"note: {counted(len(result.skipped), 'unreadable conversation')} skipped")
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json(_json(result, text, options.scopes, regex, since))
    elif output is OutputKind.count:
        emit_line(str(result.total))
    elif output is OutputKind.ids:
        for hit in result.hits:
            emit_line(hit.line.reference)
    else:
        for hit in result.hits:
            head, under = _hit_lines(hit)
            emit_line(head)
            if under is not None:
                write_prepared(styled(under) + "\n")
        if result.total > len(result.hits):
            chrome(f"{len(result.hits)} of {counted(result.total, 'matching turn')} shown (--limit N for more)")
    if result.total == 0:
        raise typer.Exit(1)
