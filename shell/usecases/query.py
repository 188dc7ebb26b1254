"""``turnmark query``: one chat turn against the assistant model, with lagged turn-summary catch-up.

Order, as ``jp query`` does it: take the conversation's lock (never waiting);
open the model's provider (one that cannot be used stops the query here, with
nothing written); append the ``turn_start`` and the request; spawn the ``TurnSummaryTask`` for
the earlier turns without a summary (every turn before the new one counts as
complete, RFD 126; when ``auto`` is on and the turn is persisted); build the
provider body from the projection (its diagnostics go to stderr first);
stream the answer to stdout; append it through the stream's insertion paths
(so IDs and request links are stamped); save and release the lock; then let
the background task finish within its budget and sync.
turnmark runs no tools: a tool call is recorded, answered with an error
saying it was not run, and reported.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TextIO

from returns.result import Failure

from turnmark.core.links.projection import project
from turnmark.core.stream.config import TURN_SUMMARY, lookup
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.json_document import decode_document, encode_document
from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, Payload, ToolCallRequest, ToolCallResponse
from turnmark.core.summaries.catchup import catchup_stream, summary_candidates
from turnmark.core.wire.answers import ChatPart
from turnmark.core.wire.chat import WIRE_APIS, request_body
from turnmark.core.wire.models import ModelSpec, resolve_id
from turnmark.shell.clock import now_timestamp
from turnmark.shell.errors import ModelError, QueryError
from turnmark.shell.output import chrome, emit_json, write_text
from turnmark.shell.providers.base import Provider
from turnmark.shell.providers.registry import open_provider
from turnmark.shell.settings import RunSettings
from turnmark.shell.storage.config_files import effective_config
from turnmark.shell.storage.conversations import (
    LoadedConversation,
    create_conversation,
    read_conversation,
    save_stream,
)
from turnmark.shell.storage.files import METADATA_LIMIT, read_file, write_together
from turnmark.shell.storage.locking import ConversationLock, hold_lock
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.undo import continued
from turnmark.shell.storage.workspace import METADATA, ConversationRef, Workspace, require_workspace
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.summary_task import TurnSummaryTask
from turnmark.shell.usecases.tasks import TaskHandler

NOT_RUN = "turnmark does not run tools; this call was not executed."


@dataclass(frozen=True, kw_only=True)
class QueryOptions(RunSettings):
    message: str
    conversation: str | None = None
    new: bool = False
    persist: bool = True
    soft_timeout: float = 10.0
    grace: float = 2.0
    as_json: bool = False
    """Print the answer and what was stored as one JSON document at the end, instead of streaming text."""


@dataclass
class QueryResult:
    """What ``query --format json`` prints: the answer, and what was stored (``None`` with ``--no-persist``)."""

    conversation: str | None = None
    model: str | None = None
    answer: str = ""
    tool_calls: list[str] = field(default_factory=list)
    error: str | None = None
    stored: dict[str, object] | None = None
    upgrade: LegacyUpgrade | None = None
    """The upgrade from JP's older format the save of the request performed."""

    def as_json(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "model": self.model,
            "answer": self.answer,
            "tool_calls": self.tool_calls,
            "error": self.error,
            "stored": self.stored,
            "upgraded": self.upgrade is not None,
            "upgrade": None if self.upgrade is None else self.upgrade.to_json(),
        }


def _assistant_model(config: dict[str, object], override: str | None) -> ModelSpec:
    wanted = override or lookup(config, "assistant.model.id")
    if wanted is None:
        raise QueryError("no assistant model: set assistant.model.id (or pass --model provider/name)")
    resolved = resolve_id(wanted, lookup(config, "providers.llm.aliases"))
    if isinstance(resolved, Failure):
        raise QueryError(resolved.failure().message)
    provider, name = resolved.unwrap()
    if provider not in WIRE_APIS:
        raise QueryError(f"turnmark cannot chat with {provider!r} models (it speaks {', '.join(WIRE_APIS)})")
    parameters = lookup(config, "assistant.model.parameters")
    return ModelSpec(
        provider, name, dict(parameters) if isinstance(parameters, dict) else {}, None, "assistant.model.id"
    )


