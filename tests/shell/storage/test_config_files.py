"""Configuration from files, extends, the environment and --cfg, merged in JP's order."""

import os
from pathlib import Path

import pytest

from turnmark.core.stream.config import lookup
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.errors import ConfigProblem
from turnmark.shell.storage import config_files as config_files_module
from turnmark.shell.storage.config_files import config_files, effective_config
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.files import CONFIG_LIMIT
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import require_workspace

KEY = "conversation.turn_summary.generate.batch_size"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def batch(value: int) -> str:
    return f"[conversation.turn_summary.generate]\nbatch_size = {value}\n"


def test_layers_merge_in_jps_order(workspace: Path, user_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "global"
    write(home / "config.toml", batch(1) + '[assistant.model]\nid = "ollama/from-global"\n')
    write(workspace / ".jp" / "config.toml", batch(2))
    write(
        workspace / ".jp" / "config.d" / "extra.toml",
        batch(99) + '[conversation.title.generate.model]\nid = "ollama/t"\n',
    )
    nested = workspace / "src" / "deep"
    write(workspace / ".jp.toml", batch(3))
    write(nested / ".jp.toml", batch(4))
    silo = write(user_data / "workspace" / "ws-fx001" / "config.toml", batch(5))
    ws = require_workspace(nested)
    env = {"JP_GLOBAL_CONFIG_DIR": str(home)}
    files = config_files(ws, nested, env)
    assert files == [
        home / "config.toml",
        ws.storage / "config.toml",
        workspace.resolve() / ".jp.toml",
        (workspace / "src").resolve() / ".jp.toml",
        nested.resolve() / ".jp.toml",
        silo,
    ]
    config = effective_config(ws, None, (), env, nested)
    assert lookup(config, KEY) == 5
    assert lookup(config, "assistant.model.id") == "ollama/from-global"
    assert lookup(config, "conversation.title.generate.model.id") == "ollama/t", "extends are read"
    with_env = effective_config(
        ws, None, (), {**env, "JP_CFG_CONVERSATION_TURN_SUMMARY_GENERATE_BATCH_SIZE": "6"}, nested
    )
    assert lookup(with_env, KEY) == 6


def test_the_conversation_and_cfg_come_last(workspace: Path, tmp_path: Path) -> None:
    write(workspace / ".jp" / "config.toml", batch(2) + '[assistant.model]\nid = "ollama/workspace"\n')
    ref = pick_conversation(workspace, "17800000010")
    stream = read_conversation(ref, sequential_ids()).stream
    config = effective_config(ref.workspace, stream, (), {}, workspace)
    assert lookup(config, "assistant.model.id") == {"provider": "anthropic", "name": "claude-haiku-4-5"}
    cfg_file = write(tmp_path / "more.toml", batch(8))
    overridden = effective_config(ref.workspace, stream, (f"{KEY}=7", f"@{cfg_file}"), {}, workspace)
    assert lookup(overridden, KEY) == 8
    assert lookup(effective_config(ref.workspace, stream, (), {}, workspace), "conversation.turn_summary.generate.auto")


@pytest.mark.parametrize(
    ("cfg", "message"),
    [(("@/nowhere.toml",), "no such config file"), (("x.y=1", "a.b:=nope"), "invalid JSON")],
)
def test_bad_sources_are_named(workspace: Path, cfg: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigProblem, match=message):
        effective_config(require_workspace(workspace), None, cfg, {}, workspace)


def test_a_broken_config_file_is_named(workspace: Path) -> None:
    broken = write(workspace / ".jp" / "config.toml", "[oops")
    with pytest.raises(ConfigProblem, match=str(broken.resolve())):
        effective_config(require_workspace(workspace), None, (), {}, workspace)


def test_extends_are_merged_before_their_file_and_may_be_absolute(workspace: Path, tmp_path: Path) -> None:
    shared = write(tmp_path / "shared" / "team.toml", batch(11) + '[assistant.model]\nid = "ollama/team"\n')
    write(workspace / ".jp" / "config.toml", f'extends = ["{shared}"]\n' + batch(2))
    config = effective_config(require_workspace(workspace), None, (), {}, workspace)
    assert lookup(config, KEY) == 2
    assert lookup(config, "assistant.model.id") == "ollama/team"


def test_environment_reaches_provider_settings_and_understands_prefixes(workspace: Path) -> None:
    env = {
        "JP_CFG_PROVIDERS_LLM_OLLAMA_BASE_URL": "http://127.0.0.1:1234",
        "JP_CFG_CONVERSATION_TURN_SUMMARY_GENERATE_BATCH_SIZE": "+4",
        "JP_CFG_ASSISTANT_SYSTEM_PROMPT": "\\:literal colon",
    }
    config = effective_config(require_workspace(workspace), None, (), env, workspace)
    assert lookup(config, "providers.llm.ollama.base_url") == "http://127.0.0.1:1234"
    assert lookup(config, KEY) == 4
    assert lookup(config, "assistant.system_prompt") == ":literal colon"


def test_a_number_must_be_plain_digits(workspace: Path) -> None:
    with pytest.raises(ConfigProblem, match="takes a whole number"):
        effective_config(require_workspace(workspace), None, (f"{KEY}=\u00b2",), {}, workspace)


def _layers_of(workspace: Path) -> JsonObject:
    return effective_config(require_workspace(workspace), None, (), {}, workspace)


def test_extends_globs_match_as_before(workspace: Path) -> None:
    """``config.d/**/*``: every ``.toml`` below, in path order; dot-names, other suffixes and folders skipped."""
    folder = workspace / ".jp" / "config.d"
    write(folder / "b.toml", batch(2))
    write(folder / "a" / "deep" / "z.toml", batch(1) + '[assistant.model]\nid = "ollama/deep"\n')
    write(folder / ".hidden.toml", batch(90))
    write(folder / ".dot" / "x.toml", batch(91))
    write(folder / "notes.txt", "not toml [")
    (folder / "folder.toml").mkdir()
    config = _layers_of(workspace)
    assert lookup(config, KEY) == 2, "b.toml comes after a/deep/z.toml"
    assert lookup(config, "assistant.model.id") == "ollama/deep"
    write(workspace / ".jp" / "config.toml", 'extends = ["config.d/**"]\n')
    assert lookup(_layers_of(workspace), KEY) == 2, "a trailing ** is every file below"


@pytest.mark.parametrize("pattern", ["{outside}/*.toml", "../../outside/*.toml", "config.d/../../../outside/*.toml"])
def test_a_glob_leaving_its_folder_is_refused(workspace: Path, tmp_path: Path, pattern: str) -> None:
    write(tmp_path / "outside" / "team.toml", batch(11))
    config = write(workspace / ".jp" / "config.toml", f'extends = ["{pattern.format(outside=tmp_path / "outside")}"]\n')
    with pytest.raises(ConfigProblem, match=f"^{config.resolve()}: extends '.*': not walked, it (is absolute|climbs)"):
        _layers_of(workspace)


def test_a_link_to_a_folder_is_not_walked_but_named(workspace: Path, tmp_path: Path) -> None:
    write(tmp_path / "team" / "team.toml", batch(11))
    link = workspace.resolve() / ".jp" / "config.d" / "team"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "team")
    with pytest.raises(ConfigProblem, match=f"'config.d/\\*\\*/\\*': {link} is a link to a folder"):
        _layers_of(workspace)


