"""Loading and saving conversations the way JP does (jp-runtime §3.3-3.5).

Reads pick the newer of the workspace copy and JP's user-local copy (stream
files and metadata judged separately, the user-local copy winning ties).
Writes happen only under the conversation lock, on a stream loaded under
that lock: each file goes to ``<file>.tmp`` and is renamed over the target,
unchanged bytes are not written, and the order is ``metadata.json``,
``base_config.json``, ``events.json`` (so an interrupted upgrade of a legacy
conversation stays loadable). A legacy conversation is upgraded on its first
save.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from returns.result import Failure, Success

from turnmark.core.errors import StreamError
from turnmark.core.stream.conversation_stream import ConversationStream, persisted_repairs
from turnmark.core.stream.duplicate_keys import duplicate_keys
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.metadata import Metadata, parse_metadata
from turnmark.shell.errors import ConversationError, ConversationLocked, FileFault, SaveRefused
from turnmark.shell.storage.files import check_writable, os_reason, read_file, remove, write_if_changed
from turnmark.shell.storage.files import directory as opened_directory
from turnmark.shell.storage.locking import ConversationLock, lock_holder, try_lock
from turnmark.shell.storage.workspace import ConversationRef, Workspace

EVENTS = "events.json"
BASE_CONFIG = "base_config.json"
METADATA = "metadata.json"


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


@dataclass(frozen=True, slots=True)
class LoadedConversation:
    """A conversation as read: where from, the bytes read, its metadata and its stream.

    ``lock`` is the lock held while it was read; only such a conversation can be saved.
    """

    ref: ConversationRef
    directory: Path
    events: bytes
    stream: ConversationStream
    metadata: Metadata | None
    metadata_error: str | None = None
    lock: ConversationLock | None = None

    @property
    def title(self) -> str | None:
        return self.metadata.title if self.metadata else None


def describe(path: Path, error: StreamError) -> str:
    file = path if path.name == error.document else path.parent / error.document
    return f"{file}: {error.describe()}"


def read_conversation(
    ref: ConversationRef, new_id: IdSource, lock: ConversationLock | None = None
) -> LoadedConversation:
    """Read a conversation's stream and metadata, raising ``ConversationError`` with a one-line message.

    Pass the conversation's held ``lock`` to be able to save what was read.
    """
    events_path = newest_copy(ref, EVENTS)
    directory = events_path.parent
    events = read_file(events_path)
    if events is None:
        raise ConversationError(f"{events_path}: cannot read: no such file or directory")
    base_config = read_file(directory / BASE_CONFIG)
    match ConversationStream.from_json(events, base_config, new_id=new_id, conversation=ref.display_id):
        case Failure(problem):
            raise ConversationError(describe(events_path, problem))
        case Success(stream):
            pass
    metadata, metadata_error = read_metadata(ref)
    return LoadedConversation(ref, directory, events, stream, metadata, metadata_error, lock)


def read_metadata(ref: ConversationRef) -> tuple[Metadata | None, str | None]:
    """The conversation's ``metadata.json`` (the newer copy), or why it cannot be read."""
    path = newest_copy(ref, METADATA)
    try:
        data = read_file(path)
    except FileFault as fault:
        return None, str(fault)
    if data is None:
        return None, f"{path}: missing"
    match parse_metadata(data):
        case Success(parsed):
            return parsed, None
        case Failure(problem):
            return None, describe(path, problem)
    raise AssertionError("unreachable")


