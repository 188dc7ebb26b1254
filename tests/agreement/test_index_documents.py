"""The index's documents of its light scopes (issue 40: what a first ``find`` builds without tool results and
reasoning) against every scope's: the same texts and spans where kept, nothing elsewhere, on every fixture,
corpus and hand-edited conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from returns.result import Failure

from tests.agreement.test_light_reader import CONVERSATION
from tests.agreement.workspaces import fixture_folders
from tests.conftest import corpus_files, corpus_params
from tests.support.hand_edits import Drawn, hand_edited
from turnmark.core.search.documents import conversation_documents
from turnmark.core.search.scopes import LIGHT_SCOPES, SCOPES
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids


def agree(events: bytes, base_config: bytes | None, what: str) -> None:
    loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids(), conversation=CONVERSATION)
    if isinstance(loaded, Failure):
        return
    stream = loaded.unwrap()
    every = conversation_documents(stream, "A title")
    light = conversation_documents(stream, "A title", LIGHT_SCOPES)
    assert len(light) == len(every), what
    for kept, whole in zip(light, every, strict=True):
        for position, scope in enumerate(SCOPES):
            if scope in LIGHT_SCOPES:
                assert (kept.texts[position], kept.spans[position]) == (whole.texts[position], whole.spans[position])
            else:
                assert (kept.texts[position], kept.spans[position]) == ("", ()), what
        assert kept.line(CONVERSATION, None) == whole.line(CONVERSATION, None), what
        assert (kept.started_at, kept.date) == (whole.started_at, whole.date), what


@pytest.mark.parametrize("folder", fixture_folders(), ids=lambda folder: f"{folder.parts[-4]}/{folder.name}")
def test_every_fixture(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@pytest.mark.parametrize("folder", corpus_params())
def test_every_corpus_conversation(folder: Path) -> None:
    agree(*corpus_files(folder), str(folder))


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=hand_edited(max_edits=6))
def test_hand_edited_conversations(drawn: Drawn) -> None:
    agree(drawn.events, drawn.base_config, repr(drawn.edits))
