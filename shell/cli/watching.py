"""``turnmark watch``: the background service that keeps conversations summarized."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.shell.cli.common import ModelOption, OutputFormat, app, settings_of
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, json_line

with lazy_imports():
    from turnmark.shell.storage import workspace as workspace_files
    from turnmark.shell.usecases import catchup_report
    from turnmark.shell.usecases import watcher as watcher_service

if TYPE_CHECKING:
    from turnmark.shell.usecases.watcher import WatchEvent

WATCH_HELP = """
Changes are only a trigger: after a change settles for a moment the whole
conversation is looked at again, so nothing is lost when filesystem events
are merged or dropped. The last turn of a conversation is summarized once it
has ended (an answer, no pending tool call), no `jp` holds the conversation,
and nothing changed for --settle seconds. Locked conversations are retried,
a failing model backs off (up to 5 minutes), a model the configuration makes
unusable (a missing key, an unknown model) waits, said once, until a config
file changes or SIGHUP, and SIGTERM or Ctrl-C finishes the write in progress
and exits 0. One line is logged per action on stderr;
with --format json, one JSON object per line on stdout instead
({"time", "event", "conversation", "message", ...}; a failure's text is in
"error", not repeated in "message"), where "event" is one of
watching, summarized, not_summarized, retrying, given_up, waiting_for_config,
config, failed, locked, skipped, stale, refused, note, following, stopping,
polling, unwatched, upgraded.
"""


def _log_text(event: WatchEvent) -> None:
    chrome(f"{datetime.now().strftime('%H:%M:%S')} {event}")
    sys.stderr.flush()


def _json_record(event: WatchEvent) -> dict[str, object]:
    """The event as JSON; a message that ends with the error names it once, in "error"."""
    record = event.as_json()
    error, message = record.get("error"), str(record["message"])
    if isinstance(error, str) and error and message.endswith(error) and message != error:
        record["message"] = message.removesuffix(error).rstrip(": ")
    return record


def _log_json(event: WatchEvent) -> None:
    json_line({"time": datetime.now().astimezone().isoformat(timespec="seconds"), **_json_record(event)})
    sys.stdout.flush()


@app.command(epilog=WATCH_HELP)
def watch(
    ctx: typer.Context,
    workspaces: Annotated[
        list[Path] | None,
        typer.Option(
            "--workspace",
            "-w",
            metavar="PATH",
            help="A workspace to watch (repeatable). Default: the global one or the current.",
        ),
    ] = None,
    settle: Annotated[
        float,
        typer.Option(
            "--settle", min=0.0, metavar="SECONDS", help="Seconds without changes before the last turn counts as done."
        ),
    ] = 5.0,
    once: Annotated[
        bool,
        typer.Option("--once", help="Process everything now and exit (1 when a conversation was not summarized)."),
    ] = False,
    model: ModelOption = None,
) -> None:
    """Watch workspaces and keep every conversation summarized as it changes."""
    settings = settings_of(ctx)
    roots = [workspace_files.require_workspace(path) for path in (workspaces or [settings.workspace or Path.cwd()])]
    catchup = catchup_report.CatchupOptions.using(settings.run(model))
    log = _log_json if settings.format is OutputFormat.json else _log_text
    watcher = watcher_service.Watcher(
        roots,
        watcher_service.WatchOptions(settle=settle, once=once, catchup=catchup, jobs=settings.jobs),
        settings.new_id,
        log,
    )
    if once:
        watcher.run_once()
        if watcher.not_done:
            raise typer.Exit(1)
        return
    watcher.install_signal_handlers()
    watched = ", ".join(str(root.root) for root in roots)
    details = {"workspaces": [str(root.root) for root in roots], "settle_seconds": settle}
    log(watcher_service.WatchEvent("watching", f"watching {watched} (settle {settle:g}s)", details=details))
    watcher.run()
