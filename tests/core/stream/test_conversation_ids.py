"""Conversation IDs from folder names and from what a user types: ASCII digits only, never a crash."""

import re

from hypothesis import given
from hypothesis import strategies as st

from turnmark.core.stream.conversation_ids import id_from_dirname, parse_conversation_id


@given(st.text())
def test_a_folder_name_gives_an_id_only_from_its_ascii_digits(name: str) -> None:
    head = name.split("-", 1)[0]
    found = id_from_dirname(name)
    if head and all("0" <= char <= "9" for char in head):
        assert found == int(head)
    else:
        assert found is None


@given(st.one_of(st.text(), st.from_regex(r"(jp-c)?[0-9\u00b2\u0663]{1,3}(-[0-9a-z]{1,3})?", fullmatch=True)))
def test_what_a_user_types_gives_an_id_only_from_ascii_digits(text: str) -> None:
    match = re.fullmatch(r"[0-9]+|jp-c([0-9]+)(?:-[0-9a-z]+)?", text.strip())
    assert parse_conversation_id(text) == (None if match is None else int(match.group(1) or match.group(0)))


def test_digits_that_are_not_ascii_name_no_conversation() -> None:
    for text in ("\u00b2", "\u00b2-title", "\u0663", "jp-c\u0663", "jp-c1\u00b2"):
        assert id_from_dirname(text) is None
        assert parse_conversation_id(text) is None
    assert id_from_dirname("17800000010-a-title") == 17800000010
    assert parse_conversation_id(" jp-c17800000010-a1 ") == 17800000010
