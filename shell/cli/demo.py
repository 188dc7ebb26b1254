"""``turnmark demo``: the main job end to end, offline, on a copy of the bundled example conversations.

Each step is a short explanation, the command, and what the command printed. The
commands run inside the copy, isolated from the user's JP configuration; their
output is captured and shown with paths relative to the copy and long lines
wrapped, so the whole demo fits in 100 columns. What the commands print is
theirs: the demo only lays it out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import typer

from turnmark.shell.cli.common import OutputFormat, Settings, app, settings_of
from turnmark.shell.output import chrome, emit_line, fail

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "workspace"

WIDTH = 100
"""No line of the demo is wider: a longer line a command printed is wrapped."""
PROSE_WIDTH = 90
CONTINUATION = "    "
"""How much deeper than its first line a wrapped output line goes on."""
NOWHERE = ".no-user-files"
"""Where the demo points JP's user-global config and user-local storage: a folder that is never made."""

OPENING = (
    "JP is a command-line LLM assistant that keeps each conversation in "
    "`.jp/conversations/<id>-<title>/events.json`; turnmark keeps those conversations navigable and safe "
    "to edit by hand."
)
INTRODUCTION = (
    "This demo copies four example conversations to a temporary folder and runs turnmark on "
    "the copy, from inside it, offline. Under each `$ turnmark …` line is what the command "
    "printed (paths relative to the copy, long lines wrapped)."
)


@dataclass(frozen=True, slots=True)
class Step:
    title: str
    text: str
    commands: tuple[tuple[str, ...], ...]


STEPS: tuple[Step, ...] = (
    Step(
        "The example conversations",
        "One line per conversation. A turn is one request of yours and everything that answers it; "
        "SUMMARIZED counts the turns that have a turn summary, a one-line description stored in the "
        "file. LINKS: each entry of events.json has an `event_id`, a short ID that stays with it when "
        "you edit it, and each answer (a response, a tool call, its result) has a `request_id`: the "
        "event_id of the request it answers. Hand edits in two of these conversations left answers "
        "whose request_id no longer names exactly one request; turnmark calls them unresolved. "
        "'dup IDs': an entry was copied, ID and all.",
        (("conversations",),),
    ),
    Step(
        "What the hand edits broke, and why",
        "`check` lists each unresolved link with the reason, and the entries a model no longer "
        "sees because of it. Its closing note is information, not a problem: an entry with no "
        "event_id in the file yet gets one when turnmark reads it (the same on every read), and the "
        "next save writes it.",
        (("check", "17800000030"),),
    ),
    Step(
        "What a model would be sent (the projection)",
        "`project` shows a conversation's projection: what a model would be sent from it, "
        "worked out as JP does, one line per event (turn, kind, event_id, text). Answers with an "
        "unresolved link are left out (the warning on stderr says which), and the summary JP "
        "wrote when it compacted this conversation stands in for turns 0-1.",
        (("project", "17800000040"),),
    ),
    Step(
        "Turns, before any summary is written",
        "`turns` lists a conversation like `git rebase -i`, one line per turn: the event_id of "
        "the entry that opens the turn (its turn_start), then the turn's summary; the lines under "
        "the list explain '~' and '*'. '(none)' is a first turn with no turn_start entry yet.",
        (("turns", "17790000000"),),
    ),
    Step(
        "Catch-up: writing the missing summaries, offline",
        "Catch-up writes the summaries a conversation is missing (and a turn_start where one is "
        "missing): JP and `turnmark watch` do it in the background, `turnmark summarize` does it "
        "now. The demo uses builtin/extractive, the offline summarizer, which takes each label "
        "from the turn itself; with a model configured, the model writes them. jp-c17800000030 "
        "still has its ambiguous link (a request was copied, so two entries had its event_id): "
        "turnmark refuses to save that conversation rather than guess which request is meant, "
        "and its error says so. The others are saved.",
        (("summarize", "--all"),),
    ),
    Step(
        "Turns, after catch-up",
        "Each new summary says who wrote it, in brackets (a0turn0's was in the file already). "
        "The IDs assigned at load were saved with them, so they lose their '*'.",
        (("turns", "17790000000"), ("turns", "17800000040")),
    ),
)


def _prose(text: str) -> None:
    """A paragraph of the demo's own, wrapped; a `quoted command` is never split across lines."""
    kept = re.sub(r"`[^`]*`", lambda match: match.group().replace(" ", "\0"), text)
    for line in textwrap.wrap(kept, PROSE_WIDTH, break_on_hyphens=False, break_long_words=False):
        emit_line(line.replace("\0", " "))


def wrapped(line: str, width: int = WIDTH) -> list[str]:
    """``line`` in pieces of at most ``width`` columns, each piece after the first indented deeper."""
    if len(line) <= width:
        return [line]
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    return textwrap.wrap(
        body, width, initial_indent=indent, subsequent_indent=indent + CONTINUATION, break_on_hyphens=False
    )


