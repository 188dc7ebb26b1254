"""Odd wrapper fields read by RFD 097/098's letter: no conversation is refused over one, ``check`` says what is
odd, and every save keeps what it does not repair (issue 39), in both formats."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.hand_edits import TS, Drawn, as_files, hand_edited, two_turns
from turnmark.core.editing.repair import apply_repairs, plan_repairs
from turnmark.core.links.check import check_report, odd_fields
from turnmark.core.links.exclusion import exclude_unresolved
from turnmark.core.links.projection import project
from turnmark.core.links.resolution import count_links, resolve_links
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import ChatRequest, TurnStart, is_linkable
from turnmark.core.stream.save_rule import save_blockers

FORMATS = ("current", "legacy")


def loaded(entries: list[dict[str, Any]], form: str) -> tuple[ConversationStream, bytes]:
    events, base = as_files(entries, form)
    stream = ConversationStream.from_json(events, base, new_id=sequential_ids(), conversation="jp-c17800000099")
    return stream.unwrap(), events


def at(form: str, index: int) -> int:
    """The ``events.json`` index of entry ``index`` of ``two_turns``."""
    return index + (form == "legacy")


@pytest.mark.parametrize("form", FORMATS)
def test_a_request_id_on_a_kind_that_never_links_is_no_link(form: str) -> None:
    entries = two_turns()
    entries[0]["request_id"] = "nowhere"
    entries[1]["request_id"] = "nowhere"
    entries[4]["request_id"] = "c1aaaaa"
    stream, events = loaded(entries, form)
    report = check_report(stream).to_json()
    assert report["links"]["linked"] == 2
    assert report["links"]["resolved"] == 2
    assert report["unresolved"] == []
    assert report["ok"]
    assert [(item["index"], item["reading"], item["value"]) for item in report["odd_fields"]] == [
        (at(form, 0), "ignored", "nowhere"),
        (at(form, 1), "ignored", "nowhere"),
        (at(form, 4), "ignored", "c1aaaaa"),
    ]
    assert project(stream).diagnostics == ()
    assert stream.to_json() == events


@pytest.mark.parametrize("form", FORMATS)
def test_a_null_request_id_is_absent(form: str) -> None:
    entries = two_turns()
    entries[5]["request_id"] = None
    stream, events = loaded(entries, form)
    assert stream.entries[5].request_id is None
    report = check_report(stream).to_json()
    assert report["ok"]
    assert report["links"]["unlinked_answers"] == 1
    assert [(item["index"], item["reading"]) for item in report["odd_fields"]] == [(at(form, 5), "absent")]
    assert len(project(stream).view.entries) == 4
    assert stream.to_json() == events


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("value", ["", 5, 1.5, True, ["c2bbbbb"], {"id": "c2bbbbb"}])
def test_a_request_id_that_is_not_an_id_is_unresolved(form: str, value: object) -> None:
    entries = two_turns()
    entries[5]["request_id"] = value
    stream, events = loaded(entries, form)
    report = check_report(stream).to_json()
    assert not report["ok"]
    assert report["links"] == {
        "linked": 2, "resolved": 1, "unlinked": 4, "unlinked_answers": 0, "unresolved": 1,
        "unresolved_by_reason": {"not_an_id": 1},
    }  # fmt: skip
    (unresolved,) = report["unresolved"]
    assert (unresolved["index"], unresolved["request_id"], unresolved["reason"]) == (at(form, 5), value, "not_an_id")
    (diagnostic,) = project(stream).diagnostics
    assert diagnostic.request_id == value
    assert [event.event_id for event in diagnostic.excluded] == ["m2bbbbb"]
    assert "m2bbbbb" not in {entry.event_id for entry in project(stream).view.entries}
    assert stream.to_json() == events


@pytest.mark.parametrize("form", FORMATS)
def test_an_unresolved_tool_half_takes_its_partner_with_it(form: str) -> None:
    entries = two_turns()
    entries[5:5] = [
        {"event_id": "x2bbbbb", "request_id": "c2bbbbb", "timestamp": TS.format(6), "type": "tool_call_request",
         "id": "call_1", "name": "cargo_check", "arguments": {}},
        {"event_id": "y2bbbbb", "request_id": 0, "timestamp": TS.format(7), "type": "tool_call_response",
         "id": "call_1", "content": "b2s=", "is_error": False},
    ]  # fmt: skip
    stream, _ = loaded(entries, form)
    (diagnostic,) = project(stream).diagnostics
    assert [(event.event_id, event.by_closure) for event in diagnostic.excluded] == [
        ("x2bbbbb", True),
        ("y2bbbbb", False),
    ]


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("value", [42, {"a": 1}, None, True, ["t"]])
def test_an_event_id_that_is_not_a_string_gets_a_stand_in_and_is_kept(form: str, value: object) -> None:
    entries = two_turns()
    entries[2]["event_id"] = value
    stream, events = loaded(entries, form)
    entry = stream.entries[2]
    assert entry.id_origin == "stand_in"
    assert entry.transient_id
    assert isinstance(entry.event_id, str)
    assert entry.event_id not in {"t1aaaaa", "c1aaaaa", "t2bbbbb", "c2bbbbb", "m2bbbbb"}
    again, _ = loaded(entries, form)
    assert again.entries[2].event_id == entry.event_id
    report = check_report(stream).to_json()
    assert not report["ok"]
    assert {"index": at(form, 2), "key": "event_id", "value": value} in report["malformed_ids"]
    assert [(item["index"], item["reading"]) for item in report["odd_fields"]] == [(at(form, 2), "stand_in")]
    assert stream.to_json() == events
    summarized = stream.set_turn_summary("t1aaaaa", "The first turn").unwrap()
    written = json.loads(summarized.to_json())
    assert written[at(form, 2)]["event_id"] == value
    assert written[at(form, 0)]["summary"] == "The first turn"


def test_a_link_to_a_stand_in_is_refused_and_repair_gives_the_id() -> None:
    entries = two_turns()
    entries[4]["event_id"] = 7
    entries[5]["request_id"] = 7
    stream, _ = loaded(entries, "current")
    stand_in = stream.entries[4].event_id
    assert stream.entries[5].request_id == ""
    relinked = plan_repairs(stream)
    assert {fix.kind for fix in relinked.fixes} == {"relink", "give_id"}
    repaired = apply_repairs(stream, relinked.fixes)
    assert repaired.entries[5].request_id == stand_in
    assert save_blockers(stream, repaired) == ()
    written = json.loads(repaired.to_json())
    assert written[4]["event_id"] == stand_in
    assert written[5]["request_id"] == stand_in
    only_relinked = apply_repairs(stream, [fix for fix in relinked.fixes if fix.kind == "relink"])
    (blocker,) = save_blockers(stream, only_relinked)
    assert (blocker.index, blocker.key, blocker.target, blocker.repairable) == (4, "event_id", "7", True)
    reread = ConversationStream.from_json(repaired.to_json(), b"{}\n", new_id=sequential_ids()).unwrap()
    assert check_report(reread).ok
    assert odd_fields(reread) == ()


@pytest.mark.parametrize("form", FORMATS)
def test_repair_removes_what_reads_as_absent_and_keeps_the_summaries(form: str) -> None:
    entries = two_turns()
    entries[0]["summary"] = "Kept summary"
    entries[0]["request_id"] = "nowhere"
    entries[2]["request_id"] = None
    stream, _ = loaded(entries, form)
    plan = plan_repairs(stream)
    assert [(fix.kind, fix.position) for fix in plan.fixes] == [("drop_key", 0), ("drop_key", 2)]
    repaired = apply_repairs(stream, plan.fixes)
    written = json.loads(repaired.to_json())[at(form, 0) :]
    assert "request_id" not in written[0]
    assert "request_id" not in written[2]
    assert written[0]["summary"] == "Kept summary"
    backfilled = plan_repairs(stream, backfill=True)
    assert ("backfill", 2) in [(fix.kind, fix.position) for fix in backfilled.fixes]
    assert ("drop_key", 2) not in [(fix.kind, fix.position) for fix in backfilled.fixes]


def test_synthetic_summary_ids_are_none_of_the_stored_ones() -> None:
    entries = two_turns()
    entries[3]["event_id"] = "~summary0.turn"
    entries[4]["event_id"] = "~summary0.request"
    entries[5]["request_id"] = "~summary0.request"
    entries.append(
        {"event_id": "k1", "timestamp": TS.format(6), "type": "compaction", "from_turn": 0, "to_turn": 0,
         "summary": {"summary": "The first turn."}}
    )  # fmt: skip
    stream, _ = loaded(entries, "current")
    view = project(stream).view
    ids = [event.event_id for event in view.events]
    assert len(ids) == len(set(ids))
    assert [event.synthetic for event in view.events] == [True, True, False, False]
    assert not {event.event_id for event in view.events if event.synthetic} & {e.event_id for e in stream.entries}


def _less_assigned_ids(stream: ConversationStream, data: bytes) -> list[Any]:
    """The entries of ``data`` (the file, or ``stream`` written) less the IDs load assigned ``stream``'s entries
    (all a save adds)."""
    written: list[Any] = msgspec.json.decode(data)
    offset = 1 if stream.is_legacy else 0
    for position, entry in enumerate(stream.entries):
        item = written[position + offset]
        if entry.id_origin in ("assigned", "repaired") and isinstance(item, dict):
            item.pop("event_id", None)
    return written


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=hand_edited())
def test_hand_edits_read_by_the_rfds_letter(drawn: Drawn) -> None:
    """The RFD invariants on any hand-edited file: it reads; links count over linkable kinds only; nothing
    unresolved reaches the projection; turn_start and chat_request are never left out; projected IDs are unique
    strings; an unchanged load writes back the same bytes (plus only the IDs load assigned)."""
    stream = ConversationStream.from_json(drawn.events, drawn.base_config, new_id=sequential_ids()).unwrap()
    entries = stream.entries
    links = resolve_links(entries, stream.duplicated_ids)
    counts = count_links(links)
    linkable = [e for e in entries if is_linkable(e.payload) and e.request_id is not None]
    assert counts.linked == counts.resolved + counts.unresolved == len(linkable)
    assert counts.linked + counts.unlinked == len(entries)
    assert all(link.state == "unlinked" for link, e in zip(links, entries, strict=True) if not is_linkable(e.payload))

    excluded = exclude_unresolved(entries, stream.duplicated_ids).positions
    unresolved = {
        link.index for link in links if link.state == "unresolved" and is_linkable(entries[link.index].payload)
    }
    assert unresolved <= excluded
    assert not any(isinstance(entries[p].payload, TurnStart | ChatRequest) for p in excluded)
    view = project(stream).view
    ids = [event.event_id for event in view.events]
    assert all(isinstance(identifier, str) and identifier for identifier in ids)
    assert len(ids) == len(set(ids)), drawn.edits
    kept = {id(entry) for entry in view.entries}
    assert not any(id(entries[p]) in kept for p in excluded)

    report = check_report(stream)
    assert report.to_json()["links"]["linked"] == counts.linked
    assert all(0 <= item["index"] < len(entries) + stream.is_legacy for item in report.odd_fields)

    written = stream.to_json()
    if not any(entry.id_origin in ("assigned", "repaired") for entry in entries):
        assert written == drawn.events, drawn.edits
    else:
        assert _less_assigned_ids(stream, written) == _less_assigned_ids(stream, drawn.events), drawn.edits
