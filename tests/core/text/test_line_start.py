"""``project``'s preview of a long text reads only its start, and says the same as the whole text would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.text.summary_text import line_start, one_line, truncate

PIECES = st.sampled_from(["word ", "  ", "\n", "\t", "é", "\u200b", "\x1b]0;title\x07", "\x1b[31m", "x" * 50, "\x00"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=200), st.integers(1, 80))
def test_the_start_of_a_line_is_the_start_of_the_whole_line(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    assert line_start(text, limit) == truncate(one_line(text), limit)
