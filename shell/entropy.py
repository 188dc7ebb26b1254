"""The operating system's randomness, as the core's ``IdSource``."""

import secrets

from turnmark.core.stream.event_ids import IdSource, ids_from_random_bytes


def random_event_ids() -> IdSource:
    """7-character base-36 event IDs from the OS random number generator (RFD 097)."""
    return ids_from_random_bytes(secrets.token_bytes)
