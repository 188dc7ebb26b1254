"""Honest on a real-looking workspace: legacy conversations without IDs, JP's config naming an Anthropic title
model, and no API key in the environment (fixtures/legacy-workspace)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from tests.shell.storage.test_locking import hold, release
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.settings import HttpSettings
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.selection import pick_conversation

LEGACY_FIXTURES = REPO / "fixtures" / "legacy-workspace"
URLSAFE = "17400000000"
ID_COLUMN = re.compile(r"^(\S+?)\*? ", re.MULTILINE)


@pytest.fixture
def legacy(tmp_path: Path, user_data: Path) -> Path:
    root = tmp_path / "legacy"
    shutil.copytree(LEGACY_FIXTURES, root)
    return root


def environ(tmp_path: Path) -> dict[str, str]:
    """The process environment without any API key, and with no user-global JP config."""
    clean = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    (tmp_path / "global").mkdir(exist_ok=True)
    return {**clean, "JP_GLOBAL_CONFIG_DIR": str(tmp_path / "global")}


class Cli:
    def __init__(self, workspace: Path, env: dict[str, str]) -> None:
        self.workspace = workspace
        self.env = env

    def __call__(self, *args: str, code: int = 0, **settings: object) -> tuple[str, str]:
        result = CliRunner().invoke(
            app,
            ["--workspace", str(self.workspace), *args],
            obj=Settings(new_id=sequential_ids(), environ=self.env, **settings),  # type: ignore[arg-type]
            env={"COLUMNS": "200"},
        )
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout, result.stderr

    def process(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "turnmark.shell.cli.main", "--workspace", str(self.workspace), *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )


@pytest.fixture
def cli(legacy: Path, tmp_path: Path) -> Cli:
    return Cli(legacy, {**environ(tmp_path), "JP_USER_DATA_DIR": os.environ["JP_USER_DATA_DIR"]})


def files_of(root: Path) -> dict[str, bytes]:
    """Every file but the locks and the workspace cache (``summarize --all`` and ``watch`` fill it)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "locks" not in path.parts and not path.name.startswith("cache.sqlite3")
    }


def test_turns_prints_the_same_ids_on_every_read_and_in_every_process(cli: Cli) -> None:
    first, _ = cli("turns", URLSAFE)
    second, _ = cli("turns", URLSAFE)
    assert first == second
    other_process = cli.process("turns", URLSAFE)
    assert other_process.returncode == 0, other_process.stderr
    assert other_process.stdout == first
    assert "not yet saved" in other_process.stderr
    assert "changes on every load" not in other_process.stderr


def test_an_id_copied_from_turns_works_in_transcript_and_label(cli: Cli, legacy: Path) -> None:
    listing, _ = cli("turns", URLSAFE)
    copied = ID_COLUMN.findall(listing)[1]
    transcript, _ = cli("transcript", URLSAFE, "--turn", copied)
    assert transcript.startswith(f'<turn id="{copied}">')
    assert cli("transcript", URLSAFE, "--turn", "1")[0] == transcript
    out, _ = cli("summary", "set", URLSAFE, copied, "Thank the assistant")
    assert out.splitlines()[0] == f"{copied}  Thank the assistant"
    assert out.splitlines()[1].startswith("  upgraded this conversation from JP's older format (base_config.json ")
    after, _ = cli("turns", URLSAFE)
    assert f"{copied}  Thank the assistant  [user]" in after
    assert ID_COLUMN.findall(after)[1:] == ID_COLUMN.findall(listing)[1:], "the IDs written are the IDs shown"


def test_dry_run_ids_are_the_ids_written(cli: Cli) -> None:
    dry, _ = cli("summarize", URLSAFE, "--dry-run", "--model", "builtin/extractive")
    planned = re.findall(r"^  (\S+) +turn", dry, re.MULTILINE)
    out, _ = cli("summarize", URLSAFE, "--model", "builtin/extractive")
    assert re.findall(r"^  (?!upgraded )(\S+) ", out, re.MULTILINE) == planned
    assert "\n  upgraded this conversation from JP's older format" in out


def test_summarize_without_the_key_reports_once_and_changes_no_byte(cli: Cli, legacy: Path) -> None:
    before = files_of(legacy)
    out, err = cli("summarize", "--all", code=1)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: jp-c{URLSAFE}: anthropic/claude-haiku-4-5 (conversation.title.generate.model in "
        f"{legacy / '.jp' / 'config.toml'}): ANTHROPIC_API_KEY is not set (needed for anthropic/claude-haiku-4-5); "
        "set it, or summarize offline with --model builtin/extractive"
    ]
    assert out.splitlines() == [
        f"jp-c{URLSAFE}  not summarized: see the error above",
        "5 more conversations skipped: anthropic/claude-haiku-4-5 cannot be used (see the error above); "
        "not tried again in this run",
    ]
    assert len(json.loads(cli("summarize", "--all", "--format", "json", code=1)[0])["conversations"]) == 6
    assert files_of(legacy) == before


