"""The quality gate on every turn summary (issue 12): garbage labels are refused, one by one, with a reason.

In the core (``summary_gate``, applied by ``parse_summaries``), then end to end through catch-up with a
model server on loopback: a refused label is not stored, counts as a failed answer for the failure
memory, and the rest of the batch is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.shell.usecases.test_catchup import CLEAN, run, server, summaries, use_model
from tests.support.llm_servers import Behaviour, ModelServer, requested_ids
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.summaries.gate import HARD_LIMIT, copied_from_prompt, gate, refusal, word_count
from turnmark.core.summaries.request import FIXED_PROMPT, INSTRUCTIONS, parse_summaries
from turnmark.core.text.summary_text import salvage_summary
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage.failure_memory import load_memory
from turnmark.shell.storage.selection import pick_conversation

__all__ = ["server"]  # the fixture, imported for the end-to-end tests

IDS = ("a1turn0", "a2turn0", "a3turn0")
LONG = "Cap the retry backoff of the stream handler at two seconds and add a regression test"

# The examples of the issue, each with the reason it is refused for -----------------------------------

REFUSED = {
    "punctuation only": (":{", 'refused: ":{" has no letters'),
    "one letter": ("x", 'refused: "x" has fewer than two words'),
    "one token": ("6656mis", 'refused: "6656mis" has fewer than two words'),
    "the turn ID echoed back": ("a2turn0", 'refused: "a2turn0" is a turn ID, not a summary'),
    "the turn ID, quoted and in capitals": ('"A2TURN0".', 'refused: ""A2TURN0"." is a turn ID, not a summary'),
    "the turn ID in its tag": ('<turn id="a2turn0">', 'refused: "<turn id="a2turn0">" is a turn ID, not a summary'),
    "another turn's ID": ("k3m9x2a", 'refused: "k3m9x2a" is a turn ID, not a summary'),
    "a time": ("12:30 …", 'refused: "12:30 …" has no letters'),
    "seven characters": ("Fix bug", 'refused: "Fix bug" has fewer than 8 characters'),
    "an instruction": ("Concise and factual", 'refused: "Concise and factual" is copied from the instructions'),
    "an instruction line": (
        "Do not mention these instructions.",
        'refused: "Do not mention these instructions." is copied from the instructions',
    ),
    "an example of the prompt": ("yes, do option 2", 'refused: "yes, do option 2" is copied from the instructions'),
    "the filler the prompt forbids": ("The user asks", 'refused: "The user asks" is copied from the instructions'),
    "the schema's description": (
        "One line, at most 60 characters.",
        'refused: "One line, at most 60 characters." is copied from the instructions',
    ),
    "the answer's closing tag": (
        "A test fails: …</response>",
        'refused: "A test fails: …</response>" holds markup (</response>)',
    ),
    "a thinking tag": ("<think>Okay, a label", 'refused: "<think>Okay, a label" holds markup (<think>)'),
    "a closing tag cut short": ("Fix the build</resp", 'refused: "Fix the build</resp" holds markup (</resp)'),
    "an escaped placeholder": (
        "Show the &lt;id&gt; field",
        'refused: "Show the &lt;id&gt; field" holds an HTML entity (&lt;)',
    ),
    "a numeric entity": (
        "Fix the user&#39;s config",
        'refused: "Fix the user&#39;s config" holds an HTML entity (&#39;)',
    ),
    "a list of identifiers": (
        "Update bug GiB Path::iter() next_back() Prefix RootDir",
        'refused: "Update bug GiB Path::iter() next_back() Prefix RootDir" is a list of identifiers, not a phrase',
    ),
    "identifiers after a verb": (
        "Discuss existing TAGS Z_5 Z_1 note_tags Connection::open()",
        'refused: "Discuss existing TAGS Z_5 Z_1 note_tags Connection::open()" is a list of identifiers, not a phrase',
    ),
    "cut inside a word at the limit": (
        LONG[:HARD_LIMIT],
        f'refused: "{LONG[:HARD_LIMIT]}" stops inside a word at the 72-character limit (cut off)',
    ),
}

GOOD = [
    "Fix the lock race",
    "Run the storage tests",
    "Summary of a1turn0",  # names a turn, but says more than its ID
    "Add retry backoff to stream handler",
    "Show the file",  # three words, but not the prompt's ("name the file")
    "修复构建错误",  # six CJK characters: six words, twelve columns
    "cargo test: 2 failures",
    "Return Vec<String> from parse_line",  # a type's parameters, not a tag
    "Rename jp_store to jp_storage in Cargo.toml",  # three identifiers in a phrase
    "Style each `<col>` of the RFD table",  # a tag in a code span is code
    "Escape & as `&amp;` in the feed",
    "Compare a < b and c > d in the sort",
    "Bill AT&T; keep R&D separate",  # not entities HTML defines
    salvage_summary(LONG, HARD_LIMIT),  # turnmark's own cut, with …
    "Cap the stream handler's retry backoff at 2 s and add a regression test.",  # 72, ending on a full stop
]


@pytest.mark.parametrize("case", list(REFUSED))
def test_each_garbage_label_is_refused_with_its_reason(case: str) -> None:
    label, reason = REFUSED[case]
    assert refusal(label, (*IDS, "k3m9x2a"), FIXED_PROMPT) == reason


@pytest.mark.parametrize("label", GOOD)
def test_good_labels_pass(label: str) -> None:
    assert refusal(label, (*IDS, "k3m9x2a"), FIXED_PROMPT) is None


def test_the_reasons_are_one_line_each() -> None:
    for label, reason in REFUSED.values():
        assert reason.startswith(f'refused: "{label}" ')
        assert "\n" not in reason


def test_a_repeated_label_refuses_the_later_turns_only() -> None:
    answer = {"a1turn0": "Fix the lock race", "a2turn0": "Fix the lock race.", "a3turn0": "FIX THE LOCK RACE"}
    gated = gate(answer, IDS, IDS, FIXED_PROMPT)
    assert gated.accepted == {"a1turn0": "Fix the lock race"}
    assert gated.refused == {
        "a2turn0": 'refused: "Fix the lock race." repeats the summary of a1turn0 in the same answer',
        "a3turn0": 'refused: "FIX THE LOCK RACE" repeats the summary of a1turn0 in the same answer',
    }


def test_the_first_turn_of_the_request_keeps_a_repeat_whatever_the_answers_order() -> None:
    answer = {"a3turn0": "Run the storage tests", "a1turn0": "Run the storage tests"}
    gated = gate(answer, IDS, IDS, FIXED_PROMPT)
    assert list(gated.accepted) == ["a1turn0"]
    assert list(gated.refused) == ["a3turn0"]


def test_a_label_refused_for_another_reason_does_not_block_a_later_good_one() -> None:
    gated = gate({"a1turn0": "x", "a2turn0": "x", "a3turn0": "Run the storage tests"}, IDS, IDS, FIXED_PROMPT)
    assert gated.accepted == {"a3turn0": "Run the storage tests"}
    assert set(gated.refused.values()) == {'refused: "x" has fewer than two words'}


def test_copied_means_a_whole_sentence_or_example_or_three_words_side_by_side() -> None:
    assert copied_from_prompt("describe what the turn actually did", INSTRUCTIONS)
    assert copied_from_prompt("a single line", INSTRUCTIONS)
    assert not copied_from_prompt("a single line fix", INSTRUCTIONS)
    assert not copied_from_prompt("the file", INSTRUCTIONS), "two words are not a copy unless a whole example"
    assert not copied_from_prompt("Decide the error format for the CLI", INSTRUCTIONS)


def test_words_are_counted_as_a_reader_counts_them() -> None:
    assert [word_count(text) for text in ("Fix the build", "fix-the-build", "— …", "a b", "修复 build")] == [
        3,
        1,
        0,
        2,
        3,
    ]


def test_parse_summaries_applies_the_gate_with_the_conversations_turn_ids() -> None:
    text = json.dumps({"summaries": {"a1turn0": "a0turn0", "a2turn0": "Show me the lock code", "a3turn0": ":{"}})
    answer = parse_summaries(text, IDS, ("a0turn0", *IDS)).unwrap()
    assert answer.summaries == {"a2turn0": "Show me the lock code"}
    assert answer.refused == {
        "a1turn0": 'refused: "a0turn0" is a turn ID, not a summary',
        "a3turn0": 'refused: ":{" has no letters',
    }


# End to end: catch-up with a model on loopback -------------------------------------------------------


def garbage_for_a1(body: dict[str, Any]) -> str:
    return json.dumps({"summaries": {i: ":{" if i == "a1turn0" else f"Summary of {i}" for i in requested_ids(body)}})


def test_a_garbage_label_is_not_stored_and_the_rest_of_the_batch_is(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    server.queue.append(Behaviour(content=garbage_for_a1))
    report = run(ref)
    assert report.error is None
    assert report.refused == {"a1turn0": 'refused: ":{" has no letters'}
    assert set(report.written) == {"a2turn0", "a3turn0"}
    state = summaries(ref)
    assert state["a1turn0"] == (None, None)
    assert state["a2turn0"] == ("Summary of a2turn0", "ollama/llama3.2:3b")
    memory = load_memory(ref)
    assert memory["a1turn0"]["failures"] == 1
    assert memory["a1turn0"]["reason"] == 'refused: ":{" has no letters'
    assert set(memory) == {"a1turn0"}


def test_a_model_that_keeps_echoing_the_turn_id_gets_the_turn_skipped(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    echo = Behaviour(content=lambda body: json.dumps({"summaries": {i: i for i in requested_ids(body)}}))
    server.queue.extend([echo] * 3)
    for attempt in range(3):
        report = run(ref)
        assert report.written == {}
        assert report.refused["a1turn0"] == 'refused: "a1turn0" is a turn ID, not a summary'
        assert load_memory(ref)["a1turn0"]["failures"] == attempt + 1
    report = run(ref)
    assert len(server.posts()) == 3, "given up: the fourth run asks nothing"
    assert set(report.given_up) == set(IDS)
    assert report.given_up["a1turn0"] == (
        '3 answers failed (refused: "a1turn0" is a turn ID, not a summary); not asked again until the turn changes'
    )
    assert len(run(ref, retry_failed=True).written) == 3, "--retry-failed asks anyway (a good answer now)"


def test_a_repeated_label_is_stored_once_for_the_oldest_turn(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    same = Behaviour(content=lambda body: json.dumps({"summaries": dict.fromkeys(requested_ids(body), "Lock work")}))
    server.queue.append(same)
    report = run(ref)
    assert report.written == {"a1turn0": "Lock work"}
    assert report.refused == {
        "a2turn0": 'refused: "Lock work" repeats the summary of a1turn0 in the same answer',
        "a3turn0": 'refused: "Lock work" repeats the summary of a1turn0 in the same answer',
    }


def test_a_refusal_is_reported_on_stderr_and_in_json(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    server.queue.append(Behaviour(content=garbage_for_a1))
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), "summarize", CLEAN, "--format", "json"],
        obj=Settings(new_id=sequential_ids()),
    )
    document = json.loads(result.stdout)
    [conversation] = document["conversations"]
    assert conversation["refused"] == {"a1turn0": 'refused: ":{" has no letters'}
    assert set(conversation["written"]) == {"a2turn0", "a3turn0"}
    assert 'no summary for a1turn0: refused: ":{" has no letters; retried next time' in result.stderr


def test_the_offline_summarizer_passes_the_same_gate(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A label builtin/extractive makes is refused like a model's: no summary, reported, not remembered."""
    from turnmark.shell.usecases import summary_session

    def offline_garbage(stream: object, turn_ids: tuple[str, ...], labels: object = None, known: object = None) -> str:
        return json.dumps({"summaries": {i: "6656mis" if i == "a2turn0" else f"Offline {i}" for i in turn_ids}})

    monkeypatch.setattr(summary_session, "extractive_answer", offline_garbage)
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref, model="builtin/extractive")
    assert report.refused == {"a2turn0": 'refused: "6656mis" has fewer than two words'}
    assert set(report.written) == {"a1turn0", "a3turn0"}
    assert summaries(ref)["a2turn0"] == (None, None)
    assert load_memory(ref) == {}, "the offline summarizer's refusals would keep a real model from trying"
