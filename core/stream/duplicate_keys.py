"""Finding keys written twice in one entry of ``events.json``.

The fast JSON reader keeps the last of two equal keys, as most readers do;
JP's reader refuses such an entry. Before turnmark writes a file, this slower
check finds them, so a save never silently drops the first value.
"""

import json
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
