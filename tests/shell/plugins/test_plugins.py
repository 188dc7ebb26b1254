"""``jp-turnmark``, ``jp-turns`` and ``jp-find`` driven by a host that speaks JP's plugin protocol as ``jp``
does (``host.py``): every message of every run is checked against the reference's tables."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.agreement.workspaces import copy_corpus
from tests.conftest import FIXTURES, corpus_root
from tests.shell.plugins.host import BIN, Host, init_message, plugin_env
from turnmark.shell.plugins import executables

PLUGINS = {"turnmark": (), "turns": ("turns",), "find": ("find",)}
CONVERSATIONS = sorted(path.name for path in (FIXTURES / ".jp" / "conversations").iterdir() if path.is_dir())
EXTRACTIVE = {"conversation": {"turn_summary": {"generate": {"model": {"id": "builtin/extractive"}}}}}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return plugin_env(home)


def turnmark(env: dict[str, str], root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "turnmark"), "--workspace", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def events_files(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted((root / ".jp" / "conversations").glob("*/events.json"))}


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_describe_answers_with_the_help_turnmark_shows(plugin: str, env: dict[str, str], tmp_path: Path) -> None:
    run = Host(plugin, env, cwd=tmp_path).describe()
    (described,) = run.messages
    assert described["name"] == plugin
    assert described["command"] == [plugin]
    assert described["version"]
    assert described["description"].strip()
    shown = subprocess.run(
        [str(BIN / "turnmark"), *PLUGINS[plugin], "--help"], env=env, capture_output=True, text=True, check=True
    )
    typed = " ".join(("turnmark", *PLUGINS[plugin]))
    assert described["help"] == shown.stdout.replace(f"Usage: {typed}", f"Usage: jp {plugin}").replace(
        f"$ {typed}", f"$ jp {plugin}"
    )
    assert described["help"].startswith(f"Usage: jp {plugin} ")
    assert run.returncode == 0


@pytest.mark.parametrize("conversation", CONVERSATIONS)
def test_turns_prints_what_turnmark_turns_prints(conversation: str, workspace: Path, env: dict[str, str]) -> None:
    for args in ([conversation], [conversation, "--format", "json"]):
        run = Host("turns", env, workspace=workspace).init(init_message(workspace, args))
        expected = turnmark(env, workspace, "turns", *args)
        assert run.exit == {"type": "exit", "code": 0}
        assert run.messages[0] == {"type": "ready"}
        assert run.printed == expected.stdout
    json.loads(run.printed)


def test_the_default_conversation_and_find_match_turnmark(workspace: Path, env: dict[str, str]) -> None:
    run = Host("turns", env, workspace=workspace).init(init_message(workspace, []))
    assert run.printed == turnmark(env, workspace, "turns").stdout
    for query in (["retry"], ["lock", "--format", "json"], ["backoff", "--output", "ids"]):
        found = Host("find", env, workspace=workspace).init(init_message(workspace, query))
        assert found.exit["code"] == 0, found.exit
        assert found.printed == turnmark(env, workspace, "find", *query).stdout
        assert found.printed


def test_summarize_with_the_offline_model_writes_summaries(workspace: Path, env: dict[str, str]) -> None:
    before = events_files(workspace)
    run = Host("turnmark", env, workspace=workspace).init(
        init_message(workspace, ["summarize", CONVERSATIONS[0], "--model", "builtin/extractive"])
    )
    assert run.exit["code"] == 0, run.exit
    after = events_files(workspace)
    changed = [path for path in after if after[path] != before[path]]
    assert [path.parent.name for path in changed] == [CONVERSATIONS[0]]
    assert '"summary"' in after[changed[0]].decode()


def test_jps_resolved_config_decides_the_summary_model(workspace: Path, env: dict[str, str]) -> None:
    """The files name no summary model (turnmark falls back from its default, saying so); the configuration jp
    resolved (init.config) names the offline one, and it is used as named, with no fallback."""
    (workspace / ".jp" / "config.toml").unlink()
    target = CONVERSATIONS[1]
    plan = ["summarize", target, "--dry-run", "--format", "json"]
    (own,) = json.loads(turnmark(env, workspace, *plan).stdout)["conversations"]
    assert own["model"] == "builtin/extractive"
    assert any("claude" in note for note in own["notes"]), own["notes"]
    hosted = Host("turnmark", env, workspace=workspace)
    planned = hosted.init(init_message(workspace, plan, config={**EXTRACTIVE, "unset": None}))
    (jps,) = json.loads(planned.printed)["conversations"]
    assert jps["model"] == "builtin/extractive"
    assert jps["notes"] == []
    before = events_files(workspace)
    run = hosted.init(init_message(workspace, ["summarize", target], config=EXTRACTIVE))
    assert run.exit["code"] == 0, run.exit
    assert events_files(workspace) != before
    assert "~ " not in turnmark(env, workspace, "turns", target).stdout


def test_cfg_in_args_is_above_jps_config(workspace: Path, env: dict[str, str]) -> None:
    config = {"conversation": {"turn_summary": {"generate": {"model": {"id": "ollama/absent"}}}}}
    run = Host("turnmark", env, workspace=workspace).init(
        init_message(
            workspace,
            ["summarize", CONVERSATIONS[0], "--cfg", "conversation.turn_summary.generate.model.id=builtin/extractive"],
            config=config,
        )
    )
    assert run.exit["code"] == 0, run.exit


def test_the_user_local_copy_is_the_one_init_names(workspace: Path, env: dict[str, str], tmp_path: Path) -> None:
    silo = tmp_path / "elsewhere" / "ws-t3st1"
    source = FIXTURES / ".jp" / "conversations" / CONVERSATIONS[0]
    shutil.copytree(source, silo / "conversations" / "17990000000-local-only")
    run = Host("turnmark", env, workspace=workspace).init(
        init_message(workspace, ["conversations"], user_workspace=silo, user_data=tmp_path / "home" / "user-data")
    )
    assert run.exit["code"] == 0, run.exit
    assert "jp-c17990000000" in run.printed
    assert "jp-c17990000000" not in turnmark(env, workspace, "conversations").stdout
    turns = Host("turns", env, workspace=workspace).init(init_message(workspace, ["17990000000"], user_workspace=silo))
    assert turns.exit["code"] == 0, turns.exit
    assert (
        turns.printed
        == turnmark(env, workspace, "turns", str(silo / "conversations" / "17990000000-local-only")).stdout
    )


def many_conversations(root: Path, count: int) -> Path:
    conversations = root / ".jp" / "conversations"
    conversations.mkdir(parents=True)
    for index in range(count):
        shutil.copytree(
            FIXTURES / ".jp" / "conversations" / CONVERSATIONS[index % len(CONVERSATIONS)],
            conversations / f"{17_000_000_000 + index}-copy",
        )
    return root


def test_shutdown_mid_summarize_all_stops_like_ctrl_c(tmp_path: Path, env: dict[str, str]) -> None:
    root = many_conversations(tmp_path / "big", 600)
    before = events_files(root)
    mtimes = {path: path.stat().st_mtime_ns for path in before}

    def one_saved(messages: object) -> bool:
        return any(not path.exists() or path.stat().st_mtime_ns != mtime for path, mtime in mtimes.items())

    args = ["summarize", "--all", "--model", "builtin/extractive", "--jobs", "1"]
    run = Host("turnmark", env, workspace=root).init(init_message(root, args), shutdown_when=one_saved)
    assert run.shutdown_sent
    assert run.exit["code"] == 130, run.exit
    assert "interrupted" in run.exit["reason"]
    after = events_files(root)
    assert set(after) == set(before)
    for data in after.values():
        json.loads(data)
    unchanged = [path for path in after if after[path] == before[path]]
    assert 0 < len(unchanged) < len(after), "the shutdown came mid-run"
    assert not list(root.glob(".jp/conversations/*/*.tmp"))


@pytest.mark.parametrize(
    ("plugin", "args", "said"),
    [
        ("turns", ["--no-such-option"], "no option --no-such-option"),
        ("turnmark", ["no-such-command"], "no-such-command"),
        ("turns", ["17123456789"], "no conversation"),
        ("turnmark", ["edit", "-i", CONVERSATIONS[0]], "turnmark edit -i"),
        ("turnmark", ["repair", "--all", "-i"], "turnmark repair --all -i"),
        ("turnmark", ["fork", CONVERSATIONS[0], "--edit"], "run it as `turnmark fork"),
    ],
)
def test_bad_args_end_with_status_2_and_a_reason(
    plugin: str, args: list[str], said: str, workspace: Path, env: dict[str, str]
) -> None:
    before = events_files(workspace)
    run = Host(plugin, env, workspace=workspace).init(init_message(workspace, args))
    assert run.exit["code"] == 2, run.exit
    assert said in run.exit["reason"]
    assert not run.exit["reason"].startswith("error:")
    assert events_files(workspace) == before


def test_another_protocol_version_ends_with_a_reason(workspace: Path, env: dict[str, str]) -> None:
    run = Host("turns", env, workspace=workspace).init(init_message(workspace, [], version=2))
    assert run.messages == [run.exit]
    assert run.exit["code"] != 0
    assert "version 2" in run.exit["reason"]


def test_unknown_fields_and_messages_from_jp_are_ignored(workspace: Path, env: dict[str, str]) -> None:
    message = init_message(workspace, [CONVERSATIONS[0]])
    message["future"] = {"x": 1}
    message["workspace"]["future"] = True
    message["paths"]["future"] = "/x"
    run = Host("turns", env, workspace=workspace).init(message)
    assert run.exit["code"] == 0
    assert run.printed == turnmark(env, workspace, "turns", CONVERSATIONS[0]).stdout


def test_a_line_that_is_not_the_protocol_ends_with_a_reason(env: dict[str, str], tmp_path: Path) -> None:
    process = subprocess.run(
        [str(BIN / "jp-turns")], input=b"hello\n", env=env, capture_output=True, timeout=60, check=False, cwd=tmp_path
    )
    (line,) = process.stdout.splitlines()
    ended = json.loads(line)
    assert ended["type"] == "exit"
    assert ended["code"] == 1
    assert "not a protocol message" in ended["reason"]


def test_started_from_a_terminal_it_shows_its_help_and_says_to_use_jp(env: dict[str, str], tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [str(BIN / "jp-find")], stdin=terminal, env=env, capture_output=True, timeout=60, check=False, cwd=tmp_path
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert process.returncode == 0
    assert process.stdout == b""
    assert b"Usage: jp find" in process.stderr
    assert b"run it through jp, as `jp find" in process.stderr


def test_find_prefill_on_the_corpus_prints_what_turnmark_finds(tmp_path: Path, env: dict[str, str]) -> None:
    if not (corpus_root() / ".jp" / "conversations").is_dir():
        pytest.skip(f"corpus not found at {corpus_root()} (set TURNMARK_CORPUS to a folder holding .jp/conversations)")
    root = copy_corpus(tmp_path / "corpus")
    for query in (["prefill"], ["prefill*", "--in", "all"], ["listing"]):
        expected = turnmark(env, root, "find", *query)
        run = Host("find", env, workspace=root).init(init_message(root, query))
        assert run.exit["code"] == expected.returncode, (query, run.exit)
        assert run.printed == expected.stdout, query
    assert run.printed, "the last query has hits in the corpus"


@pytest.mark.parametrize(("plugin", "args"), [("turnmark", []), ("turnmark", ["turns", "--help"]), ("find", ["-h"])])
def test_help_inside_a_run_is_turnmarks(plugin: str, args: list[str], workspace: Path, env: dict[str, str]) -> None:
    run = Host(plugin, env, workspace=workspace).init(init_message(workspace, args))
    shown = subprocess.run(
        [str(BIN / "turnmark"), *PLUGINS[plugin], *args], env=env, capture_output=True, text=True, check=False
    )
    assert run.exit == {"type": "exit", "code": shown.returncode}
    assert run.printed == shown.stdout
    assert "Usage: turnmark" in run.printed


@pytest.mark.parametrize(
    "args", [["show", "17820000020"], ["turns", "17820000020"], ["show", "17820000020", "-F", "md"]]
)
def test_hostile_content_reaches_jp_escaped_as_turnmark_prints_it(
    args: list[str], show_workspace: Path, env: dict[str, str]
) -> None:
    """The host fails a print with a terminal escape; the text is what turnmark prints into a pipe."""
    run = Host("turnmark", env, workspace=show_workspace).init(init_message(show_workspace, args))
    assert run.exit["code"] == 0, run.exit
    assert run.printed == turnmark(env, show_workspace, *args).stdout
    if args[0] == "show":
        assert "\\u{1b}" in run.printed, "the escape in the conversation is shown, escaped"


def test_help_names_the_command_as_typed_to_jp() -> None:
    turns = "Usage: turnmark turns [CONV]\n  $ turnmark turns 17\n  see turnmark find\n"
    assert executables.as_typed_to_jp(turns, executables.TURNS) == (
        "Usage: jp turns [CONV]\n  $ jp turns 17\n  see turnmark find\n"
    )
    whole = "Usage: turnmark [OPTIONS] COMMAND\n  $ turnmark show 17\n"
    assert executables.as_typed_to_jp(whole, executables.TURNMARK) == (
        "Usage: jp turnmark [OPTIONS] COMMAND\n  $ jp turnmark show 17\n"
    )


@pytest.mark.parametrize("args", [["conversations"], ["turns"], ["check", "--all"]])
def test_a_workspace_root_that_is_a_file_is_refused_as_turnmark_refuses_it(
    args: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "not-a-folder"
    root.write_text("a file\n")
    direct = turnmark(env, root, *args)
    run = Host("turnmark", env, cwd=tmp_path).init(init_message(root, args))
    assert direct.returncode == 2
    assert run.exit["code"] == 2, run.exit
    assert run.printed == direct.stdout == ""
    assert f"no .jp/ directory in {root}" in run.exit["reason"]
    assert root.read_text() == "a file\n"
