"""``turnmark edit -i`` end to end: the editor is a small script that edits the folder, as a person would."""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tests.shell.storage.test_locking import hold, release
from turnmark.core.editing.edit_plan import Dropped
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli import rewriting
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.undo import KEEP, undo_root

CONV = "17800000010"


def editor(tmp_path: Path, body: str, name: str = "edit.py") -> str:
    """An editor command running ``body`` with ``plan`` (the file it was given, its last argument) and
    ``target`` (the edit folder) bound."""
    script = tmp_path / name
    script.write_text(
        f"#!{sys.executable}\nimport sys, pathlib, json\nplan_file = pathlib.Path(sys.argv[-1])\n"
        "target = plan_file.parent\n" + textwrap.dedent(body)
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def scratch(workspace: Path) -> Path:
    """The temporary directory the tests' edit folders go to (``TMPDIR``)."""
    folder = workspace.parent / "tmp"
    folder.mkdir(exist_ok=True)
    return folder


def run(workspace: Path, command: str, *args: str, code: int = 0, before: tuple[str, ...] = ()) -> tuple[str, str]:
    """``turnmark [before] edit [args]`` with ``EDITOR=command``; its stdout and stderr."""
    environ = {**os.environ, "EDITOR": command, "TMPDIR": str(scratch(workspace))}
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *before, "edit", *args],
        obj=Settings(new_id=sequential_ids("x"), environ=environ),
        env={"COLUMNS": "200"},
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout, result.stderr


def events_path(workspace: Path) -> Path:
    return pick_conversation(workspace, CONV).directories[0] / "events.json"


def test_an_identity_edit_writes_nothing(workspace: Path, tmp_path: Path) -> None:
    before = events_path(workspace).read_bytes()
    out, _ = run(workspace, editor(tmp_path, "pass\n"), "-i", CONV, "--no-summary")
    assert out == f"jp-c{CONV}: nothing changed; nothing written\n"
    assert events_path(workspace).read_bytes() == before


def test_deleting_a_turn_keeps_the_others_and_the_conversation_checks_clean(workspace: Path, tmp_path: Path) -> None:
    body = """
    plan = (target / "CONVERSATION").read_text().split("\\n")
    cut = next(i for i, line in enumerate(plan) if line.startswith("# Turn 1"))
    (target / "CONVERSATION").write_text("\\n".join(plan[:cut]) + "\\n")
    """
    before = json.loads(events_path(workspace).read_text())
    out, _ = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary")
    assert out.startswith(f"jp-c{CONV}: saved (1 turn; 3 entries dropped); `turnmark edit --undo")
    after = json.loads(events_path(workspace).read_text())
    assert after == before[:11] + [entry for entry in before[11:] if entry["type"] == "config_delta"]
    check = CliRunner().invoke(app, ["--workspace", str(workspace), "check", CONV], obj=Settings())
    assert check.exit_code == 0, check.stdout


def test_an_edited_tool_result_clears_that_turns_summary(workspace: Path, tmp_path: Path) -> None:
    body = """
    result = next(p for p in target.iterdir() if "tool-result" in p.name)
    result.write_text(result.read_text().replace("\\n---\\n", "\\n---\\nEDITED ", 1))
    """
    before = [entry for entry in json.loads(events_path(workspace).read_text()) if entry["type"] == "turn_start"]
    run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary")
    starts = [entry for entry in json.loads(events_path(workspace).read_text()) if entry["type"] == "turn_start"]
    assert before[0]["summary"] == "Add retry backoff to stream handler"
    assert "summary" not in starts[0]
    assert starts[1] == before[1], "the untouched turn keeps its turn_start"
    results = [e for e in json.loads(events_path(workspace).read_text()) if e["type"] == "tool_call_response"]
    assert any(base64.b64decode(e["content"]).decode().startswith("EDITED") for e in results), "stored as JP stores it"


