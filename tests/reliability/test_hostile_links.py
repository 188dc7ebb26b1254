"""Hostile links: every writing command, run where a ``.tmp``, a lock file, ``events.json``, the
conversation folder, ``.jp/conversations``, ``.jp/locks`` or turnmark's own folders are links to a
canary outside the workspace, where a lock file is a hard link to one, or where a ``.tmp`` is a directory.

The canaries must keep their bytes and mtime, no file may appear outside the workspace, no run may
end in a traceback, and a conversation the same command writes in a clean copy must either be
written (the link sidestepped) or be named on stderr (a refusal).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.support.llm_servers import ModelServer
from turnmark.shell.storage.state_dirs import state_home, workspace_key

from .hostile_cli import FIXTURE_IDS, Outcome, Tally, invoke

TARGET = "17790000000"
"""A legacy conversation with unsummarized turns: a save writes ``base_config.json`` and ``events.json``."""
LABELLED = "17800000010"
"""Its turn 0 carries a summary, so ``label --clear`` writes."""
MODEL = "ollama/llama3.2:3b"
OLD = 1_500_000_000 * 10**9
"""The canaries' mtime: a rewrite with the same bytes still shows."""
MESSAGE = "one more question"
NEW_MESSAGE = "a question for a new conversation"


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]
    new: bool = False


COMMANDS = {
    "summarize": Command(("summarize", TARGET, "--model", "builtin/extractive")),
    "summarize-all": Command(("summarize", "--all", "--model", "builtin/extractive")),
    "summarize-dry-run": Command(("summarize", TARGET, "--dry-run")),
    "label": Command(("summary", "set", TARGET, "0", "a label of mine")),
    "label-clear": Command(("summary", "clear", LABELLED, "0")),
    "query": Command(("query", TARGET, MESSAGE, "--model", MODEL)),
    "query-no-persist": Command(("query", TARGET, MESSAGE, "--no-persist", "--model", MODEL)),
    "query-new": Command(("query", "--new", NEW_MESSAGE, "--model", MODEL), new=True),
    "watch-once": Command(("watch", "--once")),
    "strip-apply": Command(("strip", LABELLED, "--apply")),
    "repair-apply": Command(("repair", TARGET, "--apply", "--backfill")),
}
READ_ONLY = {"summarize-dry-run", "query-no-persist"}
READABLE = {"tmp-events", "tmp-base-config", "tmp-metadata", "tmp-dir", "events-link"}
"""Kinds that stop no read: a leftover ``.tmp`` is never read, and reading through a linked ``events.json`` is fine."""
KINDS = (
    "tmp-events",
    "tmp-base-config",
    "tmp-metadata",
    "tmp-dir",
    "lock",
    "lock-hardlink",
    "events-link",
    "folder-link",
    "conversations-link",
    "locks-link",
    "undo-link",
    "memory-link",
)
FOLDER_LINKS: dict[str, Callable[[Path], Path]] = {
    "conversations-link": lambda workspace: workspace / ".jp" / "conversations",
    "locks-link": lambda workspace: workspace / ".jp" / "locks",
    "undo-link": lambda workspace: state_home() / workspace_key(workspace) / "undo",
    "memory-link": lambda workspace: state_home() / workspace_key(workspace) / "summary-failures",
}
"""Kinds that move a folder of ``.jp`` (or of turnmark's state folder for the workspace) outside and leave a link
in its place."""
NEW_KINDS = {"lock", "lock-hardlink", "conversations-link", "locks-link"}
TMP_NAMES = {
    "tmp-events": "events.json.tmp",
    "tmp-base-config": "base_config.json.tmp",
    "tmp-metadata": "metadata.json.tmp",
}
CASES = [
    pytest.param(command, kind, id=f"{command}-{kind}")
    for command in COMMANDS
    for kind in KINDS
    if not COMMANDS[command].new or kind in NEW_KINDS
]
"""``query --new`` writes a folder that does not exist yet: only its lock (at a predictable path) and the folders
above it can be planted."""


