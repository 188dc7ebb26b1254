"""The offline labeller (issue 32): the user's own words when they carry the turn, a follow-up resolved from
what it answers and what the turn did, thanks said as thanks; distinct labels; the label benchmark's figures."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.streams import TS, call, message, request, result, stream_of, turn
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.payloads import Payload, ToolCallRequest
from turnmark.core.summaries import extractive, label_text
from turnmark.core.summaries.extractive import extractive_labels, is_follow_up, stated_task, turn_facts
from turnmark.core.summaries.gate import refusal
from turnmark.core.summaries.label_text import VERBS, base_form, imperative, links_as_text, plain, shorten
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.request import FIXED_PROMPT, MAX_CHARS

REPO = Path(__file__).resolve().parents[3]


def labels(*steps: Payload) -> list[str | None]:
    stream = ensure_first_turn_start(stream_of(*steps))
    found = extractive_labels(stream.turns(), excluded_ids(stream))
    return [found.get(str(t.id())) for t in stream.turns()]


def edit(call_id: str, path: str, tool: str = "fs_modify_file") -> list[Payload]:
    return [ToolCallRequest(TS, call_id, tool, {"path": path}), result(call_id)]


def words_of(text: str) -> list[str]:
    return [word.strip(".'") for word in re.findall(r"[\w@.#/'-]+", plain(text).lower().replace("`", ""))]


def runs_in(label: str, text: str) -> bool:
    """Every word of ``label`` (but a cut's ``…``) comes from ``text``, side by side as ``text`` has them."""
    said = " ".join(words_of(text))
    return " ".join(words_of(label.removesuffix("…"))) in said


# Keeps the user's words ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "lets change the parser such that it also handles the nested table part",
            "Change the parser such that it also handles the nested…",
        ),
        ("Can we please rename the `cache` folder to `store`?", "Rename the cache folder to store"),
        ("I want you to go ahead and port the retry loop, starting with the client.", "Port the retry loop"),
        ("# Make the settings page usable on phones\n#projects/app #task\n\nIt is cramped.", None),
    ],
)
def test_a_stated_task_keeps_the_users_own_words(request_text: str, expected: str | None) -> None:
    """Asking words go ("lets", "can we please", "I want you to go ahead and"), nothing inside the phrase
    does, a long one is cut at a word with an ellipsis."""
    label = labels(turn(), request(request_text), message("Done."))[0]
    assert label is not None
    assert len(label) <= MAX_CHARS
    assert runs_in(label, request_text), label
    if expected is not None:
        assert label.startswith(expected.removesuffix("…")), label


def test_a_task_that_names_nothing_is_read_with_the_sentence_that_does() -> None:
    assert stated_task("The indexer takes 5 s on a cold cache. Can you find out why?") == (
        "The indexer takes 5 s on a cold cache; find out why"
    )


def test_an_article_names_nothing() -> None:
    """ "take a look at it" names nothing: the sentence that names the subject comes with it."""
    assert stated_task("Can you take a look at it? The parser drops the last row.") == (
        "The parser drops the last row; take a look at it"
    )


# No invented verb ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_text",
    [
        "Not sure what happened, but with `9f3e2ab` merged, running `make dist` and then `tool --version` "
        "prints `tool 0.2.0-9f3e2ab`.\n\nWhere did the build date go?",
        "> **2. Session state**\n\nSession state changes in the next release. Tell me if that matters here.",
        "Even with the newer plugin, the syntax colours are still not available.",
    ],
)
def test_a_request_without_a_task_gets_no_verb_it_did_not_use(request_text: str) -> None:
    """A problem report, a question or an answer to a quoted heading is labelled by the user's sentence: no
    "Add", "Fix" or "Explain" put in front, no commit hash or identifiers after a colon."""
    steps: list[Payload] = [turn(), request(request_text), *edit("c1", "build.rs")]
    label = labels(*steps, message("Trimmed the newline from the hash."))[0]
    assert label is not None
    assert runs_in(label, request_text), label
    assert "9f3e2ab" not in label
    assert ":" not in label


# Follow-ups resolved -------------------------------------------------------------------------------


def test_continue_is_resolved_by_what_the_turn_did() -> None:
    steps: list[Payload] = [turn(), request("Add retry backoff to the stream handler"), message("Added.")]
    steps += [turn(), request("continue"), message("Also capped the backoff at 2 s and added a test.")]
    assert labels(*steps)[1] == "Cap the backoff at 2 s and add a test"


def test_yes_is_resolved_by_the_offer_it_accepts() -> None:
    steps: list[Payload] = [turn(), request("Why does the init command fail on a fresh machine?")]
    steps += [message("The folder is never created. Want me to write up the fix as a minimal change?")]
    steps += [turn(), request("yes"), *edit("c1", "fs.rs"), message("Done. Red, green, refactor.")]
    assert labels(*steps)[1] == "Write up the fix as a minimal change"


