"""Property tests: projection over random streams and random hand edits (delete, duplicate, reorder, relink)."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.provider_rules import check_anthropic, check_ollama, check_openai
from tests.support.streams import TS, answer, ask, call, message, reasoning, request, result, turn
from turnmark.core.links.compaction import apply_compactions
from turnmark.core.links.exclusion import tool_pairs
from turnmark.core.links.projection import project
from turnmark.core.links.resolution import resolve_links
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import PROVIDER_VISIBLE_TYPES, Compaction, Payload, ToolCallsPolicy
from turnmark.core.wire.chat import request_body

call_ids = st.sampled_from(["a", "b", "c"])


@st.composite
def turns(draw: st.DrawFn) -> list[Payload]:
    payloads: list[Payload] = [turn(), request(draw(st.text(min_size=1, max_size=8)))]
    for _ in range(draw(st.integers(0, 3))):
        step = draw(st.sampled_from(["reasoning", "tools", "inquiry", "message", "interrupt"]))
        if step == "reasoning":
            payloads.append(reasoning())
        elif step == "tools":
            ids = draw(st.lists(call_ids, min_size=1, max_size=2))
            payloads += [call(i) for i in ids] + [result(i, is_error=draw(st.booleans())) for i in ids]
        elif step == "inquiry":
            payloads += [ask(), answer()]
        elif step == "interrupt":
            payloads.append(request("interrupt"))
        else:
            payloads.append(message())
    payloads.append(message())
    return payloads


@st.composite
def compactions(draw: st.DrawFn) -> list[Compaction]:
    out = []
    for _ in range(draw(st.integers(0, 2))):
        start = draw(st.integers(0, 4))
        end = draw(st.integers(start, 6))
        kind = draw(st.sampled_from(["summary", "reasoning", "omit", "strip"]))
        stamp = draw(st.sampled_from([TS, "2026-03-01 00:00:00.0"]))
        if kind == "summary":
            out.append(Compaction.new(stamp, start, end, summary=draw(st.sampled_from(["S1", "S2"]))))
        elif kind == "reasoning":
            out.append(Compaction.new(stamp, start, end, reasoning_strip=True))
        elif kind == "omit":
            out.append(Compaction.new(stamp, start, end, tool_calls=ToolCallsPolicy("omit")))
        else:
            out.append(Compaction.new(stamp, start, end, tool_calls=ToolCallsPolicy("strip", True, True)))
    return out


@st.composite
def written_streams(draw: st.DrawFn) -> list[Json]:
    """The entries JP would write for a random conversation (stamped, so every link resolves)."""
    stream = ConversationStream.empty({}, new_id=sequential_ids())
    for payloads in draw(st.lists(turns(), min_size=1, max_size=4)):
        stream = stream.extend(payloads)
    stream = stream.extend(draw(compactions()))
    entries: list[Json] = msgspec.json.decode(stream.to_json())
    return entries


@st.composite
def hand_edited(draw: st.DrawFn) -> list[Json]:
    """A written stream after random hand edits."""
    entries = draw(written_streams())
    for _ in range(draw(st.integers(0, 4))):
        if not entries:
            break
        index = draw(st.integers(0, len(entries) - 1))
        edit = draw(st.sampled_from(["delete", "duplicate", "reorder", "relink", "unlink"]))
        if edit == "delete":
            del entries[index]
        elif edit == "duplicate":
            entries.insert(index, dict(entries[index]))
        elif edit == "reorder":
            moved = entries.pop(index)
            entries.insert(draw(st.integers(0, len(entries))), moved)
        elif edit == "relink":
            targets = [e["event_id"] for e in entries] + ["missing"]
            entries[index] = {**entries[index], "request_id": draw(st.sampled_from(targets))}
        else:
            entries[index] = {key: value for key, value in entries[index].items() if key != "request_id"}
    return entries


def load(entries: list[Json]) -> ConversationStream:
    return ConversationStream.from_json(msgspec.json.encode(entries), b"{}", new_id=sequential_ids("z")).unwrap()


def has_compactions(stream: ConversationStream) -> bool:
    return any(isinstance(entry.payload, Compaction) for entry in stream.entries)


@settings(max_examples=300)
@given(hand_edited())
def test_projection_after_hand_edits(entries: list[Json]) -> None:
    stream = load(entries)
    projection = project(stream)
    assert projection == project(stream), "projecting is deterministic"
    in_view = {event.event_id for event in projection.view.events}
    links = resolve_links(stream.entries, stream.duplicated_ids)
    for link in links:
        entry = stream.entries[link.index]
        if link.state == "unresolved" and entry.type_tag not in ("turn_start", "chat_request"):
            assert entry.event_id not in in_view, "no unresolved-linked event reaches the view"
    for one, other in tool_pairs(stream.entries).items():
        both = (stream.entries[one].event_id in in_view, stream.entries[other].event_id in in_view)
        assert both[0] == both[1], "no tool call or result is left without its pair"
    excluded = {event.event_id: event for diagnostic in projection.diagnostics for event in diagnostic.excluded}
    assert not excluded.keys() & in_view
    for link in links:
        if link.state == "unlinked" and link.event_id in excluded:
            assert excluded[link.event_id].by_closure, "an unlinked event is only ever left out with its pair"
    if not has_compactions(stream):
        for link in links:
            entry = stream.entries[link.index]
            if link.state == "unlinked" and isinstance(entry.payload, PROVIDER_VISIBLE_TYPES):
                assert entry.event_id in in_view or entry.event_id in excluded


@given(written_streams(), st.data())
def test_unlinked_events_are_left_out_only_as_the_other_half_of_a_tool_call(
    entries: list[Json], data: st.DataObject
) -> None:
    edited = []
    for written in entries:
        fate = data.draw(st.sampled_from(["keep", "unlink", "break"]))
        if fate == "unlink":
            edited.append({key: value for key, value in written.items() if key != "request_id"})
        elif fate == "break" and "request_id" in written:
            edited.append({**written, "request_id": "deleted"})
        else:
            edited.append(written)
    stream = load(edited)
    partners = tool_pairs(stream.entries)
    positions = {entry.event_id: position for position, entry in enumerate(stream.entries)}
    for diagnostic in project(stream).diagnostics:
        for event in diagnostic.excluded:
            if stream.entries[positions[event.event_id]].request_id is None:
                assert event.by_closure
                assert positions[event.event_id] in partners


@given(hand_edited())
def test_compaction_consumes_every_overlay_and_is_idempotent(entries: list[Json]) -> None:
    stream = load(entries)
    once = apply_compactions(stream.entries)
    assert not any(isinstance(entry.payload, Compaction) for entry in once.entries)
    assert apply_compactions(once.entries).entries == once.entries


@settings(max_examples=200)
@given(hand_edited())
def test_every_body_is_one_its_api_accepts(entries: list[Json]) -> None:
    view = project(load(entries)).view
    check_anthropic(request_body(view, "anthropic", {}))
    check_openai(request_body(view, "openai", {}))
    check_ollama(request_body(view, "ollama", {}))


@given(written_streams())
def test_a_stream_with_no_links_and_no_overlays_projects_to_exactly_its_visible_events(entries: list[Json]) -> None:
    plain = [
        {key: value for key, value in entry.items() if key != "request_id"}
        for entry in entries
        if entry["type"] != "compaction"
    ]
    stream = load(plain)
    visible = [entry.event_id for entry in stream.entries if isinstance(entry.payload, PROVIDER_VISIBLE_TYPES)]
    projection = project(stream)
    assert [event.event_id for event in projection.view.events] == visible
    assert projection.diagnostics == ()


@given(written_streams())
def test_a_stream_written_by_the_stamping_paths_loses_nothing_to_exclusion(entries: list[Json]) -> None:
    assert project(load(entries)).diagnostics == ()
