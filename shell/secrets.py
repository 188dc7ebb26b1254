"""The API keys this process has read, so that no message or output line can show them."""

import threading

from turnmark.core.text.redaction import key_runs, redact


class _Keys:
    def __init__(self) -> None:
        self.keys: frozenset[str] = frozenset()
        self.runs: frozenset[str] = frozenset()
        self.lock = threading.Lock()


_kept = _Keys()


def keep_secret(key: str) -> None:
    """Remember ``key``: from now on ``redacted`` hides it (and any 8-character run of it)."""
    with _kept.lock:
        if key and key not in _kept.keys:
            _kept.keys = _kept.keys | {key}
            _kept.runs = key_runs(_kept.keys)


def redacted(text: str) -> str:
    """``text`` without any form of a remembered key."""
    return redact(text, _kept.runs)
