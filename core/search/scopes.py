"""The scopes of a turn that ``find`` searches, in the order of the index's columns, with their weights.

A turn's summary (its label) outranks its request, the request its answers, the answers the tool names
and arguments; tool results and reasoning, and the conversation's title, are searched only when
``--in`` names them.
"""

from collections.abc import Sequence

from turnmark.core.errors import QueryError

SCOPES: tuple[str, ...] = ("labels", "titles", "requests", "answers", "tools", "results", "reasoning")
"""Every scope, in the order of the index's columns (the schema depends on it)."""

WEIGHTS: dict[str, float] = {
    "labels": 10.0,
    "titles": 6.0,
    "requests": 4.0,
    "answers": 2.0,
    "tools": 1.0,
    "results": 0.5,
    "reasoning": 0.5,
}
"""bm25 column weights: a word in a label counts ten times a word in a tool name."""

DEFAULT_SCOPES: tuple[str, ...] = ("labels", "requests", "answers", "tools")

LIGHT_SCOPES: tuple[str, ...] = SCOPES[:5]
"""The scopes kept apart from the bulky ones in a second index, so that a turn's long tool output does not
push its label down the ranking (bm25 weighs a match by the length of the whole row)."""


def index_columns(scopes: Sequence[str]) -> tuple[str, ...]:
    """The columns of the index a search over ``scopes`` uses: the light one unless a bulky scope is asked for.

    >>> index_columns(("labels", "tools")) == LIGHT_SCOPES, index_columns(("labels", "results")) == SCOPES
    (True, True)
    """
    return LIGHT_SCOPES if set(scopes) <= set(LIGHT_SCOPES) else SCOPES


def by_weight(scopes: Sequence[str]) -> tuple[str, ...]:
    """``scopes`` from the heaviest to the lightest (where a snippet is looked for first)."""
    return tuple(sorted(scopes, key=lambda scope: (-WEIGHTS[scope], SCOPES.index(scope))))


def parse_scopes(text: str | None) -> tuple[str, ...] | QueryError:
    """``--in labels,requests`` as scopes in column order; the default when ``None``.

    >>> parse_scopes("results, labels")
    ('labels', 'results')
    >>> parse_scopes("labels,answer").describe()
    "--in: unknown scope 'answer' at position 8 (scopes: labels, titles, requests, answers, tools, results, reasoning)"
    """
    if text is None:
        return DEFAULT_SCOPES
    chosen: set[str] = set()
    position = 0
    for part in text.split(","):
        name = part.strip()
        where = position + len(part) - len(part.lstrip()) + 1
        position += len(part) + 1
        if name == "all":
            chosen.update(SCOPES)
        elif name in SCOPES:
            chosen.add(name)
        else:
            return QueryError(f"unknown scope {name!r}", where, "--in", f"scopes: {', '.join(SCOPES)}")
    return tuple(scope for scope in SCOPES if scope in chosen)
