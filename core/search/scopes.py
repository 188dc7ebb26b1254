"""The scopes of a turn that ``find`` searches, in the order of the index's columns, with their weights.

A turn's summary outranks its request, the request its answers, the answers the tool names
and arguments; tool results and reasoning, and the conversation's title, are searched only when
``--in`` names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from turnmark.core.errors import QueryError

SCOPES: tuple[str, ...] = ("summaries", "titles", "requests", "answers", "tools", "results", "reasoning")
"""Every scope, in the order of the index's columns (the schema depends on it)."""

WEIGHTS: dict[str, float] = {
    "summaries": 10.0,
    "titles": 6.0,
    "requests": 4.0,
    "answers": 2.0,
    "tools": 1.0,
    "results": 0.5,
    "reasoning": 0.5,
}
"""bm25 column weights: a word in a turn's summary counts ten times a word in a tool name."""

RENAMED: dict[str, str] = {"labels": "summaries"}
"""Old scope names ``--in`` still takes (help does not show them): ``labels`` read as JP's own ``key=value``
labels on conversations (``jp conversation label``)."""

DEFAULT_SCOPES: tuple[str, ...] = ("summaries", "requests", "answers", "tools")

LIGHT_SCOPES: tuple[str, ...] = SCOPES[:5]
"""The scopes kept apart from the bulky ones in a second index, so that a turn's long tool output does not
push its summary down the ranking (bm25 weighs a match by the length of the whole row)."""


def index_columns(scopes: Sequence[str]) -> tuple[str, ...]:
    """The columns of the index a search over ``scopes`` uses: the light one unless a bulky scope is asked for.

    >>> index_columns(("summaries", "tools")) == LIGHT_SCOPES, index_columns(("summaries", "results")) == SCOPES
    (True, True)
    """
    return LIGHT_SCOPES if set(scopes) <= set(LIGHT_SCOPES) else SCOPES


def by_weight(scopes: Sequence[str]) -> tuple[str, ...]:
    """``scopes`` from the heaviest to the lightest (where a snippet is looked for first)."""
    return tuple(sorted(scopes, key=lambda scope: (-WEIGHTS[scope], SCOPES.index(scope))))


def renamed(text: str | None) -> tuple[str, ...]:
    """One note for each old scope name (``RENAMED``) that ``--in`` gives.

    >>> print(*renamed("labels, tools"))
    --in labels is now --in summaries (in JP, labels are key=value labels on conversations)
    """
    names = {part.strip() for part in text.split(",")} if text is not None else set()
    return tuple(
        f"--in {old} is now --in {new} (in JP, labels are key=value labels on conversations)"
        for old, new in RENAMED.items()
        if old in names
    )


def parse_scopes(text: str | None) -> tuple[str, ...] | QueryError:
    """``--in summaries,requests`` as scopes in column order; the default when ``None``; an old name
    (``RENAMED``) is taken for its new one.

    >>> parse_scopes("results, summaries"), parse_scopes("labels")
    (('summaries', 'results'), ('summaries',))
    >>> parse_scopes("summaries,answer").describe()[:46]
    "--in: unknown scope 'answer' at position 11 (s"
    """
    if text is None:
        return DEFAULT_SCOPES
    chosen: set[str] = set()
    position = 0
    for part in text.split(","):
        name = RENAMED.get(part.strip(), part.strip())
        where = position + len(part) - len(part.lstrip()) + 1
        position += len(part) + 1
        if name == "all":
            chosen.update(SCOPES)
        elif name in SCOPES:
            chosen.add(name)
        else:
            from turnmark.core.errors import QueryError  # the errors' module, only where a scope is refused

            return QueryError(f"unknown scope {name!r}", where, "--in", f"scopes: {', '.join(SCOPES)}")
    return tuple(scope for scope in SCOPES if scope in chosen)