def test_errors_are_annotated_and_the_editor_reopens_until_fixed(workspace: Path, tmp_path: Path) -> None:
    body = """
    plan_path = target / "CONVERSATION"
    plan = plan_path.read_text()
    keep = target.parent / (target.name + ".orig")
    if "# ERROR:" in plan:
        plan_path.write_text(keep.read_text())
        keep.unlink()
    else:
        keep.write_text(plan)
        plan_path.write_text("\\n".join(l for l in plan.split("\\n") if "tool-call" not in l))
    """
    out, err = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary")
    assert "problem(s) written at the top of CONVERSATION; reopening the editor" in err
    assert out == f"jp-c{CONV}: nothing changed; nothing written\n"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('(target / "CONVERSATION").write_text("")\n', "the plan is empty; nothing written"),
        ("sys.exit(3)\n", "the editor exited with status 3; nothing written"),
    ],
)
def test_an_empty_plan_or_a_failing_editor_aborts(workspace: Path, tmp_path: Path, body: str, reason: str) -> None:
    before = events_path(workspace).read_bytes()
    _, err = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary", code=1)
    assert err == f"aborted: {reason}\n"
    assert events_path(workspace).read_bytes() == before


def test_a_conversation_held_by_jp_is_refused_at_once(workspace: Path, tmp_path: Path) -> None:
    holder = hold(lock_path(pick_conversation(workspace, CONV)))
    try:
        _, err = run(workspace, editor(tmp_path, "pass\n"), "-i", CONV, "--no-summary", code=2)
    finally:
        release(holder)
    assert "is locked" in err


def test_the_editor_gets_the_plan_in_the_edit_folder(workspace: Path, tmp_path: Path) -> None:
    """Finding 2 of issue 20: vim was given the folder (netrw's listing), not the plan."""
    record = tmp_path / "argv.json"
    body = f"""
    pathlib.Path("{record}").write_text(json.dumps([sys.argv[1:], str(pathlib.Path.cwd())]))
    """
    run(workspace, editor(tmp_path, body, name="vim"), "-i", CONV, "--no-summary")
    arguments, cwd = json.loads(record.read_text())
    assert len(arguments) == 1
    assert Path(arguments[0]).name == "CONVERSATION"
    assert Path(arguments[0]).parent == Path(cwd)
    assert Path(cwd).name.startswith(f"turnmark-edit-{os.getpid()}-{CONV}-")


def test_a_folder_editor_gets_the_folder_and_the_plan_and_waits(workspace: Path, tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    body = f"""
    pathlib.Path("{record}").write_text(json.dumps(sys.argv[1:]))
    """
    run(workspace, editor(tmp_path, body, name="code"), "-i", CONV, "--no-summary")
    wait, folder, plan = json.loads(record.read_text())
    assert (wait, Path(plan)) == ("--wait", Path(folder) / "CONVERSATION")


def test_errors_reopen_the_editor_on_the_plan_with_the_errors_at_its_top(workspace: Path, tmp_path: Path) -> None:
    record = tmp_path / "seen.txt"
    body = f"""
    text = plan_file.read_text()
    if text.startswith("# ERROR:"):
        pathlib.Path("{record}").write_text(text)
        plan_file.write_text("")
    else:
        plan_file.write_text("\\n".join(l for l in text.split("\\n") if "tool-call" not in l))
    """
    run(workspace, editor(tmp_path, body, name="vi"), "-i", CONV, "--no-summary", code=1)
    assert record.read_text().startswith("# ERROR: tool result ")


def test_the_newest_turn_is_summarized_before_the_editor_opens(workspace: Path, tmp_path: Path) -> None:
    body = """
    plan = (target / "CONVERSATION").read_text()
    assert "(p8q2r4b): ~" not in plan, plan
    """
    environ_cfg = ("--cfg", "conversation.turn_summary.generate.model.id=builtin/extractive")
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *environ_cfg, "edit", "-i", CONV],
        obj=Settings(new_id=sequential_ids("x"), environ={**os.environ, "EDITOR": editor(tmp_path, body)}),
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "note: summarized p8q2r4b:" in result.stderr


