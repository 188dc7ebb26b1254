"""The model side of one catch-up: which model, its provider and window, the batches to ask, asking for one
and remembering the answers that failed (``summary_writer`` writes them back)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from returns.result import Failure

from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.config import merge_all
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.batching import (
    UNLIMITED_WINDOW,
    batch_size,
    batches,
    plan_rows,
    too_large,
)
from turnmark.core.summaries.catchup import (
    extractive_answer,
    summary_candidates,
    turn_ids_of,
)
from turnmark.core.summaries.extractive import extractive_labels
from turnmark.core.summaries.failures import counted, forgotten, given_up
from turnmark.core.summaries.gate import FoldedIds, folded_ids
from turnmark.core.summaries.packing import Packing
from turnmark.core.summaries.request import SummaryAnswer, SummaryRequest, build_summary_request, parse_summaries
from turnmark.core.summaries.sources import EXTRACTIVE
from turnmark.core.summaries.transcript import MAX_MESSAGE_CHARS
from turnmark.core.wire.models import ModelSpec, resolve_summary_model
from turnmark.shell.collector import collector_paused
from turnmark.shell.errors import (
    ModelError,
    ModelRejected,
    ModelTruncated,
    ModelUnreachable,
)
from turnmark.shell.providers.base import Provider
from turnmark.shell.providers.registry import open_provider
from turnmark.shell.storage.config_files import config_layers, layer_of, transcript_limit
from turnmark.shell.storage.conversations import (
    LoadedConversation,
)
from turnmark.shell.storage.failure_memory import load_memory, save_memory
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases.catchup_files import FilesSeen
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport, CatchupRun
from turnmark.shell.usecases.summary_writer import SummaryWriter

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


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
    except BaseException:
        provider.close()
        raise


def _unusable(
    model: ModelSpec,
    provider: Provider | None,
    error: ModelError,
    options: CatchupOptions,
    report: CatchupReport,
    *,
    dry_run_note: str = "",
) -> tuple[ModelSpec, Provider | None, int | None]:
    """An implicit model gives way to the offline summarizer; a dry run notes the failure; otherwise it is raised.
    A provider not kept is closed."""
    if options.dry_run and not model.implicit:
        report.notes.append(f"a real run would fail: {error}{dry_run_note}")
        return model, provider, None
    if provider is not None:
        provider.close()
    if model.implicit:
        return _offline(model, str(error), report), None, None
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
    _failures: JsonObject | None = None
    _offline: tuple[ConversationStream, dict[str, str]] | None = None
    """builtin/extractive's labels for the stream being caught up, made once for all its batches."""
    _turn_ids: tuple[ConversationStream, frozenset[str], FoldedIds] | None = None
    """The turn IDs of the stream being caught up, as they are and case-folded, taken once for all its answers."""
    writer: SummaryWriter = field(init=False)
    """Writes the answers back under the lock (``adopt`` gives it the conversation as read)."""

    def __post_init__(self) -> None:
        self.writer = SummaryWriter(
            self.ref, self.options, self.new_id, self.model.id, self.report, self.max_message_chars
        )

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
            provider.close()
            return None
        return cls(
            ref, options, new_id, model, provider, window, batch_size(config), report, run, max_message_chars=limit
        )

    def close(self) -> None:
        """Close the provider's connections; a session is closed once its catch-up is done."""
        if self.provider is not None:
            self.provider.close()

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

    @property
    def last_save_seconds(self) -> float:
        """How long the last save took (``write_due`` waits longer between saves of a larger conversation)."""
        return self.writer.last_save_seconds

    def adopt(self, loaded: LoadedConversation, stream: ConversationStream, files: FilesSeen | None) -> None:
        """See ``SummaryWriter.adopt``."""
        self.writer.adopt(loaded, stream, files)

    def write_back(self, packing: Packing, answer: SummaryAnswer) -> bool:
        """Write the answer under the lock, for turns still as the model saw them (the failures remembered for
        the turns written are forgotten); ``False`` to stop."""
        written = self.writer.write_back(packing, answer)
        if written is None:
            return False
        if any(turn_id in self.failures for turn_id in written):
            self._failures = forgotten(self.failures, written)
            save_memory(self.ref, self._failures)
        return True
