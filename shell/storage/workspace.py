"""Finding the workspace, its conversations and JP's user-local copies (jp-runtime §3.1-3.4)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from turnmark.core.stream.conversation_ids import display_id, id_from_dirname, parse_conversation_id
from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.errors import FileFault, WorkspaceError
from turnmark.shell.storage.files import SMALL_FILE_LIMIT, read_file

STORAGE_DIR = ".jp"

EVENTS = "events.json"
BASE_CONFIG = "base_config.json"
METADATA = "metadata.json"


def user_data_dir() -> Path:
    """JP's user data directory: ``$JP_USER_DATA_DIR``, ``$XDG_DATA_HOME/jp``, else ``~/.local/share/jp``."""
    explicit = os.environ.get("JP_USER_DATA_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "jp"
    return Path.home() / ".local" / "share" / "jp"


@dataclass(frozen=True, slots=True)
class Workspace:
    """A directory holding ``.jp/``, with JP's user-local silo for it when one exists.

    ``config`` is JP's resolved configuration when ``jp`` handed the workspace over (a plugin's ``init``): the
    workspace's configuration layer then, instead of the config files and ``JP_CFG_*`` it was resolved from.
    """

    root: Path
    user_silo: Path | None
    config: JsonObject | None = field(default=None, compare=False, hash=False)

    @property
    def storage(self) -> Path:
        return self.root / STORAGE_DIR

    @property
    def conversations_dir(self) -> Path:
        return self.storage / "conversations"

    def anchor_of(self, path: Path) -> Path:
        """Where writes to ``path`` start: the ``.jp`` folder or the user-local silo holding it (see ``files.py``)."""
        for anchor in (self.storage, self.user_silo):
            if anchor is not None and path.is_relative_to(anchor):
                return anchor
        raise FileFault(f"{path}: not written: it is not inside {self.storage} or JP's user-local copy")

    def relative(self, path: Path) -> str:
        """``path`` relative to the workspace root when it is inside it."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def _workspace_id(storage: Path) -> str | None:
    """The ID in ``.jp/.id``; ``None`` when it is absent or unusable (not a small regular file)."""
    try:
        data = read_file(storage / ".id", SMALL_FILE_LIMIT)
    except FileFault:
        return None
    lines = (data or b"").decode("utf-8", errors="replace").split()
    return lines[-1] if lines else None


def _find_silo(storage: Path) -> Path | None:
    workspace_id = _workspace_id(storage)
    if not workspace_id:
        return None
    silos = user_data_dir() / "workspace"
    try:
        candidates = sorted(path for path in silos.iterdir() if path.name.endswith(f"-{workspace_id}"))
    except OSError:
        return None
    return candidates[0] if candidates else None


_handed_over: list[Workspace] = []


def hand_over(workspace: Workspace) -> None:
    """The workspace ``jp`` gave this process (a plugin's ``init``): found as given, with JP's user-local copy
    and configuration, whenever a look for a workspace reaches its root (a root without a ``.jp/`` folder is
    looked for as any other, and refused the same way)."""
    _handed_over[:] = [Workspace(workspace.root.resolve(), workspace.user_silo, workspace.config)]


def find_workspace(start: Path) -> Workspace | None:
    """The nearest ancestor of ``start`` (inclusive) that contains ``.jp/``; ``start`` may be ``.jp`` itself."""
    start = start.resolve()
    if start.name == STORAGE_DIR and start.is_dir():
        start = start.parent
    for candidate in (start, *start.parents):
        if (candidate / STORAGE_DIR).is_dir():
            if _handed_over and candidate == _handed_over[0].root:
                return _handed_over[0]
            return Workspace(candidate, _find_silo(candidate / STORAGE_DIR))
    return None


def require_workspace(start: Path) -> Workspace:
    if not start.exists():
        raise WorkspaceError(f"{start} does not exist")
    workspace = find_workspace(start)
    if workspace is None:
        raise WorkspaceError(f"no {STORAGE_DIR}/ directory in {start} or any parent; pass --workspace PATH")
    return workspace


@dataclass(frozen=True, slots=True)
class ConversationRef:
    """A conversation by ID, with its workspace copy and/or JP's user-local copy."""

    id: int
    workspace_dir: Path | None
    user_dir: Path | None
    workspace: Workspace | None

    @property
    def display_id(self) -> str:
        return display_id(self.id)

    @property
    def directories(self) -> tuple[Path, ...]:
        return tuple(path for path in (self.user_dir, self.workspace_dir) if path is not None)

    @property
    def dirname(self) -> str:
        return self.directories[0].name

    def anchor_of(self, path: Path) -> Path:
        """Where writes to ``path`` start; a conversation outside a workspace is never written."""
        if self.workspace is None:
            raise FileFault(
                f"{path}: not written: it is not inside a workspace's {STORAGE_DIR}/ folder; "
                "turnmark writes only the conversations of a workspace"
            )
        return self.workspace.anchor_of(path)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _newest(directories: tuple[Path, ...], names: tuple[str, ...]) -> Path:
    """The directory whose files are newest; the first (user-local) wins ties."""
    if len(directories) == 1:
        return directories[0]
    return max(directories, key=lambda d: (max(_mtime(d / name) for name in names), -directories.index(d)))


def newest_copy(ref: ConversationRef, name: str) -> Path:
    """The file ``name`` (``events.json``, ``metadata.json``) of the copy a read would pick."""
    names = (name,) if name == METADATA else (EVENTS, BASE_CONFIG)
    return _newest(ref.directories, names) / name


def _live_dirs(conversations: Path) -> dict[int, str]:
    """Each conversation's folder (a string: a big workspace has thousands) by ID; the first name wins."""
    found: dict[int, str] = {}
    try:
        with os.scandir(conversations) as entries:
            children = sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return found
    for child in children:
        conversation_id = id_from_dirname(child.name)
        if child.name.startswith(".") or conversation_id is None or not child.is_dir():
            continue
        found.setdefault(conversation_id, child.path)
    return found


Folder = tuple[int, str | None, str | None]
"""A conversation's ID, its workspace folder and its user-local folder (``None`` where it has no copy)."""


def conversation_folders(workspace: Workspace) -> list[Folder]:
    """Every live conversation's folders (dot-directories such as ``.archive`` and ``.trash`` skipped), by ID."""
    in_workspace = _live_dirs(workspace.conversations_dir)
    in_silo = _live_dirs(workspace.user_silo / "conversations") if workspace.user_silo else {}
    return [
        (conversation_id, in_workspace.get(conversation_id), in_silo.get(conversation_id))
        for conversation_id in sorted(in_workspace.keys() | in_silo.keys())
    ]


def ref_of(folder: Folder, workspace: Workspace) -> ConversationRef:
    conversation_id, in_workspace, in_silo = folder
    return ConversationRef(
        conversation_id,
        None if in_workspace is None else Path(in_workspace),
        None if in_silo is None else Path(in_silo),
        workspace,
    )


def list_conversations(workspace: Workspace) -> list[ConversationRef]:
    """Every live conversation (``conversation_folders``), by ID."""
    return [ref_of(folder, workspace) for folder in conversation_folders(workspace)]


def conversation_at(path: Path) -> ConversationRef | None:
    """The conversation whose folder is ``path`` (or holds the file ``path``), anywhere on disk."""
    directory = path if path.is_dir() else path.parent
    conversation_id = id_from_dirname(directory.name)
    if conversation_id is None or not (directory / "events.json").is_file():
        return None
    workspace = find_workspace(directory)
    if workspace is not None:
        for ref in list_conversations(workspace):
            if ref.id == conversation_id and directory.resolve() in {d.resolve() for d in ref.directories}:
                return ref
    return ConversationRef(conversation_id, directory, None, workspace)


def select_conversation(workspace: Workspace, wanted: str, refs: list[ConversationRef]) -> ConversationRef:
    """Select by ID (``17727484633`` or ``jp-c17727484633``) or directory name."""
    conversation_id = parse_conversation_id(wanted)
    for ref in refs:
        if ref.id == conversation_id or wanted in {d.name for d in ref.directories}:
            return ref
    raise WorkspaceError(f"no conversation '{wanted}' in {workspace.conversations_dir} (see `turnmark conversations`)")
