"""Faulty writes: every writing command, with each file-system call it makes failing in turn.

The conversation has both copies (JP's user-local copy and the workspace copy). A clean run
of each command counts its calls to ``files.os_write``, ``os.replace``, ``os.fsync``,
``os.mkdir``, ``os.rename``, ``os.link`` and ``syncfs`` (a batch's sync: ``storage/durability.py``) and
records what it writes; then, in a fresh
workspace each time, the k-th call of one of them fails with ENOSPC or EROFS (by turns; at
full scale with each), and once more with the workspace copy on a read-only bind mount,
where root may mount. After every run: every conversation folder loads, the conversation
is the old version in both copies or the complete new version in both (and the exit status
says which), ``conversations`` exits 0 and lists no build folder, none is left, no
``*.tmp`` is left, and the undo copy exists exactly when the write happened.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.shell.storage.test_two_copies import COMMANDS as REWRITING
from tests.shell.storage.test_two_copies import TARGET, editor, user_local_copy
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.errors import TurnmarkError
from turnmark.shell.storage import durability, files
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.state_dirs import state_home, workspace_key
from turnmark.shell.storage.workspace import ConversationRef, find_workspace

from .figures import FULL, scale
from .hostile_cli import Outcome, Tally, invoke

COMMANDS = {**REWRITING, "fork": ("fork", TARGET, "--last", "2")}
UNDOABLE = {"strip --apply", "repair --apply", "edit -i"}
CALLS = {
    "os_write": (files, "os_write"),
    "os.replace": (os, "replace"),
    "os.fsync": (os, "fsync"),
    "os.mkdir": (os, "mkdir"),
    "os.rename": (os, "rename"),
    "os.link": (os, "link"),
    "syncfs": (durability, "_syncfs"),
}
ERRORS = (errno.ENOSPC, errno.EROFS)
State = dict[str, bytes]


@dataclass(frozen=True)
class Place:
    """A fresh copy of the fixture workspace with a user-local copy of ``TARGET``."""

    root: Path
    workspace: Path
    user_data: Path
    shared: Path
    local: Path

    @classmethod
    def make(cls, root: Path) -> Place:
        workspace, user_data = root / "ws", root / "user-data"
        shutil.copytree(FIXTURES, workspace)
        return cls(root, workspace, user_data, *user_local_copy(workspace, user_data))

    def copies(self) -> tuple[State, State]:
        return _files(self.shared), _files(self.local)

    def conversations(self) -> list[str]:
        return sorted(path.name for path in (self.workspace / ".jp" / "conversations").iterdir())

    def undo_steps(self) -> int:
        root = state_home() / workspace_key(self.workspace) / "undo" / f"jp-c{TARGET}"
        return sum(1 for step in root.glob("*") if (step / "after.sha256").is_file()) if root.is_dir() else 0


def _files(folder: Path) -> State:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


@contextmanager
def calls_failing(place: Place, failing: tuple[str, int] | None, error: int) -> Iterator[Counter[str]]:
    """Count the calls of ``CALLS`` (and make the ``failing`` one, by name and number, raise ``error``)."""
    counted: Counter[str] = Counter()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JP_USER_DATA_DIR", str(place.user_data))
        for name, (module, attribute) in CALLS.items():
            patch.setattr(module, attribute, _counting(name, getattr(module, attribute), counted, failing, error))
        yield counted


def _counting(
    name: str, original: Callable[..., object], counted: Counter[str], failing: tuple[str, int] | None, error: int
) -> Callable[..., object]:
    def call(*args: object, **kwargs: object) -> object:
        counted[name] += 1
        if failing == (name, counted[name]):
            raise OSError(error, os.strerror(error))
        return original(*args, **kwargs)

    return call


def run(
    place: Place, command: str, failing: tuple[str, int] | None = None, error: int = 0
) -> tuple[Outcome, Counter[str]]:
    with calls_failing(place, failing, error) as counted:
        outcome = invoke(place.workspace, *COMMANDS[command], environ={**os.environ, "EDITOR": editor(place.root)})
    return outcome, counted


def _parse_problems(place: Place) -> list[str]:
    """Every conversation folder, in both places, must load on its own."""
    problems = []
    workspace = find_workspace(place.workspace)
    assert workspace is not None
    silo = place.user_data / "workspace" / "ws-fx001" / "conversations"
    folders = [*(place.workspace / ".jp" / "conversations").iterdir(), *(silo.iterdir() if silo.is_dir() else [])]
    for folder in folders:
        if folder.name.startswith("."):
            problems.append(f"{folder} was left behind")
            continue
        try:
            read_conversation(
                ConversationRef(int(folder.name.split("-")[0]), folder, None, workspace), sequential_ids()
            )
        except TurnmarkError as error:
            problems.append(f"{folder.name} does not load: {error}")
    return problems


@dataclass(frozen=True)
class Expected:
    before: tuple[State, State]
    after: tuple[State, State]
    conversations: list[str]


def check(place: Place, command: str, outcome: Outcome, expected: Expected) -> list[str]:
    problems = _parse_problems(place)
    if (trace := outcome.traceback()) is not None:
        problems.append(f"traceback:\n{trace}")
    if outcome.code not in (0, 1, 2):
        problems.append(f"exit status {outcome.code}")
    if outcome.code and not any(line.startswith("error:") for line in outcome.err.splitlines()):
        problems.append("it failed without an error line")
    now = place.copies()
    written = now == expected.after
    if now != expected.before and not written:
        problems.append("a copy is neither the old nor the complete new version, or the two copies differ")
    new = [name for name in place.conversations() if name not in expected.conversations]
    if command == "fork":
        written = len(new) == 1
        if len(new) > 1:
            problems.append(f"{len(new)} new conversations")
    elif new:
        problems.append(f"new folders appeared: {new}")
    if written != (outcome.code == 0):
        problems.append(f"exit status {outcome.code}, yet the conversation was {'' if written else 'not '}written")
    if any(path.name.endswith(".tmp") for folder in (place.shared, place.local) for path in folder.iterdir()):
        problems.append("a *.tmp file was left")
    if command in UNDOABLE and place.undo_steps() != (1 if written else 0):
        problems.append(f"{place.undo_steps()} undo copies after a {'' if written else 'failed '}write")
    listing = invoke(place.workspace, "conversations", "--format", "json", environ=dict(os.environ))
    if listing.code != 0:
        problems.append(f"`conversations` exits {listing.code}: {listing.err.strip()}")
    if ".turnmark" in listing.out:
        problems.append("`conversations` lists a build folder")
    return problems


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "faulty writes: label, summarize, strip --apply, repair --apply, fork, edit -i with both copies of the "
        "conversation, each os_write / os.replace / os.fsync / os.mkdir / os.rename / os.link / syncfs call failing in "
        "turn with ENOSPC or EROFS, and the workspace copy on a read-only mount",
        "every folder loads; the old or the complete new version in both copies, as the exit status says; "
        "`conversations` exits 0; no build folder or *.tmp left; an undo copy exactly when written",
    )
    yield tally
    errors = "ENOSPC and EROFS" if FULL else "ENOSPC or EROFS"
    tally.publish(
        f"{tally.runs} command runs: {len(COMMANDS)} commands x every call of {len(CALLS)} kinds x {errors}, + mounts"
    )


def _mounted(*command: str) -> bool:
    return subprocess.run(command, capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_fault_leaves_the_old_or_the_new_version(command: str, tmp_path: Path, tally: Tally) -> None:
    clean = Place.make(tmp_path / "clean")
    before = clean.copies()
    conversations = clean.conversations()
    outcome, counted = run(clean, command)
    assert outcome.code == 0, outcome.describe()
    expected = Expected(before, clean.copies() if command != "fork" else before, conversations)
    failures: list[str] = []
    points = [(name, number) for name in CALLS for number in range(1, counted[name] + 1)]
    for index, point in enumerate(points):
        for error in (ERRORS[(index + n) % 2] for n in range(scale(1, 2))):
            place = Place.make(tmp_path / f"{index}-{error}")
            outcome, _ = run(place, command, point, error)
            tally.runs += 1
            problems = check(place, command, outcome, expected)
            name = f"{command}/{point[0]}#{point[1]}/{errno.errorcode[error]}"
            tally.case(name, problems)
            failures += [f"{name}: {problem}\n{outcome.describe()}" for problem in problems]
            shutil.rmtree(place.root)
    place = Place.make(tmp_path / "read-only")
    shared = str(place.shared)
    if _mounted("mount", "--bind", shared, shared):
        try:
            if _mounted("mount", "-o", "remount,bind,ro", shared, shared):
                outcome, _ = run(place, command)
                tally.runs += 1
                problems = check(place, command, outcome, expected)
                if command != "fork" and "read-only file system" not in outcome.err:
                    problems.append("the read-only file system is not named")
                tally.case(f"{command}/read-only", problems)
                failures += [f"{command}/read-only: {problem}\n{outcome.describe()}" for problem in problems]
        finally:
            subprocess.run(["umount", shared], check=False)
    assert not failures, "\n".join(failures)