def test_a_short_pointing_request_is_resolved_by_the_offer() -> None:
    steps: list[Payload] = [turn(), request("What if the two copies disagree?")]
    steps += [message("Take the newer one. Want me to add a section on conflicts to the design doc?")]
    steps += [turn(), request("agreed on all of that, please add it"), *edit("c1", "design.md"), message("Done.")]
    assert labels(*steps)[1] == "Add a section on conflicts to the design doc"


@pytest.mark.parametrize(
    ("pick", "expected"),
    [
        ("go with option B", "Move bad files to a trash folder (option B)"),
        ("option b", "Move bad files to a trash folder (option B)"),
        ("Go ahead with 2", "Stem words (item 2)"),
    ],
)
def test_a_pick_is_resolved_by_the_option_or_item_it_names(pick: str, expected: str) -> None:
    answer = (
        "Two ways:\n\n**Option A: Refuse to start** — print the error.\n\n"
        "**Option B: Move bad files to a trash folder** — keep running.\n\n"
        "Or smaller steps:\n\n1. **Rank by recency** — newer first.\n2. **Stem words** — match plurals."
    )
    steps: list[Payload] = [turn(), request("What should happen to files that fail to load?"), message(answer)]
    steps += [turn(), request(pick), message("Here it is.")]
    assert labels(*steps)[1] == expected


def test_what_comes_next_is_resolved_by_the_steps_the_answer_lists() -> None:
    answer = "Steps 1 and 2 are done. Left:\n\n3. **Vector index** — build it.\n4. **Embedding cache** — keep."
    found = labels(turn(), request("what is the next step?"), message(answer))
    assert found == ["Next steps: Vector index, Embedding cache"]


# Thanks labelled as thanks --------------------------------------------------------------------------


def test_thanks_for_an_answer_is_labelled_as_thanks() -> None:
    explained: list[Payload] = [turn(), request("What does build.rs do?"), message("It embeds the build date.")]
    label = labels(*explained, turn(), request("thanks!"), message("You're welcome."))[1]
    assert label is not None
    assert label.startswith("Thanks"), label
    assert "build.rs" in label
    assert label.split(" ")[0] not in ("Thank", "Explain")


def test_approval_of_a_change_approves_it() -> None:
    steps: list[Payload] = [turn(), request("Rename jp_store to jp_storage everywhere"), *edit("c1", "Cargo.toml")]
    steps += [message("Renamed."), turn(), request("looks good, thanks"), message("Glad it helps.")]
    assert labels(*steps)[1] == "Approve renaming jp_store to jp_storage everywhere"


def test_a_thanks_turn_that_did_work_is_labelled_by_the_work() -> None:
    steps: list[Payload] = [turn(), request("Fix the lock race"), message("Fixed.")]
    steps += [turn(), request("thanks, now continue"), *edit("c1", "lock.rs"), message("Added a regression test.")]
    assert labels(*steps)[1] == "Add a regression test"


# The text rules ------------------------------------------------------------------------------------


def test_past_tense_becomes_imperative() -> None:
    assert [base_form(word) for word in ("Added", "capped", "moved", "renamed", "Fixed", "staged", "table")] == [
        "Add", "Cap", "Move", "Rename", "Fix", "Stage", None,
    ]  # fmt: skip
    assert imperative("Capped the backoff and added a test.") == "Cap the backoff and add a test"
    assert imperative("The backoff is capped.") is None


def test_material_that_is_not_prose_is_left_out() -> None:
    text = "> what you said\nSee [the docs](https://x.y/z) at https://x.y\n```\ncode\n```\n#tag #idea"
    assert plain(text).split() == ["See", "the", "docs", "at"]


def test_a_cut_is_at_a_word_with_an_ellipsis() -> None:
    assert shorten("Rename alpha bravo charlie delta echo foxtrot golf hotel india", 40) == (
        "Rename alpha bravo charlie delta echo…"
    )
    assert shorten("Rename alpha", 40) == "Rename alpha"


@pytest.mark.parametrize(
    ("text", "follow_up"),
    [("yes, go ahead", True), ("go with option B", True), ("thanks!", True), ("please add it", True)],
)
def test_short_replies_are_follow_ups(text: str, follow_up: bool) -> None:
    assert is_follow_up(text) is follow_up


def test_two_turns_never_get_the_same_label() -> None:
    steps: list[Payload] = []
    for _ in range(3):
        steps += [turn(), request("Run the storage tests"), message("All 12 pass.")]
    found = labels(*steps)
    assert found[0] == "Run the storage tests"
    assert len(set(found)) == 3
    assert all(label is not None and label.startswith("Run the storage tests") for label in found)


