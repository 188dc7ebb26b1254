"""How the command line reads and presents itself: one-line usage errors, help with groups and
examples, shell completion, and ``--format json`` for summary set and clear, query and watch."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from tests.support.llm_servers import Behaviour, ModelServer
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.help import COMMAND_GROUPS, EXAMPLES
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.cli.usage import global_options_first

TURNMARK = str(Path(sys.executable).with_name("turnmark"))
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
GROUP = get_command(app)
assert isinstance(GROUP, TyperGroup)
COMMANDS = sorted(
    name
    for top, command in GROUP.commands.items()
    if not command.hidden
    for name in [top, *(f"{top} {sub}" for sub in getattr(command, "commands", {}))]
)
"""What a user is shown: every visible command, and ``summary set`` and ``summary clear``."""


def invoke(*args: str, workspace: Path | None = None) -> tuple[int, str, str]:
    prefix = ["--workspace", str(workspace)] if workspace is not None else []
    result = CliRunner().invoke(app, [*prefix, *args], obj=Settings(new_id=sequential_ids()), env=ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--format", "yaml", "turns"], "error: --format must be text or json (see 'turnmark --help')"),
        (["turns", "--format", "yaml"], "error: --format must be text or json (see 'turnmark turns --help')"),
        (
            ["summary", "set", "1", "0", "x", "-F", "xml"],
            "error: --format must be text or json (see 'turnmark --help')",
        ),
        (
            ["watch", "--settle", "-5"],
            "error: --settle must be greater than or equal to 0 (see 'turnmark watch --help')",
        ),
        (["watch", "--settle", "soon"], "error: --settle must be a number (see 'turnmark watch --help')"),
        (["-j", "0", "conversations"], "error: --jobs must be greater than or equal to 1 (see 'turnmark --help')"),
        (["fork", "--first", "two"], "error: --first must be a whole number (see 'turnmark fork --help')"),
        (["turns", "--nope"], "error: turnmark turns has no option --nope (see 'turnmark turns --help')"),
        (["summary", "set"], "error: turnmark summary set: missing CONV (see 'turnmark summary set --help')"),
        (["label"], "error: turnmark label: missing CONV (see 'turnmark label --help')"),
        (["nosuch"], "error: turnmark: no such command 'nosuch' (see 'turnmark --help')"),
        (
            ["summarize", "--dry-runn"],
            "error: turnmark summarize has no option --dry-runn; did you mean --dry-run? "
            "(see 'turnmark summarize --help')",
        ),
    ],
)
def test_a_usage_error_is_one_line_with_the_valid_choices(argv: list[str], line: str, workspace: Path) -> None:
    code, out, err = invoke(*argv, workspace=workspace)
    assert (code, out, err) == (2, "", line + "\n")


def test_a_usage_error_from_a_real_process_is_one_line_and_exits_2(workspace: Path) -> None:
    done = subprocess.run(
        [TURNMARK, "-w", str(workspace), "summarize", "--format", "yaml"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: --format must be text or json (see 'turnmark summarize --help')\n"


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_help_ends_with_examples_and_shows_no_library_artefacts(command: str) -> None:
    code, out, _ = invoke(*command.split(), "--help")
    assert code == 0
    examples = out.split("\nExamples:\n")
    assert len(examples) == 2, f"one Examples section, last: {out}"
    shown = re.findall(r"^  \$ (turnmark .*)$", examples[1], re.MULTILINE)
    assert 2 <= len(shown) <= 3
    assert [invocation for invocation, _ in EXAMPLES[command]] == shown
    for artefact in ("<bool>", "<str>", "<int>", "<float", "<path>", "list[", "{[", "[x>=", "<summary> ."):
        assert artefact not in out, f"{artefact!r} in turnmark {command} --help"
    assert not re.search(r"\{[A-Z]+\}", out), "required arguments are shown as CONV, not {CONV}"
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("command", "invocation"),
    [(command, invocation) for command, examples in EXAMPLES.items() for invocation, _ in examples],
)
def test_every_example_parses(command: str, invocation: str) -> None:
    argv = global_options_first(shlex.split(invocation)[1:])
    group = get_command(app)
    assert isinstance(group, TyperGroup)
    context = group.make_context("turnmark", list(argv), obj=Settings())
    name, sub, rest = group.resolve_command(context, [*context._protected_args, *context.args])
    assert sub is not None
    assert name is not None
    path = [name]
    if isinstance(sub, TyperGroup):
        inner = sub.make_context(name, rest, parent=context)
        subname, sub, rest = sub.resolve_command(inner, [*inner._protected_args, *inner.args])
        assert sub is not None
        assert subname is not None
        path.append(subname)
        context = inner
    assert command in ("", path[0], " ".join(path))
    sub.make_context(path[-1], rest, parent=context)


def test_top_level_help_groups_commands_the_way_a_user_thinks() -> None:
    _, out, _ = invoke("--help")
    headings = [line[:-1] for line in out.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings == ["Options", *[group for group, _ in COMMAND_GROUPS], "Examples"]
    grouped = {name for _, names in COMMAND_GROUPS for name in names}
    assert grouped == {name for name in COMMANDS if " " not in name}, "every command is in a group"
    reading = out.split("Reading:\n")[1].split("\n\n")[0]
    assert [line.split()[0] for line in reading.splitlines() if not line.startswith("    ")] == list(
        COMMAND_GROUPS[0][1]
    )


def test_usage_lines_read_like_git(workspace: Path) -> None:
    commands = ("summary set", "summary clear", "query", "turns")
    usages = {command: invoke(*command.split(), "--help")[1].splitlines()[0] for command in commands}
    assert usages == {
        "summary set": "Usage: turnmark summary set [OPTIONS] CONV TURN TEXT",
        "summary clear": "Usage: turnmark summary clear [OPTIONS] CONV TURN",
        "query": "Usage: turnmark query [OPTIONS] [CONV] MESSAGE",
        "turns": "Usage: turnmark turns [OPTIONS] [CONV]",
    }


@pytest.fixture
def completion_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"}


def bash_completion(words: str, cwd: Path, env: dict[str, str]) -> list[str]:
    """Complete ``words`` in a real bash that loaded the script ``turnmark --show-completion`` printed."""
    script = (
        f"source <({shlex.quote(TURNMARK)} --show-completion); "
        f"COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); "
        f'_turnmark_completion {shlex.quote(TURNMARK)}; printf "%s\\n" "${{COMPREPLY[@]}}"'
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, env=env, check=True)
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_commands_options_and_conversations(workspace: Path, completion_env: dict[str, str]) -> None:
    assert bash_completion("turnmark su", workspace, completion_env) == ["summarize", "summary"]
    assert bash_completion("turnmark summary c", workspace, completion_env) == ["clear"]
    assert bash_completion("turnmark summary set 1779", workspace, completion_env) == ["17790000000"]
    assert "--dry-run" in bash_completion("turnmark summarize --d", workspace, completion_env)
    assert bash_completion("turnmark turns jp-c1780000004", workspace, completion_env) == ["jp-c17800000040"]
    assert bash_completion("turnmark check 1779", workspace, completion_env) == ["17790000000"]


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("bash", "complete -o default -F"), ("zsh", "compdef"), ("fish", "complete --command turnmark")],
)
def test_completion_scripts_for_bash_zsh_and_fish(shell: str, marker: str, completion_env: dict[str, str]) -> None:
    env = {**completion_env, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    done = subprocess.run([TURNMARK, "--show-completion", shell], capture_output=True, text=True, env=env, check=True)
    assert marker in done.stdout
    assert "_TURNMARK_COMPLETE" in done.stdout


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_get_completions_through_their_protocol(
    shell: str, workspace: Path, completion_env: dict[str, str]
) -> None:
    env = {
        **completion_env,
        "_TURNMARK_COMPLETE": f"complete_{shell}",
        "_TYPER_COMPLETE_ARGS": "turnmark turns 1780000001",
        "_TYPER_COMPLETE_FISH_ACTION": "get-args",
    }
    done = subprocess.run([TURNMARK], capture_output=True, text=True, cwd=workspace, env=env, check=True)
    assert "17800000010" in done.stdout


def test_summary_set_and_clear_json(workspace: Path, snapshot: SnapshotAssertion) -> None:
    code, out, _ = invoke(
        "summary", "set", "17800000010", "0", "Retry the stream with backoff", "--format", "json", workspace=workspace
    )
    assert code == 0
    assert json.loads(out) == snapshot
    code, out, _ = invoke("--format", "json", "summary", "clear", "17800000010", "k3m9x2a", workspace=workspace)
    assert json.loads(out) == {
        "conversation": "jp-c17800000010",
        "turn": "k3m9x2a",
        "summary": None,
        "by": None,
        "upgraded": False,
        "upgrade": None,
    }


def test_watch_once_json_is_one_object_per_line(workspace: Path, snapshot: SnapshotAssertion) -> None:
    code, out, err = invoke("watch", "--once", "--format", "json", workspace=workspace)
    assert code == 1, "one conversation has an ambiguous link and cannot be saved"
    events = [json.loads(line) for line in out.splitlines()]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", event.pop("time")) for event in events)
    for event in events:
        event["message"] = event["message"].replace(str(workspace), "<ws>")
        if "error" in event:
            event["error"] = event["error"].replace(str(workspace), "<ws>")
    assert events == snapshot
    assert err == ""
    failures = [event for event in events if event.get("error")]
    assert failures
    assert not [event for event in failures if event["error"] in event["message"]], "the error is said once"


def test_watch_takes_model_like_summarize(workspace: Path) -> None:
    code, _, err = invoke(
        "watch", "--once", "--model", "ollama/nowhere", "--cfg", "providers.llm.ollama.base_url=http://127.0.0.1:9",
        workspace=workspace,
    )  # fmt: skip
    assert code == 1
    assert "ollama/nowhere" in err
    assert "builtin/extractive" not in err


@pytest.fixture
def chat_server(workspace: Path) -> Iterator[ModelServer]:
    with ModelServer() as running:
        (workspace / ".jp" / "config.toml").write_text(
            '[assistant.model]\nid = "ollama/llama3.2:3b"\n'
            "[conversation.turn_summary.generate]\nauto = false\n"
            f'[providers.llm.ollama]\nbase_url = "{running.url}"\n'
        )
        yield running


def test_query_json_says_what_was_asked_and_stored(
    workspace: Path, chat_server: ModelServer, snapshot: SnapshotAssertion
) -> None:
    chat_server.queue.append(Behaviour(content=lambda body: "Use a non-blocking flock."))
    code, out, err = invoke(
        "query",
        "17800000040",
        "How should turnmark lock?",
        "-F",
        "json",
        "-m",
        "ollama/llama3.2:3b",
        workspace=workspace,
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["answer"] == "Use a non-blocking flock."
    stored = result["stored"]
    assert [event["type"] for event in stored["events"]] == ["turn_start", "chat_request", "chat_response"]
    assert stored["events"][2]["request_id"] == stored["events"][1]["event_id"]
    assert result == snapshot


def test_query_json_without_persisting_stores_nothing(workspace: Path, chat_server: ModelServer) -> None:
    chat_server.queue.append(Behaviour(content=lambda body: "Fine."))
    before = sorted(path.read_bytes() for path in workspace.rglob("events.json"))
    code, out, _ = invoke(
        "--format",
        "json",
        "query",
        "--no-persist",
        "-m",
        "ollama/llama3.2:3b",
        "17800000040",
        "Hi",
        workspace=workspace,
    )
    assert code == 0
    assert json.loads(out)["stored"] is None
    assert sorted(path.read_bytes() for path in workspace.rglob("events.json")) == before


def test_edit_undo_json_names_what_was_restored(workspace: Path) -> None:
    code, _, err = invoke("strip", "17800000010", "--apply", workspace=workspace)
    assert code == 0, err
    code, out, err = invoke("edit", "--undo", "17800000010", "--format", "json", workspace=workspace)
    assert code == 0, err
    result = json.loads(out)
    assert (result["conversation"], result["action"]) == ("jp-c17800000010", "undo")
    assert "restored" in result["outcome"]


def test_the_demo_says_it_has_no_json(workspace: Path) -> None:
    code, out, err = invoke("demo", "--format", "json")
    assert (code, out) == (2, "")
    assert err == "error: demo is a tour for people and has no JSON output; every other command has one\n"
