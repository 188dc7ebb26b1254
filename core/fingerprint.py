"""A turn's fingerprint: what the summary was written from, to notice that the turn changed since.

A BLAKE2b hash of the turn's stripped transcript followed by the event IDs of
all its entries: the same on every process and machine, and different when
any event is edited, added, removed, or replaced by a copy.
"""

import hashlib

from .transcript import transcript
from .turns import Turn


def fingerprint(turn: Turn) -> str:
    """Hex digest identifying the turn's content and entries."""
    digest = hashlib.blake2b(digest_size=16, person=b"turnmark-turn")
    digest.update(transcript(turn).encode("utf-8"))
    for entry in turn.entries:
        digest.update(b"\x00" + entry.event_id.encode("utf-8"))
    return digest.hexdigest()