def test_undo_restores_the_bytes_refuses_after_a_change_and_keeps_five(workspace: Path, tmp_path: Path) -> None:
    original = events_path(workspace).read_bytes()
    rename = """
    request = sorted(p for p in target.iterdir() if p.name.endswith("-request.md"))[0]
    request.write_text(request.read_text().rstrip("\\n") + " (edited)\\n")
    """
    run(workspace, editor(tmp_path, rename), "-i", CONV, "--no-summary")
    assert events_path(workspace).read_bytes() != original
    out, _ = run(workspace, editor(tmp_path, "pass\n"), "--undo", CONV)
    assert out == f"jp-c{CONV}: restored the copy kept before edit -i; 0 more to undo\n"
    assert events_path(workspace).read_bytes() == original
    run(workspace, editor(tmp_path, rename), "-i", CONV, "--no-summary")
    events_path(workspace).write_bytes(events_path(workspace).read_bytes().replace(b"(edited)", b"(by hand)"))
    _, err = run(workspace, editor(tmp_path, "pass\n"), "--undo", CONV, code=2)
    assert "changed since edit -i (events.json is not what it wrote)" in err
    for _ in range(KEEP + 2):
        run(workspace, editor(tmp_path, rename), "-i", CONV, "--no-summary")
    steps = list(undo_root(pick_conversation(workspace, CONV)).iterdir())
    assert len(steps) == KEEP


def fork(workspace: Path, *args: str, environ: dict[str, str] | None = None) -> tuple[str, str]:
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), "fork", *args],
        obj=Settings(new_id=sequential_ids("f"), environ=environ),
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout, result.stderr


def forked_events(workspace: Path, out: str) -> list[dict[str, object]]:
    fork_id = json.loads(out)["fork"]
    directory = next(p for p in (workspace / ".jp/conversations").iterdir() if f"jp-c{p.name.split('-')[0]}" == fork_id)
    events: list[dict[str, object]] = json.loads((directory / "events.json").read_text())
    metadata = json.loads((directory / "metadata.json").read_text())
    assert metadata["forked_from"]["conversation"] == "jp-c17800000040"
    return events


@pytest.mark.parametrize(
    "args",
    [("--first", "2"), ("--last", "2"), ("--until", "a1turn0"), ("--until", "3"), ()],
    ids=["first-2", "last-2", "until-id", "until-last", "all"],
)
def test_fork_keeps_whole_turns_their_ids_and_the_overlays_inside(
    workspace: Path, args: tuple[str, ...], snapshot: SnapshotAssertion
) -> None:
    out, err = fork(workspace, "17800000040", *args, "--format", "json")
    result = json.loads(out)
    result.pop("fork")
    events = forked_events(workspace, out)
    shape = [(e["type"], e.get("event_id"), e.get("summary"), e.get("from_turn"), e.get("to_turn")) for e in events]
    assert (result, shape, err) == snapshot


def test_conversations_shows_the_lineage(workspace: Path) -> None:
    fork(workspace, "17800000040", "--last", "1")
    listing = CliRunner().invoke(app, ["--workspace", str(workspace), "conversations"], obj=Settings()).stdout
    assert "⑂ jp-c17800000040  Compacted and hand-edited" in listing


def test_fork_last_2_edit_opens_the_fork_and_leaves_the_original(workspace: Path, tmp_path: Path) -> None:
    original = next((workspace / ".jp/conversations").glob("17800000040*"))
    before = {p.name: p.read_bytes() for p in original.iterdir()}
    body = """
    plan = (target / "CONVERSATION").read_text().split("\\n")
    cut = [i for i, line in enumerate(plan) if line.startswith("# Turn")][-1]
    (target / "CONVERSATION").write_text("\\n".join(plan[:cut]) + "\\n")
    """
    out, _ = fork(
        workspace, "17800000040", "--last", "2", "--edit", environ={**os.environ, "EDITOR": editor(tmp_path, body)}
    )
    assert "forked from jp-c17800000040 (turns 2-3)" in out
    assert ": saved (1 turn; 7 entries dropped)" in out
    assert {p.name: p.read_bytes() for p in original.iterdir()} == before


