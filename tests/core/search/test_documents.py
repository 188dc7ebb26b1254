"""What of a turn goes into which scope, and where each event's text starts."""

from __future__ import annotations

from tests.support.streams import TS, answer, ask, call, load, message, reasoning, request, result, stream_of, turn
from turnmark.core.links.compaction import apply_compactions
from turnmark.core.search.documents import MARK_OPEN, Span, conversation_documents, json_text, spans_from_json
from turnmark.core.search.scopes import SCOPES
from turnmark.core.search.terms import words
from turnmark.core.stream.payloads import ToolCallRequest

DIGEST = "0292752b2892bdde6f0b92042ee0eb91088f1af4f209bb94c99049e0bd894eb0"
"""The digest the code before ``Span`` became a tuple gave the pinned turn (2026-12-07)."""


def columns(document: object) -> dict[str, str]:
    return dict(zip(SCOPES, document.texts, strict=True))  # type: ignore[attr-defined]


def test_each_event_goes_to_its_scope_and_the_title_to_every_turn() -> None:
    stream = stream_of(
        turn("Fix the build"),
        request("Why does it fail?"),
        reasoning("Probably the lock."),
        call(),
        ask(),
        answer(),
        result(content="error[E0432]"),
        message("Fixed the import."),
        turn(),
        request("Thanks"),
    )
    first, second = conversation_documents(stream, "Build troubles")
    assert columns(first) == {
        "summaries": "Fix the build",
        "titles": "Build troubles",
        "requests": "Why does it fail?",
        "answers": "Fixed the import.",
        "tools": 'fs_read_file {"path":"src/lib.rs"}\nApply?\ntrue',
        "results": "error[E0432]",
        "reasoning": "Probably the lock.",
    }
    assert (first.label, first.label_source, second.label, second.label_source) == (
        "Fix the build",
        "summary",
        "Thanks",
        "fallback",
    )
    assert columns(second)["titles"] == "Build troubles"
    assert first.spans[SCOPES.index("tools")] == (
        Span(0, "e000004", False),
        Span(35, "e000005", False),
        Span(42, "e000006", False),
    )
    assert all(type(span) is Span for spans in first.spans for span in spans)


def test_what_the_index_stores_of_a_turn_is_pinned() -> None:
    """The spans' JSON and the digest as stored: a change to either rewrites every turn row of every index."""
    stream = stream_of(turn("Fix the build"), request("Why?"), call(), result(content="ok"), message("Fixed."))
    [document] = conversation_documents(stream, "Build")
    assert document.spans_json() == (
        '[[[0,"e000001",false]],[[0,null,false]],[[0,"e000002",false]],[[0,"e000005",false]],'
        '[[0,"e000003",false]],[[0,"e000004",false]],[]]'
    )
    assert document.digest() == DIGEST


def test_excluded_events_are_indexed_and_remembered_as_excluded() -> None:
    stream = load(
        [
            {"event_id": "t000001", "timestamp": "2026-01-02 10:00:00.0", "type": "turn_start"},
            {"event_id": "q000001", "timestamp": "2026-01-02 10:00:00.0", "type": "chat_request", "content": "Go"},
            {
                "event_id": "m000001",
                "request_id": "gone000",
                "timestamp": "2026-01-02 10:00:01.0",
                "type": "chat_response",
                "message": "An orphaned answer",
            },
        ]
    )
    [document] = conversation_documents(stream, None)
    assert columns(document)["answers"] == "An orphaned answer"
    assert document.spans[SCOPES.index("answers")] == (Span(0, "m000001", True),)


def test_compaction_overlays_hide_no_turn() -> None:
    ts = "2026-01-02 10:00:00.0"
    stream = load(
        [
            {"event_id": "t000001", "timestamp": ts, "type": "turn_start", "summary": "First"},
            {"event_id": "q000001", "timestamp": ts, "type": "chat_request", "content": "Where are the locks?"},
            {"event_id": "t000002", "timestamp": ts, "type": "turn_start"},
            {"event_id": "q000002", "timestamp": ts, "type": "chat_request", "content": "More"},
            {"type": "compaction", "timestamp": ts, "from_turn": 0, "to_turn": 0, "summary": {"summary": "Locks."}},
        ]
    )
    assert "Where are the locks?" not in str(apply_compactions(stream.entries))
    documents = conversation_documents(stream, None)
    assert [columns(d)["requests"] for d in documents] == ["Where are the locks?", "More"]


def test_marker_characters_in_a_conversation_cannot_forge_a_match() -> None:
    [document] = conversation_documents(stream_of(turn(), request(f"a {MARK_OPEN}b")), None)
    assert columns(document)["requests"] == "a b"


def test_the_digest_changes_with_the_label_only_for_that_turn() -> None:
    stream = stream_of(turn(), request("one"), turn(), request("two"))
    before = conversation_documents(stream, "T")
    after = conversation_documents(stream.set_turn_summary("e000003", "Second").unwrap(), "T")
    assert [b.digest() == a.digest() for b, a in zip(before, after, strict=True)] == [True, False]
    assert spans_from_json(after[1].spans_json()) == after[1].spans


def test_a_tools_json_arguments_are_searched_as_their_text() -> None:
    """Issue 31, finding 4: an edit's line break was indexed as ``\\n``, so ``\\noverflow`` hid ``overflow``."""
    arguments = {"path": "src/lib.rs", "old": 'fn run() {\n    stack\noverflow("x")', "count": 2, "all": None}
    assert (
        json_text(arguments)
        == '{"path":"src/lib.rs","old":"fn run() {\n    stack\noverflow("x")","count":2,"all":null}'
    )
    stream = stream_of(turn(), request("Fix it"), ToolCallRequest(TS, "call_1", "fs_modify_file", arguments))
    [document] = conversation_documents(stream, None)
    assert "overflow" in words(columns(document)["tools"])
    assert "\\" not in columns(document)["tools"]
