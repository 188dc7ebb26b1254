"""The light reader against the full load (issue 40): the same facts, or both refuse, on every fixture and corpus
conversation, on generated ones and on hand edits of every kind (issue 39's odd fields), legacy and current; its
lazy read (``show``'s) gives the same turns, entry for entry; and its quick read (an element of each common kind
with only its kind's keys) the same as reading every element by ``_Entry``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure

from bench.catchup import long_conversation
from tests.agreement.workspaces import conversation_entries, conversation_shapes, fixture_folders
from tests.conftest import corpus_conversations, corpus_files, corpus_params
from tests.support.hand_edits import Drawn, encode, hand_edited
from turnmark.core.links.compaction import turn_overlays
from turnmark.core.links.exclusion import exclude_unresolved
from turnmark.core.rendering.shown import plainly_shown, turn_time
from turnmark.core.stream import light as light_reader
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.light import DEEPEST, LazyTurns, read_lazily, read_light
from turnmark.core.stream.payloads import Payload
from turnmark.core.summaries.facts import ConversationFacts, facts_of, light_facts

CONVERSATION = "jp-c17800000099"


class _Unread:
    """A quick read's decoder that reads nothing (what it cannot read goes to ``_Entry``)."""

    def decode(self, events: bytes) -> object:
        raise msgspec.ValidationError("the quick read is left out")


@contextmanager
def by_entry() -> Iterator[None]:
    """The light reader without its quick read: every element read by ``_Entry`` (the long way it falls back to)."""
    with mock.patch.object(light_reader, "_KINDS", _Unread()):
        yield


def agree(events: bytes, base_config: bytes | None, what: str = "") -> None:
    agree_quickly(events, base_config, what)
    light = light_facts(events, base_config, CONVERSATION)
    loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids(), conversation=CONVERSATION)
    lazy = read_lazily(events, base_config, CONVERSATION)
    if isinstance(loaded, Failure):
        assert light is None, f"{what}: the light reader read a file the full reader refuses"
        assert lazy is None, f"{what}: the lazy reader read a file the full reader refuses"
        return
    assert light is not None, f"{what}: the light reader refused a file the full reader reads"
    assert lazy is not None, f"{what}: the lazy reader refused a file the full reader reads"
    agree_lazily(lazy, loaded.unwrap(), what)
    long_way = facts_of(loaded.unwrap())
    assert light == long_way, what
    assert light.waiting == long_way.waiting, what
    assert light.rows() == long_way.rows(), what
    counted = light_facts(events, base_config, CONVERSATION, ids=False)
    assert counted is not None, what
    assert listing_facts(counted) == listing_facts(long_way), what


def agree_quickly(events: bytes, base_config: bytes | None, what: str) -> None:
    """The quick read gives what reading each element by ``_Entry`` gives (or both refuse), IDs settled or not,
    read whole or lazily."""
    quick = [read_light(events, base_config, CONVERSATION, ids=ids) for ids in (True, False)]
    lazy = read_lazily(events, base_config, CONVERSATION)
    with by_entry():
        assert [read_light(events, base_config, CONVERSATION, ids=ids) for ids in (True, False)] == quick, what
        long_way = read_lazily(events, base_config, CONVERSATION)
    assert (lazy is None) == (long_way is None), what
    if lazy is not None and long_way is not None:
        assert (lazy.stream, lazy.turns, lazy.compactions) == (long_way.stream, long_way.turns, long_way.compactions)
        for turn in lazy.turns:
            assert (lazy.facts(turn), lazy.turn(turn)) == (long_way.facts(turn), long_way.turn(turn)), what
            assert _payloads(lazy.payloads(turn)) == _payloads(long_way.payloads(turn)), what


