"""The offline summarizer's labels: commit-subject style, from the whole turn, distinct, and as good as the
label benchmark says (``bench/labels.py`` against the hand-written references)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from tests.support.streams import TS, call, message, request, result, stream_of, turn
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.payloads import Payload, ToolCallRequest
from turnmark.core.summaries.extractive import extractive_labels, instruction, is_follow_up, turn_facts
from turnmark.core.summaries.gate import refusal
from turnmark.core.summaries.key_terms import key_terms
from turnmark.core.summaries.label_text import as_request, base_form, heading, imperative, plain, shorten
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.readability import MAX_IDENTIFIERS, identifiers
from turnmark.core.summaries.request import FIXED_PROMPT

REPO = Path(__file__).resolve().parents[3]


def labels(*steps: Payload) -> list[str | None]:
    stream = ensure_first_turn_start(stream_of(*steps))
    found = extractive_labels(stream.turns(), excluded_ids(stream))
    return [found.get(str(t.id())) for t in stream.turns()]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What does crates/jp_cli/build.rs do?", "Explain what crates/jp_cli/build.rs does"),
        ("How should we invalidate the cache?", "Explain how to invalidate the cache"),
        ("Where do conversations live on disk?", "Explain where conversations live on disk"),
        ("What is the next step?", "Explain the next step"),
        ("And the locks?", "Explain the locks"),
        ("Is @media the way to detect mobile?", "Check whether @media is the way to detect mobile"),
    ],
)
def test_a_question_becomes_what_it_asks_for(question: str, asked: str) -> None:
    assert as_request(question) == asked


@pytest.mark.parametrize(
    ("said", "file", "expected"),
    [
        ("Looks mostly okay, but the `sidebar` stays on one line on phones.", "theme.css", "Fix "),
        (
            "The `test_parse_nested_tables` test hangs on the ARM runner. Any idea what might be causing this?",
            "parser.rs",
            "Fix parse_nested_tables test",
        ),
    ],
)
def test_close_but_or_asking_for_a_cause_reports_a_problem(said: str, file: str, expected: str) -> None:
    """ "Close, but …" and "what might be causing this?" report a problem; a test named by its function reads once."""
    found = labels(turn(), request(said), *edit("c1", file), message("All passing. It now stops at the end."))[0]
    assert found is not None
    assert found.startswith(expected)


def test_a_file_the_request_is_about_names_what_it_says_of_it() -> None:
    steps: list[Payload] = [
        turn(),
        request('The fact that `render_tests.py` has to spell out `"layout.toml"` smells. Is it in the wrong place?'),
        message("The tests build their own workspace; a helper would keep the name in one place."),
    ]
    assert labels(*steps) == ["Investigate layout.toml in render_tests.py"]


def test_a_question_that_asks_for_a_change_is_that_change() -> None:
    steps: list[Payload] = [turn(), request("By the way, can we rename the binary in --version to tm?")]
    steps += [*edit("c1", "cli.rs"), message('Done. Added `name = "tm"`.')]
    assert labels(*steps) == ["Rename the binary in --version to tm"]


def test_past_tense_becomes_imperative() -> None:
    assert [base_form(word) for word in ("Added", "capped", "moved", "renamed", "Fixed", "table")] == [
        "Add", "Cap", "Move", "Rename", "Fix", None,
    ]  # fmt: skip
    assert imperative("Also capped the backoff and added a test") == "Also capped the backoff and add a test"
    assert imperative("Capped the backoff and added a test.") == "Cap the backoff and add a test"


def test_material_that_is_not_prose_is_left_out() -> None:
    text = "> what you said\nSee https://github.com/o/r/pull/450 and [docs](https://x.y/z)\n```\ncode\n```\n#tag #idea"
    assert plain(text).split() == ["See", "PR", "#450", "and", "docs"]
    assert heading("# Changes for https://github.com/o/r/pull/450\nmore") == "Changes for PR #450"


def test_shortening_drops_filler_then_cuts_at_a_clause_then_at_a_word() -> None:
    assert shorten("Refactor the conversation loader so that it streams entries instead of reading", 60) == (
        "Refactor conversation loader so it streams entries"
    )
    cut = shorten("Rename alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo", 40)
    assert cut == "Rename alpha bravo charlie delta echo…"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi! Could you please add a --json flag to jp conversation ls?", None),
        ("Please add a --json flag to `jp conversation ls`.", "Add a --json flag to jp conversation ls"),
        ("I want you to go ahead and implement the search RFD, starting with layer 1.", "Implement the search RFD"),
        ("[WIP] Rename jp_store to jp_storage everywhere", "Rename jp_store to jp_storage everywhere"),
        ("I get warnings on build. I wonder if we can get the plots to render.", "Get the plots to render"),
        ("Find out why?", None),
        ("yes, go ahead", None),
    ],
)
def test_an_instruction_is_found_wherever_the_request_gives_it(text: str, expected: str | None) -> None:
    found = instruction(text)
    assert found == expected or (expected is not None and found is not None and found.startswith(expected))


def test_key_terms_prefer_identifiers_specific_to_the_turn() -> None:
    terms = key_terms(
        "The `load_partial_at_path_recursive` test overflows the stack on Windows.",
        "Root cause: Path::iter() walked up forever; fixed in util.rs.",
        ("util.rs",),
        {"windows": 3, "stack": 1},
        3,
    )
    assert set(terms[:3]) == {"load_partial_at_path_recursive", "util.rs", "Path::iter()"}
    assert "the" not in [term.lower() for term in terms]


def test_a_follow_up_is_labelled_by_what_the_turn_did() -> None:
    steps: list[Payload] = [turn(), request("Add retry backoff to the stream handler"), message("Added.")]
    steps += [turn(), request("yes, go ahead"), message("Capped the backoff at 2 s and added a test.")]
    assert labels(*steps)[1] == "Cap the backoff at 2 s and add a test"
    assert is_follow_up("yes, go ahead")


def test_an_answer_that_recommends_one_of_its_options_proposes_it() -> None:
    answer = (
        "Let me think through the options.\n\n**Option A: Keep a lock file per cache.** Simple.\n\n"
        "**Option B: A single database.** More moving parts.\n\nI think **Option A** is the right fit."
    )
    steps: list[Payload] = [turn(), request("How should two processes share the cache?"), message(answer)]
    assert labels(*steps) == ["Keep a lock file per cache"]
    steps = [turn(), request("How should two processes share the cache?"), message(answer.replace("A**", "B**"))]
    assert labels(*steps) == ["Propose a single database"]


def test_an_issue_an_earlier_answer_listed_is_taken_up_by_its_title() -> None:
    listing = (
        "### Issues\n\n#### Issue 1: Empty cache after a cold start\n\nDetails.\n\n"
        "#### Issue 2: Two parsers for one format\n\nDetails."
    )
    steps: list[Payload] = [turn(), request("Review the cache module"), message(listing)]
    steps += [turn(), request("Start with issue 1 please"), message("Fixed the cold start.")]
    steps += [turn(), request("and issue 2, what can we do there?"), message("All passing.")]
    found = labels(*steps)
    assert found[2] == "Address two parsers for one format (issue 2)"
    assert found[1] is not None
    assert found[1].endswith("(issue 1)")


def test_an_instruction_about_it_names_what_the_sentence_before_was_about() -> None:
    steps: list[Payload] = [turn(), request("The indexer takes 5 s. Profile it and cache what it reads.")]
    steps += [message("Done.")]
    steps += [turn(), request("thanks!"), message("You're welcome.")]
    assert labels(*steps)[0] == "Profile indexer and cache what it reads"
    assert instruction("Startup takes 300 ms. Profile it and suggest fixes.") == "Profile startup and suggest fixes"


def test_an_instruction_that_names_nothing_leaves_the_label_to_what_the_request_reports() -> None:
    request_text = (
        "A colleague ran `cache warm` on a fresh machine and got this error:\n\n```\nno such table\n```\n\n"
        "Investigate and give me an overview on what the cause might be here."
    )
    assert instruction(request_text) is None
    assert instruction("Please stage the relevant changes") == "Stage the relevant changes"
    found = labels(turn(), request(request_text), message("The table is created after the first read."))
    assert found[0] == "Investigate error in cache warm"


def test_moving_on_to_a_phase_of_the_plan_implements_it() -> None:
    steps: list[Payload] = [turn(), request("Write the plan for the cache"), *edit("c1", "docs/rfd/012-cache.md")]
    steps += [message("The plan has three phases.")]
    steps += [turn(), request("go ahead and move on to phase 2"), *edit("c2", "src/cache.py")]
    steps += [message("Phase 2 is in.")]
    steps += [turn(), request("lets proceed with the next phase"), *edit("c3", "src/cache.py")]
    steps += [message("Phase 3 is complete.")]
    found = labels(*steps)
    implemented = [label.split(":")[0] for label in found[1:] if label]
    assert implemented == ["Implement RFD 012 phase 2", "Implement RFD 012 phase 3"]


def test_a_question_about_what_is_left_is_labelled_by_the_answers_steps_or_ticks() -> None:
    steps_answer = "Step 1 is done. Next:\n\n2. **Vector index build** — compile.\n3. **Embedding cache** — keep."
    found = labels(turn(), request("what is the next step?"), message(steps_answer))
    assert found == ["Outline next steps: vector index build and embedding cache"]
    ticks = "Looking back at the list:\n\n- [x] Drop the old loader\n- [x] Add the cold-start test"
    assert labels(turn(), request("what else is there left to do here?"), message(ticks)) == [
        "Confirm all tasks are done"
    ]


def test_thanks_names_what_it_thanks_for_and_approval_approves() -> None:
    explained: list[Payload] = [turn(), request("What does build.rs do?"), message("It embeds the build date.")]
    assert labels(*explained, turn(), request("thanks!"), message("You're welcome."))[1] == (
        "Thank for explaining what build.rs does"
    )
    renamed: list[Payload] = [
        turn(),
        request("Rename jp_store to jp_storage everywhere"),
        call("c1", "fs_modify_file").__class__("2026-01-02 10:00:00.0", "c1", "fs_modify_file", {"path": "Cargo.toml"}),
        result("c1"),
        message("Renamed."),
    ]
    assert labels(*renamed, turn(), request("looks good, thanks"), message("Glad it helps."))[1] == (
        "Approve renaming jp_store to jp_storage everywhere"
    )


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
    facts = turn_facts(
        stream_of(turn(), request("ok"), call("c1", "cargo_test"), result("c1", "1 failed", True)).turns()[0]
    )
    assert facts.failed == ("cargo_test",)
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
    duplicate labels in a conversation, no label cut inside a word; on the held-out real turns the labeller
    beats the fallback by the target and is rarely much worse. The corpus part is skipped without a corpus."""
    sys.path.insert(0, str(REPO))
    from bench.labels import GAIN_TARGET, READABLE_SHARE, REFERENCES, WORSE_SHARE, mean_of, score, worse_share

    figures = score(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"])
    fixtures, real = figures.of(False), figures.of(True, "held-out")
    assert len(fixtures) >= 31
    assert mean_of(fixtures) >= mean_of(fixtures, fallback=True) + GAIN_TARGET
    assert figures.heavy() <= READABLE_SHARE * len(figures.rows)
    assert (figures.duplicates, figures.cuts) == (0, 0)
    if real:
        assert mean_of(real) >= mean_of(real, fallback=True) + GAIN_TARGET
        assert worse_share(real) <= WORSE_SHARE


def test_the_halves_are_whole_conversations_chosen_by_their_id() -> None:
    """The development and held-out halves follow the rule fixed before any rule of the labeller changed
    (``split`` in the references): by the SHA-256 of the conversation ID, each to the half with fewer turns."""
    references = json.loads((REPO / "bench" / "reference_labels.json").read_text(encoding="utf-8"))
    for real in (True, False):
        group = [c for c in references["conversations"] if (c["workspace"] == "corpus") == real]
        counts = {"development": 0, "held-out": 0}
        for conversation in sorted(group, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest()):
            half = "development" if counts["development"] <= counts["held-out"] else "held-out"
            assert {turn["half"] for turn in conversation["turns"]} == {half}, conversation["id"]
            counts[half] += len(conversation["turns"])
        assert abs(counts["development"] - counts["held-out"]) <= 1


# Issue 23: the examples of labels that did not read as a phrase. Each turn is written here in the shape of
# the real one (what kind of request, what the answer and the tools did); the test names the verb and the
# object a reader expects. The summarizer's rules name none of these words.


def edit(call_id: str, path: str, tool: str = "fs_modify_file") -> list[Payload]:
    return [ToolCallRequest(TS, call_id, tool, {"path": path}), result(call_id)]


def tool(call_id: str, name: str, arguments: dict[str, str], failed: bool = False) -> list[Payload]:
    return [ToolCallRequest(TS, call_id, name, arguments), result(call_id, "error" if failed else "ok", failed)]


ISSUE_EXAMPLES: dict[str, tuple[list[Payload], str, str]] = {
    "a question choosing a default (was: Update sentence-transformers/all-MiniLM-L12-v2 better/newer)": (
        [
            turn(),
            request(
                "Which embedding model should we use by default for semantic search? Right now it is "
                "`sentence-transformers/all-MiniLM-L12-v2`, but maybe there is something better/newer?"
            ),
            *edit("c1", "src/embed/config.rs"),
            message("Switched the default to `BAAI/bge-small-en-v1.5`; it is as small and scores higher."),
        ],
        "Choose",
        "embedding model",
    ),
    "a problem report with a paste (was: Fix load blabla ERROR agentic exits persist())": (
        [
            turn(),
            request(
                "After sanitize, a failed `load` only logs `blabla ERROR` and the agentic loop runs on until it "
                "exits, and then `persist()` writes the half-loaded state back.\n\n```\nERROR load failed\n```"
            ),
            *edit("c1", "crates/jp_cli/src/lib.rs"),
            message("Stopped the run when `load` fails: `run()` returns the error before the loop starts."),
        ],
        "Stop",
        "load",
    ),
    "a survey of existing crates (was: Discuss existing TAGS Z_5 Z_1 note_tags Connection::open())": (
        [
            turn(),
            request(
                "What existing Bear MCP and embedding crates are there that we could reuse?\n\n"
                "Bear keeps tags in `Z_5TAGS` (`Z_5NOTES`, `Z_13TAGS`) and `note_tags`; a crate that only "
                "calls `Connection::open()` read-write would not do."
            ),
            *tool("c1", "web_search", {"query": "bear mcp crate"}),
            message("Two Bear MCP crates exist; neither opens the database read-only with `Connection::open()`."),
        ],
        "Explain",
        "crates",
    ),
    "an option of the answer before (was: Go with option B)": (
        [
            turn(),
            request("What should happen to conversations that fail to load?"),
            message(
                "Two ways:\n\n**Option A: Refuse to start** — print the error and exit.\n\n"
                "**Option B: Move bad conversations to a trash folder** — keep running with the rest.\n\n"
                "Which do you prefer?"
            ),
            turn(),
            request("Go with option B"),
            *edit("c1", "docs/rfd/052-trash-corrupt-conversations.md", "fs_create_file"),
            message("Written: the RFD describes the trash folder and when a conversation goes there."),
        ],
        "Move",
        "bad conversations to a trash folder (option B)",
    ),
    "a numbered item of the answer before (was: Go ahead with 4)": (
        [
            turn(),
            request("How could search get better?"),
            message(
                "Some ideas:\n\n1. **Rank by recency** — newer notes first.\n2. **Stem words** — match plurals.\n"
                "3. **Cache queries** — repeat searches are free.\n"
                "4. **Plan full-text, semantic and typo-tolerant search together** — one design for all three."
            ),
            turn(),
            request("Go ahead with 4"),
            message("Here is the plan: full-text search first, then embeddings, then typo tolerance on top."),
        ],
        "Plan",
        "(item 4)",
    ),
    "several numbered items (was: Go ahead with 2 first, then 1, and then 3: test_uri_to_query)": (
        [
            turn(),
            request("What is wrong with the URI parsing?"),
            message(
                "Three problems:\n\n1. `test_uri_to_query` tests the wrong function.\n"
                "2. Fix the percent-decoding of query strings.\n3. Reject empty hosts.\n"
            ),
            turn(),
            request("Go ahead with 2 first, then 1, and then 3"),
            *edit("c1", "src/uri.rs"),
            message("All three done; `test_uri_to_query` now calls `uri_to_query`."),
        ],
        "Fix",
        "percent-decoding of query strings (items 2, 1, 3)",
    ),
    "an offer taken up, with a plan written (was: do, and write plan)": (
        [
            turn(),
            request("Is the retry logic in the old client worth keeping?"),
            message("Yes, it handles rate limits well. Want me to port the retry logic to the new client?"),
            turn(),
            request("do, and write plan"),
            *edit("c1", "docs/retry-plan.md", "fs_create_file"),
            message("The plan is in docs/retry-plan.md."),
        ],
        "Plan",
        "porting the retry logic to the new client",
    ),
    "what the answer did (was: Update summary 4.6 anthropic_tests.rs; cargo_check failed)": (
        [
            turn(),
            request(
                "The summary request fails on Opus 4.6:\n\n```\n400 prefilling assistant messages is not supported"
                "\n```\n\nThe prefill has to go; continue the `EventChain` instead."
            ),
            *edit("c1", "crates/jp_llm/src/provider/anthropic.rs"),
            *tool("c2", "cargo_check", {"package": "jp_llm"}, failed=True),
            *edit("c3", "crates/jp_llm/src/provider/anthropic_tests.rs"),
            *tool("c4", "cargo_check", {"package": "jp_llm"}),
            message("Replaced the assistant prefill with an `EventChain` continuation in the summary request."),
        ],
        "Replace",
        "assistant prefill",
    ),
    "a commit (was: Commit commit message fs.rs fs_tests.rs insertions deletions)": (
        [
            turn(),
            request("now create a commit message with the staged changes"),
            *tool("c1", "git_commit", {"message": "fix(config): Honor `create_if_missing` for missing dirs\n\nBody."}),
            message("Committed as `6a1c50a0`: fs.rs and fs_tests.rs, 54 insertions / 2 deletions."),
        ],
        "Commit",
        "honor create_if_missing for missing dirs",
    ),
    "a word written twice (was: Apply the The Boy Scout Rule…)": (
        [
            turn(),
            request(
                "I still see other places in the code using raw paths, can they be updated as well? "
                "Lets apply the The Boy Scout Rule and clean up where we can"
            ),
            *edit("c1", "src/lib.rs"),
            message("Cleaned up three modules."),
        ],
        "Apply",
        "the Boy Scout Rule",
    ),
    "thanks for an explanation (was: Thank for: Explain…)": (
        [
            turn(),
            request("How does the config pipeline merge files and --cfg?"),
            message("Files first, then --cfg in order."),
            turn(),
            request("thanks!"),
            message("You're welcome."),
        ],
        "Thank",
        "for explaining how config pipeline merges",
    ),
}


@pytest.mark.parametrize("case", list(ISSUE_EXAMPLES))
def test_the_issues_examples_read_as_phrases(case: str) -> None:
    steps, verb, obj = ISSUE_EXAMPLES[case]
    label = labels(*steps)[-1]
    assert label is not None
    assert label.split(" ", 1)[0] == verb, label
    assert obj.lower() in label.lower(), label
    assert len(identifiers(label)) <= MAX_IDENTIFIERS, label
    assert not re.search(r"\b(\w+) \1\b", label, re.IGNORECASE), label
    assert ":" not in label.split(" ", 2)[1] if " " in label else True
    assert refusal(label, ["a1turn0"], FIXED_PROMPT) is None


SUMMARIZER = ("extractive.py", "label_text.py", "key_terms.py", "readability.py")
OWN_WORDS = {"approve", "thank", "discuss"}
"""The verbs of the labels the summarizer writes when a turn names nothing of its own (a thanks, an
approval, a discussion): its vocabulary, not a word taken from a turn."""


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
    text of at most two of the benchmark's conversations) appears in no rule of the summarizer."""
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
    distinctive = {
        part
        for conversation in references
        for turn in conversation["turns"]
        for word in words(turn["label"])
        for part in re.findall(r"[a-z0-9]+", word)
        if len(part) >= 4 and spread.get(part, 0) <= 2 and part not in OWN_WORDS
    }
    rules = " ".join(
        text.lower() for module in SUMMARIZER for text in rule_strings(REPO / "core" / "summaries" / module)
    )
    named = sorted(word for word in distinctive if re.search(rf"(?<![a-z0-9]){word}(?![a-z0-9])", rules))
    assert len(distinctive) > 30
    assert named == [], ", ".join(named)