@dataclass(frozen=True)
class Canary:
    """A file or folder outside the workspace that a link points at, and what it held."""

    path: Path
    before: dict[str, tuple[bytes, int]]

    @classmethod
    def take(cls, path: Path) -> Canary:
        return cls(path, _snapshot(path))

    def problem(self) -> str | None:
        if not self.path.exists() and not self.path.is_symlink():
            return f"canary {self.path} was deleted"
        after = _snapshot(self.path)
        if after == self.before:
            return None
        changes = [
            f"{name}: {_change(self.before.get(name), after.get(name))}"
            for name in sorted(self.before.keys() | after.keys())
            if self.before.get(name) != after.get(name)
        ]
        return f"canary {self.path} changed ({'; '.join(changes)})"


def _change(before: tuple[bytes, int] | None, after: tuple[bytes, int] | None) -> str:
    if before is None or after is None:
        return "appeared" if before is None else "deleted"
    if before[0] != after[0]:
        return f"bytes {before[0][:40]!r} -> {after[0][:40]!r}"
    return "mtime"


def _snapshot(path: Path) -> dict[str, tuple[bytes, int]]:
    if path.is_dir() and not path.is_symlink():
        return {".": _file_state(path)} | {
            str(child.relative_to(path)): _file_state(child) for child in sorted(path.rglob("*"))
        }
    return {".": _file_state(path)}


def _file_state(path: Path) -> tuple[bytes, int]:
    status = path.lstat()
    data = path.read_bytes() if stat.S_ISREG(status.st_mode) else f"<mode {oct(status.st_mode)}>".encode()
    return data, status.st_mtime_ns


