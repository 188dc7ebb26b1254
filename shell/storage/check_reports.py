"""``check``'s report as the workspace cache keeps it: its JSON, read back only when it has the shape and the
types ``CheckReport.to_json`` writes (anything else is a report to take again from the files, never a
traceback)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from turnmark.core.links.check import ODD_READINGS, CheckReport
from turnmark.core.links.resolution import REASON_TEXT


class _Unresolved(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    event_id: str | None
    type: str
    request_id: Any
    reason: str
    target_type: str | None


class _Duplicated(msgspec.Struct, forbid_unknown_fields=True):
    event_id: str
    entries: list[int]


class _Blocked(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    event_id: str | None
    request_id: str | None


class _DoubledKey(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    key: str
    path: str


class _Excluded(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    event_id: str | None
    type: str
    by_closure: bool


class _Exclusion(msgspec.Struct, forbid_unknown_fields=True):
    request_id: Any
    reason: str
    excluded: list[_Excluded]


class _Malformed(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    key: str
    value: Any


class _OddField(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    event_id: str
    type: str
    key: str
    value: Any
    reading: str
    meaning: str
    fix: str


class _Orphan(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    event_id: str | None
    type: str
    tool_id: str
    name: str | None
    why: str


class _Links(msgspec.Struct, forbid_unknown_fields=True):
    linked: int
    resolved: int
    unlinked: int
    unlinked_answers: int
    unresolved: int
    unresolved_by_reason: dict[str, int]


class _Report(msgspec.Struct, forbid_unknown_fields=True):
    ok: bool
    entries: int
    events: int
    transient_ids: int
    links: _Links
    unresolved: list[_Unresolved]
    duplicated_ids: list[_Duplicated]
    save_blocked_by: list[_Blocked]
    duplicated_keys: list[_DoubledKey]
    exclusions: list[_Exclusion]
    malformed_ids: list[_Malformed]
    orphaned_tool_halves: list[_Orphan]
    odd_fields: list[_OddField]


_DECODER = msgspec.json.Decoder(_Report, strict=True)


def stored(report: CheckReport) -> str:
    """The text the cache keeps for ``report``."""
    return json.dumps(report.to_json(), ensure_ascii=False)


def read_back(text: str) -> CheckReport | None:
    """The report ``stored`` wrote, or ``None`` for text of another shape, other types, or an unknown reason."""
    try:
        report = _DECODER.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    reasons = [item.reason for item in report.unresolved] + [item.reason for item in report.exclusions]
    if not set(reasons) | set(report.links.unresolved_by_reason) <= REASON_TEXT.keys():
        return None
    if not {item.reading for item in report.odd_fields} <= ODD_READINGS.keys():
        return None
    value = msgspec.to_builtins(report)
    lists = {name: tuple(value[name]) for name in CheckReport.__dataclass_fields__ if isinstance(value[name], list)}
    result = CheckReport(value["entries"], value["events"], value["transient_ids"], value["links"], **lists)
    return result if result.ok == report.ok else None
