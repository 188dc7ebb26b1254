"""Loading and saving conversations the way JP does (jp-runtime §3.3-3.5).

Reads pick the newer of the workspace copy and JP's user-local copy (stream
files and metadata judged separately, the user-local copy winning ties).
Writes happen only under the conversation lock, on a stream loaded under
that lock, after the save rule (``refuse_unsavable``) allowed them. Both
copies are written together (``files.write_together``): every new file is
written and synced beside its target first, then renamed over it
(``base_config.json`` before ``events.json``, so an interrupted upgrade of a
legacy conversation stays loadable; the workspace copy first, the user-local
copy last), and a failure takes the renames back, leaving both copies as they
were. Unchanged bytes are not written. A legacy conversation is upgraded on its
first save, which returns what the upgrade changed (``Saved.upgrade``) and keeps an undo
step first. A new conversation is built in a hidden folder and renamed into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from returns.result import Failure, Success

from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.light import LazyTurns
from turnmark.core.stream.light import read_lazily as read_lazily_from
from turnmark.core.stream.metadata import Metadata, parse_metadata
from turnmark.core.summaries.facts import ConversationFacts, facts_of, light_facts
from turnmark.shell.clock import now_epoch
from turnmark.shell.collector import collector_paused, promote
from turnmark.shell.errors import ConversationError, FileFault, SaveRefused
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.storage import state_dirs
from turnmark.shell.storage.files import (
    BASE_CONFIG_LIMIT,
    EVENTS_LIMIT,
    METADATA_LIMIT,
    MIB,
    build_directory,
    check_writable,
    process_gone,
    read_chunks,
    read_file,
    remove_abandoned,
    write_together,
)
from turnmark.shell.storage.locking import ConversationLock, hold_lock
from turnmark.shell.storage.workspace import (
    BASE_CONFIG,
    EVENTS,
    METADATA,
    ConversationRef,
    Workspace,
    list_conversations,
    newest_copy,
)

with lazy_imports():
    from turnmark.core.editing import repair
    from turnmark.core.stream import conversation_stream, legacy_upgrade, save_rule
    from turnmark.shell.storage import undo

if TYPE_CHECKING:
    from turnmark.core.errors import StreamError
    from turnmark.core.stream.conversation_stream import ConversationStream, ReadFile
    from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
    from turnmark.shell.storage.undo import Along

BUILDING = ".turnmark-new-"
"""The start of the hidden name a new conversation is built under before it is renamed into place."""
STALE_SECONDS = 600
"""A build folder this old, whose process is gone, was abandoned."""
NAME_TRIES = 100
"""How many free IDs after now a new conversation may take when others appear at the same moment."""


@dataclass(frozen=True, slots=True)
class LoadedConversation:
    """A conversation as read: where from, its metadata and its stream (the bytes read are not kept).

    ``lock`` is the lock held while it was read; only such a conversation can be saved. ``events_sha256``
    is the SHA-256 of the ``events.json`` bytes read, when the read was asked for it (``digest``).
    """

    ref: ConversationRef
    directory: Path
    events_sha256: str | None
    stream: ConversationStream
    metadata: Metadata | None
    metadata_error: str | None = None
    lock: ConversationLock | None = None
    digests: Digests | None = None
    """With ``digest``: the SHA-256 of each file read (so none is read again to be hashed)."""

    @property
    def title(self) -> str | None:
        return self.metadata.title if self.metadata else None

    @property
    def legacy(self) -> bool:
        return self.stream.is_legacy


EventsStamp = tuple[tuple[int, int] | None, ...]
"""``(mtime ns, size)`` of each copy's ``events.json``, ``None`` for a copy that cannot be read."""


def events_stamp(ref: ConversationRef) -> EventsStamp:
    """How each copy's ``events.json`` stands now (taken under the lock, it names turnmark's own write)."""
    stamps: list[tuple[int, int] | None] = []
    for directory in ref.directories:
        try:
            status = (directory / EVENTS).stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((status.st_mtime_ns, status.st_size))
    return tuple(stamps)


def describe(path: Path, error: StreamError) -> str:
    file = path if path.name == error.document else path.parent / error.document
    return f"{file}: {error.describe()}"


