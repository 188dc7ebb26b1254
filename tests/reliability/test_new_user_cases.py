"""What a new user ran into (issue 19, item 10), each tried again through the real command line.

a. ``query`` with a model that cannot be used at all (no API key, a base URL that is not a URL) must
   refuse in one line before writing anything: no request-only turn, no background summary.
b. ``check`` must report the orphaned tool halves ``repair`` finds, and count them as problems.
c. ``summarize --dry-run`` must predict that a real run would refuse to save, with the save's reason.
d. That refusal must name the command that fixes it (``turnmark repair``), and following it must work.
e. The summary gate must refuse markup, HTML entities and labels cut inside a word at the length limit.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.shell.usecases.test_catchup import server
from tests.support.llm_servers import Behaviour, ModelServer, requested_ids

from .hostile_cli import Tally, invoke

__all__ = ["server"]  # the fixture: a loopback model server per test

REPAIR_FIXTURES = REPO / "fixtures" / "repair-workspace"
ORPHANS = "17810000020"
"""A tool call with no result and a result with no call; every link resolves."""
COPIED = "17810000010"
"""Two answers link to a request ID two entries carry; each turn holds one copy (``repair --apply`` fixes it)."""
AMBIGUOUS = "17800000030"
"""An answer links to a copied request ID, and its turn holds both copies (``repair -i`` decides)."""
UNSUMMARIZED = "17800000040"
"""Three turns without a summary: a1turn0, a2turn0, a3turn0."""
OLLAMA = "ollama/llama3.2:3b"
ANTHROPIC = "anthropic/claude-haiku-4-5"
CUT = "Cap the retry backoff of the stream handler at two seconds and add a regression test"[:72]
"""What a grammar-constrained server sends when the label hits the schema's 72 characters mid-word."""
GARBAGE = {"a1turn0": "A test fails: …</response>", "a2turn0": "Show the &lt;id&gt; field", "a3turn0": CUT}


def files(*roots: Path) -> dict[str, bytes]:
    """Every file under ``roots`` with its bytes (the lock folder included)."""
    return {str(path): path.read_bytes() for root in roots for path in sorted(root.rglob("*")) if path.is_file()}


def events_of(workspace: Path, conversation: str) -> Any:
    return json.loads(next((workspace / ".jp" / "conversations").glob(f"{conversation}-*/events.json")).read_text())


@pytest.fixture
def repairs(tmp_path: Path, user_data: Path) -> Path:
    root = tmp_path / "repairs"
    shutil.copytree(REPAIR_FIXTURES, root)
    return root


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "new-user cases: `query` with a model that cannot be used, `check` against `repair`, "
        "`summarize --dry-run` on an unsavable conversation, the save refusal's advice, the summary gate",
        "nothing written by a `query` that cannot ask; `check` and `repair` agree; the dry run gives the save's "
        "reason; the refusal names `turnmark repair`; markup, entities and cut labels refused",
    )
    yield tally
    tally.publish("5 new-user cases through the command line, on copies of the fixture workspaces")


def test_a_query_with_an_unusable_model_writes_nothing(
    workspace: Path, user_data: Path, server: ModelServer, tally: Tally
) -> None:
    summaries_on_the_server = (
        "--cfg",
        f"conversation.turn_summary.generate.model.id={OLLAMA}",
        "--cfg",
        f"providers.llm.ollama.base_url={server.url}",
    )
    tries = {
        "no API key": ("--model", ANTHROPIC, "--cfg", f"providers.llm.anthropic.base_url={server.url}"),
        "a base URL that is not a URL": ("--model", OLLAMA, "--cfg", "providers.llm.ollama.base_url=localhost:11434"),
    }
    problems: list[str] = []
    for name, model in tries.items():
        before = files(workspace, user_data)
        outcome = invoke(workspace, *summaries_on_the_server, "query", UNSUMMARIZED, "hello?", *model, environ={})
        if outcome.code == 0:
            problems.append(f"{name}: exit 0")
        if len(outcome.err.splitlines()) != 1 or "nothing was written" not in outcome.err:
            problems.append(f"{name}: not one line saying nothing was written: {outcome.err!r}")
        if files(workspace, user_data) != before:
            problems.append(f"{name}: the workspace changed")
        if server.posts():
            problems.append(f"{name}: {len(server.posts())} requests reached a model (a background summary?)")
    tally.case("query with an unusable model", problems)
    assert not problems, problems


