"""``turnmark demo``: the main job end to end, offline, on a copy of the bundled example conversations."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import typer

from .cli_common import app, settings_of
from .output import emit_line, fail

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "workspace"

STEPS: list[tuple[str, list[str]]] = [
    ("The conversations (one was edited by hand, one has overlays)", ["conversations"]),
    ("Request links: what the hand edits broke, and why", ["check", "17800000030"]),
    ("What the model would be sent: excluded events are warned about on stderr", ["project", "17800000040"]),
    ("Turns before catch-up ('~' marks a turn without a summary)", ["turns", "17790000000"]),
    (
        "Catch-up with the offline summarizer (builtin/extractive); a file with an ambiguous link is left alone",
        ["summarize", "--all"],
    ),
    ("Turns after catch-up, with who wrote each summary", ["turns", "17790000000"]),
    ("", ["turns", "17800000040"]),
]


@app.command()
def demo(
    ctx: typer.Context, keep: bool = typer.Option(False, "--keep", help="Keep the demo workspace and print where.")
) -> None:
    """Run the main job offline on example conversations: check links, show the projection, summarize turns.

    The examples are copied to a temporary workspace first; nothing of yours is read or written.
    """
    settings = settings_of(ctx)
    if not FIXTURES.is_dir():
        raise fail(f"the bundled examples are missing ({FIXTURES}); run the demo from a turnmark checkout")
    root = Path(tempfile.mkdtemp(prefix="turnmark-demo-"))
    workspace = root / "workspace"
    shutil.copytree(FIXTURES, workspace)
    try:
        for title, arguments in STEPS:
            heading = f"\n== {title}\n" if title else ""
            emit_line(f"{heading}$ turnmark {' '.join(arguments)}")
            app(["--workspace", str(workspace), *arguments], obj=settings, standalone_mode=False)
    finally:
        if keep:
            emit_line(f"\nThe demo workspace is kept at {workspace}")
        else:
            shutil.rmtree(root, ignore_errors=True)
