"""``show`` from the lazy read against ``show`` from the full load (issue 40): every format writes the same
bytes, for every selection and tool level, on every fixture and corpus conversation and on generated and
hand-edited ones; a file with something left out of what the model sees, or a compaction, takes the long way."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure, Result

from tests.agreement.test_light_reader import QUICK_OR_NOT
from tests.agreement.workspaces import (
    ConversationShape,
    conversation_entries,
    conversation_shapes,
    fixture_folders,
)
from tests.conftest import corpus_files, corpus_params
from tests.support.hand_edits import Drawn, encode, hand_edited
from turnmark.core.errors import TurnSelectionError
from turnmark.core.rendering.shown import (
    TOOL_DETAILS,
    ShownStream,
    ShowOptions,
    TurnSelection,
    json_chunks,
    plainly_shown,
)
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.light import read_lazily
from turnmark.shell.output import json_shown, styled
from turnmark.shell.output import shown as text_shown
from turnmark.shell.usecases import showing
from turnmark.shell.usecases.forked_chunks import can_fork
from turnmark.shell.usecases.showing import ShowFormat

CONVERSATION = "jp-c17800000099"
IDENTITY = {"id": CONVERSATION, "title": "A conversation", "format": "current"}
SELECTIONS = (
    TurnSelection(),
    TurnSelection(last=2),
    TurnSelection(turn="1"),
    TurnSelection(span="0-1"),
    TurnSelection(turn="nope"),
)
EVERY_OPTION = tuple(
    ShowOptions(reasoning=reasoning, tools=tools) for reasoning in (False, True) for tools in TOOL_DETAILS
)


def _documents(make: Callable[[], Result[ShownStream, TurnSelectionError]]) -> list[str]:
    """Every format's document of the view ``make()`` gives (a stream is read once, so one per format)."""
    documents = []
    for kind in ("text", "color", "md", "html", "json"):
        streamed = make()
        if isinstance(streamed, Failure):
            return [str(streamed.failure().describe())]
        shown = streamed.unwrap()
        if kind in ("text", "color"):
            documents.append("".join(showing.format_document(shown, "text", 80, kind == "color").chunks(shown.turns)))
        elif kind == "json":
            documents.append("".join(json_chunks(shown)))
        else:
            chosen: ShowFormat = "md" if kind == "md" else "html"
            documents.append("".join(showing.format_document(shown, chosen).chunks(shown.turns)))
    return documents


def same_show(
    events: bytes, base_config: bytes | None, what: str, options: tuple[ShowOptions, ...] = EVERY_OPTION
) -> bool:
    """Both ways write the same documents; whether the file was shown from the lazy read."""
    lazy = read_lazily(events, base_config, CONVERSATION)
    loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids(), conversation=CONVERSATION)
    if isinstance(loaded, Failure) or lazy is None:
        assert isinstance(loaded, Failure) == (lazy is None), what
        return False
    if not plainly_shown(lazy):
        return False
    stream = loaded.unwrap()
    for option in options:
        for selection in SELECTIONS:
            long_way = _documents(partial(showing.shown_stream, stream, IDENTITY, selection, option))
            lazily = _documents(partial(showing.shown_lazily, lazy, IDENTITY, selection, option, _never))
            assert lazily == long_way, f"{what}: {option} {selection}"
    return True


def _never() -> Exception:
    raise AssertionError("a turn of a file read lazily could not be read")


@pytest.mark.parametrize("folder", fixture_folders(), ids=lambda folder: f"{folder.parts[-4]}/{folder.name}")
def test_every_fixture(folder: Path) -> None:
    same_show(*corpus_files(folder), str(folder))


def test_most_fixtures_are_shown_lazily() -> None:
    """The fast way is the common one: every fixture but those with a broken link or a compaction."""
    shown = [same_show(*corpus_files(folder), str(folder), options=()) for folder in fixture_folders()]
    assert sum(shown) >= len(shown) // 2, shown


@pytest.mark.parametrize("folder", corpus_params())
def test_every_corpus_conversation(folder: Path) -> None:
    options = (ShowOptions(reasoning=False, tools="names"), ShowOptions(reasoning=True, tools="full"))
    assert same_show(*corpus_files(folder), str(folder), options), f"{folder} was not shown lazily"


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(drawn=hand_edited(max_edits=6))
def test_hand_edited_conversations(drawn: Drawn) -> None:
    same_show(drawn.events, drawn.base_config, repr(drawn.edits), EVERY_OPTION[::3])


