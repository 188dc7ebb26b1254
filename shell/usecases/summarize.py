"""Catch-up for one conversation: plan, ask the model without the lock, write back under it.

1. Read the conversation, in memory inserting the ``turn_start`` its first
   turn may lack (IDs assigned at load, and this one, are derived from the
   entries, so the turns the model is shown are the turns found again later).
2. Nominate completed turns without a summary and pack them into batches, once.
3. For each batch, call the model with no lock held (a running ``jp`` never
   waits for a summary) and keep its answer in memory. Answers are written
   together before the oldest would wait ``WRITE_EVERY_SECONDS`` for the next
   answer (taking as long as the last; or ten times as long as the last save
   took), at the end, on Ctrl-C, and when the model fails; the offline
   summarizer's, which cost nothing to ask again, at the end only. So a crash
   loses at most about those last seconds of answers.
4. To write: take the lock without waiting (locked: stop, the turns are
   retried next time). When the conversation's files are still the ones read
   or last written (same device, inode, size, mtime and ctime), the answers go
   into the stream already in memory; otherwise the files are read again and
   only the summaries whose turn still has the fingerprint the model was shown
   are written. Only then are IDs, the inserted ``turn_start`` and a legacy
   upgrade written, with them (the report says so; the upgrade keeps an undo step).

A catch-up that stores no summary writes nothing; a model failure leaves its
turns for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial

import msgspec
from returns.result import Failure

from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.search.freshness import FileIdentity, Freshness, freshness
from turnmark.core.stream.config import merge_all
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.legacy_upgrade import LegacyUpgrade, legacy_upgrade
from turnmark.core.summaries.batching import (
    UNLIMITED_WINDOW,
    batch_size,
    batches,
    plan_rows,
    too_large,
    write_due,
)
from turnmark.core.summaries.catchup import (
    apply_summaries,
    catchup_stream,
    extractive_answer,
    summary_candidates,
    turn_ids_of,
    wants_summaries,
)
from turnmark.core.summaries.extractive import extractive_labels
from turnmark.core.summaries.failures import counted, forgotten, given_up
from turnmark.core.summaries.gate import FoldedIds, folded_ids
from turnmark.core.summaries.labels import EXTRACTIVE
from turnmark.core.summaries.packing import Packing
from turnmark.core.summaries.request import SummaryAnswer, SummaryRequest, build_summary_request, parse_summaries
from turnmark.core.summaries.schedule import still_settling
from turnmark.core.summaries.transcript import MAX_MESSAGE_CHARS
from turnmark.core.wire.models import ModelSpec, resolve_summary_model
from turnmark.shell.clock import monotonic, now_epoch, now_ns
from turnmark.shell.collector import collector_paused
from turnmark.shell.errors import (
    ConfigProblem,
    ConversationError,
    ConversationLocked,
    ModelError,
    ModelRejected,
    ModelTruncated,
    ModelUnreachable,
)
from turnmark.shell.providers.base import Provider
from turnmark.shell.providers.registry import open_provider
from turnmark.shell.settings import RunSettings
from turnmark.shell.storage.config_files import Layers, config_layers, layer_of, transcript_limit
from turnmark.shell.storage.conversations import (
    EventsStamp,
    LoadedConversation,
    events_stamp,
    read_conversation,
    save_refusal,
    save_stream,
)
from turnmark.shell.storage.failure_memory import load_memory, save_memory
from turnmark.shell.storage.locking import ConversationLock, hold_lock, is_locked, lock_holder
from turnmark.shell.storage.undo import saved_with_undo
from turnmark.shell.storage.workspace import BASE_CONFIG, EVENTS, ConversationRef
from turnmark.shell.storage.workspace_cache import file_hash, file_identity

FilesIdentity = tuple[FileIdentity | None, ...]
"""Each copy's ``events.json`` and ``base_config.json``: device, inode, size, mtime and ctime (``None``: absent)."""


def files_identity(ref: ConversationRef) -> FilesIdentity:
    """How the files a catch-up reads and writes stand now: any write, JP's rename or in place, changes it."""
    names = (EVENTS, BASE_CONFIG)
    return tuple(file_identity(str(directory / name)) for directory in ref.directories for name in names)


