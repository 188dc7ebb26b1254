"""Finding 6 of issue 34: deleting or archiving a conversation left `find` without its index until `conversations`
ran (a transaction opened inside another), and a listing that saw it go left its turns in the index."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

from .processes import cache_folder, isolated_env, run_turnmark

PROBE = (
    "a deleted conversation: `find` or the listing sees it go first (issue 34, finding 6)",
    "{cases} setups: a `find`, the folder removed, then `find` (or `conversations`, then `find`)",
    "`find` keeps its index (no note of searching without it), and no turn row or indexed text of the deleted "
    "conversation is left",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""


@pytest.mark.parametrize("first", ["find", "conversations"])
def test_a_deleted_conversation_is_forgotten_whole_and_find_keeps_its_index(tmp_path: Path, first: str) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES, workspace)
    env = isolated_env(tmp_path / "home")
    assert run_turnmark(workspace, env, ("find", "lock"), 60).returncode == 0
    shutil.rmtree(next((workspace / ".jp" / "conversations").glob("17800000040-*")))
    if first == "conversations":
        assert run_turnmark(workspace, env, ("conversations",), 60).returncode == 0
    searched = run_turnmark(workspace, env, ("find", "lock"), 60)
    assert searched.returncode in (0, 1), searched.stderr
    assert "without the index file" not in searched.stderr
    assert "transaction" not in searched.stderr
    database = cache_folder(tmp_path / "home", workspace) / "cache.sqlite3"
    with sqlite3.connect(database) as connection:
        left = connection.execute("SELECT count(*) FROM turns WHERE conversation = 'jp-c17800000040'").fetchone()
        text = connection.execute("SELECT count(*) FROM turns_fts WHERE rowid NOT IN (SELECT id FROM turns)")
        assert (left[0], text.fetchone()[0]) == (0, 0)