def save_stream(
    lock: ConversationLock,
    loaded: LoadedConversation,
    stream: ConversationStream,
    *,
    persist_ids: bool = False,
    announce: Callable[[str], None] | None = None,
) -> list[Path]:
    """Persist ``stream`` to every copy of the conversation; return the files actually written.

    Requires the conversation's lock, held since ``loaded`` was read under it. A
    conversation whose folder or files are links is refused before anything is
    written; a legacy upgrade whose ``events.json`` cannot be written takes back
    the ``base_config.json`` it created. An unchanged stream writes nothing (a legacy file stays legacy, transient
    IDs stay unsaved) unless ``persist_ids`` asks for its transient IDs to be written.
    """
    if not lock.held or loaded.lock is not lock:
        raise ConversationError(f"{loaded.directory}: not saved: it was not read under the lock held now")
    if stream == loaded.stream and not (persist_ids and any(entry.transient_id for entry in stream.entries)):
        return []
    ambiguous = stream.ambiguous_links()
    if ambiguous:
        raise SaveRefused(loaded.directory / EVENTS, ambiguous, stream.is_legacy)
    doubled = duplicate_keys(loaded.events)
    if doubled:
        first = doubled[0]
        raise ConversationError(
            f"{loaded.directory / EVENTS}: entry {first.index}: key {first.key!r} is written twice in "
            f"{first.path}; refusing to save, which would keep only the last value"
        )
    current = stream.upgraded()
    written = write_documents(lock, loaded, current.base_config_json(), current.to_json())
    repairs = persisted_repairs(loaded.stream, current)
    if repairs and written and announce is not None:
        announce(repairs)
    return written


def write_documents(
    lock: ConversationLock, loaded: LoadedConversation, base_config: bytes | None, events: bytes
) -> list[Path]:
    """Write ``base_config.json`` (unless ``None``) and ``events.json`` to every copy; the files written.

    Under the lock ``loaded`` was read with; links are refused before anything is written.
    """
    if not lock.held or loaded.lock is not lock:
        raise ConversationError(f"{loaded.directory}: not saved: it was not read under the lock held now")
    ref = loaded.ref
    for directory in ref.directories:
        check_writable(directory, (METADATA, BASE_CONFIG, EVENTS), ref.anchor_of(directory))
    written: list[Path] = []
    for directory in ref.directories:
        anchor = ref.anchor_of(directory)
        created = base_config is not None and not (directory / BASE_CONFIG).exists()
        if base_config is not None and write_if_changed(directory / BASE_CONFIG, base_config, anchor):
            written.append(directory / BASE_CONFIG)
        try:
            changed = write_if_changed(directory / EVENTS, events, anchor)
        except ConversationError:
            if created:
                remove(directory / BASE_CONFIG, anchor)
            raise
        if changed:
            written.append(directory / EVENTS)
    return written


def hold_lock(ref: ConversationRef) -> ConversationLock:
    """The conversation's lock, or ``ConversationLocked`` naming the holder (never waits)."""
    lock = try_lock(ref)
    if lock is None:
        holder = lock_holder(ref)
        by = f" by {holder}" if holder else ""
        raise ConversationLocked(f"{ref.display_id} is locked{by} (a running jp?); try again when it is done")
    return lock


def edit_conversation(
    ref: ConversationRef,
    change: Callable[[ConversationStream], ConversationStream],
    new_id: IdSource,
    *,
    persist_ids: bool = False,
    announce: Callable[[str], None] | None = None,
) -> tuple[ConversationStream, list[Path]]:
    """Lock, load, change and save one conversation; never waits for a lock held elsewhere."""
    with hold_lock(ref) as lock:
        loaded = read_conversation(ref, new_id, lock)
        stream = change(loaded.stream)
        return stream, save_stream(lock, loaded, stream, persist_ids=persist_ids, announce=announce)


def create_conversation(workspace: Workspace, metadata: bytes, base_config: bytes, events: bytes) -> ConversationRef:
    """A new conversation folder, named as JP names it (``<deciseconds>``), holding these files."""
    conversation_id = int(datetime.now(UTC).timestamp() * 10)
    parent = workspace.conversations_dir
    while any(path.name.split("-", 1)[0] == str(conversation_id) for path in parent.glob(f"{conversation_id}*")):
        conversation_id += 1
    directory = parent / str(conversation_id)
    anchor = workspace.storage
    with opened_directory(parent, anchor, create=True, target=directory) as fd:
        try:
            os.mkdir(directory.name, dir_fd=fd)
        except OSError as error:
            raise FileFault(f"{directory}: cannot create the conversation: {os_reason(error)}") from None
    write_if_changed(directory / METADATA, metadata, anchor)
    write_if_changed(directory / BASE_CONFIG, base_config, anchor)
    write_if_changed(directory / EVENTS, events, anchor)
    return ConversationRef(conversation_id, directory, None, workspace)
