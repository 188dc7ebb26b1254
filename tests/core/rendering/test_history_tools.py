"""The history tools' pure half: which arguments are taken, and every answer within its bound."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from turnmark.core.rendering.history_tools import (
    LINE_CHARS,
    ConversationItem,
    Hit,
    ToolAnswer,
    TurnItem,
    clamped,
    conversation_argument,
    conversations_answer,
    cut_text,
    hits_answer,
    turn_answer,
    turn_argument,
    turns_answer,
)
from turnmark.core.text.terminal import visible

ODD = st.text(alphabet=st.sampled_from([*"./\\:\x00\x1b ~", *string.ascii_letters, *string.digits]), max_size=40)


@given(ODD)
def test_no_argument_with_a_path_in_it_is_taken(value: str) -> None:
    for taken in (conversation_argument(value), turn_argument(value)):
        if taken.value_or(None) is not None:
            assert "/" not in value
            assert "\\" not in value
            assert ".." not in value
            assert "\x00" not in value
            assert "\x1b" not in value


@given(st.integers(0, 10**15), st.from_regex(r"[a-z0-9]{1,16}", fullmatch=True))
def test_every_id_and_address_is_taken(conversation: int, turn: str) -> None:
    assert conversation_argument(f"jp-c{conversation}").unwrap() == conversation
    assert conversation_argument(str(conversation)).unwrap() == conversation
    assert turn_argument(f"jp-c{conversation}:{turn}").unwrap() == (conversation, turn)


def _turn(index: int, label: str) -> TurnItem:
    return TurnItem(f"jp-c1:t{index:06d}", index, f"t{index:06d}", "2026-03-05 14:02:00.0", label, "fallback")


@given(st.integers(0, 3000), st.integers(2_000, 30_000), st.text(max_size=300))
def test_every_answer_stays_within_its_bound(count: int, limit: int, label: str) -> None:
    turns = [_turn(index, label + str(index)) for index in range(count)]
    listed = turns_answer("jp-c1", "A title", turns, 0, limit)
    assert len(listed.text) <= limit
    assert len(listed.data["turns"]) == len(turns) or listed.data["next"] == len(listed.data["turns"])
    conversations = [ConversationItem(f"jp-c{index}", label, None, index, 0) for index in range(count)]
    assert len(conversations_answer(conversations, count, limit).text) <= limit
    hits = [Hit(turn, label, label * 3, 1.0) for turn in turns[:200]]
    assert len(hits_answer("q", hits, count, limit).text) <= limit


def test_listing_on_from_where_a_cut_said_gives_every_turn_once() -> None:
    turns = [_turn(index, "a label of some length " * 3) for index in range(500)]
    seen: list[str] = []
    first: int | None = 0
    while first is not None:
        answer = turns_answer("jp-c1", None, turns, first, 4_000)
        seen += [row["address"] for row in answer.data["turns"]]
        first = answer.data["next"]
        if first is not None:
            assert f"first={first}" in answer.text
    assert seen == [turn.address for turn in turns]


@given(st.text(max_size=2_000), st.integers(200, 900))
def test_reading_on_from_each_cut_gives_the_whole_transcript(transcript: str, size: int) -> None:
    parts: list[str] = []
    start: int | None = 0
    while start is not None:
        answer = turn_answer(_turn(0, "x"), transcript, start, size)
        parts.append(str(answer.data["transcript"]))
        start = answer.data["next"]
    assert "".join(parts) == visible(transcript)
    assert all(len(part) <= size for part in parts)


def test_a_transcript_of_control_characters_stays_within_its_bound() -> None:
    answer = turn_answer(_turn(0, "x"), "\x1b" * 10_000, 0, 2_000)
    assert len(str(answer.data["transcript"])) <= 2_000
    assert len(answer.text) <= 2_000 + 400
    assert "\x1b" not in answer.text


def test_reading_from_past_the_end_says_where_the_transcript_ends() -> None:
    answer = turn_answer(_turn(0, "x"), "short transcript", 10**9, 2_000)
    assert answer.data["transcript"] == ""
    assert answer.data["next"] is None
    assert "the transcript has 16; read it from start=0" in answer.text
    assert "-" not in answer.text.split("\n", 2)[-1]


def test_listing_from_past_the_last_turn_says_which_turns_there_are() -> None:
    answer = turns_answer("jp-c1", None, [_turn(index, "x") for index in range(3)], 7, 4_000)
    assert answer.data["turns"] == []
    assert "[no turn from 7: the conversation has turns 0-2]" in answer.text


def test_long_queries_titles_snippets_and_labels_are_bounded_in_text_and_data() -> None:
    long = "y" * 100_000
    turn = TurnItem("jp-c1:t0", 0, "t0", long, long, "fallback")
    found = hits_answer(long, [Hit(turn, long, long, 1.0)], 1, 20_000)
    assert len(found.text) <= 20_000
    assert len(str(found.data)) < 4 * LINE_CHARS + 1_000
    listed = conversations_answer([ConversationItem("jp-c1", long, long, 1, 0, error=None)], 1, 20_000)
    assert len(str(listed.data)) < 2 * LINE_CHARS + 500
    assert len(str(turns_answer("jp-c1", long, [turn], 0, 20_000).data)) < 3 * LINE_CHARS + 500


def test_an_answer_that_outgrew_its_bound_is_cut_to_it() -> None:
    answer = clamped(ToolAnswer("z" * 30_000, {"k": 1}), 20_000)
    assert len(answer.text) == 20_000
    assert answer.text.endswith("[cut: the answer outgrew 20,000 characters]")
    assert clamped(ToolAnswer("short", {}), 20_000).text == "short"


def test_a_cut_ends_at_a_line_when_one_is_near() -> None:
    assert cut_text("a" * 80 + "\n" + "b" * 40, 100).text == "a" * 80 + "\n"
    assert cut_text("a" * 50 + "\n" + "b" * 100, 100).text == "a" * 50 + "\n" + "b" * 49