class Digests(NamedTuple):
    """The SHA-256 of the files a read took (``None``: a file that is not there; ``events`` ``""``: not hashed,
    a settled file read for a row, which is then trusted by the file's identity alone:
    ``workspace_cache.hashed_when_read``)."""

    events: str
    metadata: str | None
    base_config: str | None


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read_files(
    ref: ConversationRef, digest: bool, follow_links: bool = True
) -> tuple[Path, bytes, str | None, bytes | None]:
    """The newer copy's ``events.json`` (its path, bytes and, with ``digest``, SHA-256) and the
    ``base_config.json`` beside it."""
    events_path = newest_copy(ref, EVENTS)
    events = read_file(events_path, EVENTS_LIMIT, follow_links=follow_links)
    if events is None:
        raise ConversationError(f"{events_path}: cannot read: no such file or directory")
    sha256 = hashlib.sha256(events).hexdigest() if digest else None
    base_config = read_file(events_path.parent / BASE_CONFIG, BASE_CONFIG_LIMIT, follow_links=follow_links)
    return events_path, events, sha256, base_config


def _metadata_and_digests(
    ref: ConversationRef, events_sha256: str | None, base_config: bytes | None, follow_links: bool = True
) -> tuple[Metadata | None, str | None, Digests | None]:
    metadata, problem, data = _read_metadata(ref, follow_links)
    digests = Digests(events_sha256, _sha(data), _sha(base_config)) if events_sha256 is not None else None
    return metadata, problem, digests


def read_conversation(
    ref: ConversationRef,
    new_id: IdSource,
    lock: ConversationLock | None = None,
    *,
    digest: bool = False,
    hash_events: bool = True,
    follow_links: bool = True,
    count_keys: bool = True,
) -> LoadedConversation:
    """Read a conversation's stream and metadata, raising ``ConversationError`` with a one-line message.

    Pass the conversation's held ``lock`` to be able to save what was read, ``digest`` for the SHA-256 of
    the files read (``Digests``; without ``hash_events`` not of ``events.json``, as ``read_facts``). A big
    file is read in pieces and never held whole (``_read_in_pieces``; a file up to ``WHOLE_FILE`` keeps its
    bytes until a save or ``check`` asks for the keys written twice). Without ``follow_links`` a file that is
    a link is refused (``ConversationError``). Without ``count_keys`` a small file's keys are not counted as
    it is read: a read that neither saves nor checks (``find``'s index) spares that pass, and the keys written
    twice, if asked for, are found by decoding the bytes again (``ConversationStream.read_json``).
    """
    with collector_paused():
        hashed = digest and hash_events
        in_pieces = _read_in_pieces(newest_copy(ref, EVENTS), hashed, follow_links)
        if in_pieces is not None:
            events_path, read, sha256, base_config = in_pieces
        else:
            events_path, events, sha256, base_config = _read_files(ref, hashed, follow_links)
            read = _read_entries(events_path, events, base_config, count_keys)
            del events
        stream = _settled(ref, read, new_id)
        del read
    if digest and not hash_events:
        sha256 = ""
    metadata, metadata_error, digests = _metadata_and_digests(ref, sha256, base_config, follow_links)
    return LoadedConversation(ref, events_path.parent, sha256 or None, stream, metadata, metadata_error, lock, digests)


CHUNK = 4 * MIB
"""How much of a big ``events.json`` is read at a time."""


