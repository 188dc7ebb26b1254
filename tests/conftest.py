"""Shared fixtures: the real corpus (skipped when absent), fixture workspaces, deterministic IDs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from turnmark.core.stream.event_ids import IdSource, sequential_ids

settings.register_profile("turnmark", deadline=None)
settings.load_profile("turnmark")
"""No time limit per example: tests assert what happens, not how fast (a loaded machine made one flaky)."""

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "workspace"
SHOW_FIXTURES = REPO / "fixtures" / "show-workspace"


def corpus_root() -> Path:
    """``$TURNMARK_CORPUS`` or ``../shared/corpus`` beside the repository."""
    configured = os.environ.get("TURNMARK_CORPUS")
    return Path(configured) if configured else REPO.parent / "shared" / "corpus"


def corpus_conversations() -> list[Path]:
    conversations = corpus_root() / ".jp" / "conversations"
    if not conversations.is_dir():
        return []
    return sorted(path for path in conversations.iterdir() if path.is_dir() and not path.name.startswith("."))


def corpus_files(directory: Path) -> tuple[bytes, bytes | None]:
    """A corpus conversation's ``events.json`` and ``base_config.json`` (``None`` when absent)."""
    base = directory / "base_config.json"
    return (directory / "events.json").read_bytes(), base.read_bytes() if base.exists() else None


def corpus_params() -> list[object]:
    """One pytest param per corpus conversation, or a single skipped param saying why."""
    found = corpus_conversations()
    if not found:
        reason = f"corpus not found at {corpus_root()} (set TURNMARK_CORPUS to a folder holding .jp/conversations)"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-corpus")]
    return [pytest.param(path, id=path.name.split("-")[0]) for path in found]


@pytest.fixture
def ids() -> IdSource:
    return sequential_ids()


@pytest.fixture
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty JP user data directory, so tests never see the machine's real one."""
    path = tmp_path / "user-data"
    path.mkdir()
    monkeypatch.setenv("JP_USER_DATA_DIR", str(path))
    return path


@pytest.fixture
def workspace(tmp_path: Path, user_data: Path) -> Path:
    """A copy of the bundled fixture workspace in a temporary directory."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture
def show_workspace(tmp_path: Path, user_data: Path) -> Path:
    """A copy of ``fixtures/show-workspace`` (tool calls, reasoning, an excluded answer, compaction, hostile
    content), kept apart so that the other tests' conversation lists do not change."""
    root = tmp_path / "show-ws"
    shutil.copytree(SHOW_FIXTURES, root)
    return root


@pytest.fixture(autouse=True)
def turnmark_homes(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """turnmark's cache and state folders in a fresh temporary folder per test (inherited by the subprocesses a
    test starts), so that no test reads or writes the real home directory's."""
    homes = tmp_path_factory.mktemp("turnmark-homes")
    cache, state = homes / "cache", homes / "state"
    monkeypatch.setenv("TURNMARK_CACHE_DIR", str(cache))
    monkeypatch.setenv("TURNMARK_STATE_DIR", str(state))
    monkeypatch.setenv("XDG_CACHE_HOME", str(homes / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(homes / "xdg-state"))
    return cache, state


@pytest.fixture(autouse=True)
def fresh_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no remembered API key (the registry is process-wide, as in a real run)."""
    from turnmark.shell import secrets

    monkeypatch.setattr(secrets, "_kept", secrets._Keys())
