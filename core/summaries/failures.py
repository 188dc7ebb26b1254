"""Turns whose summary answers keep failing (RFD 126 catch-up must not re-ask forever at full token cost).

A failure is an answer that failed validation or was cut off for a turn with a
given fingerprint. After ``GIVE_UP_AFTER`` such failures with the same
fingerprint the turn is not sent again until it changes (a new fingerprint
starts a new count) or the user asks (``summarize --retry-failed``). The
memory is a plain mapping ``{turn_id: {"fingerprint", "failures", "reason"}}``
kept outside the conversation, so it never changes what a model sees.
A summary the quality gate refuses (``summary_gate``) is a failed answer like
any other. Fingerprints are taken at the configured transcript limit
(``conversation.turn_summary.transcript.max_message_chars``): changing it
starts a new count for the turns whose transcript it changes, since the
model would read something else; the other turns keep theirs.
"""

from collections.abc import Iterable, Mapping

from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.packing import Candidate

GIVE_UP_AFTER = 3


def counted(memory: JsonObject, failed: Mapping[str, tuple[str, str]]) -> JsonObject:
    """``memory`` with one more failure for each ``turn_id -> (fingerprint, reason)``."""
    updated = dict(memory)
    for turn_id, (fingerprint, reason) in failed.items():
        record = memory.get(turn_id)
        same = isinstance(record, dict) and record.get("fingerprint") == fingerprint
        before = record.get("failures") if same and isinstance(record, dict) else 0
        failures = (before if isinstance(before, int) else 0) + 1
        updated[turn_id] = {"fingerprint": fingerprint, "failures": failures, "reason": reason}
    return updated


def forgotten(memory: JsonObject, turn_ids: Iterable[str]) -> JsonObject:
    """``memory`` without the turns that got a summary."""
    gone = set(turn_ids)
    return {turn_id: record for turn_id, record in memory.items() if turn_id not in gone}


def failure_of(memory: JsonObject, turn_id: str, fingerprint: str | None = None) -> str | None:
    """Why the turn is no longer asked for (``None`` when it still is); ``fingerprint``: the turn's current one."""
    record = memory.get(turn_id)
    if not isinstance(record, dict) or not isinstance(record.get("failures"), int):
        return None
    if fingerprint is not None and record.get("fingerprint") != fingerprint:
        return None
    failures = record["failures"]
    if not isinstance(failures, int) or failures < GIVE_UP_AFTER:
        return None
    return f"{failures} answers failed ({record.get('reason')}); not asked again until the turn changes"


def given_up(memory: JsonObject, candidates: Iterable[Candidate]) -> dict[str, str]:
    """The candidates not to send again, with why."""
    found: dict[str, str] = {}
    for candidate in candidates:
        why = failure_of(memory, candidate.turn_id, candidate.fingerprint)
        if why is not None:
            found[candidate.turn_id] = why
    return found
