"""Event IDs (RFD 097): generation convention, fresh IDs, load-time assignment and repair."""

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

from .entries import IdOrigin

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 7

IdSource: TypeAlias = Callable[[], str]
"""Yields candidate IDs; the stream retries until one is unused."""

MAX_ATTEMPTS = 10_000


def well_formed(identifier: str) -> bool:
    """Whether ``identifier`` has RFD 097's form: 7 lowercase base-36 characters."""
    return len(identifier) == ID_LENGTH and all(char in ALPHABET for char in identifier)


class IdSourceExhausted(RuntimeError):
    """The injected ID source kept returning IDs already in use."""


_UNIFORM_CHARS = bytes(ord(ALPHABET[byte % 36]) for byte in range(252)) + bytes(4)
_BIASED_BYTES = bytes(range(252, 256))


def ids_from_random_bytes(random_bytes: Callable[[int], bytes], batch: int = 1024) -> IdSource:
    """An ``IdSource`` of 7-character lowercase base-36 IDs drawn from ``random_bytes``.

    Bytes >= 252 are discarded so every character is uniform over the
    alphabet; random bytes are fetched ``batch`` at a time.
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
    """A deterministic ``IdSource`` for tests and fixtures: ``e000001``, ``e000002``, …"""
    counter = iter(range(1, 36**ID_LENGTH))

    def next_id() -> str:
        number = next(counter)
        return f"{prefix}{number:0{ID_LENGTH - len(prefix)}d}"

    return next_id


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
    raise IdSourceExhausted(f"no unused event ID after {MAX_ATTEMPTS} attempts")


@dataclass(frozen=True, slots=True)
class IdPlan:
    """The IDs the loaded entries end up with, and what load had to do to get there."""

    ids: tuple[str, ...]
    origins: tuple[IdOrigin, ...]
    duplicated: frozenset[str]
    repairs: tuple[tuple[int, str], ...]
    """``(entry index, the duplicated ID it carried)`` for each regenerated entry."""


def plan_loaded_ids(
    written: list[str | None], source: IdSource, reserved: frozenset[str] | set[str] = frozenset()
) -> IdPlan:
    """Keep every non-empty written ID; assign missing ones; regenerate later duplicates.

    Fresh IDs never collide with any ID written anywhere in the file, nor with
    a ``reserved`` one (every ``request_id`` in the file), so an assigned ID can
    neither create a false duplicate nor make a dangling link resolve.
    """
    counts = Counter(identifier for identifier in written if identifier)
    duplicated = frozenset(identifier for identifier, count in counts.items() if count > 1)
    used: set[str] = set(counts) | set(reserved)
    seen: set[str] = set()
    ids: list[str] = []
    origins: list[IdOrigin] = []
    repairs: list[tuple[int, str]] = []
    for index, identifier in enumerate(written):
        if not identifier:
            new = fresh_id(source, used.__contains__)
            used.add(new)
            ids.append(new)
            origins.append("assigned")
        elif identifier in seen:
            new = fresh_id(source, used.__contains__)
            used.add(new)
            ids.append(new)
            origins.append("repaired")
            repairs.append((index, identifier))
        else:
            seen.add(identifier)
            ids.append(identifier)
            origins.append("file")
    return IdPlan(tuple(ids), tuple(origins), duplicated, tuple(repairs))
