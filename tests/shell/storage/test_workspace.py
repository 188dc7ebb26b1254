"""Workspace discovery, conversation identity and selection."""

from pathlib import Path

import pytest

from turnmark.core.stream.conversation_ids import display_id, id_from_dirname, parse_conversation_id
from turnmark.core.stream.metadata import parse_metadata
from turnmark.shell.errors import WorkspaceError
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import find_workspace, list_conversations


@pytest.mark.parametrize(
    ("text", "expected"),
    [("17727484633", 17727484633), ("jp-c17727484633", 17727484633), (" 42 ", 42), ("jp-x1", None), ("abc", None)],
)
def test_conversation_ids(text: str, expected: int | None) -> None:
    assert parse_conversation_id(text) == expected


def test_directory_names_start_with_the_id() -> None:
    assert id_from_dirname("17727484633-preventing-rfd-churn") == 17727484633
    assert id_from_dirname("17727484633") == 17727484633
    assert id_from_dirname(".trash") is None
    assert display_id(17727484633) == "jp-c17727484633"


def test_metadata() -> None:
    metadata = parse_metadata(b'{"title": "T", "last_activated_at": "2026-01-01 00:00:00.0", "extra": 1}').unwrap()
    assert (metadata.title, metadata.last_activated_at) == ("T", "2026-01-01 00:00:00.0")
    assert parse_metadata(b'{"title": "T"}').failure().message == '"last_activated_at" must be a timestamp'
    assert parse_metadata(b"[").failure().document == "metadata.json"


def test_the_workspace_is_the_nearest_ancestor_with_a_jp_folder(workspace: Path) -> None:
    nested = workspace / "src" / "deep"
    nested.mkdir(parents=True)
    for start in (workspace, nested, workspace / ".jp", workspace / ".jp" / "conversations"):
        found = find_workspace(start)
        assert found is not None
        assert found.root == workspace.resolve()
    assert find_workspace(workspace.parent) is None


@pytest.mark.parametrize(
    "wanted",
    ["17800000010", "jp-c17800000010", "17800000010-add-retry-backoff-to-the-stream-handler", None],
)
def test_selection(workspace: Path, wanted: str | None) -> None:
    expected = 17800000040 if wanted is None else 17800000010
    assert pick_conversation(workspace, wanted).id == expected


def test_selection_by_path_works_outside_a_workspace(tmp_path: Path, workspace: Path) -> None:
    source = workspace / ".jp" / "conversations" / "17790000000-explain-the-build-script"
    loose = tmp_path / "loose" / source.name
    loose.parent.mkdir()
    source.rename(loose)
    ref = pick_conversation(tmp_path, str(loose))
    assert ref.id == 17790000000
    assert ref.workspace is None


def test_unreadable_metadata_is_passed_over_for_the_default(workspace: Path) -> None:
    latest = workspace / ".jp" / "conversations" / "17800000040-compacted-and-hand-edited" / "metadata.json"
    latest.write_text("{broken")
    assert pick_conversation(workspace, None).id == 17800000030


def test_an_empty_workspace_has_no_default(tmp_path: Path, user_data: Path) -> None:
    (tmp_path / ".jp" / "conversations").mkdir(parents=True)
    with pytest.raises(WorkspaceError, match="no conversations in"):
        pick_conversation(tmp_path, None)


def test_a_folder_named_with_digits_that_are_not_ascii_is_not_a_conversation(workspace: Path) -> None:
    """``²`` passes ``str.isdigit`` and fails ``int``: such a folder once made every listing a traceback."""
    conversations = workspace / ".jp" / "conversations"
    before = [ref.id for ref in list_conversations(find_workspace(workspace))]  # type: ignore[arg-type]
    for name in ("\u00b2-title", "\u0663", "1\u00b2-x"):
        (conversations / name).mkdir()
    assert [ref.id for ref in list_conversations(find_workspace(workspace))] == before  # type: ignore[arg-type]
