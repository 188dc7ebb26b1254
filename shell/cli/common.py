"""What every ``turnmark`` command shares: the app, global options, conversation selection, output."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.shell.cli.usage import TurnmarkGroup, TurnmarkTyper
from turnmark.shell.errors import ConversationError, TurnmarkError, WorkspaceError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_line, note
from turnmark.shell.settings import HttpSettings, RunSettings

with lazy_imports():
    from turnmark.core.stream import conversation_ids
    from turnmark.shell import entropy, version
    from turnmark.shell.storage import conversations, selection
    from turnmark.shell.storage import workspace as workspace_files
    from turnmark.shell.usecases import parallel

if TYPE_CHECKING:
    from turnmark.core.stream.event_ids import IdSource
    from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
    from turnmark.shell.storage.conversations import LazyConversation, LoadedConversation, ReadFacts
    from turnmark.shell.storage.workspace import ConversationRef, Workspace


EDITING_HELP = """
Every entry of events.json carries an "event_id" that stays with it when you
edit its content; the events that answer a request (responses, tool calls and
results, inquiries) carry a "request_id": the event_id of that chat_request.

Deleting a chat_request leaves its answers with a request_id that no longer
resolves; copying an entry gives both copies one event_id (the later copy gets
a new ID at load) and makes a link to it ambiguous. turnmark reports these
instead of guessing. To fix them: `turnmark repair CONV` shows the plan,
--apply makes the fixes that follow from the conversation alone, -i asks you
about the rest (or set request_id by hand, or delete the answers too).
Answers written before JP linked them (no request_id) cannot show a deleted
request: check says how many there are, and `turnmark repair CONV --backfill
--apply` links them first, so later edits are found.
"""


WORKSPACE_HELP = (
    "Workspace directory (or any directory inside it). "
    "Default: the nearest ancestor of the current directory with a .jp/ folder."
)


class OutputFormat(enum.StrEnum):
    text = "text"
    json = "json"


def _random_event_ids() -> IdSource:
    """The operating system's event IDs, the source made at the first draw: most commands draw none, and do
    not import the stream's ID code."""
    made: list[IdSource] = []

    def draw() -> str:
        if not made:
            made.append(entropy.random_event_ids())
        return made[0]()

    return draw


def _http_settings() -> HttpSettings:
    return HttpSettings()


@dataclass
class Settings:
    """What the global options chose, plus the dependencies tests may replace."""

    workspace: Path | None = None
    format: OutputFormat = OutputFormat.text
    cfg: list[str] = field(default_factory=list)
    new_id: IdSource = field(default_factory=_random_event_ids)
    environ: Mapping[str, str] | None = None
    http: HttpSettings = field(default_factory=_http_settings)
    jobs: int | None = None
    """Processes for work over many conversations and for ``show`` of a long one (``--jobs``; ``None``: one per
    core)."""

    def run(self, model: str | None = None) -> RunSettings:
        """What a use case is given: ``model`` (``--model``), and the global ``--cfg``, environment and HTTP."""
        return RunSettings(model, tuple(self.cfg), self.environ, self.http)

    def resolve_format(self, local: OutputFormat | None) -> OutputFormat:
        return local or self.format

    def workspace_root(self) -> Workspace:
        return workspace_files.require_workspace(self.workspace or Path.cwd())


FILES_HELP = """
turnmark writes nothing into a workspace but the conversations a command
changes (and JP's lock files). Its own files live with you, one folder per
workspace (named for its path, so two clones never share one): the cache and
search index in $TURNMARK_CACHE_DIR, else $XDG_CACHE_HOME/turnmark (on Linux;
default ~/.cache/turnmark); undo copies and summary failure notes in
$TURNMARK_STATE_DIR, else $XDG_STATE_HOME/turnmark (default
~/.local/state/turnmark). Deleting the cache loses nothing. A .jp/.turnmark or
.jp/turnmark folder left by an older turnmark is no longer read. Once a day the
folders of workspaces that no longer exist are removed (those an older turnmark
made, with no record of their workspace, after $TURNMARK_KEEP_DAYS days
without use, default 90; 0 keeps them). To clear them by hand: rm -r
~/.cache/turnmark ~/.local/state/turnmark (undo steps are lost). Neither folder
may lie inside a workspace: such a setting is refused.
"""

app = TurnmarkTyper(
    cls=TurnmarkGroup,
    name="turnmark",
    help=(
        "Keep long JP assistant conversations navigable and safe to edit by hand: stable event IDs, "
        "request links and one-line turn summaries for the .jp/conversations folders JP writes."
    ),
    epilog=FILES_HELP,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

FormatOption = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format", "-F", metavar="FORMAT", help="Output format: text for people, json for scripts (documented shape)."
    ),
]


def complete_conversation(incomplete: str) -> list[str]:
    """Shell completion for ``CONV``: the conversation IDs of the workspace around the current directory."""
    try:
        workspace = workspace_files.find_workspace(Path.cwd())
        refs = workspace_files.list_conversations(workspace) if workspace is not None else []
    except (OSError, TurnmarkError):
        return []
    names = [name for ref in refs for name in (ref.display_id, str(ref.id))]
    return [name for name in names if name.startswith(incomplete)]


ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", metavar="ID", help="Use this model ID (provider/name or alias).")
]
ConversationArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="CONV",
        autocompletion=complete_conversation,
        help="Conversation: ID (17727484633 or jp-c17727484633), directory name, or path. "
        "Default: the most recently active one.",
        show_default=False,
    ),
]