def agree_lazily(lazy: LazyTurns, stream: ConversationStream, what: str) -> None:
    """Each turn read lazily is the full load's turn: its entries (every field, the layout and the ID's origin
    too), its facts, ID and time; a file shown plainly has nothing left out and no overlay."""
    turns = stream.turns()
    assert len(lazy.turns) == len(turns), what
    assert lazy.stream.links == tuple((e.event_id, e.type_tag, e.request_id) for e in stream.entries), what
    assert lazy.stream.duplicated_ids == stream.duplicated_ids, what
    for light_turn, turn in zip(lazy.turns, turns, strict=True):
        read = lazy.turn(light_turn)
        assert (read.index, read.positions) == (turn.index, turn.positions), what
        assert [_whole(entry) for entry in read.entries] == [_whole(entry) for entry in turn.entries], what
        assert lazy.facts(light_turn) == turn.facts(), what
        assert (light_turn.id(), light_turn.time) == (turn.id(), turn_time(turn)), what
        assert lazy.event_ids(light_turn) == tuple(entry.event_id for entry in turn.entries), what
        assert _payloads(lazy.payloads(light_turn)) == _payloads([entry.payload for entry in turn.entries]), what
    if plainly_shown(lazy):
        assert not exclude_unresolved(stream.entries, stream.duplicated_ids).positions, what
        assert not turn_overlays(stream.entries), what


def _payloads(payloads: Sequence[Payload]) -> list[tuple[object, ...]]:
    """Each payload with its kind, and a tool output's text both as stored and as read (what equality may skip)."""
    return [
        (type(payload), payload, getattr(payload, "stored", None), getattr(payload, "content", None))
        for payload in payloads
    ]


def _whole(entry: Entry) -> tuple[object, ...]:
    """Every field of an entry, those equality leaves out too."""
    layout = entry.layout
    payload = entry.payload
    stored = getattr(payload, "stored", None)
    return (
        entry.event_id,
        entry.id_origin,
        entry.request_id,
        payload,
        stored,
        layout.keys,
        layout.extra,
        layout.kept,
        layout.output,
        layout.raw,
    )


def listing_facts(facts: ConversationFacts) -> tuple[object, ...]:
    """What the listing keeps of a conversation's facts (a read without ``ids`` must give the same)."""
    return (
        facts.legacy,
        facts.entries,
        len(facts.turns),
        facts.unresolved_links,
        facts.duplicated_ids,
        facts.waiting,
        facts.summarized,
        facts.first_turn_start is None,
        [(turn.id is None, turn.requests, turn.complete, turn.summary, turn.source) for turn in facts.turns],
    )


@pytest.mark.parametrize("folder", fixture_folders(), ids=lambda folder: f"{folder.parts[-4]}/{folder.name}")
def test_every_fixture(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@pytest.mark.parametrize("folder", corpus_params())
def test_every_corpus_conversation(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=hand_edited(max_edits=6))
def test_hand_edited_conversations(drawn: Drawn) -> None:
    agree(drawn.events, drawn.base_config, repr(drawn.edits))


@settings(max_examples=100, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shape=conversation_shapes(), number=st.integers(0, 9))
def test_generated_conversations(shape: object, number: int) -> None:
    entries = conversation_entries(shape, number)  # type: ignore[arg-type]
    if getattr(shape, "legacy", False):
        entries.insert(0, {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}})
        agree(encode(entries), None)
    else:
        agree(encode(entries), b"{}\n")