def test_labels_do_not_depend_on_which_turns_are_already_summarized() -> None:
    steps: list[Payload] = [turn(), request("Run the tests"), message("ok")] * 2
    steps += [turn(), request("continue"), message("Done.")]
    stream = ensure_first_turn_start(stream_of(*steps))
    first = extractive_labels(stream.turns(), excluded_ids(stream))
    labelled = stream.set_turn_summary(str(stream.turns()[0].id()), "Something else entirely").unwrap()
    assert extractive_labels(labelled.turns(), excluded_ids(labelled)) == first


def test_a_turn_that_only_ran_tools_names_them_and_their_failures() -> None:
    steps: list[Payload] = [turn(), request("ok"), call("c1", "cargo_test"), result("c1", "1 failed", True)]
    assert turn_facts(stream_of(*steps).turns()[0]).failed == ("cargo_test",)
    assert labels(*steps)[0] == "Run cargo_test (failed)"


def test_every_label_passes_the_gate(corpus_or_fixture_streams: list[ConversationStream]) -> None:
    for stream in corpus_or_fixture_streams:
        found = extractive_labels(stream.turns(), excluded_ids(stream))
        ids = [str(t.id()) for t in stream.turns()]
        assert [
            (label, refusal(label, ids, FIXED_PROMPT)) for label in found.values() if refusal(label, ids, FIXED_PROMPT)
        ] == []


@pytest.fixture
def corpus_or_fixture_streams() -> list[ConversationStream]:
    from tests.conftest import corpus_files
    from turnmark.core.stream.event_ids import sequential_ids

    folders = sorted((REPO / "fixtures").glob("*/.jp/conversations/*"))
    corpus = Path(__file__).resolve().parents[4] / "shared" / "corpus" / ".jp" / "conversations"
    folders += sorted(corpus.glob("*")) if corpus.is_dir() else []
    streams = []
    for folder in folders:
        if (folder / "events.json").is_file():
            streams.append(
                ensure_first_turn_start(
                    ConversationStream.from_json(*corpus_files(folder), new_id=sequential_ids()).unwrap()
                )
            )
    return streams


