"""``redact`` tries only the places a key run may start; held equal to trying every place, on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.text.redaction import _SLICE, MASK, _starts, key_forms, key_runs, redact

ALPHABET = "abAB01+/=-_ é"
"""Few characters, so that texts and keys share pieces by chance too."""


def every_place(text: str, runs: frozenset[str]) -> str:
    """``redact`` the long way: every run tried at every place of ``text``."""
    covered = [False] * len(text)
    for start in range(len(text)):
        for run in runs:
            if text.startswith(run, start):
                covered[start : start + len(run)] = [True] * len(run)
    pieces: list[str] = []
    for index, char in enumerate(text):
        if not covered[index]:
            pieces.append(char)
        elif index == 0 or not covered[index - 1]:
            pieces.append(MASK)
    return "".join(pieces)


@st.composite
def keys_and_text(draw: st.DrawFn) -> tuple[list[str], str]:
    keys = draw(st.lists(st.text(ALPHABET.strip(), min_size=3, max_size=40), min_size=1, max_size=3))
    forms = [form for key in keys for form in key_forms(key)]
    piece = st.one_of(
        st.text(ALPHABET, max_size=12),
        st.builds(
            lambda form, start, size: form[start : start + size],
            st.sampled_from(forms),
            st.integers(0, 40),
            st.integers(1, 48),
        ),
    )
    return keys, "".join(draw(st.lists(piece, max_size=12)))


@settings(max_examples=600)
@given(keys_and_text())
def test_redact_equals_trying_every_place(case: tuple[list[str], str]) -> None:
    keys, text = case
    runs = key_runs(keys)
    assert redact(text, runs) == every_place(text, runs)


def test_a_key_anywhere_in_a_long_text_is_found_across_the_slices_it_is_read_in() -> None:
    key = "sk-live-Q7wE9rT2yU4iO6pA"
    runs = key_runs([key])
    for at in (0, 1, 3, _SLICE - len(key) // 2, _SLICE - 1, _SLICE, 2 * _SLICE + 5, 3 * _SLICE - len(key)):
        text = "x" * at + key + "y" * (3 * _SLICE - at)
        assert redact(text, runs) == "x" * at + MASK + "y" * (3 * _SLICE - at)


def test_a_text_holding_no_part_of_a_key_is_not_tried_anywhere() -> None:
    runs = key_runs(["sk-live-Q7wE9rT2yU4iO6pA"])
    text = "nothing secret here, only words and code: print(len(x))\n" * 2_000
    assert list(_starts(text, runs, sorted({len(run) for run in runs}))) == []
    assert redact(text, runs) is text


def test_a_short_key_is_still_tried_everywhere() -> None:
    runs = key_runs(["ab1", "sk-live-Q7wE9rT2yU4iO6pA"])
    assert list(_starts("xxab1xx", runs, sorted({len(run) for run in runs}))) == list(range(7))
    assert redact("xxab1xx", runs) == f"xx{MASK}xx"
    assert redact("xxab1", runs) == f"xx{MASK}", "a short key's run at the end, beside a longer key's runs"