@dataclass(frozen=True)
class FilesSeen:
    """The files' identity as taken at ``at_ns`` (wall clock) and, when that identity cannot prove a later one
    the same (they changed within ``RACY_NS`` of it, as right after a write), the SHA-256 of their bytes."""

    identity: FilesIdentity
    at_ns: int
    digest: str | None

    def unchanged(self, ref: ConversationRef) -> bool:
        """Whether the files provably hold what they held then (``core/search/freshness``: the same identity
        long enough after their last change, else the same bytes)."""
        now = files_identity(ref)
        if len(now) != len(self.identity):
            return False
        decisions = [freshness(then, self.at_ns, current) for then, current in zip(self.identity, now, strict=True)]
        if all(decision is Freshness.SAME for decision in decisions):
            return True
        return Freshness.CHANGED not in decisions and self.digest is not None and files_digest(ref) == self.digest

    def holds(self, later: FilesSeen | None) -> bool:
        """``later`` looked at the same files (around a read: nothing changed while it read)."""
        return later is not None and (later.identity, later.digest) == (self.identity, self.digest)


def files_digest(ref: ConversationRef) -> str:
    """The SHA-256 of each file ``files_identity`` looks at, in its order (``-``: absent or unreadable)."""
    names = (EVENTS, BASE_CONFIG)
    return " ".join(file_hash(directory / name) or "-" for directory in ref.directories for name in names)


def files_seen(ref: ConversationRef) -> FilesSeen | None:
    """How the files stand now (their bytes too, when their identity is too young to prove anything later);
    ``None`` when they changed while being looked at."""
    identity, at_ns = files_identity(ref), now_ns()
    young = any(freshness(file, at_ns, file) is not Freshness.SAME for file in identity)
    digest = files_digest(ref) if young else None
    return FilesSeen(identity, at_ns, digest) if files_identity(ref) == identity else None


@dataclass(frozen=True, kw_only=True)
class CatchupOptions(RunSettings):
    """What ``summarize`` was asked to do."""

    dry_run: bool = False
    upgrade: bool = False
    last_turn_open: bool | None = None
    """Whether the last turn may still be in progress; ``None``: only when another process holds the lock."""
    retry_failed: bool = False
    """Also ask for turns whose answers failed too often (``summarize --retry-failed``)."""
    settled_for: float | None = None
    """The last turn counts as finished only once the files as read have not changed for this long
    (``watch --settle``; ``None``: no such wait)."""
    max_batches: int | None = None
    """Ask for at most this many batches (``edit -i`` summarizes only the newest turn)."""
    undo_as: str | None = None
    """Keep an undo step before writing, named so (``edit -i`` makes the summary it writes first undoable)."""
    saved_by: str = "summarize"
    """The command named by the undo step a save that upgrades a legacy conversation keeps (``watch``)."""
    shared_layers: Layers | None = None
    """The run's configuration layers (``config_files.run_layers``) when the run read them once for all its
    conversations; ``None``: each catch-up reads them."""


class _StoredUpgrade(msgspec.Struct, forbid_unknown_fields=True):
    ids_stamped: int
    config_split_out: bool
    turn_start_inserted: bool


class _StoredReport(msgspec.Struct, forbid_unknown_fields=True):
    """The keys and types ``CatchupReport.to_json`` writes."""

    conversation: str
    model: str | None = None
    budget: int | None = None
    plan: list[dict[str, str | int | None]] = msgspec.field(default_factory=list)
    written: dict[str, str] = msgspec.field(default_factory=dict)
    dropped: dict[str, str] = msgspec.field(default_factory=dict)
    refused: dict[str, str] = msgspec.field(default_factory=dict)
    notes: list[str] = msgspec.field(default_factory=list)
    too_large: dict[str, str] = msgspec.field(default_factory=dict)
    given_up: dict[str, str] = msgspec.field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None
    save_refused: str | None = None
    upgraded: bool = False
    upgrade: _StoredUpgrade | None = None


_PLAN_ROW_TYPES = {"turn": (str,), "index": (int,), "tokens": (int,), "batch": (int,), "excluded": (str,)}


def _plan_row(row: dict[str, str | int | None]) -> bool:
    """A row ``plan_rows`` makes: a turn, its index and tokens, and either its batch or why it was left out."""
    keys = set(row)
    return keys in ({"turn", "index", "tokens", "batch"}, {"turn", "index", "tokens", "excluded"}) and all(
        type(value) in _PLAN_ROW_TYPES[key] for key, value in row.items()
    )