def _old_canary(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    os.utime(path, ns=(OLD, OLD))
    return path


def _conversations(workspace: Path) -> dict[str, Path]:
    """Each fixture conversation's folder in ``workspace``, by numeric ID."""
    found = {path.name.split("-", 1)[0]: path for path in (workspace / ".jp" / "conversations").iterdir()}
    return {conversation_id: found[conversation_id] for conversation_id in FIXTURE_IDS}


def _predicted_new_ids() -> range:
    """The IDs ``query --new`` may give a conversation in the next 30 s (JP names them by deciseconds)."""
    now = int(datetime.now(UTC).timestamp() * 10)
    return range(now - 5, now + 300)


@dataclass
class Planted:
    canaries: list[Canary]
    links: dict[Path, str]
    """Links that must still be links, to where they pointed."""
    new_ids: range = range(0)
    """The IDs whose lock is a link, for ``query --new``."""


def plant(kind: str, workspace: Path, outside: Path, command: Command) -> Planted:
    """Plant ``kind`` in every fixture conversation (or, for ``query --new``, at its future lock paths)."""
    locks = workspace / ".jp" / "locks"
    locks.mkdir(exist_ok=True)
    canaries: list[Path] = []
    links: dict[Path, str] = {}
    if kind in FOLDER_LINKS:
        folder = FOLDER_LINKS[kind](workspace)
        folder.mkdir(parents=True, exist_ok=True)
        moved = outside / folder.name
        shutil.move(folder, moved)
        for child in (moved, *moved.rglob("*")):
            os.utime(child, ns=(OLD, OLD))
        folder.symlink_to(moved, target_is_directory=True)
        return Planted([Canary.take(moved)], {folder: str(moved)}, _predicted_new_ids() if command.new else range(0))
    if command.new:
        canary = _old_canary(outside / "new-lock.canary", b"canary: a lock link\n")
        new_ids = _predicted_new_ids()
        for new_id in new_ids:
            lock = locks / f"jp-c{new_id}.lock"
            if kind == "lock-hardlink":
                os.link(canary, lock)
            else:
                lock.symlink_to(canary)
        return Planted([Canary.take(canary)], links, new_ids)
    for conversation_id, folder in _conversations(workspace).items():
        if kind in TMP_NAMES:
            canary = _old_canary(outside / f"{conversation_id}-{TMP_NAMES[kind]}.canary", b"canary: a tmp link\n")
            (folder / TMP_NAMES[kind]).symlink_to(canary)
            canaries.append(canary)
        elif kind == "tmp-dir":
            for name in TMP_NAMES.values():
                (folder / name).mkdir()
        elif kind == "lock":
            canary = _old_canary(outside / f"jp-c{conversation_id}.lock.canary", b"canary: a lock link\n")
            (locks / f"jp-c{conversation_id}.lock").symlink_to(canary)
            canaries.append(canary)
        elif kind == "lock-hardlink":
            canary = _old_canary(outside / f"jp-c{conversation_id}.lock.canary", b"canary: a hard-linked lock\n")
            os.link(canary, locks / f"jp-c{conversation_id}.lock")
            canaries.append(canary)
        elif kind == "events-link":
            events = folder / "events.json"
            canary = _old_canary(outside / f"{conversation_id}-events.json", events.read_bytes())
            events.unlink()
            events.symlink_to(canary)
            canaries.append(canary)
            links[events] = str(canary)
        elif kind == "folder-link":
            moved = outside / folder.name
            shutil.move(folder, moved)
            for child in moved.iterdir():
                os.utime(child, ns=(OLD, OLD))
            folder.symlink_to(moved, target_is_directory=True)
            canaries.append(moved)
            links[folder] = str(moved)
    return Planted([Canary.take(path) for path in canaries], links)


def _events(workspace: Path) -> dict[str, bytes]:
    """Each fixture conversation's ``events.json`` as read through the workspace (following links)."""
    return {cid: (folder / "events.json").read_bytes() for cid, folder in _conversations(workspace).items()}


def _new_conversations(workspace: Path) -> list[Path]:
    folders = (workspace / ".jp" / "conversations").iterdir()
    return [path for path in folders if path.name.split("-", 1)[0] not in FIXTURE_IDS]


def _written(workspace: Path, before: dict[str, bytes], command: Command) -> set[str]:
    """The conversations the run wrote (``new`` for a new conversation holding the message)."""
    if command.new:
        holding = [path for path in _new_conversations(workspace) if NEW_MESSAGE in _read(path / "events.json")]
        return {"new"} if holding else set()
    after = _events(workspace)
    return {cid for cid in before if after[cid] != before[cid]}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _run(workspace: Path, command: Command, server: ModelServer) -> Outcome:
    return invoke(workspace, "--cfg", f"providers.llm.ollama.base_url={server.url}", *command.args)


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "hostile links: `.tmp` (file link, directory), lock file (symbolic and hard link), `events.json`, the "
        "conversation folder, `.jp/conversations`, `.jp/locks` and turnmark's folders as links to a canary outside "
        "the workspace",
        "canary bytes and mtime unchanged, nothing new outside, no traceback, a refusal names the conversation",
    )
    yield tally
    tally.publish(f"{tally.runs} command runs: {len(COMMANDS)} writing commands x {len(KINDS)} link kinds")


_BASELINES: dict[str, set[str]] = {}