def test_the_label_benchmark_holds_its_figures() -> None:
    """The figures ``bench/labels.py`` prints: at most 1 label in 10 names three identifiers or more, no
    duplicate labels in a conversation, no label cut inside a word, the fixtures well above the fallback; on
    the held-out corpus turns the labeller is no worse than the fallback on average and at most 1 label in 10
    is worse by more than 0.3 (the issue's gain of 0.08 there is not reached: docs/performance.md). The
    corpus part is skipped without a corpus. Only figures are compared, so a failure shows no turn."""
    sys.path.insert(0, str(REPO))
    from bench.labels import GAIN_TARGET, READABLE_SHARE, REFERENCES, WORSE_SHARE, mean_of, score, worse_share

    figures = score(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"])
    fixtures, real = figures.of(("fixture",)), figures.of(("corpus",), "held-out")
    fixture_gain = round(mean_of(fixtures) - mean_of(fixtures, fallback=True), 3)
    counts = (
        len(fixtures),
        figures.heavy(None) <= READABLE_SHARE * len(figures.rows),
        figures.duplicates,
        figures.cuts,
    )
    assert counts == (31, True, 0, 0)
    assert fixture_gain >= GAIN_TARGET
    if real:
        gain, worse = round(mean_of(real) - mean_of(real, fallback=True), 3), round(worse_share(real), 3)
        assert gain >= 0.0
        assert worse <= WORSE_SHARE


def test_the_halves_are_whole_conversations_chosen_by_their_id() -> None:
    """The development and held-out halves follow the rule fixed before any rule of the labeller changed
    (``split`` in the references): by the SHA-256 of the conversation ID, each to the half with fewer turns."""
    references = json.loads((REPO / "bench" / "reference_labels.json").read_text(encoding="utf-8"))
    unseen = [turn["half"] for c in references["conversations"] if c["workspace"] == "unseen" for turn in c["turns"]]
    assert set(unseen) == {"held-out"}
    for real in (True, False):
        group = [
            c
            for c in references["conversations"]
            if c["workspace"] != "unseen" and (c["workspace"] == "corpus") == real
        ]
        counts = {"development": 0, "held-out": 0}
        for conversation in sorted(group, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest()):
            half = "development" if counts["development"] <= counts["held-out"] else "held-out"
            assert {turn["half"] for turn in conversation["turns"]} == {half}, conversation["id"]
            counts[half] += len(conversation["turns"])
        assert abs(counts["development"] - counts["held-out"]) <= 1


SUMMARIZER = ("extractive.py", "label_text.py")
OWN_WORDS = {"approve", "thank", "thanks"}
"""The words of the labels the labeller writes when a turn names nothing of its own (a thanks, an
approval): its vocabulary, not a word taken from a turn."""


def rule_strings(path: Path) -> list[str]:
    """The string constants of a module that are rules (regular expressions, word lists), not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    documented = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | documented
    ]


def test_no_rule_names_a_word_of_a_benchmark_turn() -> None:
    """The references stay out of the rules: a word of a reference label that is distinctive (found in the
    text of at most two of the benchmark's conversations) appears in no rule of the summarizer. The verbs a
    task opens with (``VERBS``: "audit", "port", "upgrade") are English's, not a turn's, and are not counted;
    references of a workspace that is not available are not checked (their words' spread is unknown)."""
    sys.path.insert(0, str(REPO))
    from bench.labels import REFERENCES, labels_of, words, workspace_root

    references = json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"]
    texts: dict[str, set[str]] = {}
    for name in {conversation["workspace"] for conversation in references}:
        root = workspace_root(name)
        if root is None:
            continue
        for conversation, (_, _, found) in labels_of(root).items():
            texts[f"{name}/{conversation}"] = {word for text in found for word in re.findall(r"[a-z0-9]+", text)}
    if not any(name.startswith("corpus/") for name in texts):
        pytest.skip("the real corpus is not available (set TURNMARK_CORPUS): only the fixtures' words are checked")
    spread: dict[str, int] = {}
    for found in texts.values():
        for word in found:
            spread[word] = spread.get(word, 0) + 1
    loaded = {name.rsplit("/", 1)[0] for name in texts}
    distinctive = {
        part
        for conversation in references
        if conversation["workspace"] in loaded
        for turn in conversation["turns"]
        for word in words(turn["label"])
        for part in re.findall(r"[a-z0-9]+", word)
        if len(part) >= 4 and spread.get(part, 0) <= 2 and part not in OWN_WORDS | VERBS
    }
    rules = " ".join(
        text.lower() for module in SUMMARIZER for text in rule_strings(REPO / "core" / "summaries" / module)
    )
    named = sorted(word for word in distinctive if re.search(rf"(?<![a-z0-9]){word}(?![a-z0-9])", rules))
    assert len(distinctive) > 30
    assert named == [], ", ".join(named)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="[]()ab \n\\", max_size=60))
def test_links_as_text_is_the_link_regex_in_one_pass(text: str) -> None:
    """The one-pass link rewrite equals the regex it stands for (``_LINK.sub``) on any text of the characters
    that matter to it."""
    assert links_as_text(text) == label_text._LINK.sub(r"\1", text)


def test_plain_of_a_message_of_many_unclosed_brackets_is_the_regex_result() -> None:
    """The fuzz probe's hostile message (280,000 characters: one sentence, then ``\\x1b[1m`` over and over): the
    link regex took about a minute on it; the one-pass rewrite gives what the regex gives on a slice of it."""
    hostile = "Key the cache by the events.json mtime and size." + "\x1b[1m" * 70_000
    assert links_as_text(hostile) == hostile
    sample = hostile[:2_000] + "[a](b) [c]" + hostile[:2_000]
    assert links_as_text(sample) == label_text._LINK.sub(r"\1", sample)


ANY_INDENT = re.compile(
    r"^\s*(?:error(?:\[\w+\])?:|warning:|thread '.*' panicked|traceback \(most recent call last\)|\S+\.\w+:\d+)",
    re.IGNORECASE | re.MULTILINE,
)
"""``extractive._ERROR`` as it was before its indent stopped at the line's end (quadratic on blank lines)."""


@settings(max_examples=800, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["\n", " ", "\t", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\u3000", "x", "- ", "`"])
        | st.sampled_from(["error:", "Warning:", "error[E0432]:", "a.rs:3", "thread 'm' panicked", "1."]),
        max_size=12,
    ).map("".join)
)
def test_a_pasted_error_is_found_where_the_indent_of_any_whitespace_found_it(text: str) -> None:
    """The pasted error ``is_follow_up`` and a label look for: found in the same texts, ending at the same place,
    and the same label line made of it."""
    new, old = extractive._ERROR.search(text), ANY_INDENT.search(text)
    assert (new is None) == (old is None)
    if new is not None and old is not None:
        assert new.end() == old.end()
        rest = text[new.end() :].split("\n", 1)[0]
        assert label_text.clean_line(new.group(0) + rest) == label_text.clean_line(old.group(0) + rest)


def test_a_message_of_blank_lines_is_read_in_one_pass() -> None:
    """The fuzz probe's hostile request (seed 37195818, case 276: 140,000 line feeds): ``summarize`` of it took
    3.5 minutes in ``is_follow_up``; it is a request that says nothing, and its turn gets no label of it."""
    hostile = "\n" * 140_000
    assert extractive._ERROR.search(hostile) is None
    found = extractive._ERROR.search(hostile + "  error: the lock")
    assert found is not None
    assert found.end() == len(hostile) + len("  error:")
    assert is_follow_up(hostile) is True