@dataclass
class CatchupReport:
    """What happened to one conversation (the ``summarize --format json`` shape)."""

    conversation: str
    model: str | None = None
    budget: int | None = None
    plan: list[dict[str, object]] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    conversation_problem: bool = False
    """The error is in the conversation itself (unreadable, unsavable): retrying before it changes is useless."""
    config_problem: bool = False
    """The error is the configuration (a missing key, an unusable model): retrying before it changes is useless."""
    too_large: dict[str, str] = field(default_factory=dict)
    """Turns that do not fit the model's window on their own: they wait for a larger model, not the next run."""
    given_up: dict[str, str] = field(default_factory=dict)
    """Turns not asked for again: their answers failed too often with the same content."""
    skipped: str | None = None
    """Why nothing was tried: the conversation is locked, or its model failed earlier in this run."""
    locked: bool = False
    repeated: bool = False
    """``error`` was already reported for another conversation of this run."""
    save_refused: str | None = None
    """Why a real run would not save what it summarized (a dry run's prediction, by the rule the save applies)."""
    unsettled: float | None = field(default=None, compare=False)
    """Seconds until the files as read have rested for ``settled_for`` (their last turn was left alone)."""
    last_write: EventsStamp | None = field(default=None, compare=False)
    """How ``events.json`` stood right after turnmark's last write, under the lock (the watcher ignores that write)."""
    upgrade: LegacyUpgrade | None = None
    """The upgrade from JP's older format the save performed (``upgraded``) or, in a dry run, would perform."""
    upgraded: bool = False

    @property
    def done(self) -> bool:
        """Everything asked of this conversation happened (or there was nothing to do)."""
        return self.error is None and self.skipped is None and self.save_refused is None

    @classmethod
    def from_json(cls, value: object) -> CatchupReport:
        """The report ``to_json`` wrote (a stored dry run's, shown again); ``ValueError`` for any other key, a value
        of another type or a plan row ``plan_rows`` does not make."""
        stored = msgspec.convert(value, _StoredReport, strict=True)
        if not all(_plan_row(row) for row in stored.plan):
            raise ValueError("a plan row that is not one a dry run makes")
        upgrade = stored.upgrade
        fields = {name: getattr(stored, name) for name in stored.__struct_fields__}
        fields["plan"] = [dict(row) for row in stored.plan]
        fields["upgrade"] = None if upgrade is None else LegacyUpgrade.from_json(msgspec.structs.asdict(upgrade))
        return cls(**fields)

    def to_json(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "model": self.model,
            "budget": self.budget,
            "plan": self.plan,
            "written": self.written,
            "dropped": self.dropped,
            "refused": self.refused,
            "notes": self.notes,
            "too_large": self.too_large,
            "given_up": self.given_up,
            "error": self.error,
            "skipped": self.skipped,
            "save_refused": self.save_refused,
            "upgraded": self.upgraded,
            "upgrade": None if self.upgrade is None else self.upgrade.to_json(),
        }


@dataclass
class CatchupRun:
    """What one run (a ``summarize``, one ``watch`` pass) learned about its models.

    A model that cannot be used (a missing key, a rejected request that cannot
    succeed) or an endpoint that did not answer is tried once per run: the
    conversations after it are skipped for that reason, and it is reported once.
    """

    failures: dict[str, str] = field(default_factory=dict)
    configuration: set[str] = field(default_factory=set)
    """The keys whose failure is the configuration's (a missing key, an unusable model)."""

    def failure(self, key: str) -> str | None:
        return self.failures.get(key)

    def remember(self, key: str, message: str, *, configuration: bool = False) -> None:
        self.failures.setdefault(key, message)
        if configuration:
            self.configuration.add(key)


def catch_up(
    ref: ConversationRef,
    options: CatchupOptions,
    new_id: IdSource,
    *,
    on_batch: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    run: CatchupRun | None = None,
) -> CatchupReport:
    """Summarize what one conversation still lacks; never raises for a model or lock problem."""
    report = CatchupReport(ref.display_id)
    try:
        return _catch_up(
            ref, options, new_id, on_batch=on_batch, should_stop=should_stop, report=report, run=run or CatchupRun()
        )
    except ConversationError as error:
        report.error = str(error)
        report.conversation_problem = True
        return report
    except ConfigProblem as error:
        report.error = str(error)
        return report


