"""One line of summary text: the per-character rule, however ``one_line`` applies it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from turnmark.core.text.summary_text import _ESCAPE_SEQUENCE, _invisible, one_line

TRICKY = "\u200d\u200b\u202e\u2066\x85\xa0\u2028\u3000\x1b\x9b\x7f\t\n\r\x0b\x1c é漢🙂"


def by_character(text: str) -> str:
    """The rule, one character at a time."""
    without_escapes = _ESCAPE_SEQUENCE.sub("", text) if "\x1b" in text or "\x9b" in text else text
    kept = "".join(
        " " if char.isspace() else char for char in without_escapes if char.isspace() or not _invisible(char)
    )
    return re.sub(r"\s+", " ", kept).strip()


@given(st.text(alphabet=st.one_of(st.sampled_from(TRICKY), st.characters()), max_size=60))
def test_one_line_is_the_rule_for_each_character(text: str) -> None:
    assert one_line(text) == by_character(text)


def test_invisible_characters_go_and_spaces_collapse() -> None:
    assert (
        one_line("Fix\u200b the \u202ebuild\u2028now\xa0\xa0please \x1b[31mred\x1b[0m")
        == "Fix the build now please red"
    )
    assert one_line("emoji \U0001f468\u200d\U0001f4bb stays") == "emoji \U0001f468\u200d\U0001f4bb stays"


@given(st.text(alphabet=st.sampled_from(" \t\n\x0b\x0c\r\x1c\x1f\x1b\x7f[31mab .,"), max_size=40))
def test_ascii_text_takes_the_same_rule(text: str) -> None:
    assert one_line(text) == by_character(text)


def test_whitespace_is_what_split_splits_on() -> None:
    """``one_line`` collapses with ``str.split``: the same characters as the rule's ``\\s``."""
    space = re.compile(r"\s")
    assert [code for code in range(0x110000) if chr(code).isspace()] == [
        code for code in range(0x110000) if space.fullmatch(chr(code))
    ]
