"""Event IDs (RFD 097): generation convention, fresh IDs, load-time assignment and repair.

IDs assigned at load (an entry had none, or repeated an earlier entry's) are
derived from the entry itself, so the same file gives the same IDs on every
read, in every process, and they are the IDs the next save writes. Appending
entries or deleting others leaves the ID of an entry that stays unchanged.
IDs for entries created in memory come from an injected ``IdSource``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:
    from turnmark.core.stream.entries import IdOrigin

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 7

IdSource: TypeAlias = Callable[[], str]
"""Yields candidate IDs; the stream retries until one is unused."""

MAX_ATTEMPTS = 10_000


def well_formed(identifier: str) -> bool:
    """Whether ``identifier`` has RFD 097's form: 7 lowercase base-36 characters."""
    return len(identifier) == ID_LENGTH and all(char in ALPHABET for char in identifier)


_UNIFORM_CHARS = bytes(ord(ALPHABET[byte % 36]) for byte in range(252)) + bytes(4)
_BIASED_BYTES = bytes(range(252, 256))


def ids_from_random_bytes(random_bytes: Callable[[int], bytes], batch: int = 1024) -> IdSource:
    """An ``IdSource`` of 7-character lowercase base-36 IDs drawn from ``random_bytes``.

    Bytes >= 252 are discarded so every character is uniform over the
    alphabet; random bytes are fetched ``batch`` at a time. A program passes the
    operating system's randomness (``secrets.token_bytes``); the core never draws any.

    >>> from turnmark.core import ids_from_random_bytes
    >>> new_id = ids_from_random_bytes(lambda size: bytes(range(36)) * (size // 36 + 1))
    >>> new_id(), new_id()
    ('0123456', '789abcd')
    """
    pool = ""

    def next_id() -> str:
        nonlocal pool
        while len(pool) < ID_LENGTH:
            pool += random_bytes(batch).translate(_UNIFORM_CHARS, _BIASED_BYTES).decode("ascii")
        identifier, pool = pool[:ID_LENGTH], pool[ID_LENGTH:]
        return identifier

    return next_id


def sequential_ids(prefix: str = "e") -> IdSource:
    """A deterministic ``IdSource`` for tests and fixtures: ``e000001``, ``e000002``, …

    >>> from turnmark.core import ChatRequest, ConversationStream, sequential_ids
    >>> new_id = sequential_ids()
    >>> new_id(), new_id()
    ('e000001', 'e000002')
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids("x"))
    >>> [entry.event_id for entry in stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Hi")).entries]
    ['x000001', 'x000002']
    """
    counter = iter(range(1, 36**ID_LENGTH))

    def next_id() -> str:
        number = next(counter)
        return f"{prefix}{number:0{ID_LENGTH - len(prefix)}d}"

    return next_id


_DERIVED_CHARS = bytes(ord(ALPHABET[byte % 36]) for byte in range(256))


_DERIVING = hashlib.blake2b(digest_size=ID_LENGTH, person=b"turnmark-id")


def derived_id(origin: str, attempt: int = 0) -> str:
    """A 7-character ID derived from ``origin`` (what identifies an entry); ``attempt`` steps past collisions."""
    hasher = _DERIVING.copy()
    hasher.update((origin if not attempt else f"{origin}\x00{attempt}").encode())
    return hasher.digest().translate(_DERIVED_CHARS).decode("ascii")


def entry_origins(conversation: str, keys: Iterable[tuple[str, str]]) -> list[str]:
    """What identifies each entry, from its ``(timestamp, kind)``: the conversation, both, and its occurrence.

    The occurrence counts earlier entries with the same timestamp and kind, so two
    copies of one entry still differ.
    """
    seen: dict[tuple[str, str], int] = {}
    origins: list[str] = []
    for key in keys:
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        origins.append(f"{conversation}\x1f{key[0]}\x1f{key[1]}\x1f{occurrence}")
    return origins


def from_list(ids: Iterable[str]) -> IdSource:
    """An ``IdSource`` that returns the given IDs in order (for forcing collisions in tests)."""
    iterator: Iterator[str] = iter(ids)
    return lambda: next(iterator)