def relative(line: str, workspace: Path) -> str:
    """``line`` with every path inside ``workspace`` (the commands' current directory) made relative to it."""
    for root in sorted({str(workspace), str(workspace.resolve())}, key=len, reverse=True):
        line = line.replace(f"{root}{os.sep}", "")
    return line


class _Channel(io.StringIO):
    """Stands in for stdout or stderr while a command runs: records whole lines, in order, across both."""

    def __init__(self, lines: list[tuple[bool, str]], to_stderr: bool) -> None:
        super().__init__()
        self._lines = lines
        self._to_stderr = to_stderr
        self._partial = ""

    def write(self, text: str) -> int:
        *whole, self._partial = (self._partial + text).split("\n")
        self._lines.extend((self._to_stderr, line) for line in whole)
        return len(text)

    def finish(self) -> None:
        if self._partial:
            self._lines.append((self._to_stderr, self._partial))
            self._partial = ""


def _run(settings: Settings, arguments: tuple[str, ...], workspace: Path) -> int:
    """Run one command inside the copy and show its output, stdout and stderr each on its own stream."""
    lines: list[tuple[bool, str]] = []
    out, err = _Channel(lines, False), _Channel(lines, True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = app(list(arguments), obj=settings, standalone_mode=False)
        except typer.Abort:
            code = 1
        finally:
            out.finish()
            err.finish()
    for to_stderr, line in lines:
        for piece in wrapped(relative(line, workspace)):
            if to_stderr:
                sys.stdout.flush()
                chrome(piece)
            else:
                emit_line(piece)
                sys.stdout.flush()
    return code if isinstance(code, int) else 0


@contextlib.contextmanager
def _user_data_dir(path: Path) -> Iterator[None]:
    """Point JP's user-local storage (read from the environment by the workspace lookup) at ``path``."""
    before = os.environ.get("JP_USER_DATA_DIR")
    os.environ["JP_USER_DATA_DIR"] = str(path)
    try:
        yield
    finally:
        if before is None:
            del os.environ["JP_USER_DATA_DIR"]
        else:
            os.environ["JP_USER_DATA_DIR"] = before


def _isolated(settings: Settings, workspace: Path) -> Settings:
    """``settings`` that read none of the user's JP configuration: no global config, no ``JP_CFG_*``."""
    environ = dict(os.environ if settings.environ is None else settings.environ)
    environ = {name: value for name, value in environ.items() if not name.startswith("JP_CFG_")}
    environ["JP_GLOBAL_CONFIG_DIR"] = str(workspace / NOWHERE / "config")
    return dataclasses.replace(settings, environ=environ, cfg=[], workspace=None)


def _closing(workspace: Path, keep: bool) -> None:
    emit_line("\n== What was touched")
    _prose(
        "Nothing of yours was read or changed: every command ran on the temporary copy of the "
        "examples, with none of your JP configuration, and nothing went over the network."
    )
    if keep:
        _prose(
            "The copy is kept (`--keep`), in the folder below; `cd` there to try other commands "
            "(`turnmark --help` lists them), and delete the folder when you are done."
        )
        emit_line(f"  {workspace}")
    else:
        _prose("The copy is deleted now; `turnmark demo --keep` keeps it, and prints where it is.")


@app.command()
def demo(
    ctx: typer.Context,
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary copy and print where it is."),
) -> None:
    """Show turnmark at work, offline, on a copy of example conversations: links, what a model is sent, summaries.

    The examples are copied to a temporary folder first; nothing of yours is read or written.
    """
    if settings_of(ctx).format is OutputFormat.json:
        raise fail("demo is a tour for people and has no JSON output; every other command has one")
    if not FIXTURES.is_dir():
        raise fail(f"the bundled examples are missing ({FIXTURES}); run the demo from a turnmark checkout")
    workspace = Path(tempfile.mkdtemp(prefix="turnmark-demo-"))
    settings = _isolated(settings_of(ctx), workspace)
    failed: list[str] = []
    try:
        shutil.copytree(FIXTURES, workspace, dirs_exist_ok=True)
        _prose(OPENING)
        emit_line()
        _prose(INTRODUCTION)
        with contextlib.chdir(workspace), _user_data_dir(workspace / NOWHERE / "user-data"):
            for step in STEPS:
                emit_line(f"\n== {step.title}")
                _prose(step.text)
                for arguments in step.commands:
                    emit_line(f"\n$ turnmark {' '.join(arguments)}")
                    if _run(settings, arguments, workspace) > 1:
                        failed.append(" ".join(arguments))
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)
        _closing(workspace, keep)
    if failed:
        raise fail(f"the demo did not go as planned: {'; '.join(failed)} could not run (see above)", code=1)
