"""``ConversationStream``: an immutable JP event stream with stable IDs and request links.

Every insertion path (``push``, ``extend``, ``start_turn``, the turn
builder's flush and ``sanitize``'s synthetic entries) goes through one place
that assigns a fresh ``event_id`` (RFD 097) and stamps the ``request_id`` of
the active originating request on the five answering families (RFD 098). The
active request is turn-scoped: a ``turn_start`` clears it, a ``chat_request``
sets it, and an answering event before the turn's first request stays
unlinked. IDs or links supplied with a new payload are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyrsistent import PVector, pvector
from returns.result import Failure, Result, Success

from turnmark.core.errors import InvalidDocument, InvalidEntry, StreamError, TurnSummaryError
from turnmark.core.stream.builder import TurnBuilder
from turnmark.core.stream.codec import ReadEntry, read_entry, write_entry
from turnmark.core.stream.duplicate_keys import (
    NONE_WRITTEN_TWICE,
    DuplicateKey,
    KeysWrittenTwice,
    found_at_load,
    key_count,
    key_ends,
)
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.event_ids import IdSource, derived_id, entry_origins, fresh_id, plan_loaded_ids
from turnmark.core.stream.json_document import decode_document, decode_entries, decode_entry, encode_document
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.payloads import (
    ChatRequest,
    Compaction,
    ConfigDelta,
    Payload,
    TurnStart,
    Unknown,
    is_conversation_event,
    is_linkable,
)
from turnmark.core.stream.sanitize import sanitize
from turnmark.core.stream.turns import Turn, split_turns
from turnmark.core.text.summary_text import normalize_summary


@dataclass(frozen=True, slots=True)
class AmbiguousLink:
    """A ``request_id`` that points at an ID duplicated in the file: saving would silently resolve it."""

    index: int
    event_id: str
    request_id: str


def _taken_ids(entries: Iterable[Entry]) -> frozenset[str]:
    taken: set[str] = set()
    for entry in entries:
        taken.add(entry.event_id)
        if entry.request_id is not None:
            taken.add(entry.request_id)
    return frozenset(taken)


def _without_ids(payload: Payload) -> Payload:
    """A new payload minus any ``event_id``/``request_id`` it carries in its raw fields: the stream owns both."""
    if isinstance(payload, ConfigDelta | Compaction):
        owned: tuple[str, ...] = ("event_id", "request_id")
    elif isinstance(payload, Unknown):
        owned = ("event_id",)
    else:
        return payload
    if not any(key in payload.fields for key in owned):
        return payload
    return replace(payload, fields={key: value for key, value in payload.fields.items() if key not in owned})


def _no_id_source() -> str:
    raise RuntimeError("this stream was built without an ID source; use from_json or empty")


def _unfinished_upgrade(first: Json, base: JsonObject) -> bool:
    """An upgrade from the legacy format stopped between its two writes: ``base_config.json`` was written
    from the head ``config_delta`` that ``events.json`` still starts with (no ``event_id``, the same non-empty
    config)."""
    return (
        isinstance(first, dict)
        and first.get("type") == "config_delta"
        and "event_id" not in first
        and bool(base)
        and first.get("delta") == base
    )


@dataclass(frozen=True, slots=True)
class ReadFile:
    """``events.json`` (and ``base_config.json``) as read, before the stream settles its IDs."""

    entries: list[ReadEntry]
    base_config: JsonObject | None
    legacy_head: JsonObject | None
    doubled: KeysWrittenTwice


WHOLE_FILE = 16 * 1024 * 1024
"""A file up to this size is decoded whole (and its keys written twice are looked for when asked); a bigger
one entry by entry, never whole, looking for them in the same pass."""


PIECE_CUT = b"\n  },\n  {"
"""Where JP's layout (two spaces an entry) ends one entry of the array and starts the next: a line feed is never
inside a JSON string, so these bytes lie between tokens."""


class NotInPieces(Exception):
    """The file is not cut into pieces (not JP's layout, or an entry bigger than a piece may be)."""


def pieces(chunks: Iterable[bytes], most: int) -> Iterator[bytes]:
    """The bytes of ``chunks`` (a file, in order) as JSON arrays cut where ``PIECE_CUT`` ends an entry: the
    elements of the pieces, in order, are the file's elements when every piece decodes (a cut at any other
    depth leaves a piece whose brackets do not balance, which does not). ``NotInPieces`` once more than
    ``most`` bytes go by without a cut."""
    held: list[bytes] = []
    size, tail, first = 0, b"", True
    reach = len(PIECE_CUT) - 1
    for chunk in chunks:
        found = chunk.rfind(PIECE_CUT)
        cut: int | None = found if found >= 0 else None
        if cut is None and (across := (tail + chunk[:reach]).rfind(PIECE_CUT)) >= 0:
            cut = across - len(tail)
        held.append(chunk)
        size += len(chunk)
        if cut is None:
            tail = (tail + chunk[-reach:])[-reach:]
            if size > most:
                raise NotInPieces
            continue
        pending = b"".join(held)
        at = len(pending) - len(chunk) + cut
        yield b"".join((b"" if first else b"[", memoryview(pending)[: at + 4], b"]"))
        rest = pending[at + 5 :]
        held, size, tail, first = [rest], len(rest), rest[-reach:], False
    pending = b"".join(held)
    yield pending if first else b"[" + pending


_NO_ELEMENT = object()


def _array(value: object) -> list[Any]:
    """The elements of what ``events.json`` decoded to, or the error of a file that is not an array."""
    if not isinstance(value, list):
        raise InvalidEntry("events.json must be a JSON array of entries")
    return value


class _Elements:
    """A big file's elements decoded one at a time from its pieces (JSON arrays), each piece let go of once its
    elements are decoded; the keys written twice found piece by piece (``found_at_load``'s counts add up)."""

    def __init__(self, data: Iterable[bytes]) -> None:
        self._data = data
        self.duplicates: list[DuplicateKey] = []

    def __iter__(self) -> Iterator[Json]:
        offset = 0
        for piece in self._data:
            raws = _array(decode_entries(piece, "events.json"))
            keys = []
            for raw in raws:
                element = decode_entry(raw, piece, "events.json")
                keys.append(key_count(element))
                yield element
            found = found_at_load(piece, key_ends(piece), raws, keys)
            self.duplicates += [replace(key, index=key.index + offset) for key in found]
            offset += len(raws)


def _read_file(events: bytes, base_config: bytes | None, count_keys: bool) -> ReadFile:
    """Every entry read and checked; a big file one entry at a time, so its decoded document is never held
    whole next to what is kept. Without ``count_keys`` a small file's keys written twice are looked for only
    when asked, from its bytes alone (``KeysWrittenTwice.later``)."""
    if len(events) > WHOLE_FILE:
        return _read_elements(_Elements([events]), base_config)
    elements = _array(decode_document(events, "events.json"))
    written_keys = sum(map(key_count, elements)) if count_keys else None
    read = _read_elements(elements, base_config)
    return replace(read, doubled=KeysWrittenTwice.later(events, written_keys))


def _read_elements(elements: Iterable[Json], base_config: bytes | None) -> ReadFile:
    """The entries of ``elements`` (a file's, decoded in order) read and checked, with the base config or the
    legacy head; a big file's keys written twice (``_Elements``) once every element is read."""
    each = iter(elements)
    head_item = next(each, _NO_ELEMENT)
    has_first = head_item is not _NO_ELEMENT
    first: Json = head_item if has_first else None
    base: JsonObject | None = None
    head: JsonObject | None = None
    offset = 0
    if base_config is not None:
        parsed = decode_document(base_config, "base_config.json")
        if not isinstance(parsed, dict):
            raise InvalidDocument("base_config.json must be a JSON object", 1, 1, "base_config.json")
        base = parsed
        if _unfinished_upgrade(first, parsed):
            head, offset = first, 1
    else:
        if not (isinstance(first, dict) and first.get("type") == "config_delta" and "timestamp" in first):
            raise InvalidEntry(
                "without base_config.json (legacy format) the first entry must be the base config_delta", 0
            )
        head, offset = first, 1
    read: list[ReadEntry] = []
    if has_first and not offset:
        read.append(read_entry(first, 0))
    for position, item in enumerate(each, 1):
        read.append(read_entry(item, position))
    found = tuple(elements.duplicates) if isinstance(elements, _Elements) else ()
    return ReadFile(read, base, head, KeysWrittenTwice(found))


def _odd_strings(entries: Iterable[ReadEntry]) -> Iterator[str]:
    """The strings written in odd wrapper fields (a ``request_id`` on a kind that never links): no derived ID
    takes one, so an ID assigned at load never looks like what a hand edit meant."""
    for entry in entries:
        for _key, value in entry.layout.raw:
            if isinstance(value, str) and value:
                yield value


def _identity(payload: Payload) -> tuple[str, str]:
    """What an entry's derived ID is made from: its timestamp as written, and its kind."""
    timestamp = getattr(payload, "timestamp", None)
    return (timestamp if isinstance(timestamp, str) else "", payload.type_tag)


@dataclass(frozen=True)
class ConversationStream:
    """A conversation's entries in file order, plus its base config.

    ``legacy_head`` holds the leading ``config_delta`` of a legacy file (no
    ``base_config.json``) verbatim; ``upgraded()`` turns it into a base config.
    ``duplicated_ids`` is load-scoped: the IDs that more than one entry carried
    in the file, which no reference may resolve to; ``id_repairs`` names the
    entries (by index at load) that got a new ID because of it.

    Build one from payloads (each insertion gets a fresh ``event_id`` from
    ``new_id``, and answers get the ``request_id`` of their turn's request),
    or load one from the bytes of ``events.json`` and ``base_config.json``:

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> stream = stream.push(ChatResponse("2026-01-02 10:00:05.0", "message", "Fixed."))
    >>> [(entry.type_tag, entry.event_id, entry.request_id) for entry in stream.entries]
    [('turn_start', 'e000001', None), ('chat_request', 'e000002', None), ('chat_response', 'e000003', 'e000002')]
    >>> stream = stream.set_turn_summary("e000001", "Build fixed").unwrap()
    >>> [(turn.id(), turn.summary()) for turn in stream.turns()]
    [('e000001', 'Build fixed')]
    >>> events, base_config = stream.to_json(), stream.base_config_json()
    >>> print(events.decode())
    [
      {
        "event_id": "e000001",
        "timestamp": "2026-01-02 10:00:00.0",
        "type": "turn_start",
        "summary": "Build fixed"
      },
      {
        "event_id": "e000002",
        "timestamp": "2026-01-02 10:00:00.0",
        "type": "chat_request",
        "content": "Fix the build"
      },
      {
        "event_id": "e000003",
        "request_id": "e000002",
        "timestamp": "2026-01-02 10:00:05.0",
        "type": "chat_response",
        "message": "Fixed."
      }
    ]
    <BLANKLINE>
    >>> loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids()).unwrap()
    >>> loaded.to_json() == events, len(loaded)
    (True, 3)
    """

    entries: PVector[Entry]
    base_config: JsonObject | None = None
    legacy_head: JsonObject | None = None
    duplicated_ids: frozenset[str] = frozenset()
    id_repairs: tuple[tuple[int, str], ...] = ()
    new_id: IdSource = field(default=_no_id_source, compare=False, repr=False)
    taken: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """Every ``event_id`` and ``request_id`` in the stream: a new ID may be none of them, so it can
    neither duplicate an entry nor make a dangling link resolve."""
    conversation: str = field(default="", compare=False)
    """The conversation's ID, part of what derived IDs are made from."""
    doubled: KeysWrittenTwice = field(default=NONE_WRITTEN_TWICE, compare=False, repr=False)
    """Load-scoped: the keys written twice in one entry of the file (``doubled_keys``)."""
    _turns: list[tuple[Turn, ...]] = field(default_factory=list, init=False, compare=False, repr=False)
    """``turns()`` once worked out (the stream is immutable; ``replace`` starts a new one empty)."""

    # Loading and saving -----------------------------------------------------------------------

    @classmethod
    def empty(cls, base_config: JsonObject, *, new_id: IdSource) -> ConversationStream:
        """A new current-format stream with no entries."""
        return cls(pvector(), base_config, new_id=new_id)

    @classmethod
    def from_json(
        cls, events: bytes, base_config: bytes | None = None, *, new_id: IdSource, conversation: str = ""
    ) -> Result[ConversationStream, StreamError]:
        """Load ``events.json`` (and ``base_config.json`` for the current format).

        Without ``base_config`` the legacy format is expected: element 0 is the
        base ``config_delta``. Missing or empty IDs are derived from each entry
        and the ``conversation`` ID (the same on every load), and so are new IDs
        for later duplicates; nothing else is changed. ``new_id`` serves the
        entries inserted later. The same as ``read_json`` then ``from_read``.
        """
        return cls.read_json(events, base_config).map(
            lambda read: cls.from_read(read, new_id=new_id, conversation=conversation)
        )

    @staticmethod
    def read_json(
        events: bytes, base_config: bytes | None = None, *, count_keys: bool = True
    ) -> Result[ReadFile, StreamError]:
        """The first half of ``from_json``: every entry read and checked. For a file over ``WHOLE_FILE``
        nothing it returns refers to ``events``, so a caller can let go of them before the IDs are settled.
        ``count_keys``: count the keys of each entry as it is read, so that the keys written twice
        (``doubled_keys``, which a save and ``check`` ask for) are found without decoding the file again; a
        read that asks for neither saves that pass."""
        try:
            return Success(_read_file(events, base_config, count_keys))
        except RecursionError:
            return Failure(StreamError("an entry is nested too deeply"))
        except InvalidDocument as error:
            return Failure(error.error)
        except InvalidEntry as error:
            return Failure(StreamError(error.message, index=error.index, type_tag=error.type_tag))

    @staticmethod
    def read_json_chunks(
        chunks: Iterable[bytes], base_config: bytes | None = None, most: int = WHOLE_FILE
    ) -> ReadFile | None:
        """``read_json`` of a big file given as consecutive chunks of its bytes, never held whole: cut into
        ``pieces`` of at most about ``most`` bytes (JP's layout) and each let go of once read. ``None`` when the
        file is not laid out so, or is refused: ``read_json`` of the whole file then reads it (and says what is
        wrong, where)."""
        try:
            return _read_elements(_Elements(pieces(chunks, most)), base_config)
        except (RecursionError, InvalidDocument, InvalidEntry, NotInPieces):
            return None

    @classmethod
    def from_read(cls, read: ReadFile, *, new_id: IdSource, conversation: str = "") -> ConversationStream:
        """The second half of ``from_json``: the stream of a file as read, its IDs settled."""
        entries = read.entries
        links = {entry.request_id for entry in entries if entry.request_id is not None}
        links.update(_odd_strings(entries))
        written = [entry.written_id for entry in entries]
        complete = all(written) and len(set(written)) == len(written)
        origins = [] if complete else entry_origins(conversation, (_identity(entry.payload) for entry in entries))
        plan = plan_loaded_ids(written, origins, reserved=links)
        del written, origins
        stream = pvector(
            entry.settled(identifier, origin)
            for entry, identifier, origin in zip(entries, plan.ids, plan.origins, strict=True)
        )
        taken = frozenset(plan.ids) | links
        return cls(
            stream,
            read.base_config,
            read.legacy_head,
            plan.duplicated,
            plan.repairs,
            new_id,
            taken,
            conversation,
            doubled=read.doubled,
        )

    def to_json(self) -> bytes:
        """The ``events.json`` bytes for this stream, in its own format (legacy keeps its head entry)."""
        items: list[JsonObject] = [write_entry(entry) for entry in self.entries]
        if self.legacy_head is not None:
            items.insert(0, self.legacy_head)
        return encode_document(items)

    def base_config_json(self) -> bytes | None:
        """The ``base_config.json`` bytes, or ``None`` for a legacy stream."""
        return None if self.base_config is None else encode_document(self.base_config)

    @property
    def doubled_keys(self) -> tuple[DuplicateKey, ...]:
        """The keys written twice in one entry of the file as loaded (the fast reader kept the last value)."""
        return self.doubled.found()

    @property
    def is_legacy(self) -> bool:
        return self.legacy_head is not None

    def upgraded(self) -> ConversationStream:
        """The current-format equivalent of a legacy stream: its head's ``delta`` becomes the base config."""
        head = self.legacy_head
        if head is None:
            return self
        delta = head.get("delta")
        base = (
            delta
            if isinstance(delta, dict)
            else {key: value for key, value in head.items() if key not in ("type", "timestamp", "event_id", "delta")}
        )
        return replace(self, base_config=base, legacy_head=None)

    def ambiguous_links(self) -> tuple[AmbiguousLink, ...]:
        """Links to a duplicated ID. A save would make the surviving ID look like the intended target."""
        if not self.duplicated_ids:
            return ()
        return tuple(
            AmbiguousLink(index, entry.event_id, entry.request_id)
            for index, entry in enumerate(self.entries)
            if entry.request_id is not None and entry.request_id in self.duplicated_ids
        )

    # Reading ----------------------------------------------------------------------------------------

    def file_index(self, position: int) -> int:
        """The index in the ``events.json`` array of the entry at ``position`` (a legacy head comes first)."""
        return position + (1 if self.legacy_head is not None else 0)

    def turns(self) -> tuple[Turn, ...]:
        if not self._turns:
            self._turns.append(split_turns(self.entries))
        return self._turns[0]

    def find(self, event_id: str) -> int | None:
        """The position of the entry with ``event_id``."""
        if event_id not in self.taken:
            return None
        for position, entry in enumerate(self.entries):
            if entry.event_id == event_id:
                return position
        return None

    def events(self) -> tuple[Entry, ...]:
        """The conversation events (global entries left out)."""
        return tuple(entry for entry in self.entries if is_conversation_event(entry.payload))

    def __len__(self) -> int:
        """The number of conversation events, as JP counts them (``turn_start`` included)."""
        return len(self.events())

    # Insertion ----------------------------------------------------------------------------------------

    def active_request(self, position: int | None = None) -> str | None:
        """The originating request an answering event inserted at ``position`` would link to."""
        end = len(self.entries) if position is None else position
        for index in range(end - 1, -1, -1):
            payload = self.entries[index].payload
            if isinstance(payload, TurnStart):
                return None
            if isinstance(payload, ChatRequest):
                return self.entries[index].event_id
        return None

    def _wrap(self, payloads: Iterable[Payload | Entry], position: int) -> tuple[list[Entry], frozenset[str]]:
        taken = set(self.taken)
        active = self.active_request(position)
        wrapped: list[Entry] = []
        for item in payloads:
            payload = _without_ids(item.payload if isinstance(item, Entry) else item)
            event_id = fresh_id(self.new_id, taken.__contains__)
            taken.add(event_id)
            if isinstance(payload, TurnStart):
                active = None
            request_id = active if is_linkable(payload) else None
            if isinstance(payload, ChatRequest):
                active = event_id
            wrapped.append(Entry(event_id, payload, request_id, "inserted"))
        return wrapped, frozenset(taken)

    def insert(self, position: int, payloads: Iterable[Payload | Entry]) -> ConversationStream:
        """Insert payloads at ``position``, each with a fresh ID and its request link stamped."""
        wrapped, taken = self._wrap(payloads, position)
        if position == len(self.entries):
            entries = self.entries.extend(wrapped)
        else:
            existing = list(self.entries)
            entries = pvector(existing[:position] + wrapped + existing[position:])
        return replace(self, entries=entries, taken=taken)

    def push(self, payload: Payload | Entry) -> ConversationStream:
        """Append one payload (an ``Entry``'s own IDs are ignored: the stream owns them)."""
        return self.insert(len(self.entries), (payload,))

    def extend(self, payloads: Iterable[Payload | Entry]) -> ConversationStream:
        """Append payloads in order, stamping each as if pushed one by one."""
        return self.insert(len(self.entries), payloads)

    def start_turn(self, request: ChatRequest, started_at: str | None = None) -> ConversationStream:
        """Open a new turn: a ``turn_start`` (at ``started_at``, default the request's time) and the request."""
        return self.extend((TurnStart(started_at or request.timestamp), request))

    def turn_builder(self) -> TurnBuilder[ConversationStream]:
        """A buffered builder for the current turn, validated all or nothing on ``build()``."""
        return TurnBuilder(self)

    def with_derived_id(self, position: int) -> ConversationStream:
        """The entry at ``position`` (one turnmark inserted) with an ID derived as load derives them.

        Catch-up inserts a ``turn_start`` before the model is asked and again when the
        answer is written; a derived ID makes both the same, and what a dry run shows.
        """
        entry = self.entries[position]
        origin = entry_origins(self.conversation, (_identity(e.payload) for e in self.entries[: position + 1]))[-1]
        taken = self.taken - {entry.event_id}
        attempt = 0
        while (identifier := derived_id(origin, attempt)) in taken:
            attempt += 1
        entries = self.entries.set(position, replace(entry, event_id=identifier))
        return replace(self, entries=entries, taken=taken | {identifier})

    def with_entries(self, entries: Sequence[Entry]) -> ConversationStream:
        """This stream with its entries replaced (used by the whole-stream operations)."""
        return replace(self, entries=pvector(entries), taken=_taken_ids(entries))

    # Removal near the end ----------------------------------------------------------------------------

    def _last_event_position(self) -> int | None:
        for index in range(len(self.entries) - 1, -1, -1):
            if is_conversation_event(self.entries[index].payload):
                return index
        return None

    def pop(self) -> tuple[ConversationStream, Entry | None]:
        """Remove the last conversation event (trailing global entries stay).

        When the event belonged to a turn that keeps its ``turn_start``, that
        turn's summary no longer describes it and is cleared.
        """
        position = self._last_event_position()
        if position is None:
            return self, None
        popped = self.entries[position]
        remaining = [entry for index, entry in enumerate(self.entries) if index != position]
        stream = self.with_entries(remaining)
        if not isinstance(popped.payload, TurnStart):
            stream = stream._clear_trailing_summary()
        return stream, popped

    def _clear_trailing_summary(self) -> ConversationStream:
        turns = self.turns()
        if not turns:
            return self
        turn_id = turns[-1].id()
        if turn_id is None:
            return self
        return self.clear_turn_summary(turn_id).value_or(self)

    def last_turn_event(self) -> Entry | None:
        """The event ``pop()`` would remove."""
        position = self._last_event_position()
        return None if position is None else self.entries[position]

    def pop_if(self, predicate: Callable[[Entry], bool]) -> tuple[ConversationStream, Entry | None]:
        """Pop the last conversation event only when it matches ``predicate``."""
        last = self.last_turn_event()
        if last is None or not predicate(last):
            return self, None
        return self.pop()

    def pop_while(self, predicate: Callable[[Entry], bool]) -> tuple[ConversationStream, tuple[Entry, ...]]:
        """Pop while the last conversation event matches; the popped events in pop order."""
        stream: ConversationStream = self
        popped: list[Entry] = []
        while True:
            stream, entry = stream.pop_if(predicate)
            if entry is None:
                return stream, tuple(popped)
            popped.append(entry)

    def trim_chat_request(self) -> tuple[ConversationStream, Entry | None]:
        """Pop back to the last ``chat_request`` and return it.

        Conversation events passed on the way (even a ``turn_start``) are
        dropped; global entries passed are put back at the end in their order.
        Without any request every conversation event is removed.
        """
        kept_globals: list[Entry] = []
        entries = list(self.entries)
        request: Entry | None = None
        while entries:
            entry = entries.pop()
            if isinstance(entry.payload, ChatRequest):
                request = entry
                break
            if not is_conversation_event(entry.payload):
                kept_globals.append(entry)
        stream = self.with_entries(entries + kept_globals[::-1])
        return stream._clear_trailing_summary(), request

    def trim_trailing_empty_turn(self) -> ConversationStream:
        """Remove the last conversation event when it is a ``turn_start`` (at most one)."""
        return self.pop_if(lambda entry: isinstance(entry.payload, TurnStart))[0]

    # Turn summaries ----------------------------------------------------------------------------------

    def _turn_start_position(self, turn_id: str) -> int | None:
        position = self.find(turn_id)
        if position is None or not isinstance(self.entries[position].payload, TurnStart):
            return None
        return position

    def set_turn_summary(self, turn_id: str, text: str) -> Result[ConversationStream, TurnSummaryError]:
        """Store ``text`` (normalized to one line) on the ``turn_start`` with ``event_id == turn_id``.

        Addressing by ID means a result for a turn that was removed meanwhile
        finds nothing and is dropped.
        """
        position = self._turn_start_position(turn_id)
        if position is None:
            return Failure(TurnSummaryError("unknown_turn", turn_id))
        summary = normalize_summary(text)
        if summary is None:
            return Failure(TurnSummaryError("blank_summary", turn_id))
        return Success(self._with_summary(position, summary))

    def clear_turn_summary(self, turn_id: str) -> Result[ConversationStream, TurnSummaryError]:
        """Remove the summary from the ``turn_start`` with ``event_id == turn_id``."""
        position = self._turn_start_position(turn_id)
        if position is None:
            return Failure(TurnSummaryError("unknown_turn", turn_id))
        return Success(self._with_summary(position, None))

    def _with_summary(self, position: int, summary: str | None) -> ConversationStream:
        entry = self.entries[position]
        payload = entry.payload
        assert isinstance(payload, TurnStart)
        if payload.summary == summary:
            return self
        updated = replace(entry, payload=replace(payload, summary=summary))
        return replace(self, entries=self.entries.set(position, updated))

    # Whole-stream operations ---------------------------------------------------------------------------

    def sanitize(self) -> ConversationStream:
        """JP's seven ordered repairs (jp-format §4.8); see ``turnmark.core.stream.sanitize``."""
        return sanitize(self)


def persisted_repairs(loaded: ConversationStream, saved: ConversationStream) -> str | None:
    """What saving ``saved`` writes of the IDs regenerated at load (RFD 097 asks for a warning), or ``None``."""
    replaced = {loaded.entries[index].event_id: old for index, old in loaded.id_repairs if index < len(loaded.entries)}
    if not replaced:
        return None
    parts = [
        f"entry {saved.file_index(position)} now {entry.event_id} (it repeated {replaced[entry.event_id]})"
        for position, entry in enumerate(saved.entries)
        if entry.event_id in replaced and entry.id_origin == "repaired"
    ]
    return "saved new IDs for copied entries: " + ", ".join(parts) if parts else None
