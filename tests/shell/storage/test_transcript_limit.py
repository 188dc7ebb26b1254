"""``conversation.turn_summary.transcript.max_message_chars`` (issue 12): RFD 126's 4,000 by default, or less.

Read from the effective configuration (files, ``JP_CFG_*``, the conversation's own, ``--cfg``), checked
(a whole number of at least 200; anything else is a one-line error naming the key and where it was set),
and used everywhere a transcript is made for a model: catch-up's requests, the fingerprints they are
checked against, ``turnmark transcript`` and the failure notes of ``turnmark turns``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.shell.usecases.test_catchup import CLEAN, run, server, summaries, use_model
from tests.support.llm_servers import Behaviour, ModelServer, requested_ids
from turnmark.core.stream.config import DEFAULTS, MAX_MESSAGE_CHARS, max_message_chars, merge
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.errors import ConfigProblem
from turnmark.shell.storage.config_files import config_layers, transcript_limit
from turnmark.shell.storage.failure_memory import load_memory
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import require_workspace

__all__ = ["server"]  # the fixture, imported for the catch-up tests

LONG = "Why do the locks " + "really " * 600 + "live in the silo?"  # 4,232 characters


def lengthen_a1(workspace: Path) -> None:
    """Make turn a1turn0's request longer than 4,000 characters."""
    events = pick_conversation(workspace, CLEAN).directories[0] / "events.json"
    events.write_text(events.read_text().replace('"And the locks?"', json.dumps(LONG)))


def transcript_of_a1(workspace: Path, *options: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *options, "transcript", CLEAN, "--turn", "a1turn0"],
        obj=Settings(new_id=sequential_ids(), environ=env or {}),
    )
    return result.exit_code, result.stdout, result.stderr


def request_line(transcript: str) -> str:
    [line] = [line for line in transcript.splitlines() if line.startswith("<request>")]
    return line.removeprefix("<request>").removesuffix("</request>")


def cut(limit: int) -> str:
    return LONG[: limit // 2] + "[…]" + LONG[-(limit // 2) :]


def limit_toml(value: str) -> str:
    return f"[conversation.turn_summary.transcript]\nmax_message_chars = {value}\n"


# Reading the value --------------------------------------------------------------------------------


def test_the_default_is_rfd_126s_4000() -> None:
    assert max_message_chars(DEFAULTS).unwrap() == 4000
    assert max_message_chars({}).unwrap() == 4000


def test_set_in_config_toml_by_jp_cfg_and_by_cfg_later_wins(workspace: Path) -> None:
    ws = require_workspace(workspace)
    (workspace / ".jp" / "config.toml").write_text(limit_toml("1500"))
    assert transcript_limit(config_layers(ws, None, (), {}, workspace)) == 1500
    env = {"JP_CFG_CONVERSATION_TURN_SUMMARY_TRANSCRIPT_MAX_MESSAGE_CHARS": "1000"}
    assert transcript_limit(config_layers(ws, None, (), env, workspace)) == 1000
    cfg = (f"{MAX_MESSAGE_CHARS}=600",)
    assert transcript_limit(config_layers(ws, None, cfg, env, workspace)) == 600


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("100", "takes a whole number of at least 200, not 100"),
        ("0", "takes a whole number of at least 200, not 0"),
        ("-5", "takes a whole number of at least 200, not -5"),
        ('"lots"', 'takes a whole number of at least 200, not "lots"'),
        ("1500.0", "takes a whole number of at least 200, not 1500.0"),
        ("true", "takes a whole number of at least 200, not true"),
    ],
)
def test_a_bad_value_in_a_file_is_one_line_naming_the_key_and_the_file(
    workspace: Path, toml: str, message: str
) -> None:
    ws = require_workspace(workspace)
    path = workspace / ".jp" / "config.toml"
    path.write_text(limit_toml(toml))
    with pytest.raises(ConfigProblem) as raised:
        transcript_limit(config_layers(ws, None, (), {}, workspace))
    assert str(raised.value) == f"{path.resolve()}: {MAX_MESSAGE_CHARS} {message}"


def test_the_smallest_value_is_accepted() -> None:
    layer = merge(DEFAULTS, {"conversation": {"turn_summary": {"transcript": {"max_message_chars": 200}}}})
    assert max_message_chars(layer).unwrap() == 200


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", f"--cfg: {MAX_MESSAGE_CHARS} takes a whole number, not 'abc'"),
        ("50", f"--cfg {MAX_MESSAGE_CHARS}=50: {MAX_MESSAGE_CHARS} takes a whole number of at least 200, not 50"),
    ],
)
def test_a_bad_cfg_value_is_a_one_line_error_of_the_command(workspace: Path, value: str, message: str) -> None:
    code, out, err = transcript_of_a1(workspace, "--cfg", f"{MAX_MESSAGE_CHARS}={value}")
    assert code == 2
    assert out == ""
    assert err == f"error: {message}\n"


