"""The offline summarizer on every turn of the real corpus and of the fixtures (syrupy snapshots).

A change in how builtin/extractive labels turns shows up here as a reviewable diff.
"""

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import FIXTURES, corpus_files, corpus_params
from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.summaries.extractive import extractive_labels
from turnmark.core.summaries.labels import ensure_first_turn_start
from turnmark.core.summaries.request import MAX_CHARS


def labels(directory: Path) -> list[str]:
    stream = ConversationStream.from_json(*corpus_files(directory), new_id=sequential_ids()).unwrap()
    prepared = ensure_first_turn_start(stream)
    found = extractive_labels(prepared.turns(), excluded_ids(prepared))
    lines = []
    for turn in prepared.turns():
        summary = found.get(str(turn.id()))
        assert summary is None or (len(summary) <= MAX_CHARS and "\n" not in summary)
        lines.append(f"turn {turn.index}: {summary}")
    return lines


@pytest.mark.parametrize("directory", corpus_params())
def test_corpus_turns(directory: Path, snapshot: SnapshotAssertion) -> None:
    assert labels(directory) == snapshot


@pytest.mark.parametrize(
    "directory", sorted((FIXTURES / ".jp" / "conversations").iterdir()), ids=lambda path: path.name.split("-")[0]
)
def test_fixture_turns(directory: Path, snapshot: SnapshotAssertion) -> None:
    assert labels(directory) == snapshot