def test_a_glob_goes_no_deeper_than_its_bound(workspace: Path) -> None:
    folder = workspace / ".jp" / "config.d"
    write(folder / "1" / "2" / "3" / "4" / "5" / "6" / "7" / "8.toml", batch(8))
    assert lookup(_layers_of(workspace), KEY) == 8
    write(folder / "1" / "2" / "3" / "4" / "5" / "6" / "7" / "8" / "9.toml", batch(9))
    with pytest.raises(ConfigProblem, match="goes deeper than 8 folders"):
        _layers_of(workspace)


@pytest.mark.parametrize(
    ("bound", "files", "message"),
    [
        ("MAX_EXTENDS_ENTRIES", 12, r"config.toml: extends 'config.d/\*\*/\*': looks at more than 3 names"),
        ("MAX_CONFIG_FILES", 3, r"02\.toml: not read: more than 3 config files"),
    ],
)
def test_a_run_looks_at_a_bounded_number_of_names_and_files(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, bound: str, files: int, message: str
) -> None:
    monkeypatch.setattr(config_files_module, bound, 3)
    for number in range(files):
        write(workspace / ".jp" / "config.d" / f"{number:02}.toml", batch(number))
    with pytest.raises(ConfigProblem, match=message):
        _layers_of(workspace)


@pytest.mark.parametrize("kind", ["fifo", "self-link", "dev-zero-link", "over-4-MiB"])
def test_a_config_file_that_cannot_be_read_is_named(workspace: Path, kind: str) -> None:
    config = workspace.resolve() / ".jp" / "config.toml"
    config.unlink()
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "over-4-MiB":
        with config.open("wb") as handle:
            handle.truncate(CONFIG_LIMIT + 1)
    else:
        config.symlink_to("config.toml" if kind == "self-link" else "/dev/zero")
    with pytest.raises(ConfigProblem, match=f"^{config}: (cannot|not) read: "):
        _layers_of(workspace)
    with pytest.raises(ConfigProblem, match=f"^{config}: (cannot|not) read: "):
        effective_config(None, None, (f"@{config}",), {}, workspace)