def baseline(name: str, server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The conversations ``name`` writes in a clean copy of the fixture workspace."""
    if name not in _BASELINES:
        clean = tmp_path_factory.mktemp("clean") / "ws"
        shutil.copytree(FIXTURES, clean)
        command = COMMANDS[name]
        before = _events(clean)
        outcome = _run(clean, command, server)
        assert outcome.code == 0 or name in {"summarize-all", "watch-once"}, outcome.describe()
        _BASELINES[name] = _written(clean, before, command)
    return _BASELINES[name]


def _names(line: str, conversation: str, planted_new: range) -> bool:
    if conversation != "new":
        return conversation in line
    return any(int(number) in planted_new for number in re.findall(r"\d{11,}", line))


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_no_write_leaves_the_workspace(
    name: str,
    kind: str,
    *,
    workspace: Path,
    tmp_path: Path,
    server: ModelServer,
    tally: Tally,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    command = COMMANDS[name]
    expected = baseline(name, server, tmp_path_factory)
    outside = tmp_path / "outside"
    outside.mkdir()
    planted = plant(kind, workspace, outside, command)
    outside_before = sorted(str(path.relative_to(outside)) for path in outside.rglob("*"))
    before = _events(workspace)
    outcome = _run(workspace, command, server)
    tally.runs += 1

    problems = [problem for canary in planted.canaries if (problem := canary.problem())]
    outside_after = sorted(str(path.relative_to(outside)) for path in outside.rglob("*"))
    if outside_after != outside_before:
        problems.append(f"files appeared outside the workspace: {sorted(set(outside_after) - set(outside_before))}")
    for link, target in planted.links.items():
        if not link.is_symlink() or os.readlink(link) != target:
            problems.append(f"{link} was a link to {target}; it was replaced without a word")
    if (trace := outcome.traceback()) is not None:
        problems.append(f"traceback:\n{trace}")
    if outcome.code not in (0, 1, 2):
        problems.append(f"exit status {outcome.code}")
    if name in READ_ONLY and kind in READABLE and outcome.code != 0:
        problems.append(f"exit status {outcome.code}: a command that writes nothing must still read past a {kind}")
    written = _written(workspace, before, command)
    for conversation in sorted(expected - written):
        if not any(_names(line, conversation, planted.new_ids) for line in outcome.err.splitlines()):
            problems.append(f"conversation {conversation} was neither written nor named on stderr")
    tally.case(f"{name}/{kind}", problems)
    assert not problems, "\n".join([*problems, outcome.describe()])


def test_the_probe_plants_what_it_says(workspace: Path, tmp_path: Path) -> None:
    """Each kind really is a link (or a directory) where turnmark would write, pointing outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for kind in ("tmp-events", "lock", "events-link", "folder-link"):
        plant(kind, workspace, outside, COMMANDS["summarize"])
    folder = _conversations(workspace)[TARGET]
    assert (folder / "events.json.tmp").is_symlink()
    assert (workspace / ".jp" / "locks" / f"jp-c{TARGET}.lock").is_symlink()
    assert folder.is_symlink()
    assert (folder / "events.json").is_symlink()
    assert str(folder.resolve()).startswith(str(outside.resolve()))


def test_a_linked_jp_folder_is_the_users_choice_and_is_written(workspace: Path, tmp_path: Path) -> None:
    """``.jp`` itself may live elsewhere (dotfiles): writes go there; only links below it are refused."""
    elsewhere = tmp_path / "dotfiles" / "jp"
    elsewhere.parent.mkdir()
    shutil.move(workspace / ".jp", elsewhere)
    (workspace / ".jp").symlink_to(elsewhere, target_is_directory=True)
    outcome = invoke(workspace, "summary", "set", LABELLED, "0", "kept in my dotfiles")
    assert outcome.code == 0, outcome.describe()
    [folder] = (elsewhere / "conversations").glob(f"{LABELLED}*")
    assert "kept in my dotfiles" in (folder / "events.json").read_text(encoding="utf-8")
    assert not list((elsewhere / "locks").glob("*.lock"))


def test_a_conversation_outside_any_workspace_is_read_but_never_written(workspace: Path, tmp_path: Path) -> None:
    """A bare folder path: no ``locks`` folder appears beside it, and writing is refused in one line."""
    loose = tmp_path / "loose" / "kept"
    loose.mkdir(parents=True)
    [source] = (workspace / ".jp" / "conversations").glob(f"{LABELLED}*")
    folder = loose / source.name
    shutil.copytree(source, folder)
    before = (folder / "events.json").read_bytes()
    readable = invoke(tmp_path, "turns", str(folder))
    assert readable.code == 0, readable.describe()
    refused = invoke(tmp_path, "summary", "set", str(folder), "0", "written outside")
    assert refused.code != 0
    assert refused.traceback() is None
    assert "not inside a workspace" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    assert (folder / "events.json").read_bytes() == before
    assert sorted(str(path.relative_to(loose.parent)) for path in loose.parent.rglob("*") if path.is_dir()) == [
        "kept",
        f"kept/{source.name}",
    ]
