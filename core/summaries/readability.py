"""Whether a label reads as a phrase or as a list of identifiers (issue 23).

A label names at most one or two identifiers (the most telling file, function or crate); one made of
a run of them (``Update bug GiB Path::iter() next_back() Prefix RootDir``) says what the turn touched,
not what it did. The quality gate refuses such a label whoever wrote it, and ``bench/labels.py`` counts
the labels that name three identifiers or more.
"""

import re
from functools import lru_cache

_EDGES = "\"'`,;:!?[]{}<>«»“”‘’"
_CALL = re.compile(r"^[A-Za-z_][\w:.<>-]*\(\)$")
_SNAKE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|^_[A-Za-z]")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_FILE = re.compile(r"^\.?[\w-]*[A-Za-z0-9_]\.[A-Za-z][A-Za-z0-9]{0,5}$")
_PATH = re.compile(r"[\w.-]/[\w.-]|^(?:~|\.{1,2})?/\w")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc.", "vs.", "a.m", "p.m"})

MAX_IDENTIFIERS = 2
"""The most identifiers a label names; a third makes it a list."""


@lru_cache(maxsize=4096)
def identifier_like(token: str) -> bool:
    """A token that is code rather than a word: ``snake_case``, ``CamelCase``, ``a::b``, ``f()``,
    ``file.ext``, a path.

    >>> [identifier_like(t) for t in ("load_config", "ConfigLoader", "Path::iter()", "persist()", "fs.rs,")]
    [True, True, True, True, True]
    >>> [identifier_like(t) for t in ("src/fts.rs", "better/newer", "Fix", "RFD", "e.g.", "2.0", "(again)")]
    [True, True, False, False, False, False, False]
    """
    stripped = token.strip(_EDGES)
    if stripped.endswith("()"):
        return bool(_CALL.match(stripped))
    stripped = stripped.strip("().").rstrip(".")
    if not any(char.isalpha() for char in stripped) or stripped.lower() in _ABBREVIATIONS:
        return False
    return bool(
        "::" in stripped
        or _SNAKE.search(stripped)
        or _CAMEL.search(stripped)
        or _FILE.match(stripped)
        or _PATH.search(stripped)
    )


def identifiers(label: str) -> list[str]:
    """The identifier-like tokens of ``label``, in order."""
    return [token for token in label.split() if identifier_like(token)]


def identifier_list(label: str) -> bool:
    """The label names more identifiers than ``MAX_IDENTIFIERS`` and they make up more than half its words:
    a list of what the turn touched rather than a phrase.

    >>> identifier_list("Update bug GiB Path::iter() next_back() Prefix RootDir")
    True
    >>> identifier_list("Rename jp_store to jp_storage in Cargo.toml"), identifier_list("Fix the lock race")
    (False, False)
    """
    found = len(identifiers(label))
    return found > MAX_IDENTIFIERS and 2 * found > len(label.split())
