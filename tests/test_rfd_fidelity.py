"""RFD 098 and 126 in the summary path: what a summary model is told, and what catch-up may change."""

from __future__ import annotations

from turnmark.core.catchup import candidates, extractive_answer
from turnmark.core.fingerprint import fingerprint
from turnmark.core.transcript import excluded_ids, transcript

from .streams import TS, load


def entries_with_a_deleted_request() -> list[dict[str, object]]:
    return [
        {"event_id": "t000001", "timestamp": TS, "type": "turn_start"},
        {"event_id": "r000002", "timestamp": TS, "type": "chat_request", "content": "Run the tests"},
        {"event_id": "c000003", "request_id": "gone000", "timestamp": TS, "type": "tool_call_request",
         "id": "call_1", "name": "secret_tool", "arguments": {}},
        {"event_id": "o000004", "request_id": "r000002", "timestamp": TS, "type": "tool_call_response",
         "id": "call_1", "content": "b2s=", "is_error": False},
        {"event_id": "m000005", "request_id": "gone000", "timestamp": TS, "type": "chat_response",
         "message": "Answer to a deleted request"},
        {"event_id": "m000006", "request_id": "r000002", "timestamp": TS, "type": "chat_response",
         "message": "All tests pass."},
        {"event_id": "t000007", "timestamp": TS, "type": "turn_start"},
        {"event_id": "r000008", "timestamp": TS, "type": "chat_request", "content": "thanks"},
        {"event_id": "m000009", "request_id": "r000008", "timestamp": TS, "type": "chat_response", "message": "ok"},
    ]  # fmt: skip


def test_a_transcript_leaves_out_what_rfd_098_excludes_with_its_tool_partner() -> None:
    stream = load(entries_with_a_deleted_request())
    assert excluded_ids(stream) == {"c000003", "o000004", "m000005"}
    text = transcript(stream.turns()[0], excluded_ids(stream))
    assert "Answer to a deleted request" not in text
    assert "secret_tool" not in text
    assert "<tool_result/>" not in text
    assert (
        text == '<turn id="t000001">\n<request>Run the tests</request>\n<response>All tests pass.</response>\n</turn>'
    )
    candidate = candidates(stream, last_turn_may_be_open=False)[0]
    assert candidate.transcript == text
    assert "Answer to a deleted request" not in extractive_answer(stream, ("t000001",))


def test_the_fingerprint_follows_the_described_events() -> None:
    original = entries_with_a_deleted_request()
    edited = [dict(entry) for entry in original]
    edited[4]["message"] = "Edited, but still excluded"
    before, after = load(original), load(edited)
    assert fingerprint(before.turns()[0], excluded_ids(before)) == fingerprint(after.turns()[0], excluded_ids(after))
    edited[5]["message"] = "Some tests fail."
    changed = load(edited)
    assert fingerprint(changed.turns()[0], excluded_ids(changed)) != fingerprint(
        before.turns()[0], excluded_ids(before)
    )
