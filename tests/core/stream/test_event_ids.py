"""RFD 097: event IDs (Phase 1), stream-assigned IDs (Phase 2) and load-time repair (Phase 3)."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.streams import TS, load, message, raw, request, stream_of
from turnmark.core.errors import IdSourceExhausted
from turnmark.core.stream.event_ids import (
    UNSETTLED,
    derived_id,
    entry_origins,
    fresh_id,
    from_list,
    ids_from_random_bytes,
    plan_loaded_ids,
    sequential_ids,
    well_formed,
)
from turnmark.core.stream.payloads import ChatRequest, TurnStart


def test_generated_ids_follow_the_convention_and_differ() -> None:
    source = ids_from_random_bytes(__import__("os").urandom)
    first, second = source(), source()
    assert re.fullmatch(r"[0-9a-z]{7}", first)
    assert first != second


def test_generation_rejects_biased_bytes() -> None:
    source = ids_from_random_bytes(lambda n: bytes([255, 252, 0, 35, 36, 71, 1, 2, 3, 4, 5, 6, 7, 8]), batch=14)
    assert source() == "0z0z123"
    assert source() == "456780z", "the rest of the batch is used before asking for more"


def test_non_format_ids_are_kept_as_written() -> None:
    stream = load([{"event_id": "Not-The_Format!", "timestamp": TS, "type": "chat_request", "content": "x"}])
    assert stream.entries[0].event_id == "Not-The_Format!"
    assert not stream.entries[0].transient_id
    assert raw(stream)[0]["event_id"] == "Not-The_Format!"


def origin(timestamp: str, kind: str, occurrence: int = 0, conversation: str = "") -> str:
    return entry_origins(conversation, [(timestamp, kind)] * (occurrence + 1))[occurrence]


@pytest.mark.parametrize("written", [None, ""])
def test_missing_or_empty_ids_are_derived_at_load_and_marked_transient(written: str | None) -> None:
    entry = {"timestamp": TS, "type": "chat_request", "content": "x"}
    if written is not None:
        entry["event_id"] = written
    stream = load([entry])
    expected = derived_id(origin(TS, "chat_request"))
    assert well_formed(expected)
    assert stream.entries[0].event_id == expected
    assert stream.entries[0].id_origin == "assigned"
    assert raw(stream)[0]["event_id"] == expected


def test_a_file_without_ids_gets_the_same_ids_on_every_load_whatever_the_id_source() -> None:
    entries = [{"timestamp": TS, "type": "turn_start"}, {"timestamp": TS, "type": "chat_request", "content": "x"}]
    first = load(entries, ids_from_random_bytes(__import__("os").urandom))
    second = load(entries, ids_from_random_bytes(__import__("os").urandom))
    assert [e.event_id for e in first.entries] == [e.event_id for e in second.entries]
    saved = load(raw(first))
    assert [e.event_id for e in saved.entries] == [e.event_id for e in first.entries]
    assert not any(entry.transient_id for entry in saved.entries)


def test_the_conversation_is_part_of_a_derived_id() -> None:
    from turnmark.core.stream.conversation_stream import ConversationStream

    data = b'[{"timestamp": "2026-01-02 10:00:00.0", "type": "chat_request", "content": "x"}]'
    ids = {
        ConversationStream.from_json(data, b"{}", new_id=sequential_ids(), conversation=conversation)
        .unwrap()
        .entries[0]
        .event_id
        for conversation in ("jp-c1", "jp-c2")
    }
    assert len(ids) == 2


@given(
    st.lists(
        st.tuples(
            st.sampled_from([TS, "2026-01-02 10:00:01.0", "2026-01-02 10:00:02.5"]),
            st.sampled_from(["chat_request", "chat_response"]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_appending_or_deleting_other_entries_keeps_an_entrys_derived_id(
    keys: list[tuple[str, str]], data: st.DataObject
) -> None:
    def entries(chosen: list[tuple[str, str]]) -> list[dict[str, object]]:
        return [
            {"timestamp": timestamp, "type": kind, **({"content": "x"} if kind == "chat_request" else {"message": "m"})}
            for timestamp, kind in chosen
        ]

    def ids(chosen: list[tuple[str, str]]) -> dict[tuple[str, str, int], str]:
        stream = load(entries(chosen))
        seen: dict[tuple[str, str], int] = {}
        found = {}
        for key, entry in zip(chosen, stream.entries, strict=True):
            found[(*key, seen.get(key, 0))] = entry.event_id
            seen[key] = seen.get(key, 0) + 1
        return found

    before = ids(keys)
    appended = ids([*keys, *data.draw(st.lists(st.sampled_from(keys), max_size=4))])
    assert all(appended[key] == value for key, value in before.items())
    dropped = data.draw(st.integers(0, len(keys) - 1))
    key = keys[dropped]
    if key not in keys[dropped + 1 :]:
        remaining = ids(keys[:dropped] + keys[dropped + 1 :])
        assert all(before[k] == v for k, v in remaining.items() if k[:2] != key)


def test_duplicates_are_repaired_on_the_later_occurrence_deterministically_and_remembered() -> None:
    entries = [
        {"event_id": "aaaaaaa", "timestamp": TS, "type": "chat_request", "content": "first"},
        {"event_id": "bbbbbbb", "timestamp": TS, "type": "chat_response", "message": "m"},
        {"event_id": "aaaaaaa", "timestamp": TS, "type": "chat_request", "content": "copy"},
    ]
    stream = load(entries)
    repaired = derived_id(origin(TS, "chat_request", 1))
    assert [e.event_id for e in stream.entries] == ["aaaaaaa", "bbbbbbb", repaired]
    assert load(entries, ids_from_random_bytes(__import__("os").urandom)).entries[2].event_id == repaired
    assert stream.entries[2].id_origin == "repaired"
    assert stream.duplicated_ids == frozenset({"aaaaaaa"})
    assert stream.id_repairs == ((2, "aaaaaaa"),)
    reloaded = load(raw(stream))
    assert reloaded.duplicated_ids == frozenset()
    assert len({e.event_id for e in reloaded.entries}) == 3


def test_a_derived_id_never_collides_with_an_id_written_later_or_a_dangling_link() -> None:
    first = derived_id(origin(TS, "chat_request"))
    second = derived_id(origin(TS, "chat_request"), 1)
    entries = [
        {"timestamp": TS, "type": "chat_request", "content": "no id"},
        {"event_id": first, "timestamp": TS, "type": "chat_response", "message": "m"},
        {"event_id": "m000001", "request_id": second, "timestamp": TS, "type": "chat_response", "message": "m"},
    ]
    stream = load(entries)
    assert stream.entries[0].event_id == derived_id(origin(TS, "chat_request"), 2)
    assert stream.duplicated_ids == frozenset()


def test_fresh_id_retries_on_collision() -> None:
    assert fresh_id(from_list(["taken01", "", "taken01", "free001"]), {"taken01"}.__contains__) == "free001"


def test_fresh_id_gives_up_on_a_source_that_never_yields_an_unused_id() -> None:
    with pytest.raises(IdSourceExhausted):
        fresh_id(lambda: "same", {"same"}.__contains__)


def test_live_insertion_never_exposes_a_duplicate_id() -> None:
    stream = stream_of(TurnStart(TS), new_id=from_list(["aaaaaaa", "aaaaaaa", "bbbbbbb", "aaaaaaa", "ccccccc"]))
    stream = stream.push(ChatRequest(TS, "x")).push(message())
    assert [e.event_id for e in stream.entries] == ["aaaaaaa", "bbbbbbb", "ccccccc"]


def test_ids_supplied_on_new_entries_are_ignored() -> None:
    loaded = load([{"event_id": "keepme1", "timestamp": TS, "type": "chat_request", "content": "x"}])
    copied = stream_of(request()).push(loaded.entries[0])
    assert copied.entries[1].event_id != "keepme1"
    assert copied.entries[1].id_origin == "inserted"


def test_plan_reports_what_load_did() -> None:
    origins = ["o0", "o1", "o2", "o3", "o4"]
    plan = plan_loaded_ids(["a", None, "a", "b", "b"], origins)
    assert plan.ids == ("a", derived_id("o1"), derived_id("o2"), "b", derived_id("o4"))
    assert plan.origins == ("file", "assigned", "repaired", "file", "repaired")
    assert plan.duplicated == frozenset({"a", "b"})
    assert plan.repairs == ((2, "a"), (4, "b"))


def test_a_plan_without_deriving_keeps_the_same_ids_and_settles_no_other() -> None:
    written: list[str | None] = ["a", None, "a", "b", "b"]
    plan = plan_loaded_ids(written, [], derive=False)
    assert plan.ids == ("a", UNSETTLED, UNSETTLED, "b", UNSETTLED)
    whole = plan_loaded_ids(written, ["o0", "o1", "o2", "o3", "o4"])
    assert (plan.origins, plan.duplicated, plan.repairs) == (whole.origins, whole.duplicated, whole.repairs)


def test_ids_inside_the_raw_fields_of_a_new_payload_are_dropped() -> None:
    from turnmark.core.stream.payloads import ConfigDelta, Unknown

    stream = stream_of(TurnStart(TS))
    stream = stream.push(
        ConfigDelta({"event_id": "e000001", "request_id": "x", "type": "config_delta", "timestamp": TS})
    )
    stream = stream.push(Unknown({"event_id": "e000001", "type": "future", "timestamp": TS}))
    written = [entry["event_id"] for entry in raw(stream)]
    assert written == [entry.event_id for entry in stream.entries]
    assert len(set(written)) == 3
    assert "request_id" not in raw(stream)[1]


def test_a_legacy_format_file_gets_ids_assigned_at_load() -> None:
    import msgspec

    from turnmark.core.stream.conversation_stream import ConversationStream

    head = {"type": "config_delta", "timestamp": TS, "delta": {}}
    data = msgspec.json.encode(
        [head, {"timestamp": TS, "type": "turn_start"}, {"timestamp": TS, "type": "chat_request", "content": "x"}]
    )
    stream = ConversationStream.from_json(data, None, new_id=sequential_ids()).unwrap()
    assert stream.is_legacy
    assert [(e.event_id, e.id_origin) for e in stream.entries] == [
        (derived_id(origin(TS, "turn_start")), "assigned"),
        (derived_id(origin(TS, "chat_request")), "assigned"),
    ]
    assert "event_id" not in raw(stream)[0], "the base config head is not an entry"


def test_derived_ids_are_stable_across_releases() -> None:
    assert derived_id("jp-c1\x1f2026-01-02 10:00:00.0\x1fchat_request\x1f0") == derived_id(
        origin("2026-01-02 10:00:00.0", "chat_request", conversation="jp-c1")
    )
    assert derived_id("x") == "rtnxtiv"


def test_a_new_id_never_equals_a_dangling_request_id() -> None:
    loaded = load(
        [{"event_id": "r1", "request_id": "e000001", "timestamp": TS, "type": "chat_response", "message": "m"}]
    )
    pushed = loaded.push(request())
    assert pushed.entries[1].event_id == "e000002"


def reference_plan(written: list[str | None], origins: list[str], reserved: set[str]) -> tuple[object, ...]:
    """RFD 097's rule one entry at a time, as the plan was first written: a written ID kept where it first
    appears; every other entry's derived, stepping past any ID written, reserved or derived before it."""
    counts = {identifier: written.count(identifier) for identifier in written if identifier}
    used, seen = set(counts) | reserved, set()
    ids, kinds, repairs = [], [], []
    for index, identifier in enumerate(written):
        if identifier and identifier not in seen:
            seen.add(identifier)
            ids.append(identifier)
            kinds.append("file")
            continue
        attempt = 0
        while (new := derived_id(origins[index], attempt)) in used:
            attempt += 1
        used.add(new)
        ids.append(new)
        kinds.append("repaired" if identifier else "assigned")
        if identifier:
            repairs.append((index, identifier))
    duplicated = frozenset(identifier for identifier, count in counts.items() if count > 1)
    return tuple(ids), tuple(kinds), duplicated, tuple(repairs)


ORIGINS = st.sampled_from(["o0", "o1", "o2", "o3", "o0\x001"])
"""Few origins, so entries share one and their derived IDs collide (``o0\\x001`` is ``o0``'s second attempt)."""


@given(
    st.lists(st.tuples(st.one_of(st.none(), st.just(""), st.sampled_from(["a", "b", "c"])), ORIGINS), max_size=12),
    st.sets(st.one_of(st.sampled_from(["a", "z"]), ORIGINS.map(derived_id)), max_size=3),
)
def test_the_plan_is_the_rule_one_entry_at_a_time(entries: list[tuple[str | None, str]], reserved: set[str]) -> None:
    """Its shortcuts (every ID written and distinct; none written; every derived ID at its first attempt) give
    what the rule gives, collisions between derived, written and reserved IDs included."""
    written = [identifier for identifier, _ in entries]
    origins = [origin for _, origin in entries]
    plan = plan_loaded_ids(written, origins, reserved=set(reserved))
    assert (plan.ids, plan.origins, plan.duplicated, plan.repairs) == reference_plan(written, origins, reserved)
