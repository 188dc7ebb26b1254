"""The line under a hit: the heaviest scope with a match, its event, a window on one line, the marks."""

from __future__ import annotations

import re

from turnmark.core.search.documents import MARK_CLOSE as C
from turnmark.core.search.documents import MARK_OPEN as O
from turnmark.core.search.documents import Span
from turnmark.core.search.snippets import WIDTH, Snippet, best_snippet, regex_marked, snippet


def test_the_first_column_with_a_match_wins_and_names_its_event() -> None:
    found = best_snippet(
        [
            ("summaries", "Tune the timer", (Span(0, "t1", False),)),
            ("requests", f"first\nthe {O}lock{C} waits", (Span(0, "q1", False), Span(6, "q2", False))),
        ]
    )
    assert found is not None
    assert (found.scope, found.event_id, found.text, found.marks()) == ("requests", "q2", "the lock waits", [(4, 8)])
    assert best_snippet([("summaries", "nothing here", ())]) is None


def test_a_long_text_is_cut_around_the_first_match_keeping_its_line_break() -> None:
    text = "word " * 100 + f"{O}needle{C}\n\tin   a haystack " + "hay " * 100
    found = snippet("results", text, (Span(0, "r1", True),))
    assert found is not None
    assert found.excluded
    assert found.text.startswith("…")
    assert found.text.endswith("…")
    assert len(found.text) <= WIDTH + 2
    start, end = found.marks()[0]
    assert found.text[start:end] == "needle"
    assert "needle\nin a haystack" in found.text
    assert "[needle]⏎in a haystack" in found.render("[", "]")


def test_the_window_stays_inside_the_matching_event() -> None:
    found = snippet(
        "answers",
        f"other event text\nmine {O}x{C} here\nnext event",
        (Span(0, "a", False), Span(17, "b", False), Span(30, "c", False)),
    )
    assert found is not None
    assert (found.event_id, found.text) == ("b", "mine x here")


def test_escape_sequences_never_reach_the_terminal() -> None:
    found = snippet("requests", f"\x1b]0;pwned\x07 {O}lock{C}", (Span(0, "q", False),))
    assert found is not None
    assert found.render("\x1b[1m", "\x1b[22m") == "\x1b[1mlock\x1b[22m"
    raw = Snippet("requests", "q", False, f"\x1b[2J{O}lock{C}")
    assert raw.render("[", "]") == "\\u{1b}[2J[lock]"


def test_regex_marks_every_non_empty_match() -> None:
    assert regex_marked("a1b22", re.compile(r"\d*")) == f"a{O}1{C}b{O}22{C}"
    assert regex_marked("abc", re.compile("x")) is None
