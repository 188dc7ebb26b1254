"""Read commands and ``--help`` import nothing they do not use: no HTTP client, no watcher, no
progress bars (rich's consoles; its package's own small ``__init__`` loads on the way to them), no
pydantic (typer's own coercion imports it; turnmark's plain coercion does not), no offline labeller or
summary prompt, no MCP SDK (``turnmark mcp`` alone loads it)."""

import subprocess
import sys

import pytest

HEAVY = (
    "httpx",
    "watchdog",
    "rich.console",
    "rich.progress",
    "pydantic",
    "yaml",
    "tomli_w",
    "turnmark.shell.usecases.query",
    "turnmark.shell.usecases.watcher",
    "turnmark.core.summaries.extractive",
    "turnmark.core.summaries.request",
    "mcp",
    "turnmark.shell.usecases.mcp_server",
)

STREAM = ("returns.result", "msgspec", "pyrsistent", "turnmark.core.stream.conversation_stream")
"""What reading a conversation needs, and ``--help`` does not."""

PROBE = """
import sys
from turnmark.shell.lazy import executed
from turnmark.shell.cli.main import main
names = sys.argv[1].split(",")
sys.argv = ["turnmark", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
print("heavy:", ",".join(name for name in names if executed(name)), file=sys.stderr)
"""


def heavy_modules_after(*arguments: str, names: tuple[str, ...] = HEAVY) -> str:
    command = [sys.executable, "-c", PROBE, ",".join(names), *arguments]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    [line] = [line for line in done.stderr.splitlines() if line.startswith("heavy:")]
    return line.removeprefix("heavy:").strip()


@pytest.mark.parametrize(
    "arguments",
    [
        ("--help",),
        ("turns", "--help"),
        ("turns", "17800000010"),
        ("conversations",),
        ("conversations", "--format", "json"),
        ("check", "--all"),
        ("transcript", "17800000040"),
        ("find", "lock"),
        ("find", "--regex", "lock", "--output", "count"),
        ("show", "--help"),
        ("show", "17800000040", "--format", "json"),
    ],
)
def test_read_commands_stay_light(arguments: tuple[str, ...], workspace) -> None:  # type: ignore[no-untyped-def]
    assert heavy_modules_after("--workspace", str(workspace), *arguments) == ""


RENDERERS = {
    "text": ("turnmark.core.rendering.terminal_layout", "markdown_it"),
    "md": ("turnmark.core.rendering.markdown_export",),
    "html": ("turnmark.core.rendering.html_page", "markdown_it", "pygments.formatters.html"),
}


@pytest.mark.parametrize("output_format", ["text", "md", "html", "json"])
def test_show_loads_only_its_own_format_s_renderer(output_format: str, workspace) -> None:  # type: ignore[no-untyped-def]
    names = tuple(sorted({name for modules in RENDERERS.values() for name in modules}))
    arguments = ("--workspace", str(workspace), "show", "17800000040", "--format", output_format)
    loaded = set(filter(None, heavy_modules_after(*arguments, names=names).split(",")))
    assert loaded == set(RENDERERS.get(output_format, ()))


def test_the_probe_sees_heavy_modules_when_a_command_uses_them(workspace) -> None:  # type: ignore[no-untyped-def]
    assert "turnmark.shell.usecases.watcher" in heavy_modules_after("--workspace", str(workspace), "watch", "--once")


@pytest.mark.parametrize("arguments", [("--help",), ("turns", "--help"), ("show", "--help"), ("find", "--help"), ()])
def test_help_loads_no_stream_code(arguments: tuple[str, ...]) -> None:
    assert heavy_modules_after(*arguments, names=HEAVY + STREAM) == ""


def test_version_alone_loads_no_command_and_no_package_metadata() -> None:
    from importlib import metadata
    from pathlib import Path

    script = str(Path(sys.executable).parent / "turnmark")
    command = [sys.executable, "-X", "importtime", script, "--version"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.stdout == f"turnmark {metadata.version('turnmark')}\n"
    assert not imported & {"turnmark.shell.cli.main", "typer", "importlib.metadata", "click"}
    assert "turnmark.shell.cli.entry" in imported


FULL_LOAD = (
    "pyrsistent",
    "turnmark.core.stream.conversation_stream",
    "turnmark.core.links.check",
    "turnmark.core.summaries.catchup",
    "turnmark.core.editing.repair",
    "turnmark.core.stream.save_rule",
    "turnmark.shell.storage.undo",
)
"""The full typed load and the save: what the light reader's commands never run on a file it reads."""


@pytest.mark.parametrize(
    "arguments",
    [("turns", "17800000010"), ("conversations",), ("show", "17800000010"), ("show", "17800000010", "-F", "json")],
)
def test_light_reads_load_no_full_stream_and_no_save(arguments: tuple[str, ...], workspace) -> None:  # type: ignore[no-untyped-def]
    assert heavy_modules_after("--workspace", str(workspace), *arguments, names=FULL_LOAD) == ""


ENTRY_TYPES = (
    "turnmark.core.stream.payloads",
    "turnmark.core.stream.entries",
    "turnmark.core.stream.codec",
    "turnmark.core.errors",
)
"""The typed entries, their reader and the core's error types: what a conversation's facts are read without when
nothing is wrong (``core/stream/kinds.py``, ``turn_facts``, ``json_document`` and ``links/reasons`` hold what the
light reader needs of them)."""


@pytest.mark.parametrize("arguments", [("turns", "17800000010"), ("conversations",), ("turns", "17790000000")])
def test_facts_are_read_without_the_typed_entries(arguments: tuple[str, ...], workspace) -> None:  # type: ignore[no-untyped-def]
    assert heavy_modules_after("--workspace", str(workspace), *arguments, names=ENTRY_TYPES) == ""


def test_the_probe_sees_them_when_a_turn_is_shown_or_a_file_refused(workspace) -> None:  # type: ignore[no-untyped-def]
    loaded = heavy_modules_after("--workspace", str(workspace), "show", "17800000010", names=ENTRY_TYPES).split(",")
    assert "turnmark.core.stream.codec" in loaded
    (folder,) = (workspace / ".jp" / "conversations").glob("17800000010-*")
    (folder / "metadata.json").write_text("{")
    assert "turnmark.core.errors" in heavy_modules_after(
        "--workspace", str(workspace), "turns", "17800000010", names=ENTRY_TYPES
    )


def test_the_probe_sees_the_full_load_when_a_command_takes_it(workspace) -> None:  # type: ignore[no-untyped-def]
    loaded = heavy_modules_after("--workspace", str(workspace), "check", "17800000010", names=FULL_LOAD).split(",")
    assert "turnmark.core.stream.conversation_stream" in loaded
