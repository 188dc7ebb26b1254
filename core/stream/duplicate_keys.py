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

import msgspec

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
_ESCAPED_END = re.compile(rb'\\"[ \t\r\n]*:')
"""A key end after a backslash: an escaped quote inside a string when the backslashes before it are odd."""
_BACKSLASH = 0x5C


def keys_written(data: bytes, ends: int) -> int:
    """The key ends of ``data`` (``ends`` of them) less the escaped quotes: still at least the keys written
    (a string that starts with a colon is the one other end left)."""
    escaped = 0
    for match in _ESCAPED_END.finditer(data):
        start = before = match.start()
        while before > 0 and data[before - 1] == _BACKSLASH:
            before -= 1
        escaped += (start + 1 - before) % 2
    return ends - escaped


def _keys_below(value: Json) -> int:
    """The keys of the objects inside a dict or list (not the dict's own)."""
    count = 0
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is dict:
            count += len(item) + _keys_below(item)
        elif kind is list:
            count += _keys_below(item)
    return count


def key_count(value: Json) -> int:
    """How many keys a decoded JSON value holds, at every depth."""
    kind = type(value)
    if kind is dict:
        return len(value) + _keys_below(value)
    return _keys_below(value) if kind is list else 0


def key_ends(data: bytes) -> int:
    """How many places in ``data`` could end a key (at least as many as the keys written)."""
    return len(_KEY_END.findall(data))


def found_at_load(events: bytes, ends: int, entries: Sequence[bytes], keys: Sequence[int]) -> tuple[DuplicateKey, ...]:
    """``duplicate_keys(events)`` for a file with ``ends`` key ends (``key_ends``), read as ``entries`` (each
    element's bytes, in order; any bytes-like value) that the fast reader decoded with ``keys[i]`` keys in
    entry ``i``.

    A key written twice is a key end the decoded entry lacks, so a file with no more key ends than keys
    has none. Otherwise the escaped quotes before a colon (strings that hold ``\\":``) are taken off,
    first in the whole file, then entry by entry, and only an entry that still has more key ends than
    keys is parsed again, keeping every pair.
    """
    total = sum(keys)
    if ends == total or keys_written(events, ends) == total:
        return ()
    found: list[DuplicateKey] = []
    for index, (entry, count) in enumerate(zip(entries, keys, strict=True)):
        entry_ends = key_ends(entry)
        if entry_ends != count and keys_written(data := bytes(entry), entry_ends) != count:
            _walk(json.loads(data, object_pairs_hook=_pairs), "", index, found)
    return tuple(found)


_entries = msgspec.json.Decoder(list[msgspec.Raw])
_decoder = msgspec.json.Decoder()


def found_in(events: bytes) -> tuple[DuplicateKey, ...]:
    """``duplicate_keys`` of a file the fast reader read (a JSON array), the way ``found_at_load`` finds them."""
    raws = _entries.decode(events)
    return found_at_load(events, key_ends(events), raws, [key_count(_decoder.decode(raw)) for raw in raws])


class KeysWrittenTwice:
    """The keys written twice in a file as read: found during the read of a big file, or when first asked
    for (``later``: a small file's bytes are kept until then, with the keys its decoded entries hold, so a read
    that never saves never looks, and one that does decodes nothing again unless the counts differ)."""

    __slots__ = ("_events", "_found", "_keys")

    def __init__(self, found: tuple[DuplicateKey, ...] = ()) -> None:
        self._found = found
        self._events: bytes | None = None
        self._keys: int | None = None

    @classmethod
    def later(cls, events: bytes, keys: int | None = None) -> "KeysWrittenTwice":
        """Looked for when asked; ``keys``: how many keys the fast reader's decoded entries of ``events`` hold."""
        found = cls()
        found._events, found._keys = events, keys
        return found

    def found(self) -> tuple[DuplicateKey, ...]:
        events = self._events
        if events is not None:
            keys = self._keys
            ends = -1 if keys is None else key_ends(events)
            none = keys is not None and (ends == keys or keys_written(events, ends) == keys)
            self._found = () if none else found_in(events)
            self._events = None
        return self._found


NONE_WRITTEN_TWICE = KeysWrittenTwice()