@settings(max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(shape=conversation_shapes(), number=st.integers(0, 9))
def test_generated_conversations(shape: ConversationShape, number: int) -> None:
    same_show(*_generated(shape, number), repr(shape), EVERY_OPTION[::3])


def _generated(shape: ConversationShape, number: int) -> tuple[bytes, bytes | None]:
    """A generated conversation's ``events.json`` and ``base_config.json`` (none in the legacy format)."""
    entries = conversation_entries(shape, number)
    if shape.legacy:
        entries.insert(0, {"type": "config_delta", "timestamp": "2026-01-01 10:00:00.0", "delta": {}})
        return encode(entries), None
    return encode(entries), b"{}\n"


@pytest.mark.parametrize("entry", QUICK_OR_NOT)
def test_odd_elements(entry: bytes) -> None:
    """Each odd element the light reader's tests read (a key written twice, a key of another kind, odd values)
    is shown the same both ways, after a request and before a tool call and its result."""
    stamp = b'"timestamp": "2026-01-01 10:00:00.0"'
    events = b", ".join(
        (
            b'[{"type": "turn_start", ' + stamp + b', "event_id": "t0"}',
            b'{"type": "chat_request", ' + stamp + b', "content": "Fix it"}',
            entry,
            b'{"type": "tool_call_request", ' + stamp + b', "id": "c", "name": "fs_read_file", '
            b'"arguments": {"path": "c3JjL2xpYi5ycw=="}}',
            b'{"type": "tool_call_response", ' + stamp + b', "id": "c", "content": "b2s=", "is_error": false}]',
        )
    )
    same_show(events, b"{}\n", repr(entry), EVERY_OPTION[::2])


FORMATS: tuple[ShowFormat, ...] = ("text", "md", "html", "json")
PREPARED = {"text": styled, "md": text_shown, "html": text_shown, "json": json_shown}


def same_on_two_cores(events: bytes, base_config: bytes | None, what: str, options: tuple[ShowOptions, ...]) -> bool:
    """A file shown lazily writes the same prepared chunks, joined, when a forked child makes every other block of
    its turns (blocks of one and three turns) as when this process makes them all; whether it was shown lazily."""
    assert can_fork(), "a forked child makes blocks here: no other thread may run in the test process"
    lazy = read_lazily(events, base_config, CONVERSATION)
    if lazy is None or not plainly_shown(lazy):
        return False
    for option in options:
        for selection in (TurnSelection(), TurnSelection(span="1-3")):
            for kind in FORMATS:
                made = []
                for children, block in ((0, 1), (1, 1), (1, 3)):
                    view = showing.shown_lazily(lazy, IDENTITY, selection, option, _never)
                    if isinstance(view, Failure):
                        break
                    document = showing.format_document(view.unwrap(), kind, 80, kind == "text")
                    chunks = showing.written_chunks(
                        view.unwrap(), document, PREPARED[kind], children=children, block=block
                    )
                    made.append("".join(chunks))
                assert made[1:] == made[:1] * (len(made) - 1), f"{what}: {option} {selection} {kind}"
    return True


@pytest.mark.parametrize("folder", fixture_folders(), ids=lambda folder: f"{folder.parts[-4]}/{folder.name}")
def test_every_fixture_on_two_cores(folder: Path) -> None:
    same_on_two_cores(*corpus_files(folder), str(folder), (ShowOptions(reasoning=True, tools="full"),))


@pytest.mark.parametrize("folder", corpus_params())
def test_every_corpus_conversation_on_two_cores(folder: Path) -> None:
    options = (ShowOptions(reasoning=False, tools="names"), ShowOptions(reasoning=True, tools="full"))
    assert same_on_two_cores(*corpus_files(folder), str(folder), options), f"{folder} was not shown lazily"


@settings(max_examples=30, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(drawn=hand_edited(max_edits=6))
def test_hand_edited_conversations_on_two_cores(drawn: Drawn) -> None:
    same_on_two_cores(drawn.events, drawn.base_config, repr(drawn.edits), (ShowOptions(reasoning=True, tools="args"),))


@settings(max_examples=20, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(shape=conversation_shapes(), number=st.integers(0, 9))
def test_generated_conversations_on_two_cores(shape: ConversationShape, number: int) -> None:
    same_on_two_cores(*_generated(shape, number), repr(shape), (ShowOptions(reasoning=False, tools="full"),))
