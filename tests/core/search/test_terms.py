"""The query language of ``find``: what becomes which FTS5 expression, and what is refused where."""

from __future__ import annotations

import pytest

from turnmark.core.search.scopes import DEFAULT_SCOPES, SCOPES, index_columns, parse_scopes, renamed
from turnmark.core.search.terms import parse_query, parse_since, quoted_query, words
from turnmark.core.stream.timestamps import sort_key

NOW = "2026-03-08 12:00:00.0"


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("lock", '("lock")'),
        ("lock timeout", '("lock" AND "timeout")'),
        ('"race condition"', '("race condition")'),
        ("retr*", '("retr" *)'),
        ('"exponential back"*', '("exponential back" *)'),
        ("lock -flaky", '(("lock") NOT "flaky")'),
        ('lock -"race condition" -x', '((("lock") NOT "race condition") NOT "x")'),
        ("foo.bar", '("foo.bar")'),
        ("AND OR NOT", '("AND" AND "OR" AND "NOT")'),
        ("(near)", '("(near)")'),
        ("{labels}:x", '("{labels}:x")'),
    ],
)
def test_every_term_is_a_quoted_string_so_nothing_changes_the_expressions_shape(text: str, expression: str) -> None:
    match = parse_query(text).unwrap().match(("summaries",))
    assert match == "{summaries} : (" + expression + ")"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "query: nothing to search for at position 1 (give a word, a phrase or a prefix*)"),
        ("   ", "query: nothing to search for at position 1 (give a word, a phrase or a prefix*)"),
        ('lock "race', 'query: unbalanced quote at position 6 (a phrase is written "like this")'),
        ('lo"ck', 'query: unbalanced quote at position 3 (a phrase is written "like this")'),
        ('"a b"c', 'query: a space must follow a closing quote at position 6 (a phrase is written "like this")'),
        ("lo*ck", "query: '*' can only end a word (prefix*) at position 3"),
        ("lock - x", "query: '-' must come right before the word to leave out at position 6"),
        ("-x -y", "query: only words to leave out at position 2 (give at least one word to look for)"),
        ("lock --", "query: '--' has no letters or digits to search for at position 6"),
        ('lock "?!"', "query: the phrase has no letters or digits to search for at position 6"),
        ("*", "query: '*' has no letters or digits to search for at position 1"),
    ],
)
def test_what_cannot_be_searched_for_is_one_line_naming_the_position(text: str, message: str) -> None:
    assert parse_query(text).failure().describe() == message


def test_words_are_what_the_unicode61_tokenizer_sees() -> None:
    assert words("lock_file-is Écrit 42x") == ["lock", "file", "is", "Écrit", "42x"]


def test_scopes() -> None:
    assert parse_scopes(None) == DEFAULT_SCOPES
    assert parse_scopes("all") == SCOPES
    assert parse_scopes(" reasoning , summaries") == ("summaries", "reasoning")
    assert index_columns(DEFAULT_SCOPES) == SCOPES[:5]
    failure = parse_scopes("summaries,,tools")
    assert not isinstance(failure, tuple)
    assert failure.position == 11


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("36h", "2026-03-07 00:00:00.0"),
        ("2w", "2026-02-22 12:00:00.0"),
        ("2026-03-05", "2026-03-05 00:00:00.0"),
        ("2026-03-05T14:30", "2026-03-05 14:30:00.0"),
        ("2026-03-05 14:30:15", "2026-03-05 14:30:15.0"),
    ],
)
def test_since(text: str, moment: str) -> None:
    assert parse_since(text, NOW).unwrap() == sort_key(moment)[0]


@pytest.mark.parametrize("text", ["yesterday", "7 days", "2026-13-01", "-3d"])
def test_since_refuses_what_is_not_a_date_or_an_age(text: str) -> None:
    assert parse_since(text, NOW).failure().what == "--since"


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("jp --version", [("jp", False), ("--version", False)]),
        ("jp -version", [("jp", False), ("version", True)]),
        ("cargo test --release -flaky", [("cargo", False), ("test", False), ("--release", False), ("flaky", True)]),
        ("--no-verify*", [("--no-verify", False)]),
    ],
)
def test_a_pasted_flag_is_a_word_and_one_dash_leaves_out(text: str, terms: list[tuple[str, bool]]) -> None:
    """Issue 31, finding 4: ``--version`` was taken as ``-`` before ``-version`` and left turns out."""
    assert [(term.text, term.excluded) for term in parse_query(text).unwrap().terms] == terms


def test_a_pasted_flag_alone_is_something_to_look_for() -> None:
    assert parse_query("--version").unwrap().match(("requests",)) == '{requests} : (("--version"))'


@pytest.mark.parametrize(
    ("words_given", "hint"),
    [
        (
            ["stack", "overflow", "windows"],
            "to search for all three words, quote them: turnmark find 'stack overflow windows'",
        ),
        (["lock", "timeout"], "to search for both words, quote them: turnmark find 'lock timeout'"),
        (
            ["stack overflow", "windows"],
            "to search for all three words, quote them: turnmark find 'stack overflow windows'",
        ),
        (["it's", "a\nb"], "to search for all three words, quote them: turnmark find 'it'\\''s a b'"),
        (list("abcdefghijk"), "to search for all 11 words, quote them: turnmark find 'a b c d e f g h i j k'"),
    ],
)
def test_words_given_apart_are_shown_as_one_quoted_query_on_one_line(words_given: list[str], hint: str) -> None:
    assert quoted_query(words_given) == hint


def test_labels_is_the_old_name_of_summaries() -> None:
    assert parse_scopes("labels,tools") == parse_scopes("summaries,tools") == ("summaries", "tools")
    assert renamed("labels, tools") == (
        "--in labels is now --in summaries (in JP, labels are key=value labels on conversations)",
    )
    assert renamed("summaries") == renamed(None) == ()
