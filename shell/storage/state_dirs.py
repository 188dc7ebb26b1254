"""Where turnmark keeps its own files for a workspace: with the user, never inside the workspace.

A repository can ship its ``.jp`` folder, so nothing turnmark believes may come from there. The cache
database lives under the user's cache directory (``$TURNMARK_CACHE_DIR``, else
``platformdirs.user_cache_dir("turnmark")``: ``$XDG_CACHE_HOME/turnmark``, by default
``~/.cache/turnmark``), undo steps and failure memory under the user's state directory
(``$TURNMARK_STATE_DIR``, else ``platformdirs.user_state_dir("turnmark")``: ``$XDG_STATE_HOME/turnmark``,
by default ``~/.local/state/turnmark``). Each holds one folder per workspace, named for the workspace's
real path (``<last part>-<first 16 hex digits of its SHA-256>``): two clones never share one, and a moved
workspace starts afresh. These folders are made with mode 0700 and reached from their home without
following a link (``files.open_directory``); each holds a ``workspace`` file naming the real path it is
for, so ``pruning`` can tell the folders of workspaces that are gone. A home inside the workspace (a
repository's ``.envrc`` can set the variables) is refused: a folder the repository ships could pose as
turnmark's own files (``StateFolderRefused``), unless the workspace is the user's home directory itself.

The folders an older turnmark kept inside the workspace (``.jp/.turnmark``, ``.jp/turnmark``, and
``.turnmark`` in JP's user-local silo) are never read; ``leftovers`` says so once per workspace (the folders
it named are remembered in the workspace's state folder).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import platformdirs

from turnmark.shell.errors import FileFault, StateFolderRefused
from turnmark.shell.storage.files import METADATA_LIMIT, os_reason, read_file, write_if_changed
from turnmark.shell.storage.workspace import ConversationRef, Workspace

APP = "turnmark"
CACHE_ENV = "TURNMARK_CACHE_DIR"
STATE_ENV = "TURNMARK_STATE_DIR"
PRIVATE = 0o700
"""The mode of every folder turnmark makes for its own files (they hold the conversations' text)."""
UNDO = "undo"
FAILURES = "summary-failures"
LEGACY = (".turnmark", "turnmark")
"""The folders an older turnmark kept in ``.jp`` (and ``.turnmark`` in JP's user-local silo)."""
MARKER = "workspace"
"""The file (in each workspace's folder) holding the workspace's real path."""
NOTED = "older-folders-noted"
"""The file (in the workspace's state folder) listing the older folders ``leftovers`` has named."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_said: set[Path] = set()
_outside: set[tuple[Path, Path]] = set()
_claimed: set[Path] = set()


def _home(variable: str, xdg: str, default: Callable[[str], str]) -> Path:
    """``$variable`` when it is an absolute path (a relative one is ignored, as XDG's are), else ``default``'s
    folder (platformdirs', asked once per value of the environment it reads)."""
    explicit = os.environ.get(variable, "")
    if os.path.isabs(explicit):
        return Path(explicit)
    return Path(_platform_folder(default, os.environ.get(xdg), os.environ.get("HOME")))


@functools.lru_cache(maxsize=16)
def _platform_folder(default: Callable[[str], str], _xdg: str | None, _home: str | None) -> str:
    return default(APP)


def cache_home() -> Path:
    return _home(CACHE_ENV, "XDG_CACHE_HOME", platformdirs.user_cache_dir)


def state_home() -> Path:
    return _home(STATE_ENV, "XDG_STATE_HOME", platformdirs.user_state_dir)


@functools.lru_cache(maxsize=256)
def workspace_key(root: Path) -> str:
    """The folder name for the workspace at ``root``: its last part (made safe) and a digest of its real path
    (worked out once a process: a run's writes all go to the folder its first one chose)."""
    real = os.path.realpath(root)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = _UNSAFE.sub("_", os.path.basename(real))[:40].strip(".") or "workspace"
    return f"{name}-{digest}"


def _root(ref: ConversationRef) -> Path:
    """The workspace a conversation belongs to (the folder holding the ``.jp`` it lies in, without one)."""
    if ref.workspace is not None:
        return ref.workspace.root
    return ref.directories[0].parent.parent.parent


def _source(variable: str, xdg: str) -> str:
    for name in (variable, xdg):
        if os.path.isabs(os.environ.get(name, "")):
            return f"${name}"
    return "the user's default folder"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def workspace_folder(home: Path, root: Path) -> Path:
    """The workspace's folder under ``home``; ``StateFolderRefused`` when ``home`` lies inside the workspace
    (real paths, after links), unless the workspace is the user's home directory."""
    if (home, root) not in _outside:
        real_home, real_root = os.path.realpath(home), os.path.realpath(root)
        if _inside(real_home, real_root) and real_root != os.path.realpath(Path.home()):
            variable, xdg = (CACHE_ENV, "XDG_CACHE_HOME") if home == cache_home() else (STATE_ENV, "XDG_STATE_HOME")
            source = _source(variable, xdg)
            raise StateFolderRefused(
                f"{home}: refusing to keep turnmark's own files here ({source}): it is inside the workspace "
                f"{root}, where a folder the workspace ships could pose as them; point {source} outside it"
            )
        _outside.add((home, root))
    return home / workspace_key(root)


def cache_dir(workspace: Workspace) -> Path:
    """The folder of the workspace's cache database."""
    return workspace_folder(cache_home(), workspace.root)


def state_dir(root: Path) -> Path:
    """The workspace's folder of undo steps, failure memory and notes."""
    return workspace_folder(state_home(), root)


def undo_dir(ref: ConversationRef) -> Path:
    """The folder of a conversation's undo steps."""
    return state_dir(_root(ref)) / UNDO / ref.display_id


def failures_path(ref: ConversationRef) -> Path:
    """The file of a conversation's failure memory."""
    return state_dir(_root(ref)) / FAILURES / f"{ref.display_id}.json"


def claim(folder: Path, root: Path) -> None:
    """Record in ``folder`` (a workspace's, made on the way) which workspace it is for (``MARKER``), once a run;
    a fault is ignored (the folder is then only pruned by age)."""
    if folder in _claimed:
        return
    _claimed.add(folder)
    with contextlib.suppress(FileFault):
        data = os.fsencode(os.path.realpath(root)) + b"\n"
        write_if_changed(folder / MARKER, data, anchor(folder), create=True, mode=PRIVATE)


def anchor(path: Path) -> Path:
    """The home ``path`` lies in (where writes to it start), made (mode 0700) when missing.

    Only the homes are reached following links (the user may keep ``~/.cache`` elsewhere); everything below
    is reached without (``files.open_directory``).
    """
    for home in (cache_home(), state_home()):
        if path.is_relative_to(home):
            try:
                os.makedirs(home, PRIVATE, exist_ok=True)
            except OSError as error:
                raise FileFault(f"{path}: cannot write: {home}: {os_reason(error)}") from None
            return home
    raise ValueError(f"{path} is not in turnmark's cache or state folder")


def conversation_anchor(ref: ConversationRef, path: Path) -> Path:
    """``anchor`` for ``path``, one of ``ref``'s own files; ``FileFault`` for a conversation outside a workspace,
    which turnmark never writes."""
    if ref.workspace is None:
        raise FileFault(
            f"{path}: not written: {ref.display_id} is not inside a workspace's .jp/ folder; "
            "turnmark writes only the conversations of a workspace"
        )
    claim(state_dir(ref.workspace.root), ref.workspace.root)
    return anchor(path)


def anchor_of(ref: ConversationRef) -> Callable[[Path], Path]:
    """Where writes start, for the conversation's files and for turnmark's own files about it (undo's record,
    committed with the conversation's)."""

    def of(path: Path) -> Path:
        if any(path.is_relative_to(home) for home in (cache_home(), state_home())):
            return conversation_anchor(ref, path)
        return ref.anchor_of(path)

    return of


def leftovers(workspace: Workspace) -> list[str]:
    """One note per folder an older turnmark left in the workspace (or JP's user-local silo): it is no longer
    read, and how to remove it. Each is said once per workspace (and once per run when the state folder
    cannot be written)."""
    places = [workspace.storage / name for name in LEGACY]
    if workspace.user_silo is not None:
        places.append(workspace.user_silo / LEGACY[0])
    found = [place for place in places if place not in _said and os.path.lexists(place)]
    if not found:
        return []
    _said.update(found)
    record = state_dir(workspace.root) / NOTED
    noted = _noted(record)
    fresh = [place for place in found if str(place) not in noted]
    if fresh:
        data = "".join(f"{line}\n" for line in sorted(noted | {str(place) for place in fresh}))
        with contextlib.suppress(FileFault):
            write_if_changed(record, data.encode(errors="surrogateescape"), anchor(record), create=True, mode=PRIVATE)
    return [
        f"{place} is left by an older turnmark and no longer read (turnmark keeps its files in "
        f"{cache_home()} and {state_home()} now); remove it with: rm -r {shlex.quote(str(place))}"
        for place in fresh
    ]


def _noted(record: Path) -> set[str]:
    """The folders named in ``record`` (none when it is missing, unreadable or not a regular file)."""
    try:
        data = read_file(record, METADATA_LIMIT, follow_links=False)
    except FileFault:
        return set()
    return set(data.decode(errors="surrogateescape").splitlines()) if data is not None else set()
