"""A ``find`` query as the user types it, checked and turned into an FTS5 expression.

Words must all be in the turn (in any of the searched scopes); ``"a phrase"`` is words in this order;
``prefix*`` matches every word starting so; ``-word`` or ``-"a phrase"`` leaves out the turns that have
it, while a word that starts with ``--`` is a word to look for (a pasted flag: ``jp --version``). Every
term is passed to FTS5 as a quoted string, so no operator or punctuation of the query can change the
expression's shape; what cannot be searched for is a ``QueryError`` naming its position. A query has at
most ``MAX_TERMS`` terms (FTS5's work grows with every prefix term).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

from returns.result import Failure, Result, Success

from turnmark.core.errors import QueryError
from turnmark.core.stream.timestamps import sort_key

from .scopes import SCOPES

_PHRASE_HINT = 'a phrase is written "like this"'
_RELATIVE = re.compile(r"(\d{1,5})([hdw])")
_UNITS = {"h": 3600, "d": 86_400, "w": 7 * 86_400}
MAX_TERMS = 64
"""The most terms a query may have."""


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a query: its words, whether it is a prefix, whether it excludes."""

    text: str
    position: int
    prefix: bool = False
    excluded: bool = False

    def fts(self) -> str:
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + (" *" if self.prefix else "")


@dataclass(frozen=True, slots=True)
class Query:
    terms: tuple[Term, ...]

    @property
    def wanted(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if not term.excluded)

    def match(self, scopes: tuple[str, ...] = SCOPES) -> str:
        """The FTS5 ``MATCH`` expression over ``scopes`` (columns of the index).

        >>> parse_query('lock "time out" retr* -flaky').unwrap().match(("summaries", "requests"))
        '{summaries requests} : ((("lock" AND "time out" AND "retr" *) NOT "flaky"))'
        """
        expression = "(" + " AND ".join(term.fts() for term in self.wanted) + ")"
        for term in self.terms:
            if term.excluded:
                expression = f"({expression} NOT {term.fts()})"
        return "{" + " ".join(scopes) + "} : (" + expression + ")"


def words(text: str) -> list[str]:
    """The words FTS5's ``unicode61`` tokenizer sees: runs of letters and digits."""
    return re.findall(r"[^\W_]+", text)


def _term(raw: str, position: int, excluded: bool, phrase: bool) -> Term | QueryError:
    prefix = raw.endswith("*")
    body = raw[:-1] if prefix else raw
    star = body.find("*")
    if star >= 0 and not phrase:
        return QueryError("'*' can only end a word (prefix*)", position + star)
    if not words(body):
        what = "the phrase" if phrase else repr(raw)
        return QueryError(f"{what} has no letters or digits to search for", position)
    return Term(body, position, prefix, excluded)


