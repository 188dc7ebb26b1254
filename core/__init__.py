"""turnmark.core: pure values and functions over JP conversation streams.

Nothing here touches files, clocks, randomness, the network, threads, the
environment or the terminal. Randomness (new event IDs) is passed in as a
small callable; time is passed in as timestamp strings.

The names in ``__all__`` are the public Python API; everything else in the
``turnmark.core.*`` modules may change. Every public name has an example that
runs as a doctest. In short:

- the stream: ``ConversationStream`` (``empty``, ``push``, ``extend``,
  ``start_turn``, ``set_turn_summary``, ``turns``, ...), its ``Entry`` and the
  payload kinds, ID sources (``sequential_ids``, ``ids_from_random_bytes``);
- parsing and serializing: ``ConversationStream.from_json(events, base_config)``
  takes the bytes of ``events.json`` and ``base_config.json`` and returns a
  ``Result`` (``StreamError`` on bad input); ``to_json()`` and
  ``base_config_json()`` give the bytes back, byte for byte for an unchanged
  stream. Reading and writing the files (the newer of JP's two copies, JP's
  lock, atomic writes) is the job of ``turnmark.shell.storage.conversations``
  (``read_conversation``, ``edit_conversation``);
- turns: ``Turn``, ``find_turn``, ``mechanical_turn_summary``, ``summary_source``;
- request links and exclusion: ``resolve_links`` (each ``Link`` is unlinked,
  resolved or unresolved with an ``UnresolvedReason``), ``excluded_ids``;
- projection: ``project`` (a ``Projection``: the ``ProviderView`` of
  ``ViewEvent`` and one ``ExclusionDiagnostic`` per unresolved link);
- turn summaries: ``turn_transcript``, ``turn_fingerprint``,
  ``summary_candidates``, ``pack`` and ``plan_summaries``, ``build_summary_request``,
  ``parse_summaries``, ``extractive_answer``, ``apply_summaries``,
  ``resolve_summary_model``; a user's own summary: ``ensure_first_turn_start``,
  ``label_turn``, ``unlabel_turn``.

A few public names differ from the name in their module (``label_turn`` is
``catchup.label``, ``turn_transcript`` is ``transcript.transcript``): the public
one is the name here, which no submodule's name can hide.

Imports are lazy (PEP 562): ``import turnmark.core.<module>`` runs this file,
and must stay as cheap as it was for the command line's start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import StreamError
    from .links.exclusion import ExclusionDiagnostic
    from .links.projection import Projection, ProviderView, ViewEvent, project
    from .links.resolution import Link, UnresolvedReason, resolve_links
    from .stream.conversation_stream import ConversationStream, TurnSummaryError
    from .stream.entries import Entry
    from .stream.event_ids import ids_from_random_bytes, sequential_ids
    from .stream.payloads import (
        ChatRequest,
        ChatResponse,
        Compaction,
        ConfigDelta,
        InquiryRequest,
        InquiryResponse,
        ToolCallRequest,
        ToolCallResponse,
        TurnStart,
        Unknown,
    )
    from .stream.turns import Turn, find_turn, mechanical_turn_summary, summary_source
    from .summaries.catchup import apply_summaries, extractive_answer
    from .summaries.catchup import candidates as summary_candidates
    from .summaries.catchup import label as label_turn
    from .summaries.catchup import plan as plan_summaries
    from .summaries.catchup import prepare as ensure_first_turn_start
    from .summaries.catchup import unlabel as unlabel_turn
    from .summaries.fingerprint import fingerprint as turn_fingerprint
    from .summaries.packing import Candidate, Packing, pack
    from .summaries.request import AnswerError, SummaryAnswer, SummaryRequest, parse_summaries
    from .summaries.request import summary_request as build_summary_request
    from .summaries.transcript import excluded_ids
    from .summaries.transcript import transcript as turn_transcript
    from .wire.models import resolve_summary_model

_EXPORTS: dict[str, tuple[str, str]] = {
    # the stream, its entries and payloads, and where new IDs come from
    "ConversationStream": ("stream.conversation_stream", "ConversationStream"),
    "Entry": ("stream.entries", "Entry"),
    "TurnStart": ("stream.payloads", "TurnStart"),
    "ChatRequest": ("stream.payloads", "ChatRequest"),
    "ChatResponse": ("stream.payloads", "ChatResponse"),
    "ToolCallRequest": ("stream.payloads", "ToolCallRequest"),
    "ToolCallResponse": ("stream.payloads", "ToolCallResponse"),
    "InquiryRequest": ("stream.payloads", "InquiryRequest"),
    "InquiryResponse": ("stream.payloads", "InquiryResponse"),
    "ConfigDelta": ("stream.payloads", "ConfigDelta"),
    "Compaction": ("stream.payloads", "Compaction"),
    "Unknown": ("stream.payloads", "Unknown"),
    "sequential_ids": ("stream.event_ids", "sequential_ids"),
    "ids_from_random_bytes": ("stream.event_ids", "ids_from_random_bytes"),
    "StreamError": ("errors", "StreamError"),
    "TurnSummaryError": ("stream.conversation_stream", "TurnSummaryError"),
    # turns
    "Turn": ("stream.turns", "Turn"),
    "find_turn": ("stream.turns", "find_turn"),
    "mechanical_turn_summary": ("stream.turns", "mechanical_turn_summary"),
    "summary_source": ("stream.turns", "summary_source"),
    # request links and exclusion
    "Link": ("links.resolution", "Link"),
    "UnresolvedReason": ("links.resolution", "UnresolvedReason"),
    "resolve_links": ("links.resolution", "resolve_links"),
    "excluded_ids": ("summaries.transcript", "excluded_ids"),
    "ExclusionDiagnostic": ("links.exclusion", "ExclusionDiagnostic"),
    # projection
    "project": ("links.projection", "project"),
    "Projection": ("links.projection", "Projection"),
    "ProviderView": ("links.projection", "ProviderView"),
    "ViewEvent": ("links.projection", "ViewEvent"),
    # transcripts, fingerprints, packing
    "turn_transcript": ("summaries.transcript", "transcript"),
    "turn_fingerprint": ("summaries.fingerprint", "fingerprint"),
    "summary_candidates": ("summaries.catchup", "candidates"),
    "Candidate": ("summaries.packing", "Candidate"),
    "Packing": ("summaries.packing", "Packing"),
    "pack": ("summaries.packing", "pack"),
    "plan_summaries": ("summaries.catchup", "plan"),
    # the summary request, the model's answer, and storing summaries
    "build_summary_request": ("summaries.request", "summary_request"),
    "SummaryRequest": ("summaries.request", "SummaryRequest"),
    "parse_summaries": ("summaries.request", "parse_summaries"),
    "SummaryAnswer": ("summaries.request", "SummaryAnswer"),
    "AnswerError": ("summaries.request", "AnswerError"),
    "extractive_answer": ("summaries.catchup", "extractive_answer"),
    "apply_summaries": ("summaries.catchup", "apply_summaries"),
    "resolve_summary_model": ("wire.models", "resolve_summary_model"),
    "label_turn": ("summaries.catchup", "label"),
    "unlabel_turn": ("summaries.catchup", "unlabel"),
    "ensure_first_turn_start": ("summaries.catchup", "prepare"),
}

__all__ = [
    "AnswerError",
    "Candidate",
    "ChatRequest",
    "ChatResponse",
    "Compaction",
    "ConfigDelta",
    "ConversationStream",
    "Entry",
    "ExclusionDiagnostic",
    "InquiryRequest",
    "InquiryResponse",
    "Link",
    "Packing",
    "Projection",
    "ProviderView",
    "StreamError",
    "SummaryAnswer",
    "SummaryRequest",
    "ToolCallRequest",
    "ToolCallResponse",
    "Turn",
    "TurnStart",
    "TurnSummaryError",
    "Unknown",
    "UnresolvedReason",
    "ViewEvent",
    "apply_summaries",
    "build_summary_request",
    "ensure_first_turn_start",
    "excluded_ids",
    "extractive_answer",
    "find_turn",
    "ids_from_random_bytes",
    "label_turn",
    "mechanical_turn_summary",
    "pack",
    "parse_summaries",
    "plan_summaries",
    "project",
    "resolve_links",
    "resolve_summary_model",
    "sequential_ids",
    "summary_candidates",
    "summary_source",
    "turn_fingerprint",
    "turn_transcript",
    "unlabel_turn",
]


def _export(name: str) -> object:
    """The public object called ``name``, imported from its module on first use and kept."""
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value: object = getattr(import_module(f".{module}", __name__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:
    __getattr__ = _export