BROKEN = [
    b"",
    b"{}",
    b"[1]",
    b'[{"timestamp": "2026-01-01 10:00:00.0"}]',
    b'[{"type": "chat_request"}]',
    b'[{"type": "chat_request", "timestamp": "yesterday", "content": "x"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": 5}]',
    b'[{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "metadata": null}]',
    b'[{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "summary": 3}]',
    b'[{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 5}]',
    b'[{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "name": "n", "arguments": null}]',
    b'[{"type": "tool_call_response", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "content": "x"}]',
    b'[{"type": "inquiry_request", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "source": {}, "question": {}}]',
    b'[{"type": "inquiry_response", "timestamp": "2026-01-01 10:00:00.0", "id": "i"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": -1, "to_turn": 2}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 2, "reasoning": "x"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": true}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 1, "summary": "s"}]',
    b'[{"type": "compaction", "timestamp": "2026-01-01 10:00:00.0", "from_turn": 0, "to_turn": 1, '
    b'"tool_calls": {"policy": "strip"}}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x", "schema": []}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "\xff"}]',
    *(
        b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x"}, ' + entry + b"]"
        for entry in (
            b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:01.0", "x": 1e999}',
            b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:01.0", "data": 1e999}',
            b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:01.0", "content": [1e999]}',
            b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:01.0", "data": {"n": -1e999}}',
            b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:01.0", "message": "m", "reasoning": 1e999}',
            b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:01.0", "data": ' + b"9" * 5000 + b"}",
            b'{"type": "inquiry_response", "timestamp": "2026-01-01 10:00:01.0", "id": "i", "answer": [1e999]}',
            b'{"type": "config_delta", "timestamp": "2026-01-01 10:00:01.0", "delta": {"x": 1e999}}',
            b'{"type": "a_future_kind", "timestamp": "2026-01-01 10:00:01.0", "n": 1e999}',
            b'{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:01.0", "id": "c", "name": "n", '
            b'"arguments": {"n": 1e999}}',
        )
    ),
]


@pytest.mark.parametrize("events", BROKEN)
@pytest.mark.parametrize("legacy", [False, True])
def test_a_file_the_full_reader_refuses_is_refused(events: bytes, legacy: bool) -> None:
    if legacy and events.startswith(b"[{"):
        head = b'[{"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}}, '
        agree(head + events[1:], None, repr(events))
    else:
        agree(events, None if legacy else b"{}\n", repr(events))


NOT_UTF8 = [
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x"}, '
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "\xff"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "\xc3\xa9t\xc3\xa9"}, '
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": "\xed\xa0\x80"}]',
    b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x"}, '
    b'{"type": "tool_call_response", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "content": "\xc0\xaf", '
    b'"is_error": false}]',
]


@pytest.mark.parametrize("events", NOT_UTF8)
def test_text_that_is_not_utf8_where_the_facts_need_none(events: bytes) -> None:
    """The one difference the light reader keeps, for speed: the text it skips (a message, a tool's output) is
    not looked at, so its facts are read where the full reader refuses the file (a listing; ``check`` and ``show``
    say what is wrong). ``show``'s lazy read, which decodes that text later, looks at it first."""
    assert isinstance(ConversationStream.from_json(events, b"{}", new_id=sequential_ids()), Failure)
    assert light_facts(events, b"{}", CONVERSATION) is not None
    assert read_lazily(events, b"{}", CONVERSATION) is None