def test_a_bad_value_stops_summarize_with_the_same_message(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").write_text(limit_toml("10"))
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "summarize", CLEAN], obj=Settings(new_id=sequential_ids(), environ={})
    )
    assert result.exit_code == 1
    assert f"{MAX_MESSAGE_CHARS} takes a whole number of at least 200, not 10" in result.stderr


# The cut -----------------------------------------------------------------------------------------


def test_transcript_cuts_a_long_message_at_the_configured_size(workspace: Path) -> None:
    lengthen_a1(workspace)
    _, out, _ = transcript_of_a1(workspace)
    assert request_line(out) == cut(4000), "the default: RFD 126's 4,000 characters"
    _, out, _ = transcript_of_a1(workspace, "--cfg", f"{MAX_MESSAGE_CHARS}=600")
    assert request_line(out) == cut(600)
    assert len(request_line(out)) == 600 + len("[…]")
    (workspace / ".jp" / "config.toml").write_text(limit_toml("1500"))
    _, out, _ = transcript_of_a1(workspace)
    assert request_line(out) == cut(1500)


def test_a_message_within_the_limit_is_whole(workspace: Path) -> None:
    _, out, _ = transcript_of_a1(workspace, "--cfg", f"{MAX_MESSAGE_CHARS}=200")
    assert request_line(out) == "And the locks?"


def test_transcript_json_gives_the_tokens_and_fingerprint_catch_up_uses(workspace: Path) -> None:
    lengthen_a1(workspace)
    rows = {}
    for limit in (4000, 600):
        _, out, _ = transcript_of_a1(workspace, "--format", "json", "--cfg", f"{MAX_MESSAGE_CHARS}={limit}")
        [rows[limit]] = json.loads(out)["turns"]
    assert rows[600]["tokens"] < rows[4000]["tokens"]
    assert rows[600]["fingerprint"] != rows[4000]["fingerprint"], "the model would read something else"


def test_catch_up_sends_the_cut_transcript_and_writes_its_answer(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    lengthen_a1(workspace)
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref, cfg=(f"{MAX_MESSAGE_CHARS}=600",))
    [post] = server.posts()
    sent = post.body["messages"][1]["content"]  # type: ignore[index]
    assert f"<request>{cut(600)}</request>" in sent
    assert report.dropped == {}, "the write-back recomputes each fingerprint with the same limit"
    assert set(report.written) == {"a1turn0", "a2turn0", "a3turn0"}
    assert summaries(ref)["a1turn0"] == ("Summary of a1turn0", "ollama/llama3.2:3b")


def test_a_different_limit_restarts_the_failure_count_only_of_turns_it_changes(
    workspace: Path, server: ModelServer
) -> None:
    """Remembered failures are per fingerprint: a limit that changes what the model reads is a new try."""
    use_model(workspace, server)
    lengthen_a1(workspace)
    ref = pick_conversation(workspace, CLEAN)
    garbage = Behaviour(content=lambda body: json.dumps({"summaries": dict.fromkeys(requested_ids(body), "x")}))
    server.queue.extend([garbage] * 3)
    for _ in range(3):
        run(ref)
    assert set(run(ref).given_up) == {"a1turn0", "a2turn0", "a3turn0"}
    report = run(ref, cfg=(f"{MAX_MESSAGE_CHARS}=600",))
    assert set(report.given_up) == {"a2turn0", "a3turn0"}, "their transcripts are the same at 600"
    assert set(report.written) == {"a1turn0"}
    assert "a1turn0" not in load_memory(ref)


def test_turns_shows_the_failure_notes_under_the_configured_limit(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    lengthen_a1(workspace)
    (workspace / ".jp" / "config.toml").write_text((workspace / ".jp" / "config.toml").read_text() + limit_toml("600"))
    ref = pick_conversation(workspace, CLEAN)
    garbage = Behaviour(content=lambda body: json.dumps({"summaries": dict.fromkeys(requested_ids(body), "x")}))
    server.queue.extend([garbage] * 3)
    for _ in range(3):
        run(ref)
    out = (
        CliRunner()
        .invoke(app, ["--workspace", str(workspace), "turns", CLEAN], obj=Settings(new_id=sequential_ids()))
        .stdout
    )
    [line] = [line for line in out.splitlines() if line.startswith("a1turn0")]
    assert '[not summarized: 3 answers failed (refused: "x" has fewer than two words)' in line
