"""Wording shared by messages: a number with its noun."""


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 turn``, ``2 turns``; ``1 batch``, ``2 batches`` with ``plural``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