def test_a_legacy_head_is_read_as_the_full_reader_reads_it() -> None:
    head = b'[{"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {"x": 1e999}}, '
    agree(head + b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x"}]', None)


def _nested(depth: int) -> bytes:
    return b'{"a": ' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("field", [b'"arguments"', b'"metadata"'])
def test_a_value_nested_deeper_than_the_light_reader_reads_is_read_the_long_way(field: bytes) -> None:
    """Metadata or arguments deeper than ``DEEPEST``: the light reader leaves the file (``show`` reads entries
    later, deeper in the stack, where Python's recursion limit is nearer); the full reader says whether it can
    be read. Within it, both read it."""
    for depth, light in ((DEEPEST + 1, False), (DEEPEST - 2, True)):
        events = (
            b'[{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x"}, '
            b'{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:01.0", "id": "c", "name": "n", '
            + field
            + b": "
            + _nested(depth)
            + b"}]"
        )
        assert (light_facts(events, b"{}", CONVERSATION) is not None) is light
        assert (read_lazily(events, b"{}", CONVERSATION) is not None) is light
        if light:
            agree(events, b"{}")


def test_an_upgrade_stopped_between_its_writes() -> None:
    delta = {"assistant": {"name": "x"}}
    head: dict[str, object] = {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": delta}
    request: dict[str, object] = {"type": "chat_request", "timestamp": "2026-01-01 10:00:01.0", "content": "Hi"}
    agree(encode([head, request]), json.dumps(delta).encode())
    agree(encode([head, request]), b'{"other": 1}')
    agree(encode([head, request]), b"[]")


@pytest.mark.parametrize("legacy", [False, True])
def test_the_quick_read_is_what_jp_writes_takes(legacy: bool) -> None:
    """JP's own files (every corpus conversation, a long generated one) take the quick read: the shortcut is the
    path, not a branch no file reaches."""
    events, base_config = long_conversation(300, legacy=legacy)
    assert light_reader._entries(events)[1] is not None
    agree(events, base_config)
    for folder in corpus_conversations():
        assert light_reader._entries(corpus_files(folder)[0])[1] is not None, folder


QUICK_OR_NOT = [
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x", "message": "m"}',
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x", "type": "turn_start"}',
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "x", "type": "chat_request"}',
    b'{"type": "chat_request", "timestamp": "2026-01-31 10:00:00.0", "content": "\\u00e9t\\u00e9"}',
    b'{"type": "chat_request", "timestamp": "2026-01-01T10:00:00Z", "content": "x", "author": null}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "data": {"a": [1]}}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "reasoning": "r", "metadata": {}}',
    b'{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "name": "n", "arguments": {}}',
    b'{"type": "tool_call_response", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "content": 1, "is_error": true}',
    b'{"type": "inquiry_request", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "source": {}, '
    b'"question": {"text": 1}}',
    b'{"type": "inquiry_response", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "answer": {"x": 1e999}}',
    b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "summary": "s", "event_id": 7}',
    b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "event_id": "t", "request_id": null}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": "m", "request_id": ""}',
    b'{"type": "config_delta", "timestamp": "not a time", "delta": {"a": 1}}',
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": "a", "content": "b"}',
    b'{"type": "chat_request", "timestamp": "2026-01-01 10:00:00.0", "content": 1, "content": "b"}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": "a", "message": "b"}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 1, "reasoning": "r", "message": "m"}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": "m", "message": null, "data": 2}',
    b'{"type": "tool_call_request", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "name": "n", '
    b'"arguments": {"p": "eA=="}, "arguments": {"q": "eQ=="}, "metadata": {"a": "eA=="}, "metadata": {"b": 1}}',
    b'{"type": "tool_call_response", "timestamp": "2026-01-01 10:00:00.0", "id": "c", "content": "eA==", '
    b'"content": "eQ==", "is_error": false, "is_error": true}',
    b'{"type": "inquiry_response", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "answer": 1, "answer": [2]}',
    b'{"type": "inquiry_request", "timestamp": "2026-01-01 10:00:00.0", "id": "i", "source": {}, '
    b'"question": {"text": "q", "text": "r"}, "id": "j"}',
    b'{"type": "turn_start", "timestamp": "2026-01-01 10:00:00.0", "summary": "s", "summary": null}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 5, "data": 2}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": "m", "reasoning": [5]}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": null, "reasoning": "r"}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "reasoning": {"a": 1}, "data": null}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 1e999, "reasoning": "r"}',
    b'{"type": "chat_response", "timestamp": "2026-01-01 10:00:00.0", "message": 5, "reasoning": 6}',
]


@pytest.mark.parametrize("entry", QUICK_OR_NOT)
@pytest.mark.parametrize("legacy", [False, True])
def test_odd_elements_read_quickly_or_not_read_the_same(entry: bytes, legacy: bool) -> None:
    """A key of another kind, the tag written twice, a timestamp of another form, a value the checks refuse, an
    odd ID: the quick read either reads it as ``_Entry`` does or leaves the file to it."""
    head = b'{"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}}, ' if legacy else b""
    opening = b'{"type": "turn_start", "timestamp": "2026-01-01 09:00:00.0", "event_id": "t0"}, '
    agree(b"[" + head + opening + entry + b"]", None if legacy else b"{}\n", repr(entry))
