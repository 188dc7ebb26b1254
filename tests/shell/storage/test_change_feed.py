"""The change feed against real folders changed by another process: every kind of write JP, an editor or a user
makes is reported by the next ``changes()``, with nothing waited for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from turnmark.shell.storage import change_feed
from turnmark.shell.storage.change_feed import ChangeFeed, WorkspaceWatch, open_feed
from turnmark.shell.storage.workspace import ConversationRef, Workspace, find_workspace, list_conversations

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")


def _elsewhere(code: str) -> None:
    """Run ``code`` in another process (a writer that is not this one) and wait for it."""
    subprocess.run([sys.executable, "-c", code], check=True)


def _folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "conversations"
    first, second = root / "1-a", root / "2-b"
    for folder in (first, second):
        folder.mkdir(parents=True)
        (folder / "events.json").write_text("[]")
    return root, first, second


def _feed(root: Path, *folders: Path) -> ChangeFeed:
    feed = open_feed()
    assert feed is not None
    assert feed.watch_roots([root])
    assert feed.watch(folders) == frozenset()
    assert feed.changes().folders == frozenset()
    return feed


@pytest.mark.parametrize(
    "write",
    [
        "open(F + '/events.json', 'r+').write('[1]')",
        "open(F + '/events.json.tmp', 'w').write('[2]'); os.rename(F + '/events.json.tmp', F + '/events.json')",
        "os.utime(F + '/events.json', (1, 1))",
        "open(F + '/metadata.json', 'w').write('{}')",
        "os.remove(F + '/events.json')",
    ],
    ids=["in-place", "replaced-by-rename", "touched", "file-added", "file-removed"],
)
def test_a_write_in_a_conversation_folder_is_reported_for_that_folder_alone(tmp_path: Path, write: str) -> None:
    root, first, second = _folders(tmp_path)
    feed = _feed(root, first, second)
    _elsewhere(f"import os; F = {str(first)!r}; {write}")
    changes = feed.changes()
    assert changes.folders == {os.fspath(first)}
    assert not changes.relist
    assert not changes.everything
    assert feed.changes().folders == frozenset(), "each change is reported once"
    feed.close()


@pytest.mark.parametrize(
    "change",
    [
        "os.mkdir(R + '/3-new')",
        "os.rename(R + '/1-a', R + '/1-renamed')",
        "shutil.rmtree(R + '/2-b')",
    ],
    ids=["folder-made", "folder-renamed", "folder-removed"],
)
def test_conversation_folders_coming_and_going_ask_for_a_new_list(tmp_path: Path, change: str) -> None:
    root, first, second = _folders(tmp_path)
    feed = _feed(root, first, second)
    _elsewhere(f"import os, shutil; R = {str(root)!r}; {change}")
    changes = feed.changes()
    assert changes.relist
    assert not changes.everything
    feed.close()


def test_the_folder_of_conversations_itself_gone_asks_for_everything(tmp_path: Path) -> None:
    root, first, second = _folders(tmp_path)
    feed = _feed(root, first, second)
    root.rename(tmp_path / "moved")
    assert feed.changes().everything
    feed.close()


def test_a_folder_that_is_a_link_is_not_watched(tmp_path: Path) -> None:
    root, first, _second = _folders(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "4-link").symlink_to(outside, target_is_directory=True)
    feed = open_feed()
    assert feed is not None
    assert feed.watch([first, root / "4-link"]) == {os.fspath(root / "4-link")}
    (outside / "events.json").write_text("[]")
    assert feed.changes().folders == frozenset()
    feed.close()


def _watch(workspace: Path) -> WorkspaceWatch:
    found = find_workspace(workspace)
    assert found is not None
    return WorkspaceWatch(found)


def test_the_watch_asks_for_every_look_first_then_only_for_what_changed(workspace: Path) -> None:
    watch = _watch(workspace)
    conversations = workspace / ".jp" / "conversations"
    refs, changed = watch.now("find")
    assert changed is None
    assert len(refs) == 4
    watch.settle("find", None)
    assert watch.now("find")[1] == frozenset()

    target = next(conversations.glob("17800000010-*"))
    _elsewhere(f"open({str(target / 'events.json')!r}, 'a').write(' ')")
    assert watch.now("find")[1] == frozenset({"jp-c17800000010"})
    assert watch.now("find")[1] == frozenset({"jp-c17800000010"}), "kept until a look settles it"
    watch.settle("find", ["jp-c17800000010"])
    assert watch.now("find")[1] == frozenset()

    shutil.copytree(target, conversations / "17800000099-copy")
    refs, changed = watch.now("find")
    assert changed == frozenset({"jp-c17800000099"})
    assert len(refs) == 5
    watch.settle("find", None)

    target.rename(conversations / "17800000010-renamed")
    assert watch.now("find")[1] == frozenset({"jp-c17800000010"})
    watch.settle("find", None)

    shutil.rmtree(conversations / "17800000099-copy")
    refs, changed = watch.now("find")
    assert changed is None, "a conversation gone: every look again (its rows are forgotten)"
    assert len(refs) == 4
    watch.close()


def test_a_look_that_did_not_settle_is_asked_for_again(workspace: Path) -> None:
    watch = _watch(workspace)
    assert watch.now("find")[1] is None
    assert watch.now("find")[1] is None, "nothing settled the first looks"
    watch.settle("find", ["jp-c17800000010"])
    assert watch.now("find")[1] is None, "one conversation looked at is not every one"
    watch.close()


def test_each_reader_is_asked_to_look_at_what_changed_since_its_own_looks(workspace: Path) -> None:
    watch = _watch(workspace)
    assert watch.now("find")[1] is None
    watch.settle("find", None)
    assert watch.now("listing")[1] is None, "a reader's first time"
    watch.settle("listing", None)
    target = next((workspace / ".jp" / "conversations").glob("17800000030-*"))
    _elsewhere(f"open({str(target / 'metadata.json')!r}, 'a').write(' ')")
    assert watch.now("find")[1] == frozenset({"jp-c17800000030"})
    watch.settle("find", None)
    assert watch.now("listing")[1] == frozenset({"jp-c17800000030"}), "what find settled is still the listing's"
    watch.settle("listing", None)
    assert watch.now("find")[1] == frozenset()
    assert watch.now("listing")[1] == frozenset()
    watch.close()


def test_without_a_feed_every_call_looks_at_every_conversation(workspace: Path) -> None:
    found = find_workspace(workspace)
    assert found is not None
    watch = WorkspaceWatch(found, feed=False)
    for _ in range(3):
        refs, changed = watch.now("find")
        assert changed is None
        assert len(refs) == 4
        watch.settle("find", None)
    watch.close()
    assert watch.now("find")[1] is None


def test_a_folder_replaced_under_its_name_is_watched_anew(workspace: Path, tmp_path: Path) -> None:
    watch = _watch(workspace)
    conversations = workspace / ".jp" / "conversations"
    watch.now("find")
    watch.settle("find", None)
    target = next(conversations.glob("17800000010-*"))
    trash = tmp_path / "trash"
    trash.mkdir()
    shutil.move(target, trash / target.name)
    shutil.copytree(trash / target.name, target)
    watch.now("find")
    watch.settle("find", None)
    _elsewhere(f"open({str(target / 'events.json')!r}, 'a').write(' ')")
    assert watch.now("find")[1] == frozenset({"jp-c17800000010"})
    watch.close()


def test_the_folder_holding_the_conversations_replaced_asks_for_every_look(workspace: Path, tmp_path: Path) -> None:
    watch = _watch(workspace)
    watch.now("find")
    watch.settle("find", None)
    storage = workspace / ".jp"
    shutil.copytree(storage, tmp_path / "restored")
    shutil.rmtree(next((tmp_path / "restored" / "conversations").glob("17790000000-*")))
    storage.rename(tmp_path / "old-jp")
    (tmp_path / "restored").rename(storage)
    refs, changed = watch.now("find")
    assert changed is None
    assert "jp-c17790000000" not in {ref.display_id for ref in refs}
    watch.close()


def test_a_folder_of_conversations_not_there_yet_is_not_listed_again_on_every_call(
    workspace: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listings: list[int] = []

    def counted(found: Workspace) -> list[ConversationRef]:
        listings.append(1)
        return list_conversations(found)

    monkeypatch.setattr(change_feed, "list_conversations", counted)
    found = find_workspace(workspace)
    assert found is not None
    found = Workspace(found.root, user_data / "silo-without-conversations")
    assert found.user_silo is not None
    found.user_silo.mkdir()
    watch = WorkspaceWatch(found)
    for _ in range(5):
        watch.now("find")
        watch.settle("find", None)
    assert len(listings) == 1
    (found.user_silo / "conversations" / "17800000077-new").mkdir(parents=True)
    refs, _changed = watch.now("find")
    assert "jp-c17800000077" in {ref.display_id for ref in refs}, "the folder's coming is seen"
    watch.close()