def _open(
    model: ModelSpec, config: JsonObject, options: CatchupOptions, report: CatchupReport
) -> tuple[ModelSpec, Provider | None, int | None]:
    """The provider and its context window; the offline summarizer stands in for an unusable implicit model.

    A dry run needs no credential and no reachable model: what a real run would fail on is a note,
    and the default window is assumed.
    """
    if model.is_builtin:
        return model, None, None
    try:
        provider = open_provider(model, config, options.environ, options.http)
    except ModelError as error:
        return _unusable(model, None, error, options, report)
    try:
        return model, provider, provider.context_window()
    except ModelUnreachable as error:
        return _unusable(
            model, provider, error, options, report, dry_run_note="; packed for the default context window"
        )
    except ModelError as error:
        report.notes.append(f"context window unknown ({error}); assuming the default")
        return model, provider, None


def _unusable(
    model: ModelSpec,
    provider: Provider | None,
    error: ModelError,
    options: CatchupOptions,
    report: CatchupReport,
    *,
    dry_run_note: str = "",
) -> tuple[ModelSpec, Provider | None, int | None]:
    """An implicit model gives way to the offline summarizer; a dry run notes the failure; otherwise it is raised."""
    if model.implicit:
        return _offline(model, str(error), report), None, None
    if options.dry_run:
        report.notes.append(f"a real run would fail: {error}{dry_run_note}")
        return model, provider, None
    raise error


SAME_FOR_EVERY_REQUEST = frozenset({401, 403, 404})
"""Statuses that say the key or the model is wrong: the rest of the run would get them too."""


def _skipped(report: CatchupReport, run: CatchupRun, key: str) -> bool:
    """Skip a conversation whose model or endpoint failed earlier in this run."""
    earlier = run.failure(key)
    if earlier is None:
        return False
    report.skipped = f"{earlier} (see the error above); not tried again in this run"
    report.repeated = True
    report.config_problem = key in run.configuration
    return True


def _offline(model: ModelSpec, reason: str, report: CatchupReport) -> ModelSpec:
    offline = model.offline(reason)
    report.model = offline.id
    report.notes.append(f"using {offline.id}: {offline.fallback_reason}")
    return offline