def fresh_id(source: IdSource, used: Callable[[str], bool]) -> str:
    """Draw from ``source`` until an ID is non-empty and not ``used``."""
    for _ in range(MAX_ATTEMPTS):
        candidate = source()
        if candidate and not used(candidate):
            return candidate
    from turnmark.core.errors import IdSourceExhausted  # the error types, only where the source gives out

    raise IdSourceExhausted(f"no unused event ID after {MAX_ATTEMPTS} attempts")


@dataclass(frozen=True, slots=True)
class IdPlan:
    """The IDs the loaded entries end up with, and what load had to do to get there."""

    ids: tuple[str, ...]
    origins: tuple[IdOrigin, ...]
    duplicated: frozenset[str]
    repairs: tuple[tuple[int, str], ...]
    """``(entry index, the duplicated ID it carried)`` for each regenerated entry."""


_FILE: tuple[IdOrigin] = ("file",)
_ASSIGNED: tuple[IdOrigin] = ("assigned",)


def _derived(origins: list[str], used: set[str]) -> list[str]:
    """An ID derived from each origin, in order, none ``used`` nor equal to an earlier one: each steps to its
    next attempt past a collision (all at their first attempt when nothing collides, as nearly always: those made
    as ``derived_id`` makes them, without a call each)."""
    copy, chars = _DERIVING.copy, _DERIVED_CHARS
    firsts: list[str] = []
    for origin in origins:
        hasher = copy()
        hasher.update(origin.encode())
        firsts.append(hasher.digest().translate(chars).decode("ascii"))
    if len(set(firsts)) == len(firsts) and used.isdisjoint(firsts):
        return firsts
    derived: list[str] = []
    for origin in origins:
        attempt = 0
        while (new := derived_id(origin, attempt)) in used:
            attempt += 1
        used.add(new)
        derived.append(new)
    return derived


UNSETTLED = ""
"""What a plan without ``derive`` gives an entry it would derive an ID for: never an event ID, and never a
link's target (an empty ``request_id`` binds nothing)."""


def plan_loaded_ids(
    written: list[str | None],
    origins: list[str],
    reserved: frozenset[str] | set[str] = frozenset(),
    *,
    derive: bool = True,
) -> IdPlan:
    """Keep every non-empty written ID; derive missing ones and later duplicates from ``origins``.

    A derived ID never collides with any ID written anywhere in the file, with a
    ``reserved`` one (every ``request_id`` in the file), or with another derived
    one, so it can neither create a false duplicate nor make a dangling link
    resolve; collisions step to the next attempt, in file order. Without ``derive`` (for what needs only which
    entries keep a written ID, such as the listing's counts) each of those is ``UNSETTLED`` instead, and
    ``origins`` is not read.
    """
    if None not in written and "" not in written and len(set(written)) == len(written):
        kept: tuple[IdOrigin, ...] = _FILE * len(written)
        return IdPlan(tuple(cast(list[str], written)), kept, frozenset(), ())
    if derive and not any(written):
        assigned: tuple[IdOrigin, ...] = _ASSIGNED * len(written)
        return IdPlan(tuple(_derived(origins, set(reserved))), assigned, frozenset(), ())
    counts = Counter(identifier for identifier in written if identifier)
    duplicated = frozenset(identifier for identifier, count in counts.items() if count > 1)
    seen: set[str] = set()
    ids: list[str] = []
    kinds: list[IdOrigin] = []
    repairs: list[tuple[int, str]] = []
    fresh: list[int] = []
    for index, identifier in enumerate(written):
        if identifier and identifier not in seen:
            seen.add(identifier)
            ids.append(identifier)
            kinds.append("file")
            continue
        ids.append(UNSETTLED)
        fresh.append(index)
        if identifier:
            kinds.append("repaired")
            repairs.append((index, identifier))
        else:
            kinds.append("assigned")
    if derive:
        derived = _derived([origins[index] for index in fresh], set(counts) | set(reserved))
        for index, new in zip(fresh, derived, strict=True):
            ids[index] = new
    return IdPlan(tuple(ids), tuple(kinds), duplicated, tuple(repairs))