def test_a_save_that_leaves_unresolved_links_says_so(workspace: Path, tmp_path: Path) -> None:
    body = """
    plan = (target / "CONVERSATION").read_text().split("\\n")
    first_request = next(i for i, line in enumerate(plan) if line.split("  # ")[0].endswith("-request.md"))
    del plan[first_request]
    (target / "CONVERSATION").write_text("\\n".join(plan))
    """
    out, err = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary")
    assert "saved" in out
    assert "request_id 'r1a2b3c' does not resolve (missing_target)" in err
    assert "`turnmark project` leaves it out of what the model sees" in err


def test_carriage_returns_survive_an_identity_edit(workspace: Path, tmp_path: Path) -> None:
    path = events_path(workspace)
    events = json.loads(path.read_text())
    result = next(e for e in events if e["type"] == "tool_call_response")
    result["content"] = base64.b64encode(b"line one\r\nline two\r\n").decode()
    path.write_text(json.dumps(events, indent=2) + "\n")
    before = path.read_bytes()
    out, _ = run(workspace, editor(tmp_path, "pass\n"), "-i", CONV, "--no-summary")
    assert "nothing changed" in out
    assert path.read_bytes() == before


def test_a_conversation_with_a_copied_request_is_refused_before_the_editor_opens(
    workspace: Path, tmp_path: Path
) -> None:
    body = """
    raise SystemExit("the editor must not open")
    """
    _, err = run(workspace, editor(tmp_path, body), "-i", "17800000030", "--no-summary", code=2)
    refusal = (
        "refusing to save: request_id points at an event_id that more than one entry had: entry 13 (event_id m4ddddd) "
        "-> c4ddddd; to fix: turnmark repair -i jp-c17800000030 (it asks which request each answers)"
    )
    assert refusal in err
    _, err = run(workspace, editor(tmp_path, "pass\n"), "--undo", "17800000030", code=2)
    assert "nothing to undo" in err
    result = CliRunner().invoke(app, ["--workspace", str(workspace), "fork", "17800000030"], obj=Settings())
    assert result.exit_code == 2
    assert refusal in result.stderr


def test_undo_leaves_later_metadata_changes_alone(workspace: Path, tmp_path: Path) -> None:
    rename = """
    request = sorted(p for p in target.iterdir() if p.name.endswith("-request.md"))[0]
    request.write_text(request.read_text().rstrip("\\n") + " (edited)\\n")
    """
    run(workspace, editor(tmp_path, rename), "-i", CONV, "--no-summary")
    metadata = events_path(workspace).parent / "metadata.json"
    metadata.write_text(metadata.read_text().replace("Add retry backoff", "Renamed later"))
    run(workspace, editor(tmp_path, "pass\n"), "--undo", CONV)
    assert "Renamed later" in metadata.read_text()


