"""Hand edits of the kinds users make to ``events.json``, drawn by hypothesis, on conversations it generates.

A conversation is a list of entry objects as JP writes them (current format, or legacy with its head
``config_delta``); an edit changes that list the way a person in an editor would: delete, move or
duplicate entries; remove, null, empty, retype, rename or collide IDs; put a ``request_id`` on a kind
that never links; split a tool pair across turns; move an answer to another turn. What RFD 097/098 say
of the result is the property tests' business, and the fast readers' ground (issue 40).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Entries = list[dict[str, object]]
TS = "2026-06-02 09:00:0{}.0"
ODD_VALUES: tuple[object, ...] = (None, "", 0, 7, -1.5, True, [], ["x"], {}, {"id": "c1"})
"""Values a hand edit leaves where an ID belongs."""
NEVER_LINK = ("turn_start", "chat_request", "config_delta", "compaction")


@dataclass(frozen=True)
class Drawn:
    """A generated conversation after hand edits: its files' bytes and what was done to it."""

    events: bytes
    base_config: bytes | None
    edits: tuple[str, ...]

    @property
    def legacy(self) -> bool:
        return self.base_config is None


def _ts(position: int) -> str:
    return f"2026-03-01 10:{position // 60 % 60:02d}:{position % 60:02d}.25"


@st.composite
def conversations(draw: st.DrawFn) -> Entries:
    """A JP conversation as JP writes it: turns of a request, tool calls, reasoning and answers, linked."""
    entries: Entries = []

    def add(kind: str, **fields: object) -> str:
        event_id = f"e{len(entries):06d}"
        entries.append({"event_id": event_id, "timestamp": _ts(len(entries)), "type": kind, **fields})
        return event_id

    for turn in range(draw(st.integers(1, 4))):
        add("turn_start", **({"summary": f"Turn {turn} summary"} if draw(st.booleans()) else {}))
        request = add("chat_request", content=f"Please fix thing {turn}")
        for call in range(draw(st.integers(0, 2))):
            call_id = f"call_{turn}_{call}"
            add("tool_call_request", request_id=request, id=call_id, name="fs_read_file", arguments={})
            if draw(st.integers(0, 4)):
                add("tool_call_response", request_id=request, id=call_id, content="b2s=", is_error=False)
        if draw(st.booleans()):
            add("chat_response", request_id=request, reasoning="Thinking.")
        if draw(st.integers(0, 3)):
            add("chat_response", request_id=request, message=f"Fixed thing {turn}.")
        if draw(st.integers(0, 6)) == 0:
            add("config_delta", delta={"assistant": {"name": "x"}})
    if len(entries) > 3 and draw(st.integers(0, 4)) == 0:
        add("compaction", from_turn=0, to_turn=0, summary={"summary": "The first turn."})
    return entries


def _positions(entries: Entries, kinds: tuple[str, ...] | None = None) -> list[int]:
    return [index for index, entry in enumerate(entries) if kinds is None or entry.get("type") in kinds]


Edit = Callable[[st.DrawFn, Entries], str | None]


def _pick(draw: st.DrawFn, positions: list[int]) -> int | None:
    return draw(st.sampled_from(positions)) if positions else None


def delete(draw: st.DrawFn, entries: Entries) -> str | None:
    at = _pick(draw, _positions(entries))
    if at is None:
        return None
    del entries[at]
    return f"delete {at}"


def move(draw: st.DrawFn, entries: Entries) -> str | None:
    at = _pick(draw, _positions(entries))
    if at is None:
        return None
    entry = entries.pop(at)
    to = draw(st.integers(0, len(entries)))
    entries.insert(to, entry)
    return f"move {at} to {to}"


def duplicate(draw: st.DrawFn, entries: Entries) -> str | None:
    at = _pick(draw, _positions(entries))
    if at is None:
        return None
    to = draw(st.integers(0, len(entries)))
    entries.insert(to, copy.deepcopy(entries[at]))
    return f"duplicate {at} at {to}"


def odd_id(draw: st.DrawFn, entries: Entries) -> str | None:
    """Remove, null, empty or retype an ``event_id`` or ``request_id``."""
    at = _pick(draw, _positions(entries))
    if at is None:
        return None
    key = draw(st.sampled_from(("event_id", "request_id")))
    if draw(st.booleans()):
        entries[at].pop(key, None)
        return f"remove {key} of {at}"
    value = draw(st.sampled_from(ODD_VALUES))
    entries[at][key] = value
    return f"{key} of {at} = {json.dumps(value)}"