@dataclass
class Session:
    """The model side of a catch-up, once resolved: which model, its provider and window, the batch size."""

    ref: ConversationRef
    options: CatchupOptions
    new_id: IdSource
    model: ModelSpec
    provider: Provider | None
    window: int | None
    batch_size: int
    report: CatchupReport
    run: CatchupRun = field(default_factory=CatchupRun)
    model_failed: bool = False
    """The model cannot answer any batch (unreachable, refused): the other batches are not asked."""
    max_message_chars: int = MAX_MESSAGE_CHARS
    """``conversation.turn_summary.transcript.max_message_chars``, read once: planning and writing back
    take every fingerprint with it."""
    last_save_seconds: float = 0.0
    """How long the last save took (``write_due`` waits longer between saves of a larger conversation)."""
    _failures: JsonObject | None = None
    _offline: tuple[ConversationStream, dict[str, str]] | None = None
    """builtin/extractive's labels for the stream being caught up, made once for all its batches."""
    _turn_ids: tuple[ConversationStream, frozenset[str], FoldedIds] | None = None
    """The turn IDs of the stream being caught up, as they are and case-folded, taken once for all its answers."""
    _current: tuple[LoadedConversation, ConversationStream, FilesSeen] | None = None
    """The conversation as read, the stream written last (or as read, prepared) and the identity of the
    files holding it: a write that finds the same files applies its answers to that stream, unread."""

    @classmethod
    def open(
        cls,
        ref: ConversationRef,
        stream: ConversationStream,
        options: CatchupOptions,
        new_id: IdSource,
        *,
        report: CatchupReport,
        run: CatchupRun | None = None,
    ) -> Session | None:
        """Resolve the model and open its provider; ``None`` (with ``report.error``) when that fails."""
        run = run or CatchupRun()
        layers = config_layers(ref.workspace, stream, options.cfg, options.environ, shared=options.shared_layers)
        config = merge_all(layer for _, layer in layers)
        limit = transcript_limit(layers)
        resolved = resolve_summary_model(config, options.model)
        if isinstance(resolved, Failure):
            report.error = resolved.failure().describe()
            report.config_problem = True
            return None
        model = resolved.unwrap()
        report.model = model.id
        if model.fallback_reason:
            report.notes.append(f"using {model.id}: {model.fallback_reason}")
        if not options.dry_run and _skipped(report, run, model.id):
            return None
        try:
            model, provider, window = _open(model, config, options, report)
        except ModelUnreachable as error:
            report.error = f"{model.id}: {error}"
            run.remember(model.id, f"{model.id} cannot be reached")
            return None
        except ModelError as error:
            origin = "--model" if model.source == "--model" else f"{model.source} in {layer_of(layers, model.source)}"
            report.error = f"{model.id} ({origin}): {error}; set it, or summarize offline with --model {EXTRACTIVE}"
            report.config_problem = True
            run.remember(model.id, f"{model.id} cannot be used", configuration=True)
            return None
        if provider is not None and not options.dry_run and _skipped(report, run, provider.endpoint):
            return None
        return cls(
            ref, options, new_id, model, provider, window, batch_size(config), report, run, max_message_chars=limit
        )

    def batches(self, stream: ConversationStream, *, last_turn_may_be_open: bool) -> list[Packing]:
        """The requests to make for ``stream``, recorded in the report's plan."""
        upgrade = self.options.upgrade and not self.model.is_builtin
        wanted = summary_candidates(
            stream,
            last_turn_may_be_open=last_turn_may_be_open,
            upgrade=upgrade,
            max_message_chars=self.max_message_chars,
        )
        if not self.options.retry_failed and not self.model.is_builtin:
            self.report.given_up = given_up(self.failures, wanted)
            wanted = tuple(c for c in wanted if c.turn_id not in self.report.given_up)
        limit = UNLIMITED_WINDOW if self.model.is_builtin else self.window
        planned = batches(wanted, limit, self.batch_size)
        self.report.budget = planned[0].budget if planned and not self.model.is_builtin else None
        self.report.plan = plan_rows(planned)
        self.report.too_large = too_large(self.report.plan, self.model.id, self.report.budget)
        return [packing for packing in planned if packing.packed]

    def ask(
        self, stream: ConversationStream, packing: Packing, should_stop: Callable[[], bool]
    ) -> SummaryAnswer | None:
        """The checked answer for one batch (no lock is held); ``None`` with ``report.error`` on failure."""
        ids = tuple(c.turn_id for c in packing.packed)
        known, folded = self._known(stream)
        try:
            if self.provider is None:
                if self._offline is None or self._offline[0] is not stream:
                    with collector_paused():
                        self._offline = (stream, extractive_labels(stream.turns(), excluded_ids(stream)))
                text = extractive_answer(stream, ids, self._offline[1], known)
            else:
                text = self._complete(build_summary_request(packing.packed, self.window), should_stop)
        except ModelError as error:
            self.report.error = f"{self.model.id}: {error}"
            self.model_failed = isinstance(error, ModelUnreachable | ModelRejected) or should_stop()
            if isinstance(error, ModelTruncated):
                self._count_failures(packing, dict.fromkeys(ids, "cut off by the token limit"))
            if isinstance(error, ModelUnreachable) and self.provider is not None:
                self.run.remember(self.provider.endpoint, f"{self.provider.endpoint} cannot be reached")
            elif isinstance(error, ModelRejected) and error.status in SAME_FOR_EVERY_REQUEST:
                self.run.remember(self.model.id, f"{self.model.id} refused the request (HTTP {error.status})")
            return None
        parsed = parse_summaries(text, ids, folded)
        if isinstance(parsed, Failure):
            self.report.error = f"{self.model.id}: {parsed.failure().message}; nothing written"
            self._count_failures(packing, dict.fromkeys(ids, parsed.failure().message))
            return None
        answer = parsed.unwrap()
        self.report.refused.update(answer.refused)
        self._count_failures(packing, answer.refused)
        return answer

    def _known(self, stream: ConversationStream) -> tuple[frozenset[str], FoldedIds]:
        if self._turn_ids is None or self._turn_ids[0] is not stream:
            known = turn_ids_of(stream.turns())
            self._turn_ids = (stream, known, folded_ids(known))
        return self._turn_ids[1], self._turn_ids[2]

    @property
    def failures(self) -> JsonObject:
        """The conversation's memory of failed answers (read once per session)."""
        if self._failures is None:
            self._failures = load_memory(self.ref)
        return self._failures

    def _count_failures(self, packing: Packing, reasons: dict[str, str]) -> None:
        """One more failed answer for each turn in ``reasons`` (refused by the gate, blank, missing, cut off).

        Not for ``builtin/extractive``: it answers the same for the same turn, costs nothing to ask,
        and a count it left would keep a real model, configured later, from trying the turn.
        """
        if not reasons or self.provider is None:
            return
        fingerprints = {c.turn_id: c.fingerprint for c in packing.packed}
        failed = {turn_id: (fingerprints[turn_id], why) for turn_id, why in reasons.items() if turn_id in fingerprints}
        self._failures = counted(self.failures, failed)
        save_memory(self.ref, self._failures)

    def _complete(self, request: SummaryRequest, should_stop: Callable[[], bool]) -> str:
        """The model's answer; one cut off by the token limit is asked once more with twice the room."""
        assert self.provider is not None
        try:
            return self.provider.complete(request, should_stop)
        except ModelTruncated:
            larger = replace(request, answer_tokens=request.answer_tokens * 2)
            try:
                return self.provider.complete(larger, should_stop)
            except ModelTruncated as error:
                raise ModelTruncated(f"{error} (also with {larger.answer_tokens} answer tokens)") from None

    def adopt(self, loaded: LoadedConversation, stream: ConversationStream, files: FilesSeen | None) -> None:
        """Start from ``loaded`` as read, prepared as ``stream``, when ``files`` (their identity around the read)
        says what was read is what the files hold; ``None``: the first write reads them again."""
        self._current = None if files is None else (loaded, stream, files)

    def _under_lock(self, lock: ConversationLock) -> tuple[LoadedConversation, ConversationStream]:
        """The conversation under ``lock``: the stream in memory while its files are the ones it came from,
        else read again (another process wrote: the fingerprints decide which answers still apply)."""
        if self._current is not None and self._current[2].unchanged(self.ref):
            loaded, stream, _ = self._current
            return replace(loaded, lock=lock), stream
        before = files_seen(self.ref)
        fresh = read_conversation(self.ref, self.new_id, lock)
        prepared = catchup_stream(fresh.stream)
        self.adopt(fresh, prepared, before if before is not None and before.holds(files_seen(self.ref)) else None)
        return fresh, prepared

    def _note(self, text: str) -> None:
        if text not in self.report.notes:
            self.report.notes.append(text)

    def write_back(self, packing: Packing, answer: SummaryAnswer) -> bool:
        """Write the answer under the lock, for turns still as the model saw them; ``False`` to stop."""
        if not answer.summaries:
            return True
        fingerprints = {c.turn_id: c.fingerprint for c in packing.packed}
        try:
            with collector_paused(), hold_lock(self.ref) as lock:
                loaded, stream = self._under_lock(lock)
                applied = apply_summaries(
                    stream,
                    answer.summaries,
                    fingerprints,
                    self.model.id,
                    upgrade=self.options.upgrade,
                    max_message_chars=self.max_message_chars,
                )
                if applied.written:
                    started = monotonic()
                    save = partial(
                        save_stream, lock, loaded, applied.stream, announce=self._note, command=self.options.saved_by
                    )
                    undo_as = self.options.undo_as
                    saved = save() if undo_as is None else saved_with_undo(loaded, save, undo_as)
                    written = applied.stream
                    if saved.upgrade is not None:
                        self.report.upgrade, self.report.upgraded = saved.upgrade, True
                        written = written.upgraded()
                        loaded = replace(loaded, stream=written)
                    self.last_save_seconds = monotonic() - started
                    self.report.last_write = events_stamp(self.ref)
                    seen = files_seen(self.ref)
                    self._current = None if seen is None else (loaded, written, seen)
        except ConversationLocked as error:
            self.report.skipped = f"results not written: {error}; retried next time"
            self.report.locked = True
            return False
        except ConversationError as error:
            self.report.error = str(error)
            self.report.conversation_problem = True
            return False
        self.report.written.update({turn_id: answer.summaries[turn_id] for turn_id in applied.written})
        self.report.dropped.update(applied.dropped)
        if any(turn_id in self.failures for turn_id in applied.written):
            self._failures = forgotten(self.failures, applied.written)
            save_memory(self.ref, self._failures)
        return True