def _usable(model: ModelSpec, config: dict[str, object], options: QueryOptions) -> Provider:
    """The provider for ``model``, opened before anything is written; one that cannot be (no API key, a base
    URL that is not one) is a ``QueryError``. Whether its server answers is known only once the request is
    stored, and a failed answer keeps the request, as ``jp`` does."""
    try:
        return open_provider(model, config, options.environ, options.http)
    except ModelError as error:
        raise QueryError(f"{error}; nothing was written") from None


def new_conversation(workspace: Workspace, model_id: str) -> ConversationRef:
    """A new conversation folder named as JP names it (``<deciseconds>``), empty, current format."""
    metadata = encode_document({"last_activated_at": now_timestamp()})
    return create_conversation(
        workspace, metadata, encode_document({"assistant": {"model": {"id": model_id}}}), b"[]\n"
    )


def _note(line: str, *, err: TextIO) -> None:
    chrome(f"note: {line}", err)


def _touch(loaded: LoadedConversation) -> None:
    """Set ``last_activated_at`` in every copy's metadata, keeping the rest as written (all copies or none)."""
    now = now_timestamp()
    changes: list[tuple[Path, bytes | None]] = []
    for directory in reversed(loaded.ref.directories):
        path = directory / METADATA
        try:
            document = decode_document(read_file(path, METADATA_LIMIT) or b"", METADATA)
        except (OSError, Exception):
            continue
        if isinstance(document, dict):
            changes.append((path, encode_document({**document, "last_activated_at": now})))
    write_together(changes, loaded.ref.anchor_of)


def _answer(parts: list[ChatPart]) -> list[Payload]:
    """The streamed answer as events: reasoning, the message, and each tool call with its not-run result."""
    payloads: list[Payload] = []
    reasoning = "".join(part.text for part in parts if part.kind == "reasoning")
    text = "".join(part.text for part in parts if part.kind == "text")
    if reasoning:
        payloads.append(ChatResponse(now_timestamp(), "reasoning", reasoning))
    if text:
        payloads.append(ChatResponse(now_timestamp(), "message", text))
    for part in parts:
        if part.kind == "tool_call":
            stamp = now_timestamp()
            payloads.append(ToolCallRequest(stamp, part.call_id, part.name, part.arguments))
            payloads.append(ToolCallResponse(stamp, part.call_id, NOT_RUN, True))
    return payloads


