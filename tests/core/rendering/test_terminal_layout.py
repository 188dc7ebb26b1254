"""The terminal layout of ``show`` (issue 40): its shortcuts against the long way, and what it does with
Markdown, with plain values."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.rendering import terminal_layout
from turnmark.core.rendering.terminal_layout import (
    Line,
    Run,
    code_lines,
    markdown_lines,
    plain_paragraphs,
    wrap,
    wrap_words,
)

WORDS = st.sampled_from(["a", "lock", "the", "build", "x" * 30, "(fine)", "3", "it's", "ü", "漢字", "🔧"])


def characters(lines: list[Line]) -> list[list[tuple[str, str]]]:
    """Each line as (character, style) pairs: the same page however the runs are cut."""
    return [[(char, style) for text, style in line for char in text] for line in lines]


def text(lines: list[Line]) -> list[str]:
    return ["".join(piece for piece, _ in line) for line in lines]


@settings(max_examples=300, derandomize=True)
@given(
    words=st.lists(st.tuples(WORDS, st.sampled_from([" ", "  ", "   "])), max_size=30),
    width=st.integers(1, 40),
    style=st.sampled_from(["", "bold reverse"]),
)
def test_the_plain_wrap_lays_out_what_the_word_by_word_wrap_does(
    words: list[tuple[str, str]], width: int, style: str
) -> None:
    sentence = "".join(word + gap for word, gap in words)
    runs: list[Run] = [(sentence, style)]
    assert characters(wrap(runs, width)) == characters(wrap_words(runs, width))


def test_wrap_keeps_a_long_word_whole_and_breaks_at_line_feeds() -> None:
    assert text(wrap([("a " + "x" * 12 + " b", "")], 5)) == ["a", "x" * 12, "b"]
    assert text(wrap([("one\ntwo three", "bold")], 40)) == ["one", "two three"]
    assert text(wrap([("", "")], 10)) == [""]


@settings(max_examples=300, derandomize=True)
@given(
    source=st.lists(
        st.one_of(
            st.lists(WORDS.filter(str.isascii), min_size=1, max_size=8).map(" ".join),
            st.sampled_from(["", "   ", "1. one", "  indented", "    code", "end  ", "- item", "# head"]),
        ),
        max_size=8,
    ).map("\n".join),
    width=st.integers(10, 60),
)
def test_plain_text_skips_the_parser_and_lays_out_the_same(source: str, width: int) -> None:
    shortcut = markdown_lines(source, width, "dim")
    with mock.patch.object(terminal_layout, "plain_paragraphs", return_value=None):
        long_way = markdown_lines(source, width, "dim")
    assert characters(shortcut) == characters(long_way), source


def test_what_markdown_marks_is_not_plain() -> None:
    for marked in ["a *b*", "`x`", "1. one", "    code", "a  \nb", "# h", "a\n---", "x & y", "[a](b)"]:
        assert plain_paragraphs(marked) is None, marked
    assert plain_paragraphs("one\ntwo\n\n three") == ["one two", "three"]


def test_markdown_lists_quotes_links_code_and_tables() -> None:
    source = (
        "# Title\n\nSee [the docs](https://example.org) and `code`.\n\n"
        "- one\n- two\n  - nested\n\n2. second\n3. third\n\n> quoted\n\n"
        "```python\nprint(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![logo](x.png)"
    )
    lines = text(markdown_lines(source, 60))
    assert lines == [
        "Title",
        "",
        "See the docs (https://example.org) and code.",
        "",
        "• one",
        "• two",
        "  • nested",
        "",
        "2. second",
        "3. third",
        "",
        "▌ quoted",
        "",
        " print(1)",
        "",
        "a │ b",
        "1 │ 2",
        "",
        "🌆 logo",
    ]
    styles = {piece: style for line in markdown_lines(source, 60) for piece, style in line}
    assert styles["Title"] == "bold underline"
    assert styles["code"] == "cyan"
    assert "magenta" in styles["print"] or "cyan" in styles["print"]


def test_conversation_text_is_made_visible_and_raw_html_stays_text() -> None:
    lines = text(markdown_lines("Escape \x1b[31mred and <script>x</script>", 80))
    assert lines == ["Escape \\u{1b}[31mred and <script>x</script>"]


def test_code_keeps_its_lines_unwrapped() -> None:
    long = "x = '" + "y" * 200 + "'"
    assert text(code_lines(long, "python")) == [long]
    assert text(code_lines("a\n\nb", "nolanguage")) == ["a", "", "b"]
