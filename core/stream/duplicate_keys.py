"""Finding keys written twice in one entry of ``events.json``.

The fast JSON reader keeps the last of two equal keys, as most readers do;
JP's reader refuses such an entry. Load finds them (``found_at_load``), so a save
never silently drops the first value.

Load does it in one pass: the keys the fast reader kept are counted, and so are the places
in the bytes that could end a key (a quote before a colon); only when these differ does the
slower reader (stdlib ``json`` keeping every pair) look, and only at the entries where they
differ. ``duplicate_keys`` is that slower reader over a whole file.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from turnmark.core.stream.json_value import Json


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """``key`` appears more than once in one object of entry ``index`` (``path`` is where inside it)."""

    index: int
    key: str
    path: str


class _Pairs(list[tuple[str, Json]]):
    """An object as its key/value pairs, in order, duplicates kept."""


def _pairs(pairs: list[tuple[str, Json]]) -> _Pairs:
    return _Pairs(pairs)


def _walk(value: Json, path: str, index: int, found: list[DuplicateKey]) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, item in value:
            if key in seen:
                found.append(DuplicateKey(index, key, path or "(top)"))
            seen.add(key)
            _walk(item, f"{path}.{key}" if path else key, index, found)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _walk(item, f"{path}[{position}]", index, found)


def duplicate_keys(events: bytes) -> tuple[DuplicateKey, ...]:
    """Every key written twice within one object of each entry (``events`` must be valid JSON)."""
    document = json.loads(events, object_pairs_hook=_pairs)
    found: list[DuplicateKey] = []
    if isinstance(document, list):
        for index, entry in enumerate(document):
            _walk(entry, "", index, found)
    return tuple(found)


_KEY_END = re.compile(rb'"[ \t\r\n]*:')
"""Where a key can end: every key does, and so can a string that holds an escaped quote and a colon."""


def _nested_keys(value: Json) -> int:
    count = 0
    items = value.values() if type(value) is dict else value
    for item in items:
        kind = type(item)
        if kind is dict:
            count += len(item) + _nested_keys(item)
        elif kind is list:
            count += _nested_keys(item)
    return count


def key_count(value: Json) -> int:
    """How many keys a decoded JSON value holds, at every depth."""
    kind = type(value)
    if kind is dict:
        return len(value) + _nested_keys(value)
    return _nested_keys(value) if kind is list else 0


def key_ends(data: bytes) -> int:
    """How many places in ``data`` could end a key (at least as many as the keys written)."""
    return len(_KEY_END.findall(data))


def found_at_load(ends: int, entries: Sequence[bytes], keys: Sequence[int]) -> tuple[DuplicateKey, ...]:
    """``duplicate_keys`` of a file with ``ends`` key ends (``key_ends``), read as ``entries`` (each
    element's bytes, in order; any bytes-like value) that the fast reader decoded with ``keys[i]`` keys
    in entry ``i``.

    A key written twice is a key end the decoded entry lacks, so a file with no more key ends than
    keys has none; otherwise only the entries with more are parsed again, keeping every pair.
    """
    if ends == sum(keys):
        return ()
    found: list[DuplicateKey] = []
    for index, (entry, count) in enumerate(zip(entries, keys, strict=True)):
        if key_ends(entry) != count:
            _walk(json.loads(bytes(entry), object_pairs_hook=_pairs), "", index, found)
    return tuple(found)