def parse_query(text: str) -> Result[Query, QueryError]:
    """The query's terms, or where it cannot be searched for (positions count from 1).

    >>> [(t.text, t.prefix, t.excluded) for t in parse_query('lock -"race condition" tim*').unwrap().terms]
    [('lock', False, False), ('race condition', False, True), ('tim', True, False)]
    >>> parse_query('lock "race').failure().describe()
    'query: unbalanced quote at position 6 (a phrase is written "like this")'
    >>> [(t.text, t.excluded) for t in parse_query("jp --version -draft").unwrap().terms]
    [('jp', False), ('--version', False), ('draft', True)]
    >>> parse_query("-flaky").failure().describe()
    'query: only words to leave out at position 2 (give at least one word to look for)'
    """
    terms: list[Term] = []
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        start = index
        excluded = text[index] == "-" and not text.startswith("--", index)
        if excluded:
            index += 1
            if index == len(text) or text[index].isspace():
                return Failure(QueryError("'-' must come right before the word to leave out", start + 1))
        if text[index] == '"':
            close = text.find('"', index + 1)
            if close < 0:
                return Failure(QueryError("unbalanced quote", index + 1, hint=_PHRASE_HINT))
            end = close + 1
            if end < len(text) and text[end] == "*":
                end += 1
            if end < len(text) and not text[end].isspace():
                return Failure(QueryError("a space must follow a closing quote", end + 1, hint=_PHRASE_HINT))
            term = _term(text[index + 1 : close] + text[close + 1 : end], index + 1, excluded, phrase=True)
        else:
            end = index
            while end < len(text) and not text[end].isspace():
                end += 1
            raw = text[index:end]
            quote = raw.find('"')
            if quote >= 0:
                return Failure(QueryError("unbalanced quote", index + quote + 1, hint=_PHRASE_HINT))
            term = _term(raw, index + 1, excluded, phrase=False)
        if isinstance(term, QueryError):
            return Failure(term)
        if len(terms) == MAX_TERMS:
            return Failure(QueryError(f"more than {MAX_TERMS} terms", term.position, hint="search for fewer words"))
        terms.append(term)
        index = end
    if not terms:
        return Failure(QueryError("nothing to search for", 1, hint="give a word, a phrase or a prefix*"))
    if not any(not term.excluded for term in terms):
        return Failure(
            QueryError("only words to leave out", terms[0].position, hint="give at least one word to look for")
        )
    return Success(Query(tuple(terms)))


_COUNTS = ("", "", "both", "all three", "all four", "all five", "all six", "all seven", "all eight", "all nine")


def quoted_query(words: Sequence[str]) -> str:
    """How to search for ``words`` given as separate arguments: one shell argument, on one line.

    >>> quoted_query(["stack", "overflow", "windows"])
    "to search for all three words, quote them: turnmark find 'stack overflow windows'"
    >>> print(quoted_query(["don't", "panic"]))
    to search for both words, quote them: turnmark find 'don'\\''t panic'
    """
    text = " ".join(" ".join(words).split())
    number = len(text.split())
    count = _COUNTS[number] if number < len(_COUNTS) else f"all {number}"
    quoted = "'" + text.replace("'", "'\\''") + "'"
    return f"to search for {count or 'these'} words, quote them: turnmark find {quoted}"


def parse_since(text: str, now: str) -> Result[int, QueryError]:
    """``--since``: a date (``2026-03-05``), a moment (``2026-03-05T14:30``) or an age (``36h``, ``7d``, ``2w``)
    before ``now`` (a JP timestamp), as seconds on ``sort_key``'s scale. A moment with an offset
    (``2026-03-05T21:00+05:00``) is converted to UTC, JP's time; one without is taken as UTC.

    >>> parse_since("7d", "2026-03-08 12:00:00.0").unwrap() == sort_key("2026-03-01 12:00:00.0")[0]
    True
    >>> parse_since("2026-03-05", "2026-03-08 12:00:00.0").unwrap() == sort_key("2026-03-05 00:00:00.0")[0]
    True
    >>> parse_since("2026-03-05T21:00+05:00", "2026-03-08 12:00:00.0").unwrap() == sort_key("2026-03-05 16:00:00.0")[0]
    True
    >>> parse_since("last week", "2026-03-08 12:00:00.0").failure().describe()
    '--since: not a date (YYYY-MM-DD[THH:MM[:SS]]) or an age (36h, 7d, 2w) at position 1'
    """
    value = text.strip()
    relative = _RELATIVE.fullmatch(value)
    if relative:
        return Success(sort_key(now)[0] - int(relative.group(1)) * _UNITS[relative.group(2)])
    try:
        moment = datetime.fromisoformat(value) if "T" in value or " " in value else None
        day = date.fromisoformat(value) if moment is None else moment.date()
    except ValueError:
        return Failure(QueryError("not a date (YYYY-MM-DD[THH:MM[:SS]]) or an age (36h, 7d, 2w)", 1, "--since"))
    if moment is not None and moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
        day = moment.date()
    clock = moment.strftime("%H:%M:%S") if moment is not None else "00:00:00"
    return Success(sort_key(f"{day.isoformat()} {clock}.0")[0])
