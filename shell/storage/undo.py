"""Undo for the commands that restructure a conversation (``edit -i``, ``repair --apply``, ``strip --apply``)
and for any save that upgrades a conversation from JP's older (legacy) format.

Before such a command saves, the conversation's files as they were are kept in
``<state>/<workspace>-<digest>/undo/<conversation>/<n>/`` under the user's state directory
(``state_dirs.undo_dir``; never inside the workspace, whose ``.jp`` a repository may ship), with the
command's name and a digest of the ``events.json`` it writes; only the
last ``KEEP`` are kept. ``undo`` restores the newest one under the lock, only if
the conversation is still exactly as that command left it, and removes it, so a
second undo restores the one before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from turnmark.shell.errors import ConversationError
from turnmark.shell.storage import durability, state_dirs
from turnmark.shell.storage.files import (
    BASE_CONFIG_LIMIT,
    EVENTS_LIMIT,
    SMALL_FILE_LIMIT,
    keep_as,
    make_folder,
    read_file,
    remove_tree,
    sync_folder,
    write_together,
)
from turnmark.shell.storage.locking import hold_lock
from turnmark.shell.storage.workspace import BASE_CONFIG, EVENTS, ConversationRef


class ReadCopy(Protocol):
    """What undo needs of a conversation as read (a ``LoadedConversation``): which one, and the copy read."""

    @property
    def ref(self) -> ConversationRef: ...

    @property
    def directory(self) -> Path: ...


KEEP = 5
AFTER = "after.sha256"
COMMAND = "command"
NAMES = (BASE_CONFIG, EVENTS)
"""The files a restructuring command writes (``metadata.json`` is never among them, nor restored)."""
LIMITS = {BASE_CONFIG: BASE_CONFIG_LIMIT, EVENTS: EVENTS_LIMIT}
Along = Callable[[str], list[tuple[Path, bytes | None]]]
"""Files to commit together with a conversation's ``events.json``, given its SHA-256 (undo's record)."""
Result_co = TypeVar("Result_co", covariant=True)


def undo_root(ref: ConversationRef) -> Path:
    return state_dirs.undo_dir(ref)


def _digest(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def _steps(ref: ConversationRef, *, complete: bool = True) -> list[Path]:
    """The kept copies, oldest first; only those whose save happened (with their record) unless ``complete``
    is false."""
    root = undo_root(ref)
    if not root.is_dir() or root.is_symlink():
        return []
    return sorted(
        (path for path in root.iterdir() if path.name.isdecimal() and (not complete or (path / AFTER).is_file())),
        key=lambda path: int(path.name),
    )


class Save(Protocol[Result_co]):
    """A save that commits ``along``'s files together with the conversation's (``save_stream``, ``write_documents``)."""

    def __call__(self, *, along: Along) -> Result_co: ...


def saved_with_undo(loaded: ReadCopy, save: Save[Result_co], command: str) -> Result_co:
    """Keep the files as they are, then run ``save`` (under the lock ``loaded`` was read with); ``command`` names
    what saves (``edit -i``, ``strip --apply``), for undo to say what it takes back; what ``save`` returned.

    The files as they are get a second name in the step (``keep_as``: a hard link, as the save replaces
    them by a rename; a copy where a link cannot be made). The step is complete before the conversation's
    files are replaced: the kept files are named first (made durable then, or, in a batch, by the save's own
    sync before its renames: ``durability``), and the command's name and the record of what the save writes
    go with the save's own files, renamed into place before them (``write_documents``). A kill at any moment
    leaves either the old conversation with a step that ``undo`` sees was never applied, or the new one with
    its step. A failed save drops the step again; steps a killed run left without a record are removed here.
    """
    root = undo_root(loaded.ref)
    anchor = state_dirs.conversation_anchor(loaded.ref, root)
    for unfinished in set(_steps(loaded.ref, complete=False)) - set(_steps(loaded.ref)):
        remove_tree(unfinished, anchor)
    steps = _steps(loaded.ref)
    step = root / str(int(steps[-1].name) + 1 if steps else 1)
    source_anchor = loaded.ref.anchor_of(loaded.directory)
    try:
        make_folder(step, anchor, mode=state_dirs.PRIVATE)
        for name in NAMES:
            keep_as(loaded.directory / name, source_anchor, step / name, anchor, LIMITS[name], mode=state_dirs.PRIVATE)
        if durability.per_file():
            sync_folder(step, anchor)
    except ConversationError as error:
        remove_tree(step, anchor)
        raise ConversationError(f"cannot keep the undo copy: {error}") from None
    try:
        saved = save(along=lambda digest: [(step / COMMAND, command.encode()), (step / AFTER, digest.encode())])
    finally:
        if not (step / AFTER).is_file():
            remove_tree(step, anchor)
    for old in _steps(loaded.ref)[:-KEEP]:
        remove_tree(old, anchor)
    return saved


def continued(ref: ConversationRef) -> Along:
    """The ``along`` of a later save by the command that kept the newest step, under the lock it still holds:
    the step's record then names what that save writes, so undo takes back both (``query`` saves its request,
    then the answer)."""
    steps = _steps(ref)
    if not steps:
        return lambda digest: []
    step = steps[-1]
    return lambda digest: [(step / AFTER, digest.encode())]


def _text(path: Path) -> str | None:
    data = read_file(path, SMALL_FILE_LIMIT)
    return None if data is None else data.decode(errors="replace")


def undo(ref: ConversationRef) -> str:
    """Restore the newest kept copy; a one-line message of what happened (``ConversationError`` when refused).

    A step whose command never replaced the conversation (it was killed first: the conversation is still
    the step's copy) is discarded, and the one before it is undone.
    """
    with hold_lock(ref):
        directory = max(ref.directories, key=lambda d: (d / EVENTS).stat().st_mtime_ns if (d / EVENTS).exists() else -1)
        current = _digest(read_file(directory / EVENTS, EVENTS_LIMIT))
        steps = _steps(ref)
        interrupted: list[str] = []
        while steps:
            step = steps.pop()
            command = _text(step / COMMAND) or f"change {step.name}"
            if current == _text(step / AFTER):
                kept = {name: read_file(step / name, LIMITS[name]) for name in NAMES}
                order = NAMES if kept[BASE_CONFIG] is not None else tuple(reversed(NAMES))
                changes = [(directory / name, kept[name]) for directory in reversed(ref.directories) for name in order]
                changed = write_together(changes, ref.anchor_of)
                remove_tree(step, state_dirs.conversation_anchor(ref, step))
                legacy = any(path.name == BASE_CONFIG for path in changed) and kept[BASE_CONFIG] is None
                what = ", in JP's older format (events.json as it was, base_config.json removed)" if legacy else ""
                skipped = f" ({', '.join(interrupted)} had been interrupted before it saved)" if interrupted else ""
                return (
                    f"{ref.display_id}: restored the copy kept before {command}{what}; "
                    f"{len(steps)} more to undo{skipped}"
                )
            if current == _digest(read_file(step / EVENTS, EVENTS_LIMIT)):
                interrupted.append(command)
                remove_tree(step, state_dirs.conversation_anchor(ref, step))
                continue
            raise ConversationError(
                f"{ref.display_id}: changed since {command} (events.json is not what it wrote); nothing restored"
            )
    raise ConversationError(
        f"{ref.display_id}: nothing to undo (edit -i, repair --apply, strip --apply and an upgrade from JP's older "
        "format keep copies)"
    )