def run_query(
    start: Path, options: QueryOptions, new_id: IdSource, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """One turn; returns the exit status (0, or 1 when the model failed). Raises ``QueryError`` on bad input.

    Background tasks are drained whatever happens to the turn (an error or Ctrl-C included).
    """
    out, err = out or sys.stdout, err or sys.stderr
    handler = TaskHandler(options.soft_timeout, options.grace, err)
    result = QueryResult()
    try:
        status = _turn(start, options, new_id, handler, result, out=out, err=err)
    finally:
        handler.drain()
    if options.as_json:
        emit_json(result.as_json(), out)
    return status


def _stored(stream: ConversationStream) -> dict[str, object]:
    """The new turn as stored: its ``turn_start`` ID and each event's ID, kind and request link."""
    turn = stream.turns()[-1]
    return {
        "turn": turn.id(),
        "events": [
            {"event_id": entry.event_id, "type": entry.payload.type_tag, "request_id": entry.request_id}
            for entry in turn.events()
        ],
    }


def _turn(
    start: Path,
    options: QueryOptions,
    new_id: IdSource,
    handler: TaskHandler,
    result: QueryResult,
    *,
    out: TextIO,
    err: TextIO,
) -> int:
    workspace = require_workspace(start)
    ref: ConversationRef | None = None
    if options.new:
        config = effective_config(workspace, None, options.cfg, options.environ, start)
        with closing(_usable(_assistant_model(config, options.model), config, options)) as checked:
            model_id = checked.model.id
        if options.persist:
            ref = new_conversation(workspace, model_id)
    else:
        ref = pick_conversation(start, options.conversation, lambda message: chrome(f"warning: {message}", err))
    lock: ConversationLock | None = hold_lock(ref) if options.persist and ref is not None else None
    opened = ExitStack()
    try:
        if ref is None:
            loaded = None
            stream = ConversationStream.empty({"assistant": {"model": {"id": model_id}}}, new_id=new_id)
            config = effective_config(workspace, stream, options.cfg, options.environ, start)
        else:
            loaded = read_conversation(ref, new_id, lock)
            stream = catchup_stream(loaded.stream)
            config = effective_config(ref.workspace, loaded.stream, options.cfg, options.environ, start)
        model = _assistant_model(config, options.model)
        provider = opened.enter_context(closing(_usable(model, config, options)))
        result.conversation = ref.display_id if ref is not None else None
        result.model = model.id
        auto = lookup(config, f"{TURN_SUMMARY}.auto") is not False
        stream = stream.start_turn(ChatRequest(now_timestamp(), options.message))
        if lock is not None and ref is not None and auto and summary_candidates(stream, last_turn_may_be_open=True):
            catchup = CatchupOptions(cfg=tuple(options.cfg), environ=options.environ, http=options.http)
            handler.spawn(TurnSummaryTask(ref, stream, catchup, new_id, lambda line: chrome(line, err)))
        if lock is not None and loaded is not None:
            result.upgrade = save_stream(
                lock, loaded, stream, persist_ids=True, announce=partial(_note, err=err), command="query"
            ).upgrade
            if result.upgrade is not None:
                name = loaded.ref.display_id
                said = f"{name}: upgraded from JP's older format ({result.upgrade.describe()})"
                _note(f"{said}; `turnmark edit --undo {name}` takes it back", err=err)
            loaded = read_conversation(loaded.ref, new_id, lock)
            stream = loaded.stream
        status, stream = _ask(stream, provider, config, options, result, out=out, err=err)
        if lock is not None and loaded is not None:
            along = continued(loaded.ref) if result.upgrade is not None else None
            save_stream(lock, loaded, stream, along=along)
            _touch(loaded)
            result.stored = _stored(stream)
        return status
    finally:
        opened.close()
        if lock is not None:
            lock.release()


def _ask(
    stream: ConversationStream,
    provider: Provider,
    config: dict[str, object],
    options: QueryOptions,
    result: QueryResult,
    *,
    out: TextIO,
    err: TextIO,
) -> tuple[int, ConversationStream]:
    """Send the projected conversation, stream the answer out, and append it; status 1 on a model error."""
    projection = project(stream)
    for diagnostic in projection.diagnostics:
        excluded = ", ".join(event.event_id for event in diagnostic.excluded)
        chrome(
            f"warning: left out of the request: {excluded} (request_id {diagnostic.request_id!r}: {diagnostic.reason})",
            err,
        )
    model = provider.model
    status = 0
    parts: list[ChatPart] = []
    try:
        body = request_body(projection.view, WIRE_APIS[model.provider], config, model.name)
        for part in provider.chat(body):
            if part.kind == "text" and not options.as_json:
                write_text(out, part.text)
                out.flush()
            parts.append(part)
    except ModelError as error:
        result.error = str(error) if model.id in str(error) else f"{model.id}: {error}"
        chrome(f"error: {result.error}", err)
        status = 1
    result.answer = "".join(part.text for part in parts if part.kind == "text")
    result.tool_calls = [part.name for part in parts if part.kind == "tool_call"]
    if result.answer and not options.as_json:
        out.write("\n")
    for part in parts:
        if part.kind == "tool_call":
            chrome(f"note: the model asked to run {part.name}; {NOT_RUN}", err)
    answered = _answer(parts)
    if answered:
        built = stream.turn_builder()
        for payload in answered:
            built = built.add(payload)
        stream = built.build().value_or(stream.extend(answered))
    return status, stream
