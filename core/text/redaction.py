"""Keeping API keys out of every message: a key, any 8-character run of it, reversed or base64-encoded.

A server's error body may echo the key anywhere (cut short, inside JSON,
base64-encoded at any alignment, reversed). Every run of 8 or more characters
of any of those forms is replaced by ``***``, before a message is ever cut.
"""

import base64
from collections.abc import Iterable

RUN = 8
MASK = "***"


def key_forms(secret: str) -> tuple[str, ...]:
    """The texts a key can appear as: itself, reversed, and standard/URL-safe base64 at each alignment."""
    raw = secret.encode()
    forms = [secret, secret[::-1]]
    for offset in range(3):
        encoded = base64.b64encode(raw[offset:]).decode()
        usable = encoded[: len(encoded) - 4] if len(raw) - offset > 3 else ""
        forms += [usable, usable.replace("+", "-").replace("/", "_")]
    return tuple(form for form in forms if form)


def key_runs(secrets: Iterable[str]) -> frozenset[str]:
    """Every ``RUN``-character window of every form of every key (a shorter key stands whole)."""
    runs: set[str] = set()
    for secret in secrets:
        for form in key_forms(secret):
            if len(form) < RUN:
                runs.add(form)
            runs.update(form[start : start + RUN] for start in range(len(form) - RUN + 1))
    return frozenset(runs)


def redact(text: str, runs: frozenset[str]) -> str:
    """``text`` with every stretch covered by a key run replaced by ``***``."""
    if not runs:
        return text
    lengths = sorted({len(run) for run in runs})
    covered = [False] * len(text)
    for start in range(len(text)):
        for length in lengths:
            if text[start : start + length] in runs:
                covered[start : start + length] = [True] * length
    if not any(covered):
        return text
    pieces: list[str] = []
    masked = False
    for char, hidden in zip(text, covered, strict=True):
        if hidden:
            if not masked:
                pieces.append(MASK)
            masked = True
        else:
            pieces.append(char)
            masked = False
    return "".join(pieces)