def rename_or_collide(draw: st.DrawFn, entries: Entries) -> str | None:
    """Give an ID a hand-written name, or the name another entry has."""
    at = _pick(draw, _positions(entries))
    if at is None:
        return None
    key = draw(st.sampled_from(("event_id", "request_id")))
    names = [str(entry["event_id"]) for entry in entries if isinstance(entry.get("event_id"), str)]
    name = draw(st.sampled_from([*names, "Hand Edited", "~summary0.request", "~summary0.answer", "e000001"]))
    entries[at][key] = name
    return f"{key} of {at} = {name!r}"


def link_never_linking(draw: st.DrawFn, entries: Entries) -> str | None:
    at = _pick(draw, _positions(entries, NEVER_LINK))
    if at is None:
        return None
    requests = [str(e["event_id"]) for e in entries if e.get("type") == "chat_request" and "event_id" in e]
    entries[at]["request_id"] = draw(st.sampled_from([*requests, "nowhere"]))
    return f"link {entries[at]['type']} {at}"


def _turn_of(entries: Entries, position: int) -> int:
    return sum(1 for entry in entries[: position + 1] if entry.get("type") == "turn_start")


def _into_other_turn(draw: st.DrawFn, entries: Entries, kinds: tuple[str, ...], what: str) -> str | None:
    at = _pick(draw, _positions(entries, kinds))
    starts = _positions(entries, ("turn_start",))
    if at is None or len(starts) < 2:
        return None
    entry = entries.pop(at)
    others = [
        start for start in _positions(entries, ("turn_start",)) if _turn_of(entries, start) != _turn_of(entries, at)
    ]
    if not others:
        entries.insert(at, entry)
        return None
    to = draw(st.sampled_from(others)) + 1
    entries.insert(to, entry)
    return f"{what} {at} to {to}"


def split_tool_pair(draw: st.DrawFn, entries: Entries) -> str | None:
    return _into_other_turn(draw, entries, ("tool_call_response",), "split the tool result")


def move_answer(draw: st.DrawFn, entries: Entries) -> str | None:
    return _into_other_turn(draw, entries, ("chat_response", "tool_call_request"), "move the answer")


EDITS: tuple[Edit, ...] = (
    delete,
    move,
    duplicate,
    odd_id,
    rename_or_collide,
    link_never_linking,
    split_tool_pair,
    move_answer,
)


def encode(entries: Entries) -> bytes:
    """Pretty JSON as JP writes it (two spaces, a trailing newline)."""
    return (json.dumps(entries, indent=2, ensure_ascii=False) + "\n").encode()


@st.composite
def hand_edited(draw: st.DrawFn, *, max_edits: int = 4) -> Drawn:
    """A generated conversation after 0 to ``max_edits`` hand edits, in the current or the legacy format."""
    entries = draw(conversations())
    done: list[str] = []
    for _ in range(draw(st.integers(0, max_edits))):
        said = draw(st.sampled_from(EDITS))(draw, entries)
        if said is not None:
            done.append(said)
    if draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            entries = [{k: v for k, v in entry.items() if k not in ("event_id", "request_id")} for entry in entries]
            done.append("written before IDs")
        head: dict[str, object] = {"type": "config_delta", "timestamp": _ts(0), "delta": {"assistant": {"name": "jp"}}}
        return Drawn(encode([head, *entries]), None, tuple(done))
    return Drawn(encode(entries), b"{}\n", tuple(done))


def two_turns() -> list[dict[str, Any]]:
    """A small current-format conversation of two linked turns (IDs ``t1aaaaa``, ``c1aaaaa``, ``m1aaaaa``, then
    ``t2bbbbb``, ``c2bbbbb``, ``m2bbbbb``), to edit by hand in a test."""
    return [
        {"event_id": "t1aaaaa", "timestamp": TS.format(0), "type": "turn_start"},
        {"event_id": "c1aaaaa", "timestamp": TS.format(1), "type": "chat_request", "content": "What is first?"},
        {"event_id": "m1aaaaa", "request_id": "c1aaaaa", "timestamp": TS.format(2), "type": "chat_response",
         "message": "One."},
        {"event_id": "t2bbbbb", "timestamp": TS.format(3), "type": "turn_start"},
        {"event_id": "c2bbbbb", "timestamp": TS.format(4), "type": "chat_request", "content": "What is second?"},
        {"event_id": "m2bbbbb", "request_id": "c2bbbbb", "timestamp": TS.format(5), "type": "chat_response",
         "message": "Two."},
    ]  # fmt: skip


def as_files(entries: list[dict[str, Any]], form: str) -> tuple[bytes, bytes | None]:
    """``events.json`` and ``base_config.json`` holding ``entries`` in the ``current`` or ``legacy`` format."""
    if form == "legacy":
        head: dict[str, Any] = {"type": "config_delta", "timestamp": TS.format(0), "delta": {}}
        return encode([head, *entries]), None
    return encode(entries), b"{}\n"