def _catch_up(
    ref: ConversationRef,
    options: CatchupOptions,
    new_id: IdSource,
    *,
    on_batch: Callable[[int, int], None],
    should_stop: Callable[[], bool],
    report: CatchupReport,
    run: CatchupRun,
) -> CatchupReport:
    planned = _planned(ref, options, new_id, report=report, run=run)
    if planned is None:
        return report
    session, stream, runnable = planned
    with collector_paused() if session.provider is None else nullcontext():
        _ask_and_write(session, stream, runnable, on_batch=on_batch, should_stop=should_stop)
    on_batch(len(runnable), len(runnable))
    return report


def _ask_and_write(
    session: Session,
    stream: ConversationStream,
    runnable: Sequence[Packing],
    *,
    on_batch: Callable[[int, int], None],
    should_stop: Callable[[], bool],
) -> None:
    """Ask for each batch and keep the answers, writing them together when ``write_due`` says (a model's: the
    oldest would wait that long by the next answer, if it takes as long as the last) and at the end; Ctrl-C
    writes the answers received, then stops the run."""
    held: list[tuple[Packing, SummaryAnswer]] = []
    since = 0.0
    try:
        for number, packing in enumerate(runnable, start=1):
            if should_stop():
                session.report.notes.append("stopped before the remaining batches; retried next time")
                break
            on_batch(number - 1, len(runnable))
            started = monotonic()
            answer = session.ask(stream, packing, should_stop)
            answered = monotonic()
            if answer is None:
                if session.model_failed:
                    break
                continue
            since = since if held else answered
            held.append((packing, answer))
            waited = answered - since + (answered - started)
            if session.provider is not None and write_due(waited, session.last_save_seconds):
                written, held = session.write_back(*_together(held)), []
                if not written:
                    break
    except KeyboardInterrupt:
        if held:
            session.write_back(*_together(held))
        raise
    if held:
        session.write_back(*_together(held))