def _read_in_pieces(
    events_path: Path, digest: bool, follow_links: bool
) -> tuple[Path, ReadFile, str | None, bytes | None] | None:
    """A file over ``WHOLE_FILE`` read ``CHUNK`` by ``CHUNK`` and decoded piece by piece, its bytes never held
    whole (``ConversationStream.read_json_chunks``): the path, what was read, the SHA-256 with ``digest``, and
    ``base_config.json``. ``None`` for a smaller file, or one not laid out as JP writes it, or one the reader
    refuses: the whole file is then read (and what is wrong said, where)."""
    try:
        if os.stat(events_path, follow_symlinks=follow_links).st_size <= conversation_stream.WHOLE_FILE:
            return None
    except OSError:
        return None
    base_config = read_file(events_path.parent / BASE_CONFIG, BASE_CONFIG_LIMIT, follow_links=follow_links)
    hasher = hashlib.sha256() if digest else None

    def hashed(chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            if hasher is not None:
                hasher.update(chunk)
            yield chunk

    with contextlib.closing(read_chunks(events_path, EVENTS_LIMIT, CHUNK, follow_links=follow_links)) as chunks:
        read = conversation_stream.ConversationStream.read_json_chunks(hashed(chunks), base_config, most=4 * CHUNK)
    if read is None:
        return None
    return events_path, read, hasher.hexdigest() if hasher is not None else None, base_config


def _read_entries(events_path: Path, events: bytes, base_config: bytes | None, count_keys: bool = True) -> ReadFile:
    """Every entry of ``events.json`` read and checked (``ConversationStream.read_json``), or
    ``ConversationError``. For a file over ``WHOLE_FILE`` the result holds nothing of ``events``: a caller that
    lets go of its bytes next keeps them out of the peak while the IDs are settled."""
    result = conversation_stream.ConversationStream.read_json(events, base_config, count_keys=count_keys)
    if isinstance(result, Failure):
        raise ConversationError(describe(events_path, result.failure()))
    return result.unwrap()


def _settled(ref: ConversationRef, read: ReadFile, new_id: IdSource) -> ConversationStream:
    stream = conversation_stream.ConversationStream.from_read(read, new_id=new_id, conversation=ref.display_id)
    promote()
    return stream


@dataclass(frozen=True, slots=True)
class ReadFacts:
    """A conversation's facts as read (``core/summaries/facts.py``), where from, and its metadata."""

    ref: ConversationRef
    directory: Path
    events_sha256: str | None
    facts: ConversationFacts
    metadata: Metadata | None
    metadata_error: str | None = None
    digests: Digests | None = None

    @property
    def title(self) -> str | None:
        return self.metadata.title if self.metadata else None

    @property
    def legacy(self) -> bool:
        return self.facts.legacy


def read_facts(
    ref: ConversationRef, new_id: IdSource, *, digests: bool = False, hash_events: bool = True, ids: bool = True
) -> ReadFacts:
    """A conversation's facts, read lightly (``light_facts``: one pass over the bytes, only the fields they
    come from; without ``ids``, the turns' IDs left unsettled: the listing needs only its counts); a file the
    light reader leaves is loaded whole, which says what is wrong with it or gives the same facts the long way.
    With ``digests``, the SHA-256 of the files read; without ``hash_events`` not of ``events.json``
    (``Digests``). ``ConversationError`` as ``read_conversation``."""
    events_path, events, sha256, base_config = _read_files(ref, digests and hash_events)
    with collector_paused():
        facts = light_facts(events, base_config, ref.display_id, ids=ids)
        if facts is None:
            read = _read_entries(events_path, events, base_config, count_keys=False)
            del events
            facts = facts_of(_settled(ref, read, new_id))
            del read
    if digests and not hash_events:
        sha256 = ""
    metadata, metadata_error, taken = _metadata_and_digests(ref, sha256, base_config)
    return ReadFacts(ref, events_path.parent, sha256 or None, facts, metadata, metadata_error, taken)


@dataclass(frozen=True, slots=True)
class LazyConversation:
    """A conversation read lightly, each turn's entries read when asked (``light.LazyTurns``), its metadata,
    and the bytes read (``unreadable``)."""

    ref: ConversationRef
    events_path: Path
    turns: LazyTurns
    metadata: Metadata | None
    metadata_error: str | None
    events: bytes
    base_config: bytes | None

    @property
    def directory(self) -> Path:
        return self.events_path.parent

    @property
    def title(self) -> str | None:
        return self.metadata.title if self.metadata else None

    @property
    def legacy(self) -> bool:
        return self.turns.stream.legacy


def read_lazily(ref: ConversationRef) -> LazyConversation | None:
    """The conversation read to be shown turn by turn (``light.read_lazily``): its bytes are read once and held,
    each turn decoded as it is shown. ``None`` when the light reader leaves the file (read it with
    ``read_conversation``, which says what is wrong); ``ConversationError`` as ``read_conversation``."""
    events_path, events, _, base_config = _read_files(ref, digest=False)
    with collector_paused():
        turns = read_lazily_from(events, base_config, ref.display_id)
        promote()
    if turns is None:
        return None
    metadata, metadata_error, _ = _read_metadata(ref)
    return LazyConversation(ref, events_path, turns, metadata, metadata_error, events, base_config)


def unreadable(lazy: LazyConversation) -> ConversationError:
    """What the full reader says of a conversation read lazily whose turn could not be read when it was shown
    (a value the light reader never sees: the first of a key written twice): the error ``read_conversation``
    gives, on the bytes read."""
    result = conversation_stream.ConversationStream.read_json(lazy.events, lazy.base_config)
    if isinstance(result, Failure):
        return ConversationError(describe(lazy.events_path, result.failure()))
    return ConversationError(f"{lazy.events_path}: an entry cannot be read")


def read_metadata(ref: ConversationRef) -> tuple[Metadata | None, str | None]:
    """The conversation's ``metadata.json`` (the newer copy), or why it cannot be read."""
    return _read_metadata(ref)[:2]


def _read_metadata(ref: ConversationRef, follow_links: bool = True) -> tuple[Metadata | None, str | None, bytes | None]:
    path = newest_copy(ref, METADATA)
    try:
        data = read_file(path, METADATA_LIMIT, follow_links=follow_links)
    except FileFault as fault:
        return None, str(fault), None
    if data is None:
        return None, f"{path}: missing", None
    match parse_metadata(data):
        case Success(parsed):
            return parsed, None, data
        case Failure(problem):
            return None, describe(path, problem), data
    raise AssertionError("unreachable")


def save_refusal(loaded: LoadedConversation, written: ConversationStream) -> SaveRefused | None:
    """The save rule (``core/stream/save_rule.py``), the one every path that writes ``events.json`` applies:
    why ``written``, made from ``loaded``, must not be saved, or ``None``.

    A key written twice in the file (a save keeps only the last value), or a link to an ID several
    entries had (a save makes the surviving copy look like the intended target); the fix named is
    ``repair --apply``, or ``repair -i`` when repair's plan needs a decision for such a link.
    """
    blockers = save_rule.save_blockers(loaded.stream, written)
    if not blockers:
        return None
    links = {blocker.event_id for blocker in blockers if blocker.repairable}
    decide = bool(links) and any(problem.event_id in links for problem in repair.plan_repairs(loaded.stream).problems)
    return SaveRefused(loaded.directory / EVENTS, save_rule.refusal(blockers, loaded.ref.display_id, decide=decide))


def refuse_unsavable(loaded: LoadedConversation, written: ConversationStream) -> None:
    """Raise the save rule's ``SaveRefused`` when ``written``, made from ``loaded``, must not be saved."""
    refused = save_refusal(loaded, written)
    if refused is not None:
        raise refused


@dataclass(frozen=True, slots=True)
class Saved:
    """What a save did: the files written, and the upgrade from the legacy format it performed (``None``: none)."""

    files: list[Path]
    upgrade: LegacyUpgrade | None = None
    written: tuple[str, str] | None = None
    """The SHA-256 of the ``events.json`` and ``base_config.json`` every copy holds after a save that wrote
    both, hashed from the bytes in memory (``None``: the save wrote nothing, or no base config)."""

    def digests(self) -> tuple[str, str] | None:
        return self.written


def save_stream(
    lock: ConversationLock,
    loaded: LoadedConversation,
    stream: ConversationStream,
    *,
    persist_ids: bool = False,
    announce: Callable[[str], None] | None = None,
    along: Along | None = None,
    command: str = "a save",
) -> Saved:
    """Persist ``stream`` to every copy of the conversation; the files written and the upgrade performed.

    Requires the conversation's lock, held since ``loaded`` was read under it; see
    ``write_documents``. An unchanged stream writes nothing (a legacy file stays legacy,
    transient IDs stay unsaved) unless ``persist_ids`` asks for its transient IDs to be written.
    A save that upgrades a legacy conversation keeps an undo step named ``command`` first (unless
    ``along`` says the caller keeps one, ``saved_with_undo``), so ``edit --undo`` gives the legacy
    files back.
    """
    if not lock.held or loaded.lock is not lock:
        raise ConversationError(f"{loaded.directory}: not saved: it was not read under the lock held now")
    if stream == loaded.stream and not (persist_ids and any(entry.transient_id for entry in stream.entries)):
        return Saved([])
    current = stream.upgraded()
    with collector_paused():
        events = current.to_json()
    upgrade = legacy_upgrade.legacy_upgrade(loaded.stream, stream)
    base_config = current.base_config_json()
    digest = hashlib.sha256(events).hexdigest()
    write = partial(write_documents, lock, loaded, base_config, events, saving=stream, digest=digest)
    written = (
        undo.saved_with_undo(loaded, write, command) if upgrade is not None and along is None else write(along=along)
    )
    repairs = conversation_stream.persisted_repairs(loaded.stream, current)
    if repairs and written and announce is not None:
        announce(repairs)
    if not written:
        return Saved(written)
    return Saved(written, upgrade, None if base_config is None else (digest, hashlib.sha256(base_config).hexdigest()))


def write_documents(
    lock: ConversationLock,
    loaded: LoadedConversation,
    base_config: bytes | None,
    events: bytes,
    *,
    saving: ConversationStream,
    along: Along | None = None,
    digest: str | None = None,
) -> list[Path]:
    """Write ``base_config.json`` (unless ``None``) and ``events.json`` to every copy, all or none; the files
    written.

    ``saving`` is the stream these bytes hold, judged by the save rule (``refuse_unsavable``)
    first. Under the lock ``loaded`` was read with; links are refused before anything is
    written. The workspace copy is renamed into place first, the user-local copy (read
    first) last; a failure anywhere leaves both copies as they were. ``along`` adds files
    committed with them, given the SHA-256 of the ``events.json`` bytes (``digest`` when the caller hashed
    them), renamed into place before them (undo's record exists before the conversation changes).
    """
    if not lock.held or loaded.lock is not lock:
        raise ConversationError(f"{loaded.directory}: not saved: it was not read under the lock held now")
    refuse_unsavable(loaded, saving)
    ref = loaded.ref
    for directory in ref.directories:
        check_writable(directory, (METADATA, BASE_CONFIG, EVENTS), ref.anchor_of(directory))
    changes: list[tuple[Path, bytes | None]] = []
    for directory in reversed(ref.directories):
        if base_config is not None:
            changes.append((directory / BASE_CONFIG, base_config))
        changes.append((directory / EVENTS, events))
    extra = along(digest or hashlib.sha256(events).hexdigest()) if along is not None else []
    return [
        path
        for path in write_together([*extra, *changes], state_dirs.anchor_of(ref))
        if path not in {p for p, _ in extra}
    ]


def edit_conversation(
    ref: ConversationRef,
    change: Callable[[ConversationStream], ConversationStream],
    new_id: IdSource,
    *,
    persist_ids: bool = False,
    announce: Callable[[str], None] | None = None,
    command: str = "a save",
) -> tuple[ConversationStream, Saved]:
    """Lock, load, change and save one conversation; never waits for a lock held elsewhere."""
    with hold_lock(ref) as lock:
        loaded = read_conversation(ref, new_id, lock)
        stream = change(loaded.stream)
        saved = save_stream(lock, loaded, stream, persist_ids=persist_ids, announce=announce, command=command)
        return stream, saved


def _abandoned(name: str, mtime: float) -> bool:
    """A build folder older than ``STALE_SECONDS`` whose process is gone (or older than a day: another machine's)."""
    age = now_epoch() - mtime
    if age < STALE_SECONDS:
        return False
    gone = process_gone(name.removeprefix(BUILDING).split("-", 1)[0])
    return age > 24 * 3600 or gone is None or gone


def create_conversation(workspace: Workspace, metadata: bytes, base_config: bytes, events: bytes) -> ConversationRef:
    """A new conversation folder, named as JP names it (``<deciseconds>``), holding these files.

    It is built in a hidden folder (``.turnmark-new-<pid>-<random>``, skipped by JP and by
    listings) and renamed into place in one step, so a failure leaves no half-written
    conversation; build folders another run abandoned are removed first.
    """
    parent = workspace.conversations_dir
    anchor = workspace.storage
    remove_abandoned(parent, anchor, BUILDING, _abandoned)
    taken = {ref.id for ref in list_conversations(workspace)}
    first = int(datetime.now(UTC).timestamp() * 10)
    free = [str(candidate) for candidate in range(first, first + len(taken) + NAME_TRIES) if candidate not in taken]
    hidden = f"{BUILDING}{os.getpid()}-{secrets.token_hex(4)}"
    documents = ((METADATA, metadata), (BASE_CONFIG, base_config), (EVENTS, events))
    name = build_directory(parent, anchor, hidden, documents, free, what="the conversation")
    return ConversationRef(int(name), parent / name, None, workspace)