def test_check_reports_the_orphaned_tool_halves_repair_finds(repairs: Path, tally: Tally) -> None:
    text = invoke(repairs, "check", ORPHANS)
    checked = json.loads(invoke(repairs, "check", ORPHANS, "--format", "json").out)["conversations"][0]
    planned = json.loads(invoke(repairs, "repair", ORPHANS, "--format", "json").out)["conversations"][0]
    halves = checked.get("orphaned_tool_halves", [])
    found = [(half["index"], half["event_id"], half["type"], half["why"]) for half in halves]
    expected = [(p["index"], p["event_id"], p["type"], p["why"]) for p in planned["problems"]]
    problems: list[str] = []
    if text.code != 1 or not text.out.startswith(f"jp-c{ORPHANS}  PROBLEMS"):
        problems.append(f"check says {text.out.splitlines()[:1]}, exit {text.code}")
    if f"to fix: turnmark repair jp-c{ORPHANS}" not in text.out:
        problems.append("no `turnmark repair` hint")
    if len(expected) != 2 or found != expected:
        problems.append(f"check found {found}, repair {expected}")
    if any(why not in text.out for *_, why in expected):
        problems.append("the text report does not say what repair says")
    if checked["ok"] is not False:
        problems.append("JSON ok is not false")
    tally.case("check against repair", problems)
    assert not problems, problems


def test_a_dry_run_predicts_the_save_refusal(workspace: Path, tally: Tally) -> None:
    before = files(workspace)
    dry = invoke(workspace, "summarize", AMBIGUOUS, "--dry-run")
    dry_json = json.loads(invoke(workspace, "summarize", AMBIGUOUS, "--dry-run", "--format", "json").out)
    unchanged = files(workspace) == before
    real = json.loads(invoke(workspace, "summarize", AMBIGUOUS, "--format", "json").out)
    predicted = dry_json["conversations"][0].get("save_refused")
    refused = real["conversations"][0]["error"]
    problems: list[str] = []
    if dry.code != 1 or "a real run would not save this conversation: " not in dry.out:
        problems.append(f"the dry run does not say it (exit {dry.code}): {dry.out!r}")
    if not refused or predicted != refused:
        problems.append(f"predicted {predicted!r}, the real run said {refused!r}")
    if not unchanged:
        problems.append("the dry run wrote")
    tally.case("summarize --dry-run on an unsavable conversation", problems)
    assert not problems, problems


def test_the_save_refusal_names_the_repair_that_fixes_it(workspace: Path, repairs: Path, tally: Tally) -> None:
    undecided = invoke(workspace, "summary", "set", AMBIGUOUS, "0", "Plan the cache fix")
    fixable = invoke(repairs, "summary", "set", COPIED, "0", "Fix the flaky test")
    problems: list[str] = []
    if f"to fix: turnmark repair -i jp-c{AMBIGUOUS}" not in undecided.err:
        problems.append(f"a refusal needing a decision does not name `repair -i`: {undecided.err!r}")
    command = re.search(r"to fix: turnmark (repair \S+ --apply)", fixable.err)
    if command is None or "events.json so" in fixable.err + undecided.err:
        problems.append(f"a refusal does not name `repair --apply` (or still says to edit by hand): {fixable.err!r}")
    else:
        invoke(repairs, *command.group(1).split())
        again = invoke(repairs, "summary", "set", COPIED, "0", "Fix the flaky test")
        if again.code != 0:
            problems.append(f"after `turnmark {command.group(1)}` the save is still refused: {again.err!r}")
    tally.case("the save refusal's advice", problems)
    assert not problems, problems


def test_the_gate_refuses_markup_entities_and_cut_labels(workspace: Path, server: ModelServer, tally: Tally) -> None:
    server.queue.append(
        Behaviour(content=lambda body: json.dumps({"summaries": {i: GARBAGE[i] for i in requested_ids(body)}}))
    )
    outcome = invoke(
        workspace, "summarize", UNSUMMARIZED, "--model", OLLAMA, "--cfg", f"providers.llm.ollama.base_url={server.url}"
    )
    stored = {entry["event_id"]: entry.get("summary") for entry in events_of(workspace, UNSUMMARIZED)}
    reasons = {
        "a1turn0": "holds markup (</response>)",
        "a2turn0": "holds an HTML entity (&lt;)",
        "a3turn0": "stops inside a word at the 72-character limit (cut off)",
    }
    problems = [f"{turn} stored {stored[turn]!r}" for turn in GARBAGE if stored.get(turn)]
    for turn, reason in reasons.items():
        line = f'no summary for {turn}: refused: "{GARBAGE[turn]}" {reason}; retried next time'
        if line not in outcome.err:
            problems.append(f"stderr lacks {line!r}")
    tally.case("the summary gate", problems)
    assert not problems, (problems, outcome.describe())