def test_a_plan_replaced_by_a_link_is_never_written_through(workspace: Path, tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    body = f"""
    plan = target / "CONVERSATION"
    broken = "\\n".join(l for l in plan.read_text().split("\\n") if "tool-call" not in l)
    pathlib.Path("{canary}").write_text(broken)
    plan.unlink()
    plan.symlink_to("{canary}")
    """
    before = events_path(workspace).read_bytes()
    _, err = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary", code=1)
    assert "aborted" in err
    assert "# ERROR" not in canary.read_text()
    assert events_path(workspace).read_bytes() == before


def test_fork_of_a_conversation_with_a_broken_metadata_file_is_one_clean_fork(workspace: Path) -> None:
    metadata = next((workspace / ".jp/conversations").glob("17800000040*")) / "metadata.json"
    metadata.write_text("{broken")
    out, _ = fork(workspace, "17800000040", "--last", "1", "--format", "json")
    directory = next(
        p
        for p in (workspace / ".jp/conversations").iterdir()
        if f"jp-c{p.name.split('-')[0]}" == json.loads(out)["fork"]
    )
    assert json.loads((directory / "metadata.json").read_text())["forked_from"]["conversation"] == "jp-c17800000040"


EXTRACTIVE = ("--cfg", "conversation.turn_summary.generate.model.id=builtin/extractive")
SAID = "the edit wrote nothing, but the newest turn's summary was saved before the editor opened"


def test_an_abort_after_the_summary_says_it_was_saved_and_undo_removes_it(workspace: Path) -> None:
    """Finding 4 of issue 20: ``EDITOR=false`` said "nothing written" after the summary was saved."""
    before = events_path(workspace).read_bytes()
    _, err = run(workspace, "false", "-i", CONV, code=1, before=EXTRACTIVE)
    assert err.endswith(
        f"aborted: the editor exited with status 1; {SAID} (`turnmark edit --undo jp-c{CONV}` removes it)\n"
    )
    assert events_path(workspace).read_bytes() != before
    out, _ = run(workspace, "false", "--undo", CONV)
    assert out == f"jp-c{CONV}: restored the copy kept before edit -i's summary of the newest turn; 0 more to undo\n"
    assert events_path(workspace).read_bytes() == before


def test_a_save_without_a_change_after_the_summary_says_so_in_json(workspace: Path, tmp_path: Path) -> None:
    out, _ = run(workspace, editor(tmp_path, "pass\n"), "-i", CONV, before=(*EXTRACTIVE, "--format", "json"))
    result = json.loads(out)
    assert result["outcome"] == "unchanged"
    assert result["message"].startswith(f"jp-c{CONV}: nothing changed; {SAID}")
    assert list(result["summarized"]) == ["p8q2r4b"]


@pytest.mark.parametrize(
    ("body", "outcome", "code"),
    [
        ("pass\n", "unchanged", 0),
        ('(target / "CONVERSATION").write_text("")\n', "aborted", 1),
        ("sys.exit(4)\n", "aborted", 1),
        ('(target / "CONVERSATION").write_text("no-such-file.md\\n")\n', "invalid", 1),
        (
            'request = sorted(target.glob("*-request.md"))[0]\nrequest.write_text(request.read_text() + "more")\n',
            "saved",
            0,
        ),
    ],
    ids=["unchanged", "empty-plan", "editor-failed", "invalid", "saved"],
)
def test_the_json_outcome_is_one_of_four_values(
    workspace: Path, tmp_path: Path, body: str, outcome: str, code: int
) -> None:
    out, _ = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary", code=code, before=("--format", "json"))
    result = json.loads(out)
    assert result["outcome"] == outcome
    keys = {
        "conversation",
        "action",
        "outcome",
        "message",
        "turns",
        "dropped",
        "summarized",
        "upgraded",
        "upgrade",
        "changes",
        "backfilled",
    }
    assert set(result) == keys
    assert (result["turns"] is not None) == (outcome == "saved")


COMPACTED = "17800000040"
SWAP = """
lines = (target / "CONVERSATION").read_text().split("\\n")
starts = [i for i, line in enumerate(lines) if line.startswith("# Turn")] + [len(lines)]
blocks = [lines[a:b] for a, b in zip(starts, starts[1:])]
order = ORDER
(target / "CONVERSATION").write_text("\\n".join(lines[: starts[0]] + sum((blocks[n] for n in order), [])))
"""


def compactions(workspace: Path) -> list[tuple[str, int, int]]:
    path = next((workspace / ".jp/conversations").glob(f"{COMPACTED}*")) / "events.json"
    events = json.loads(path.read_text())
    return [(e["event_id"], e["from_turn"], e["to_turn"]) for e in events if e["type"] == "compaction"]


def test_an_overlay_whose_turns_stay_together_follows_them(workspace: Path, tmp_path: Path) -> None:
    """Finding 3 of issue 20: reordering turns dropped a compaction without a word."""
    run(workspace, editor(tmp_path, SWAP.replace("ORDER", "[1, 0, 2, 3]")), "-i", COMPACTED, "--no-summary")
    assert compactions(workspace) == [("c0mpac1", 0, 1), ("c0mpac2", 3, 3)]
    project = CliRunner().invoke(app, ["--workspace", str(workspace), "project", COMPACTED], obj=Settings())
    assert "~summary0.request [Summary of previous conversation] (turns 0-1)" in project.stdout


def test_an_edit_that_drops_an_overlay_names_it_and_needs_yes(workspace: Path, tmp_path: Path) -> None:
    swap = editor(tmp_path, SWAP.replace("ORDER", "[0, 2, 1, 3]"))
    before = compactions(workspace)
    _, err = run(workspace, swap, "-i", COMPACTED, "--no-summary", code=1)
    assert "note: also dropped, though no line of it was deleted: compaction c0mpac1: turns 0-1, summary:" in err
    assert "(its turns no longer lie next to each other)" in err
    assert err.endswith(
        "aborted: the edit drops 1 entry no deleted line stood for (give --yes to save it anyway); nothing written\n"
    )
    assert compactions(workspace) == before
    out, _ = run(workspace, swap, "-i", COMPACTED, "--no-summary", "--yes", before=("--format", "json"))
    result = json.loads(out)
    assert (result["outcome"], [d["event_id"] for d in result["dropped"]]) == ("saved", ["c0mpac1"])
    assert compactions(workspace) == [("c0mpac2", 3, 3)]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("typed", "decision"), [("y\n", "save"), ("e\n", "edit"), ("\n", "abort"), ("", "abort")])
