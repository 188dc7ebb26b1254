"""Wording shared by messages: a number with its noun, a range of turns, a size in bytes."""


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 turn``, ``2 turns``; ``1 batch``, ``2 batches`` with ``plural``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def turn_range(first: int, last: int) -> str:
    """``turn 0`` or ``turns 0-3``.

    >>> turn_range(0, 0), turn_range(0, 3)
    ('turn 0', 'turns 0-3')
    """
    return f"turn {first}" if first == last else f"turns {first}-{last}"


def byte_size(count: int) -> str:
    """``312 B``, ``2.1 KiB``, ``3.4 MiB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"
