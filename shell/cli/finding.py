"""``turnmark find``: ranked full-text search over every turn of the workspace, landing on a turn."""

from __future__ import annotations

import enum
import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.wording import counted
from turnmark.shell.cli.common import FormatOption, OutputFormat, Settings, app, pick, settings_of
from turnmark.shell.errors import QueryError, WorkspaceError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, note, styled, write_prepared

with lazy_imports():
    from turnmark.core.search import scopes as search_scopes
    from turnmark.core.search import terms as search_terms
    from turnmark.shell.cli import progress
    from turnmark.shell.usecases import finding

if TYPE_CHECKING:
    from turnmark.shell.storage.workspace import ConversationRef
    from turnmark.shell.usecases.finding import FindResult, Hit

MAX_LIMIT = 1_000_000
"""The largest ``--limit`` (SQLite takes 64-bit integers; no workspace holds this many turns)."""

FIND_HELP = """
QUERY: words (all must be in the turn), "a phrase", prefix* and -word or
-"a phrase" to leave turns out; a word that starts with -- is a word to look
for, as pasted: turnmark find 'jp --version'. Quote a QUERY of several words:
the arguments after it are conversations. A QUERY that starts with - goes
after --, options before it: turnmark find -o ids -- '-draft lock'.
A result is a turn, best first: a word in the turn's summary counts most, then
its request, its answers, then tool names and arguments; tool results,
reasoning and the conversation's title are searched only when --in names them
(--in all: every scope). Under each hit, the best matching text with the match
marked, a line break shown as ⏎; "(excluded)" when that event is left out of
what the model sees (a hand edit broke its request link).

The index is a SQLite FTS5 database in turnmark's cache folder for the
workspace (under $TURNMARK_CACHE_DIR or ~/.cache/turnmark; see turnmark --help):
only conversations whose files changed are read again, `watch` and `summary set` keep
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


def _conversations(settings: Settings, text: str, wanted: list[str] | None) -> list[ConversationRef] | None:
    """The conversations ``[CONV]...`` names; words that name none were meant for the query, most likely."""
    if not wanted:
        return None
    found: list[ConversationRef] = []
    strays: list[str] = []
    for name in wanted:
        try:
            found.append(pick(settings, name))
        except WorkspaceError:
            strays.append(name)
    if strays:
        raise QueryError(f"no conversation {strays[0]!r}; {search_terms.quoted_query([text, *strays])}")
    return found


def _emit(result: FindResult, output: OutputKind) -> None:
    if output is OutputKind.count:
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


QueryArgument = Annotated[
    str, typer.Argument(metavar="QUERY", help="What to look for (see below).", show_default=False)
]
ConversationsArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="[CONV]...", help="Only these conversations (default: all).", show_default=False),
]
ScopesOption = Annotated[
    str | None,
    typer.Option(
        "--in",
        metavar="SCOPES",
        help="Where to look, comma-separated: summaries, requests, answers, tools (the default), results, "
        "reasoning, titles, or all.",
    ),
]
RegexOption = Annotated[
    bool,
    typer.Option(
        "--regex", help="QUERY is a regex (RE2: no backreferences or lookarounds); scan instead of the index."
    ),
]
SinceOption = Annotated[
    str | None,
    typer.Option("--since", metavar="DATE", help="Only turns from DATE on: 2026-03-05, 2026-03-05T14:30, 36h, 7d, 2w."),
]
LimitOption = Annotated[
    int, typer.Option("--limit", "-n", min=1, max=MAX_LIMIT, metavar="N", help="Show at most N hits (N up to 1000000).")
]
OutputOption = Annotated[
    OutputKind, typer.Option("--output", "-o", metavar="KIND", help="hits (default), ids (CONV:TURN lines) or count.")
]


@app.command(epilog=FIND_HELP)
def find(
    ctx: typer.Context,
    text: QueryArgument,
    conversations: ConversationsArgument = None,
    scopes: ScopesOption = None,
    regex: RegexOption = False,
    since: SinceOption = None,
    limit: LimitOption = 20,
    output: OutputOption = OutputKind.hits,
    output_format: FormatOption = None,
) -> None:
    """Search every turn of the workspace, ranked; each hit is a turn you can open with the next command."""
    settings = settings_of(ctx)
    for line in search_scopes.renamed(scopes):
        note(line)
    options = finding.find_options(text, scopes, regex=regex, since=since, limit=limit, jobs=settings.jobs)
    workspace = settings.workspace_root()
    refs = _conversations(settings, text, conversations)
    with progress.reading("indexing conversations") as on_read:
        result = finding.search(
            workspace,
            text,
            options,
            settings.new_id,
            refs=refs,
            note=note,
            on_read=on_read,
        )
    for conversation, error in result.skipped:
        note(f"skipped {conversation}: {error}")
    if result.skipped:
        note(f"{counted(len(result.skipped), 'unreadable conversation')} skipped")
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json(result.to_json(text, options, since))
    else:
        _emit(result, output)
    if result.total == 0:
        raise typer.Exit(1)