def test_on_a_terminal_the_user_is_asked(monkeypatch: pytest.MonkeyPatch, typed: str, decision: str) -> None:
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    asked = Terminal()
    monkeypatch.setattr(sys, "stderr", asked)
    dropped = (Dropped("c0mpac1", "compaction", "turns 0-1"),)
    assert rewriting._confirmation(False)(dropped) == decision
    assert asked.getvalue().startswith("save without it? [y]es, [e]dit the plan, [N]o: ")
    assert rewriting._confirmation(True)(dropped) == "save"


@pytest.mark.parametrize("plan_valid", [True, False], ids=["valid-save", "invalid-plan"])
def test_an_edit_folder_replaced_by_a_link_is_never_saved_from_or_written_through(
    workspace: Path, tmp_path: Path, plan_valid: bool
) -> None:
    """Finding 6 of issue 20: the save happened, exit 2, and the annotated plan went into the link's target."""
    elsewhere = tmp_path / "elsewhere"
    body = f"""
    import shutil
    request = sorted(target.glob("*-request.md"))[0]
    request.write_text(request.read_text().rstrip("\\\\n") + " (edited)\\\\n")
    if not {plan_valid}:
        plan_file.write_text("no-such-file.md\\\\n")
    shutil.copytree(target, "{elsewhere}")
    target.rename(target.with_name(target.name + ".moved"))
    target.symlink_to("{elsewhere}")
    """
    before = events_path(workspace).read_bytes()
    _, err = run(workspace, editor(tmp_path, body), "-i", CONV, "--no-summary", code=1)
    assert "was replaced (by a link or another folder) while the editor was open; nothing written" in err
    assert events_path(workspace).read_bytes() == before
    copy = {path.name: path.read_bytes() for path in elsewhere.iterdir()}
    assert not any(text.startswith(b"# ERROR") for text in copy.values())
    moved = next(scratch(workspace).glob("turnmark-edit-*.moved"))
    assert list(moved.iterdir()) == [], "the folder turnmark made is emptied where the editor put it"
    [link] = [path for path in scratch(workspace).glob("turnmark-edit-*") if path.suffix != ".moved"]
    assert link.is_symlink(), "the link is left alone"


