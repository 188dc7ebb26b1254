"""A tool's output is kept as the file stored it until asked for, and written back as read while unchanged."""

from __future__ import annotations

import base64
import pickle
from dataclasses import replace

from tests.support.streams import TS, load, raw
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import _CONTENT_SLOT, StoredText, ToolCallResponse
from turnmark.core.stream.storage_encoding import decode_string

HELLO = base64.b64encode("héllo\n".encode()).decode()


def response(content: str) -> dict[str, object]:
    return {"timestamp": TS, "type": "tool_call_response", "id": "c1", "content": content, "is_error": False}


def decoded(payload: object) -> bool:
    """Whether a read output was decoded already."""
    value = _CONTENT_SLOT.__get__(payload)
    return not isinstance(value, StoredText) or value._decode is None


def read(content: str) -> ToolCallResponse:
    payload = load([response(content)]).entries[0].payload
    assert isinstance(payload, ToolCallResponse)
    return payload


def test_the_output_is_decoded_only_when_asked_for_and_then_once() -> None:
    payload = read(HELLO)
    assert payload.stored == HELLO
    assert not decoded(payload)
    assert payload.content == "héllo\n"
    assert payload.content is payload.content


def test_read_and_made_outputs_compare_by_what_they_say() -> None:
    made = ToolCallResponse(TS, "c1", "héllo\n", False)
    assert read(HELLO) == made
    assert made == read(HELLO)
    assert read(HELLO) == read(HELLO)
    assert read(HELLO) != ToolCallResponse(TS, "c1", "other", False)
    assert read(HELLO) != replace(made, is_error=True)
    assert hash(read(HELLO)) == hash(made)


def test_a_changed_copy_forgets_the_stored_form_and_is_encoded_like_jp() -> None:
    changed = replace(read(HELLO), content="bye")
    assert changed.stored is None
    assert changed.content == "bye"
    stream = load([response(HELLO)])
    entry = stream.entries[0]
    edited = stream.with_entries([replace(entry, payload=changed)])
    assert raw(edited)[0]["content"] == base64.b64encode(b"bye").decode()


def test_an_unchanged_output_is_written_as_read_even_when_it_is_not_canonical() -> None:
    for stored in (HELLO, "not base64 at all", "aGk", "aGk=", "_-8="):
        assert raw(load([response(stored)]))[0]["content"] == stored
        assert read(stored).content == decode_string(stored)


def test_a_read_output_survives_a_pickle_and_a_replace() -> None:
    payload = read(HELLO)
    copied = pickle.loads(pickle.dumps(payload))
    assert copied == payload
    assert copied.content == "héllo\n"
    assert replace(payload, is_error=True).content == "héllo\n"


def test_a_loaded_stream_equals_itself_read_again_without_decoding_outputs() -> None:
    events = ConversationStream.from_json(
        b'[{"timestamp": "'
        + TS.encode()
        + b'", "type": "tool_call_response", "id": "c1", "content": "'
        + HELLO.encode()
        + b'", "is_error": false}]',
        b"{}",
        new_id=sequential_ids(),
    ).unwrap()
    again = ConversationStream.from_json(events.to_json(), b"{}", new_id=sequential_ids()).unwrap()
    assert events == again
    assert not any(decoded(entry.payload) for entry in again.entries)


def test_a_changed_response_keeps_an_output_read_as_written_while_its_text_is_unchanged() -> None:
    for stored in ("plain text, not base64", HELLO):
        stream = load([response(stored)])
        flagged = replace(stream.entries[0], payload=replace(read(stored), is_error=True))
        assert raw(stream.with_entries([flagged]))[0]["content"] == stored
    stream = load([response("aGk=")])
    literal = replace(stream.entries[0], payload=replace(read("aGk="), content="aGk="))
    assert raw(stream.with_entries([literal]))[0]["content"] == base64.b64encode(b"aGk=").decode()
