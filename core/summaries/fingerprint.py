"""A turn's fingerprint: what the summary was written from, to notice that the turn changed since.

A BLAKE2b hash of the turn's stripped transcript followed by the event IDs of
the conversation events it describes (RFD 098's excluded events are in
neither): the same on every process and machine, and different
when any event is edited, added, removed, or replaced by a copy. Global entries
that happen to follow the turn (a config change made by the next query) do not
change it. It is taken over the transcript the model reads, so a different
``max_message_chars`` gives a different fingerprint: the model would read
something else.
"""

import hashlib

from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.transcript import MAX_MESSAGE_CHARS, described_events, turn_transcript


def turn_fingerprint(
    turn: Turn, excluded: frozenset[str] = frozenset(), max_message_chars: int = MAX_MESSAGE_CHARS
) -> str:
    """Hex digest identifying the turn's content and entries (``excluded``, ``max_message_chars``: as for
    ``transcript``).

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids, turn_fingerprint
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> stream = stream.push(ChatResponse(ts, "message", "Fixed."))
    >>> before = turn_fingerprint(stream.turns()[0])
    >>> before
    '52fa075fb2aba55d67fc94533a2b1f89'
    >>> labelled = stream.set_turn_summary("e000001", "Build fixed").unwrap()
    >>> turn_fingerprint(labelled.turns()[0]) == before  # a summary does not change the turn
    True
    >>> turn_fingerprint(stream.push(ChatResponse(ts, "message", "Also the tests.")).turns()[0]) == before
    False
    """
    return transcript_fingerprint(turn_transcript(turn, excluded, max_message_chars), turn, excluded)


def transcript_fingerprint(transcript: str, turn: Turn, excluded: frozenset[str] = frozenset()) -> str:
    """``turn_fingerprint`` of a turn whose ``transcript`` was made already (catch-up makes it once for both)."""
    digest = hashlib.blake2b(digest_size=16, person=b"turnmark-turn")
    digest.update(transcript.encode("utf-8"))
    for entry in described_events(turn, excluded):
        digest.update(b"\x00" + entry.event_id.encode("utf-8"))
    return digest.hexdigest()
