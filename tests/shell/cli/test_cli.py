"""The CLI against real fixture workspaces: text and JSON output snapshots, exit codes, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage.state_dirs import cache_home, state_home, workspace_key

ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1"}


class Run:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def __call__(self, *args: str, code: int = 0) -> tuple[str, str]:
        result = CliRunner().invoke(
            app, ["--workspace", str(self.workspace), *args], obj=Settings(new_id=sequential_ids()), env=ENV
        )
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
        return self.clean(result.stdout), self.clean(result.stderr)

    def clean(self, text: str) -> str:
        """The workspace, its cache and its state folder (under the test's homes) as ``<ws>``, ``<cache>``,
        ``<state>``."""
        key = workspace_key(self.workspace)
        for path, name in ((cache_home() / key, "<cache>"), (state_home() / key, "<state>"), (self.workspace, "<ws>")):
            text = text.replace(str(path), name)
        return text


@pytest.fixture
def run(workspace: Path) -> Run:
    return Run(workspace)


def test_conversations_text(run: Run, snapshot: SnapshotAssertion) -> None:
    assert run("conversations")[0] == snapshot


def test_conversations_json(run: Run, snapshot: SnapshotAssertion) -> None:
    out, _ = run("conversations", "--format", "json")
    listing = json.loads(out)
    assert [row["id"] for row in listing["conversations"]] == [
        "jp-c17790000000",
        "jp-c17800000010",
        "jp-c17800000030",
        "jp-c17800000040",
    ]
    assert out == snapshot


@pytest.mark.parametrize("conversation", ["17800000010", "jp-c17790000000", "17800000030-drop-a-digression"])
def test_turns_text(run: Run, snapshot: SnapshotAssertion, conversation: str) -> None:
    assert run("turns", conversation) == snapshot


@pytest.mark.parametrize("conversation", ["17800000010", "17790000000"])
def test_turns_json(run: Run, snapshot: SnapshotAssertion, conversation: str) -> None:
    out, _ = run("turns", conversation, "--format", "json")
    assert out == snapshot


def test_turns_defaults_to_the_most_recently_active_conversation(run: Run) -> None:
    out, err = run("--format", "json", "turns")
    assert json.loads(out)["conversation"]["id"] == "jp-c17800000040"
    assert err == ""


def test_turns_by_path(run: Run, workspace: Path) -> None:
    path = workspace / ".jp" / "conversations" / "17800000010-add-retry-backoff-to-the-stream-handler"
    out, _ = run("turns", str(path / "events.json"))
    assert out.splitlines()[0] == "k3m9x2a  Add retry backoff to stream handler"


def test_check_a_clean_conversation(run: Run, snapshot: SnapshotAssertion) -> None:
    assert run("check", "17800000010") == snapshot


def test_check_reports_every_reason_and_exits_1(run: Run, snapshot: SnapshotAssertion) -> None:
    assert run("check", "17800000030", code=1) == snapshot


def test_check_all_json(run: Run, snapshot: SnapshotAssertion) -> None:
    out, _ = run("check", "--all", "--format", "json", code=1)
    report = json.loads(out)
    assert report["ok"] is False
    assert [c["ok"] for c in report["conversations"]] == [True, True, False, False]
    assert out == snapshot


def test_a_broken_file_is_a_one_line_error_and_exit_2(run: Run, workspace: Path) -> None:
    events = workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script" / "events.json"
    events.write_bytes(events.read_bytes()[:-40])
    before = events.read_bytes()
    line, column = before.count(b"\n") + 1, len(before.splitlines()[-1]) + 1
    out, err = run("turns", "17790000000", code=2)
    assert out == ""
    assert err == (
        "error: <ws>/.jp/conversations/17790000000-explain-the-build-script/events.json: "
        f"line {line}, column {column}: the JSON ends early (truncated file?)\n"
    )
    assert events.read_bytes() == before
    listing, err = run("conversations", code=2)
    assert listing.splitlines()[1].split() == [
        "jp-c17790000000",
        "-",
        "-",
        "-",
        "unreadable",
        "17790000000-explain-the-build-script",
    ]
    assert err.startswith("error: <ws>/.jp/conversations/17790000000")


def test_check_all_keeps_going_past_a_broken_conversation(run: Run, workspace: Path) -> None:
    events = workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script" / "events.json"
    events.write_bytes(b'[{"type": "config_delta", "timestamp": "x", "delta": {}}, {"type": "turn_start"}]')
    out, err = run("check", "--all", "--format", "json", code=2)
    report = json.loads(out)
    assert report["conversations"][0]["error"].endswith('entry 1 (turn_start): missing "timestamp"')
    assert len(report["conversations"]) == 4
    assert err.count("error:") == 1
    text, _ = run("check", "--all", code=2)
    assert "jp-c17790000000  UNREADABLE  17790000000-explain-the-build-script: see the error above" in text
    assert len(text.splitlines()) >= 4


def test_check_says_once_that_unlinked_answers_hide_deleted_requests_and_names_the_backfill(
    run: Run, workspace: Path
) -> None:
    """A request deleted from a conversation written before request links: check cannot see it, and says so."""
    folder = workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script"
    events = json.loads((folder / "events.json").read_text())
    first = next(index for index, event in enumerate(events) if event["type"] == "chat_request")
    del events[first]
    (folder / "events.json").write_text(json.dumps(events))
    out, err = run("check", "17790000000")
    assert out.startswith("jp-c17790000000  ok")
    notes = [line for line in err.splitlines() if "request link" in line]
    assert notes == [
        "note: 5 answers carry no request link (written before JP linked answers to requests): a request deleted "
        "or moved there cannot be detected. To make such edits detectable: turnmark repair jp-c17790000000 "
        "--backfill --apply"
    ]
    _, err = run("check", "--all", code=1)
    (note,) = [line for line in err.splitlines() if "request link" in line]
    assert note.endswith("turnmark repair --all --backfill --apply")
    report = json.loads(run("check", "--all", "--format", "json", code=1)[0])
    answers = {row["id"]: row["links"]["unlinked_answers"] for row in report["conversations"]}
    assert answers["jp-c17790000000"] == 5
    assert note.startswith(f"note: {sum(answers.values())} answers in {sum(1 for n in answers.values() if n)} ")


def test_check_says_once_calmly_that_ids_are_not_saved_yet(run: Run, workspace: Path) -> None:
    folder = workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script"
    events = json.loads((folder / "events.json").read_text())
    for event in events:
        event.pop("event_id", None)
    (folder / "events.json").write_text(json.dumps(events))
    out, err = run("check", "--all", code=1)
    assert "event_id assigned at load" not in out
    notes = [line for line in err.splitlines() if line.startswith("note:") and "event_id" in line]
    assert len(notes) == 1
    assert notes[0].startswith(f"note: {len(events)} of ")
    assert notes[0].endswith("Nothing to fix.")
    report = json.loads(run("check", "--all", "--format", "json", code=1)[0])
    assert report["transient_ids"] == sum(row["transient_ids"] for row in report["conversations"]) >= len(events)


@pytest.mark.parametrize("command", ["check", "summarize"])
def test_a_conversation_and_all_together_is_refused(run: Run, workspace: Path, command: str) -> None:
    before = sorted((p, p.read_bytes()) for p in workspace.rglob("*") if p.is_file())
    out, err = run(command, "17800000010", "--all", code=2)
    assert (out, err) == ("", "error: give either a conversation or --all, not both\n")
    assert sorted((p, p.read_bytes()) for p in workspace.rglob("*") if p.is_file()) == before


def test_unknown_conversation(run: Run) -> None:
    _, err = run("turns", "nope", code=2)
    assert err.startswith("error: no conversation 'nope' in <ws>/.jp/conversations")


def test_no_workspace(tmp_path: Path, user_data: Path) -> None:
    _out, err = Run(tmp_path)("conversations", code=2)
    assert err == f"error: no .jp/ directory in {tmp_path} or any parent; pass --workspace PATH\n".replace(
        str(tmp_path), "<ws>"
    )


def test_check_help_explains_hand_editing(run: Run) -> None:
    out, _ = run("check", "--help")
    flat = " ".join(out.split())
    for phrase in ("event_id", "request_id", "Deleting a chat_request", "turnmark repair CONV", "by hand"):
        assert phrase in flat


BAD_INPUTS = {
    "invalid JSON": (
        b'[\n  {"type": "turn_start" "timestamp": "x"}\n]\n',
        "line 2, column 25: invalid JSON: expected ',' or '}'",
    ),
    "not an array": (b'{"type": "turn_start"}\n', "top level: events.json must be a JSON array of entries"),
    "entry without type": (b'[{"timestamp": "2026-01-01 00:00:00.0"}]', 'entry 0: missing "type"'),
    "entry without timestamp": (
        b'[{"type": "chat_request", "content": "x"}]',
        'entry 0 (chat_request): missing "timestamp"',
    ),
    "field of the wrong type": (
        b'[{"type": "chat_request", "timestamp": "2026-01-01 00:00:00.0", "content": ["x"]}]',
        'entry 0 (chat_request): "content" must be a string, found an array',
    ),
    "truncated file": (b'[{"type": "chat_request", "timestamp": "2026-01-', "line 1, column 49: the JSON ends early"),
    "invalid UTF-8": (
        b'[{"type": "chat_request", "timestamp": "2026-01-01 00:00:00.0", "content": "\xc3("}]',
        "line 1, column 77: invalid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_every_kind_of_bad_input_is_one_line_naming_the_file_and_place(run: Run, workspace: Path, case: str) -> None:
    data, expected = BAD_INPUTS[case]
    directory = workspace / ".jp" / "conversations" / "17800000010-add-retry-backoff-to-the-stream-handler"
    (directory / "events.json").write_bytes(data)
    before = {path.name: path.read_bytes() for path in directory.iterdir()}
    for command in (["turns", "17800000010"], ["check", "17800000010"]):
        out, err = run(*command, code=2)
        assert out == ""
        assert err.count("\n") == 1
        assert err.startswith(f"error: <ws>/.jp/conversations/{directory.name}/events.json: {expected}")
    assert {path.name: path.read_bytes() for path in directory.iterdir()} == before


def test_a_hand_written_summary_is_shown_on_one_safe_line(run: Run, workspace: Path) -> None:
    events = workspace / ".jp" / "conversations" / "17800000010-add-retry-backoff-to-the-stream-handler" / "events.json"
    data = events.read_bytes().replace(
        b'"summary": "Add retry backoff to stream handler"', b'"summary": "line one\\nFAKE \\u001b[31mred"'
    )
    events.write_bytes(data.replace(b'"type": "turn_start"\n', b'"type": "turn_start",\n    "summary": " "\n'))
    out, _ = run("turns", "17800000010")
    assert out.splitlines() == ["k3m9x2a  line one FAKE red", "p8q2r4b  ~ continue"]


def test_broken_metadata_is_reported_not_hidden(run: Run, workspace: Path) -> None:
    conversations = workspace / ".jp" / "conversations"
    broken = conversations / "17800000040-compacted-and-hand-edited" / "metadata.json"
    broken.write_text('{"last_activated_at": "2026-13-45 10:00:00.0"}')
    out, err = run("turns", "--format", "json")
    assert json.loads(out)["conversation"]["id"] == "jp-c17800000030"
    assert "warning: passed over jp-c17800000040" in err
    assert '"last_activated_at" must be a timestamp' in err
    listing, err = run("conversations", code=2)
    last = next(line for line in listing.splitlines() if line.startswith("jp-c17800000040")).split()
    assert last[:6] == ["jp-c17800000040", "-", "4", "1/4", "1", "unresolved"]
    assert last[6:] == ["(metadata.json", "unreadable)"]
    assert next(line for line in listing.splitlines() if line.startswith("jp-c17800000030")).startswith(
        "jp-c17800000030*  2026-06-02"
    )
    assert "metadata.json" in err


@pytest.mark.parametrize("conversation", ["17800000030", "17800000040"])
def test_project_text(run: Run, snapshot: SnapshotAssertion, conversation: str) -> None:
    assert run("project", conversation) == snapshot


@pytest.mark.parametrize("conversation", ["17800000030", "17800000040"])
def test_project_json(run: Run, snapshot: SnapshotAssertion, conversation: str) -> None:
    out, err = run("project", conversation, "--format", "json")
    document = json.loads(out)
    assert len(document["diagnostics"]) == err.count("warning: request_id")
    assert out == snapshot


@pytest.mark.parametrize("provider", ["ollama", "openai", "anthropic"])
def test_project_provider_bodies(run: Run, snapshot: SnapshotAssertion, provider: str) -> None:
    out, _ = run("project", "17800000040", "--provider", provider)
    assert out == snapshot


def test_project_shows_each_diagnostic_on_the_chrome_channel_at_default_verbosity(run: Run) -> None:
    out, err = run("project", "17800000040")
    assert "gone000" not in out
    assert err.splitlines() == [
        "warning: request_id 'gone000' does not resolve (missing_target: no entry has this event_id; was the "
        "request deleted?); left out of what the model sees: entry 10 tool_call_request a2call0, entry 11 "
        "tool_call_response a2res00, the other half of its tool call"
    ]


def test_check_reports_the_same_exclusions_as_the_projection(run: Run) -> None:
    checked, _ = run("check", "17800000040", "--format", "json", code=1)
    projected, _ = run("project", "17800000040", "--format", "json")
    assert json.loads(checked)["conversations"][0]["exclusions"] == json.loads(projected)["diagnostics"]


def test_project_help_points_at_check_and_repair(run: Run) -> None:
    out, _ = run("project", "--help")
    flat = " ".join(out.split())
    for phrase in ("request_id", "turnmark check --help", "turnmark repair"):
        assert phrase in flat, phrase


def test_summarize_dry_run_text_and_json(run: Run, snapshot: SnapshotAssertion, workspace: Path) -> None:
    before = {p: p.read_bytes() for p in (workspace / ".jp" / "conversations").rglob("*.json")}
    assert run("summarize", "--all", "--dry-run", code=1) == snapshot
    out, _ = run("summarize", "17800000040", "--dry-run", "--format", "json")
    assert out == snapshot
    assert {p: p.read_bytes() for p in (workspace / ".jp" / "conversations").rglob("*.json")} == before


def test_summarize_then_turns_show_who_wrote_each_summary(run: Run, snapshot: SnapshotAssertion) -> None:
    out, _ = run("summarize", "17800000040")
    assert out == snapshot
    turns_text, _ = run("turns", "17800000040")
    assert turns_text == snapshot
    again, _ = run("summarize", "17800000040", "--format", "json")
    assert json.loads(again)["conversations"][0]["written"] == {}


def test_a_conversation_with_nothing_to_summarize_says_so_and_names_no_model(run: Run) -> None:
    run("summarize", "17800000040", "--model", "builtin/extractive")
    for dry_run in ((), ("--dry-run",)):
        out, _ = run("summarize", "17800000040", "--model", "builtin/extractive", *dry_run)
        assert out == "jp-c17800000040  nothing to summarize\n"


def test_summarize_reports_a_failure_and_exits_1(run: Run) -> None:
    out, err = run("summarize", "17800000030", code=1)
    assert out == "jp-c17800000030  not summarized: see the error above\n"
    assert err.startswith("error: jp-c17800000030: <ws>/.jp/conversations/17800000030-drop-a-digression/events.json")


def test_summarize_with_an_unknown_model_says_why(run: Run) -> None:
    _, err = run("summarize", "17800000040", "--model", "google/gemini", code=1)
    assert "cannot talk to 'google' models" in err


def test_transcript_text_and_json(run: Run, snapshot: SnapshotAssertion) -> None:
    assert run("transcript", "17800000040", "--turn", "a3turn0") == snapshot
    out, _ = run("transcript", "17790000000", "--format", "json")
    assert out == snapshot


def test_label_sets_and_clears_a_users_summary(run: Run) -> None:
    out, _ = run("summary", "set", "17800000040", "2", "  Read the lock\ncode ")
    assert out == "a2turn0  Read the lock code\n"
    turns_text, _ = run("turns", "17800000040")
    assert "a2turn0  Read the lock code  [user]" in turns_text
    out, _ = run("summary", "clear", "17800000040", "a2turn0")
    assert out == "a2turn0  (summary cleared)\n"
    _, err = run("summary", "set", "17800000040", "a2turn0", " \t ", code=2)
    assert err == "error: the summary is blank once normalized to one line\n"
    _, err = run("summary", "set", "17800000040", "9", "x", code=2)
    assert "no turn '9'" in err


def test_cfg_overrides_reach_the_pipeline(run: Run) -> None:
    out, _ = run(
        "--cfg",
        "conversation.turn_summary.generate.batch_size=1",
        "summarize",
        "17800000040",
        "--dry-run",
        "--format",
        "json",
    )
    plan = json.loads(out)["conversations"][0]["plan"]
    assert [row.get("batch") for row in plan] == [3, 2, 1]
    _, err = run("--cfg", "conversation.turn_summary.generate.batch_size=many", "summarize", "--dry-run", code=1)
    assert "takes a whole number" in err


def test_label_works_on_a_conversation_whose_ids_are_not_saved_yet(run: Run) -> None:
    out, _ = run("summary", "set", "17790000000", "0", "Explain build.rs")
    turn_id = out.split()[0]
    listing, _ = run("turns", "17790000000")
    assert listing.splitlines()[0] == f"{turn_id}  Explain build.rs  [user]"
    _, err = run("summary", "set", "17790000000", "\u00b2", "x", code=2)
    assert "no turn" in err


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("not json", "the answer is not JSON; nothing written"),
        ('{"summaries": {"a1turn0": "two\\nlines", "a2turn0": "\\u001b[2Jx", "a3turn0": ""}}', "no summary for"),
    ],
)
def test_a_model_failure_is_one_line_on_stderr(run: Run, workspace: Path, behaviour: str, reason: str) -> None:
    from tests.support.llm_servers import Behaviour, ModelServer

    with ModelServer() as server:
        server.queue.append(Behaviour(content=lambda body: behaviour))
        (workspace / ".jp" / "config.toml").write_text(
            f'[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
            f'[providers.llm.ollama]\nbase_url = "{server.url}"\n'
        )
        out, err = run("summarize", "17800000040", code=1 if "JSON" in reason else 0)
    assert "\x1b" not in err
    lines = err.splitlines()
    assert lines
    assert all(line.startswith(("error: jp-c17800000040:", "note: jp-c17800000040:")) for line in lines)
    assert any(reason in line for line in lines)
    assert "summarized" in out or "not summarized" in out


def test_project_provider_uses_the_effective_config_like_query(run: Run) -> None:
    out, _ = run(
        "--cfg",
        "assistant.system_prompt=Be terse.",
        "--cfg",
        "assistant.model.id=fast",
        "--cfg",
        "providers.llm.aliases.fast=openai/gpt-4o-mini",
        "project",
        "17800000010",
        "--provider",
        "openai",
    )
    body = json.loads(out)
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"][0] == {"role": "system", "content": "Be terse."}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["summarize", "C", "--cfg", "k=v", "--dry-run"], ["--cfg", "k=v", "summarize", "C", "--dry-run"]),
        (["watch", "--once", "--cfg=k=v", "-w", "ws"], ["--cfg=k=v", "watch", "--once", "-w", "ws"]),
        (["summary", "set", "C", "0", "x", "--format", "json"], ["--format", "json", "summary", "set", "C", "0", "x"]),
        (["turns", "C", "--format", "json", "-w", "ws"], ["-w", "ws", "turns", "C", "--format", "json"]),
        (["-w", "ws", "query", "--", "--cfg", "is", "text"], ["-w", "ws", "query", "--", "--cfg", "is", "text"]),
        (["--help"], ["--help"]),
    ],
)
def test_global_options_may_follow_the_command(argv: list[str], expected: list[str]) -> None:
    from turnmark.shell.cli.usage import global_options_first

    assert global_options_first(argv) == expected


def test_global_options_after_the_command_in_a_real_process(workspace: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [str(Path(sys.executable).parent / "turnmark"), "turns", "17800000010", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("k3m9x2a")


def test_a_workspace_that_does_not_exist_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--workspace", str(tmp_path / "nowhere"), "turns"], obj=Settings())
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'nowhere'} does not exist\n"


def test_a_negative_settle_time_is_refused(workspace: Path) -> None:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "watch", "--settle", "-5", "--once"], obj=Settings()
    )
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "command",
    [("show",), ("transcript",), ("turns",), ("check",), ("project",), ("summarize", "--dry-run")],
)
def test_every_command_taking_conv_takes_conv_turn(run: Run, command: tuple[str, ...]) -> None:
    """``CONV:TURN`` as ``find --output ids`` prints it: that turn where the command shows turns, else its
    conversation."""
    out, _ = run(command[0], "17800000010:p8q2r4b", *command[1:])
    whole, _ = run(command[0], "17800000010", *command[1:])
    if command[0] in ("show", "transcript"):
        assert "p8q2r4b" in out
        assert "k3m9x2a" not in out
        assert out != whole
    else:
        assert out == whole