def _planned(
    ref: ConversationRef, options: CatchupOptions, new_id: IdSource, *, report: CatchupReport, run: CatchupRun
) -> tuple[Session, ConversationStream, list[Packing]] | None:
    """Read the conversation and plan its batches: the session, the stream planned and the batches to ask;
    ``None`` when nothing is to be asked (nothing waits, it is locked, a dry run, the model fails: see
    ``report``). The collector is paused while reading and packing, not while a model server is asked for
    its context window."""
    with collector_paused():
        before = files_seen(ref)
        loaded = read_conversation(ref, new_id)
        files = before if before is not None and before.holds(files_seen(ref)) else None
        stream = catchup_stream(loaded.stream)
        locked = is_locked(ref)
        open_turn = options.last_turn_open or locked
        if not open_turn and options.settled_for is not None:
            report.unsettled = still_settling(_changed_ns(files), options.settled_for, now_epoch())
            open_turn = report.unsettled is not None
        if not wants_summaries(stream, last_turn_may_be_open=open_turn, upgrade=options.upgrade):
            return None
    if locked and not options.dry_run:
        holder = lock_holder(ref)
        report.skipped = f"locked by {holder or 'another process'} (a running jp?); retried next time"
        report.locked = True
        return None
    session = Session.open(ref, loaded.stream, options, new_id, report=report, run=run)
    if session is None:
        return None
    with collector_paused():
        runnable = session.batches(stream, last_turn_may_be_open=open_turn)[: options.max_batches]
        if options.dry_run and runnable:
            report.upgrade = legacy_upgrade(loaded.stream, stream)
            if (refusal := save_refusal(loaded, stream)) is not None:
                report.save_refused = str(refusal)
    if options.dry_run or not runnable:
        return None
    session.adopt(loaded, stream, files)
    return session, stream, runnable


def _changed_ns(files: FilesSeen | None) -> int | None:
    """When the files were last changed (``None``: while they were read)."""
    if files is None:
        return None
    return max((max(file.mtime_ns, file.ctime_ns) for file in files.identity if file is not None), default=0)


def _together(answers: Sequence[tuple[Packing, SummaryAnswer]]) -> tuple[Packing, SummaryAnswer]:
    """Answers kept in memory as one, written in one save (one lock, one look at the files, one write)
    instead of one per batch."""
    packed = tuple(candidate for packing, _ in answers for candidate in packing.packed)
    summaries = {turn_id: text for _, answer in answers for turn_id, text in answer.summaries.items()}
    return Packing(packed, (), answers[0][0].budget), SummaryAnswer(summaries, {})
