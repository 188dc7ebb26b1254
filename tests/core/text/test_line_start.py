"""``project``'s preview of a long text and RFD 126's fallback read only its start, and say what the whole text
would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.text.summary_text import FALLBACK_MAX_CHARS, line_start, mechanical_summary, one_line, truncate

PIECES = st.sampled_from(["word ", "  ", "\n", "\t", "é", "\u200b", "\x1b]0;title\x07", "\x1b[31m", "x" * 50, "\x00"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=200), st.integers(1, 80))
def test_the_start_of_a_line_is_the_start_of_the_whole_line(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    assert line_start(text, limit) == truncate(one_line(text), limit)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES | st.sampled_from(["\r", "\u2028", "\n\n"]), max_size=120))
def test_the_fallback_is_the_first_visible_line_cut(pieces: list[str]) -> None:
    """RFD 126's fallback, read a line at a time from the start, says what cutting every line would."""
    text = "".join(pieces)
    lines = [one_line(line) for line in text.split("\n")]
    assert mechanical_summary(text) == next((truncate(line, FALLBACK_MAX_CHARS) for line in lines if line), None)
