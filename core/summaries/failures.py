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

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.fingerprint import turn_fingerprint
from turnmark.core.summaries.packing import Candidate
from turnmark.core.summaries.transcript import MAX_MESSAGE_CHARS
from turnmark.core.summaries.turn_rows import TurnRow, turn_row

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

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


def turn_rows(
    stream: ConversationStream, failures: JsonObject | None = None, max_message_chars: int = MAX_MESSAGE_CHARS
) -> tuple[TurnRow, ...]:
    """One row per turn; ``failures`` (the failure memory) says which turns catch-up gave up on, and why.

    ``max_message_chars`` is the transcript limit catch-up uses (the remembered fingerprints were
    taken with it)."""
    remembered = failures or {}
    excluded = excluded_ids(stream) if remembered else frozenset()

    def failure(turn: Turn) -> str | None:
        turn_id = turn.id()
        if turn_id is None or turn_id not in remembered or turn.summary() is not None:
            return None
        return failure_of(remembered, turn_id, turn_fingerprint(turn, excluded, max_message_chars))

    return tuple(turn_row(turn, failure(turn)) for turn in stream.turns())
