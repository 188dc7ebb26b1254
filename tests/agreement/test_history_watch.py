"""``turnmark mcp``'s searches and listings with the change feed against the long way: after each of a random
run of writes (JP replacing a file by rename, an editor writing in place with the old time put back, a title
changed, a conversation copied, renamed, removed, touched, turnmark's cache removed; and a search of every
scope, which empties the index first), ``find_turns`` and ``list_conversations`` of a server that looks again
only at what the kernel said changed answer what one that looks at every conversation's files answers.

The watching server is asked first, so a change it missed would be answered from the index as it was (the long
way then brings the index up to date).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agreement.workspaces import (
    ConversationShape,
    copy_corpus,
    copy_fixture,
    workspace_shapes,
    write_workspace,
)
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.storage.workspace import find_workspace
from turnmark.shell.usecases.history import History

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the change feed is inotify's")

QUERIES = (("the", None), ("lock", None), ("build OR test", "all"), ("error", None), ("retry", "summaries,titles"))
"""A search of every scope among them: the index then takes tool results and reasoning too, emptied first."""


def _folders(root: Path) -> list[Path]:
    workspace = find_workspace(root)
    assert workspace is not None
    silo = [workspace.user_silo / "conversations"] if workspace.user_silo is not None else []
    found = []
    for conversations in (workspace.conversations_dir, *silo):
        if conversations.is_dir():
            found += sorted(path for path in conversations.iterdir() if path.is_dir())
    return found


def _write(rng: random.Random, root: Path, step: int) -> str:
    folders = _folders(root)
    target, source = rng.choice(folders), rng.choice(folders)
    events = target / "events.json"
    kind = rng.choice(["rename", "in-place", "title", "copy", "move", "remove", "touch", "cache gone"])
    if kind == "rename":
        (target / "events.json.tmp").write_bytes((source / "events.json").read_bytes())
        os.replace(target / "events.json.tmp", events)
    elif kind == "in-place":
        before = events.stat()
        with events.open("r+b") as handle:
            handle.truncate(0)
            handle.write((source / "events.json").read_bytes())
        os.utime(events, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif kind == "title":
        metadata = target / "metadata.json"
        data = json.loads(metadata.read_text()) if metadata.exists() else {}
        data["title"] = f"retry lock title {step}"
        metadata.write_text(json.dumps(data))
    elif kind == "copy" and not (copied := target.parent / f"{17_990_000_000 + step}-copied-{step}").exists():
        shutil.copytree(source, copied)
    elif kind == "move":
        number = target.name.split("-")[0]
        target.rename(target.parent / f"{number}-renamed-{step}")
    elif kind == "remove" and len(folders) > 3:
        shutil.rmtree(target)
    elif kind == "cache gone":
        shutil.rmtree(os.environ["TURNMARK_CACHE_DIR"], ignore_errors=True)
    else:
        os.utime(events)
    return f"{kind} {target.name} from {source.name}"


def _agree_through_writes(root: Path, seed: int, steps: int) -> None:
    workspace = find_workspace(root)
    assert workspace is not None
    watching = History(workspace, sequential_ids(), jobs=1)
    long_way = History(workspace, sequential_ids(), jobs=1, watch=False)
    rng = random.Random(seed)
    done = ["(the first search)"]
    for step in range(steps):
        for query, scope in QUERIES:
            seen = watching.find_turns(query, limit=50, scope=scope).data
            expected = long_way.find_turns(query, limit=50, scope=scope).data
            assert seen == expected, f"after {done[-1]} (step {step}, seed {seed}), query {query!r}"
        listed = watching.list_conversations(limit=200).data
        assert listed == long_way.list_conversations(limit=200).data, f"after {done[-1]} (step {step}, seed {seed})"
        done.append(_write(rng, root, step))
    watching.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fixtures_through_random_writes(tmp_path: Path, user_data: Path, seed: int) -> None:
    _agree_through_writes(copy_fixture("workspace", tmp_path / "ws"), seed, steps=25)


def test_the_corpus_through_random_writes(tmp_path: Path, user_data: Path) -> None:
    _agree_through_writes(copy_corpus(tmp_path / "ws"), seed=7, steps=25)


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(shapes=workspace_shapes, seed=st.integers(0, 2**16))
def test_generated_workspaces_with_user_local_copies_through_random_writes(
    tmp_path: Path, user_data: Path, shapes: list[ConversationShape], seed: int
) -> None:
    root = write_workspace(Path(tempfile.mkdtemp(prefix="ws", dir=tmp_path)), shapes, user_data)
    _agree_through_writes(root, seed, steps=12)