def show_version(wanted: bool) -> None:
    """``--version``: the installed package's version, as its metadata records it."""
    if wanted:
        emit_line(f"turnmark {version.installed()}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            metavar="PATH",
            help=WORKSPACE_HELP,
        ),
    ] = None,
    cfg: Annotated[
        list[str] | None,
        typer.Option(
            "--cfg",
            "-c",
            metavar="KEY=VALUE",
            help="Config override in JP's syntax (KEY=VALUE, KEY:=JSON, a JSON object, or @FILE); repeatable.",
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", "-F", metavar="FORMAT", help="Output format for every command: text or json."),
    ] = OutputFormat.text,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            metavar="N",
            help=(
                "Processes for work over many conversations (reading what the workspace cache lacks, "
                "summarize --all with builtin/extractive) and for show of a long one "
                "(default: one per core; at most two per core)."
            ),
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=show_version, help="Print turnmark's version and exit."),
    ] = False,
) -> None:
    settings = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
    settings.workspace = workspace
    settings.cfg = list(cfg or [])
    settings.format = output_format
    settings.jobs = capped_jobs(jobs)
    ctx.obj = settings


def capped_jobs(jobs: int | None) -> int | None:
    """``--jobs``, at most two per core (more only cost memory), with a note when it was more."""
    most = parallel.most_jobs()
    if jobs is None or jobs <= most:
        return jobs
    note(f"--jobs {jobs} is more than this machine can use; using {most} (two per core)")
    return most


def settings_of(ctx: typer.Context) -> Settings:
    settings = ctx.obj
    assert isinstance(settings, Settings)
    return settings


def chosen(settings: Settings, conversation: str | None, all_conversations: bool) -> list[ConversationRef]:
    """The conversations a command works on: ``--all``, the one named, or the most recent one."""
    if not all_conversations:
        return [pick(settings, conversation)]
    if conversation is not None:
        raise WorkspaceError("give either a conversation or --all, not both")
    return workspace_files.list_conversations(settings.workspace_root())


def warn(message: str) -> None:
    chrome(f"warning: {message}")


def pick(settings: Settings, wanted: str | None) -> ConversationRef:
    """The conversation ``CONV`` names (``CONV:TURN``, as ``find --output ids`` prints, names its conversation;
    a folder whose own name has a colon, such as ``17800000099-a:b``, is found by its whole name first)."""
    return _named(settings, wanted)[0]


def _named(settings: Settings, wanted: str | None) -> tuple[ConversationRef, str | None]:
    """The conversation ``CONV`` names, and the turn when it is ``CONV:TURN``."""
    start = settings.workspace or Path.cwd()
    reference = turn_reference(wanted)
    if wanted is not None and reference is not None:
        try:
            return selection.pick_conversation(start, wanted, warn), None
        except WorkspaceError:
            return selection.pick_conversation(start, reference[0], warn), reference[1]
    return selection.pick_conversation(start, wanted, warn), None


def turn_reference(wanted: str | None) -> tuple[str, str] | None:
    """``CONV:TURN`` split at its last colon, when ``wanted`` may be one (it is not a path that exists)."""
    if wanted is None or Path(wanted).exists():
        return None
    return conversation_ids.split_turn_reference(wanted)


def pick_turn(settings: Settings, conversation: str | None, turn: str | None) -> tuple[ConversationRef, str | None]:
    """The conversation and turn of a command with a turn option, which may be ``CONV:TURN`` and name both; so
    may ``CONV`` itself, when no turn option is given (``show jp-c17800000010:p8q2r4b``)."""
    reference = conversation_ids.split_turn_reference(turn) if turn is not None else None
    if reference is None:
        named, its_turn = _named(settings, conversation)
        return named, turn if turn is not None else its_turn
    named = pick(settings, reference[0])
    if conversation is not None and pick(settings, conversation).id != named.id:
        raise WorkspaceError(f"{turn!r} is a turn of {named.display_id}, not of {conversation}")
    return named, reference[1]


def read_for_display(settings: Settings, ref: ConversationRef) -> LoadedConversation:
    """Read a conversation for display; a broken metadata.json is a warning (the stream is still shown)."""
    loaded = conversations.read_conversation(ref, settings.new_id)
    if loaded.metadata_error:
        warn(loaded.metadata_error)
    return loaded


def read_or_report(settings: Settings, ref: ConversationRef) -> LoadedConversation | dict[str, object]:
    """For commands over many conversations: the conversation, or (reported on stderr) its error row."""
    try:
        return read_for_display(settings, ref)
    except ConversationError as error:
        chrome(f"error: {error}")
        return {"id": ref.display_id, "dirname": ref.dirname, "error": str(error)}


def conversation_json(loaded: LoadedConversation | ReadFacts | LazyConversation) -> dict[str, object]:
    ref = loaded.ref
    return {
        "id": ref.display_id,
        "dirname": loaded.directory.name,
        "title": loaded.title,
        "format": "legacy" if loaded.legacy else "current",
    }


def upgrade_json(upgrade: LegacyUpgrade | None, *, done: bool) -> dict[str, object]:
    """``{"upgraded", "upgrade"}`` of a command's JSON: whether its save upgraded the conversation from JP's
    older format, and what that upgrade changes (with ``upgraded`` false: what a real run's save would)."""
    return {"upgraded": done and upgrade is not None, "upgrade": None if upgrade is None else upgrade.to_json()}


def upgrade_line(conversation: str, upgrade: LegacyUpgrade | None, *, done: bool) -> list[str]:
    """The line that says a save upgraded (``done``) or would upgrade the conversation from JP's older format."""
    if upgrade is None:
        return []
    if done:
        undo = f"`turnmark edit --undo {conversation}` takes it back"
        return [f"  upgraded this conversation from JP's older format ({upgrade.describe()}); {undo}"]
    return [f"  a real run would upgrade this conversation from JP's older format ({upgrade.describe()})"]
