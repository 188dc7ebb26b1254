"""A turn's fingerprint: what the summary was written from, to notice that the turn changed since.

A BLAKE2b hash of the turn's stripped transcript followed by the event IDs of
its conversation events: the same on every process and machine, and different
when any event is edited, added, removed, or replaced by a copy. Global entries
that happen to follow the turn (a config change made by the next query) do not
change it.
"""

import hashlib

from .transcript import transcript
from .turns import Turn


def fingerprint(turn: Turn) -> str:
    """Hex digest identifying the turn's content and entries."""
    digest = hashlib.blake2b(digest_size=16, person=b"turnmark-turn")
    digest.update(transcript(turn).encode("utf-8"))
    for entry in turn.events():
        digest.update(b"\x00" + entry.event_id.encode("utf-8"))
    return digest.hexdigest()
