"""Keeping API keys out of every message: a key, any 8-character run of it, reversed or base64-encoded.

A server's error body may echo the key anywhere (cut short, inside JSON,
base64-encoded at any alignment, reversed). Every run of 8 or more characters
of any of those forms is replaced by ``***``, before a message is ever cut.
"""

import base64
import re
from collections.abc import Iterable
from functools import lru_cache

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
    """``text`` with every stretch covered by a key run replaced by ``***``.

    Only the places a run could start are tried (``_starts``): a text with no part of a key costs one pass in C,
    not a step per character.
    """
    if not runs:
        return text
    lengths = sorted({len(run) for run in runs})
    covered = bytearray(len(text))
    for start in _starts(text, runs, lengths):
        for length in lengths:
            piece = text[start : start + length]
            if piece in runs:
                covered[start : start + len(piece)] = b"\x01" * len(piece)
    if 1 not in covered:
        return text
    pieces: list[str] = []
    shown = 0
    for hidden in _HIDDEN.finditer(covered):
        pieces += [text[shown : hidden.start()], MASK]
        shown = hidden.end()
    pieces.append(text[shown:])
    return "".join(pieces)


_BLOCK = 4
_BLOCKS = re.compile(f"(?s).{{{_BLOCK}}}")
_HIDDEN = re.compile(b"\x01+")
_SLICE = _BLOCK << 14
"""How much of a text is cut into blocks at a time (a multiple of ``_BLOCK``: the blocks stay where they were)."""


def _starts(text: str, runs: frozenset[str], lengths: list[int]) -> Iterable[int]:
    """Every place of ``text`` where a run may start. A run of ``2 * _BLOCK - 1`` characters or more holds a whole
    block of ``text`` at a multiple of ``_BLOCK``, which is one of the run's own ``_BLOCK``-grams: only around such
    blocks can a run start (a shorter run is looked for everywhere)."""
    if lengths[0] < 2 * _BLOCK - 1:
        return range(len(text))
    grams = _grams(runs)
    longest = lengths[-1]
    found: set[int] = set()
    for offset in range(0, len(text), _SLICE):
        blocks = _BLOCKS.findall(text, offset, offset + _SLICE)
        if grams.isdisjoint(blocks):
            continue
        for number, block in enumerate(blocks):
            if block in grams:
                at = offset + number * _BLOCK
                found.update(range(max(0, at + _BLOCK - longest), at + 1))
    return sorted(found)


@lru_cache(maxsize=8)
def _grams(runs: frozenset[str]) -> frozenset[str]:
    return frozenset(run[start : start + _BLOCK] for run in runs for start in range(len(run) - _BLOCK + 1))