def test_a_dry_run_needs_no_key(cli: Cli, legacy: Path) -> None:
    before = files_of(legacy)
    out, err = cli("summarize", "--all", "--dry-run")
    assert out.count("to summarize: 2") == 6
    assert "a real run would fail: ANTHROPIC_API_KEY is not set" in err
    assert files_of(legacy) == before


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_model_is_asked_once_per_run_and_changes_no_byte(cli: Cli, legacy: Path) -> None:
    before = files_of(legacy)
    url = f"http://127.0.0.1:{closed_port()}"
    out, err = cli(
        "--cfg", f"providers.llm.ollama.base_url={url}", "summarize", "--all", "--model", "ollama/llama3", code=1
    )
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert f"{url}/api/tags: cannot connect" in errors[0]
    assert "its address is providers.llm.ollama.base_url, default http://localhost:11434" in errors[0]
    assert out.splitlines()[1].startswith("5 more conversations skipped: ollama/llama3 cannot be reached")
    assert files_of(legacy) == before


def test_final_statuses_are_not_retried() -> None:
    from tests.support.llm_servers import Behaviour, ModelServer

    with ModelServer() as server:
        from turnmark.core.wire.models import ModelSpec
        from turnmark.shell.errors import ModelRejected
        from turnmark.shell.providers.registry import open_provider

        config = {"providers": {"llm": {"ollama": {"base_url": server.url}}}}
        provider = open_provider(ModelSpec("ollama", "x", {}), config, {}, HttpSettings(retries=3, backoff=0.01))
        for status in (400, 401, 403, 404, 422):
            server.queue.append(Behaviour(status=status))
            server.queue.append(Behaviour())
            with pytest.raises(ModelRejected):
                list(provider.chat({"model": "x", "messages": []}))
            server.queue.clear()
        assert len(server.posts()) == 5


def test_watch_once_says_what_was_not_summarized_and_exits_1(cli: Cli, legacy: Path) -> None:
    before = files_of(legacy)
    _, err = cli("watch", "--once", code=1)
    failures = [line for line in err.splitlines() if "not summarized:" in line]
    assert len(failures) == 1
    assert "ANTHROPIC_API_KEY is not set" in failures[0]
    assert "retrying" not in err
    assert files_of(legacy) == before


def test_a_conversation_held_by_jp_is_skipped_and_counted(cli: Cli, legacy: Path) -> None:
    ref = pick_conversation(legacy, URLSAFE)
    holder = hold(lock_path(ref))
    try:
        out, _ = cli("summarize", URLSAFE, "--model", "builtin/extractive", code=1)
    finally:
        release(holder)
    assert out == f"jp-c{URLSAFE}  skipped: locked by pid {holder.pid} (a running jp?); retried next time\n"


def test_saving_a_copied_entry_announces_the_new_id(cli: Cli, legacy: Path) -> None:
    directory = pick_conversation(legacy, "17400001000").directories[0]
    events = json.loads((directory / "events.json").read_text())
    events[1]["event_id"] = "r000001"
    events.insert(2, dict(events[1]))
    (directory / "events.json").write_text(json.dumps(events, indent=2))
    _, err = cli("summary", "set", "17400001000", "0", "Add --json to ls")
    assert re.fullmatch(
        r"note: jp-c17400001000: saved new IDs for copied entries: entry 2 now [0-9a-z]{7} \(it repeated r000001\)\n",
        err,
    )


def without_ids(document: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{key: value for key, value in entry.items() if key != "event_id"} for entry in document]


@pytest.mark.parametrize("conversation", sorted(p.name for p in (LEGACY_FIXTURES / ".jp/conversations").iterdir()))
def test_load_add_ids_save_changes_only_the_event_id_keys(conversation: str) -> None:
    data = (LEGACY_FIXTURES / ".jp" / "conversations" / conversation / "events.json").read_bytes()
    stream = ConversationStream.from_json(data, None, new_id=sequential_ids()).unwrap()
    saved = stream.to_json()
    assert without_ids(json.loads(saved)) == json.loads(data)
    assert saved.replace(b"", b"") != data
    stripped = re.sub(rb'\n *"event_id": "[0-9a-z]{7}",', b"", saved)
    assert stripped == data


def test_ctrl_c_shows_what_was_done_and_exits_130(cli: Cli, legacy: Path) -> None:
    import signal
    import time

    from tests.support.llm_servers import Behaviour, ModelServer

    with ModelServer() as server:
        server.queue.extend(Behaviour(delay=0.3 if n == 0 else 5.0) for n in range(6))
        process = subprocess.Popen(
            [
                sys.executable, "-m", "turnmark.shell.cli.main", "--workspace", str(legacy),
                "--cfg", f"providers.llm.ollama.base_url={server.url}",
                "summarize", "--all", "--model", "ollama/llama3.2:3b",
            ],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli.env,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while len(server.posts()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert out.startswith(f"jp-c{URLSAFE}  2 summarized with ollama/llama3.2:3b\n")
    assert "interrupted: 1 of 6 conversations reported; the rest are left for the next run" in err
    assert "Traceback" not in err