@pytest.mark.parametrize("option", ["--first", "--last"])
def test_fork_of_zero_turns_is_a_usage_error(workspace: Path, option: str) -> None:
    """Finding 7 of issue 20: ``fork --first 0`` created an empty conversation and exited 0."""
    before = sorted((workspace / ".jp/conversations").iterdir())
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "fork", "17800000040", option, "0"], obj=Settings()
    )
    assert result.exit_code == 2
    assert result.stderr == f"error: {option} must be greater than or equal to 1 (see 'turnmark fork --help')\n"
    assert sorted((workspace / ".jp/conversations").iterdir()) == before


def test_fork_of_more_turns_than_there_are_forks_all_and_says_so(workspace: Path) -> None:
    out, err = fork(workspace, "17800000040", "--first", "9")
    assert "note: --first 9: jp-c17800000040 has 4 turns; all are forked\n" in err
    assert out.endswith("forked from jp-c17800000040 (turns 0-3)\n")
    out, _ = fork(workspace, "17800000040", "--first", "1")
    assert out.endswith("forked from jp-c17800000040 (turn 0)\n")


def test_strip_says_what_goes_and_undo_names_strip(workspace: Path) -> None:
    def turnmark(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(app, ["--workspace", str(workspace), *args], obj=Settings())
        assert result.exit_code == code, result.stderr
        return result.stdout

    said = "21 event_ids, 10 request_ids and 1 turn summary"
    assert (
        turnmark("strip", "17800000040", code=1)
        == f"jp-c17800000040  would be stripped: {said} would go (--apply writes it)\n"
    )
    assert turnmark("strip", "17800000040", "--apply").startswith(f"jp-c17800000040  stripped: {said} removed")
    assert turnmark("edit", "--undo", "17800000040") == (
        "jp-c17800000040: restored the copy kept before strip --apply; 0 more to undo\n"
    )


LEGACY = "17790000000"
MORE = 'request = sorted(target.glob("*-request.md"))[0]\nrequest.write_text(request.read_text() + "more")\n'


def legacy_files(workspace: Path) -> dict[str, bytes]:
    directory = pick_conversation(workspace, LEGACY).directories[0]
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.name != "metadata.json"}


def test_an_edit_of_a_legacy_conversation_says_it_upgraded_and_one_undo_gives_the_legacy_files_back(
    workspace: Path, tmp_path: Path
) -> None:
    before = legacy_files(workspace)
    out, _ = run(workspace, editor(tmp_path, MORE), "-i", LEGACY, "--no-summary", before=("--format", "json"))
    result = json.loads(out)
    assert (result["outcome"], result["upgraded"]) == ("saved", True)
    assert result["upgrade"] == {"ids_stamped": 9, "config_split_out": True, "turn_start_inserted": True}
    assert (
        "; upgraded from JP's older format (base_config.json split out, 9 event IDs stamped, a turn_start"
        in (result["message"])
    )
    said, _ = run(workspace, "false", "--undo", LEGACY)
    assert said.startswith(f"jp-c{LEGACY}: restored the copy kept before edit -i, in JP's older format")
    assert legacy_files(workspace) == before


def test_the_summary_edit_i_saves_first_upgrades_and_says_so_though_the_edit_is_aborted(workspace: Path) -> None:
    before = legacy_files(workspace)
    _, err = run(workspace, "false", "-i", LEGACY, code=1, before=EXTRACTIVE)
    assert f"{SAID}; upgraded from JP's older format (base_config.json split out, " in err
    run(workspace, "false", "--undo", LEGACY)
    assert legacy_files(workspace) == before


def test_fork_takes_a_title_of_its_own(workspace: Path) -> None:
    out, _ = fork(workspace, "17800000040", "--last", "1", "--title", "  Locks, once more  ", "--format", "json")
    created = json.loads(out)["fork"]
    folder = next((workspace / ".jp" / "conversations").glob(f"{created.removeprefix('jp-c')}*"))
    assert json.loads((folder / "metadata.json").read_text())["title"] == "Locks, once more"
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "fork", "17800000040", "--title", "two\nlines"], obj=Settings()
    )
    assert result.exit_code == 2
    assert "--title: give one line of text" in result.stderr
