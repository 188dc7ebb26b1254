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

The API is listed once, as the ``if TYPE_CHECKING:`` imports below: that is what
mypy sees, and at run time the same lines are the table ``__getattr__`` serves
from (PEP 562), so ``import turnmark.core.<package>.<module>``, which runs this
file first, stays as cheap as the command line's start-up needs. Every public
name is the name of its definition.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    __all__: list[str]
    from .errors import AnswerError as AnswerError
    from .errors import StreamError as StreamError
    from .errors import TurnSummaryError as TurnSummaryError
    from .links.exclusion import ExclusionDiagnostic as ExclusionDiagnostic
    from .links.exclusion import excluded_ids as excluded_ids
    from .links.projection import Projection as Projection
    from .links.projection import ProviderView as ProviderView
    from .links.projection import ViewEvent as ViewEvent
    from .links.projection import project as project
    from .links.reasons import UnresolvedReason as UnresolvedReason
    from .links.resolution import Link as Link
    from .links.resolution import resolve_links as resolve_links
    from .stream.conversation_stream import ConversationStream as ConversationStream
    from .stream.entries import Entry as Entry
    from .stream.event_ids import ids_from_random_bytes as ids_from_random_bytes
    from .stream.event_ids import sequential_ids as sequential_ids
    from .stream.payloads import ChatRequest as ChatRequest
    from .stream.payloads import ChatResponse as ChatResponse
    from .stream.payloads import Compaction as Compaction
    from .stream.payloads import ConfigDelta as ConfigDelta
    from .stream.payloads import InquiryRequest as InquiryRequest
    from .stream.payloads import InquiryResponse as InquiryResponse
    from .stream.payloads import ToolCallRequest as ToolCallRequest
    from .stream.payloads import ToolCallResponse as ToolCallResponse
    from .stream.payloads import TurnStart as TurnStart
    from .stream.payloads import Unknown as Unknown
    from .stream.turns import Turn as Turn
    from .stream.turns import find_turn as find_turn
    from .stream.turns import mechanical_turn_summary as mechanical_turn_summary
    from .stream.turns import summary_source as summary_source
    from .summaries.catchup import apply_summaries as apply_summaries
    from .summaries.catchup import extractive_answer as extractive_answer
    from .summaries.catchup import plan_summaries as plan_summaries
    from .summaries.catchup import summary_candidates as summary_candidates
    from .summaries.fingerprint import turn_fingerprint as turn_fingerprint
    from .summaries.labels import ensure_first_turn_start as ensure_first_turn_start
    from .summaries.labels import label_turn as label_turn
    from .summaries.labels import unlabel_turn as unlabel_turn
    from .summaries.packing import Candidate as Candidate
    from .summaries.packing import Packing as Packing
    from .summaries.packing import pack as pack
    from .summaries.request import SummaryAnswer as SummaryAnswer
    from .summaries.request import SummaryRequest as SummaryRequest
    from .summaries.request import build_summary_request as build_summary_request
    from .summaries.request import parse_summaries as parse_summaries
    from .summaries.transcript import turn_transcript as turn_transcript
    from .wire.models import resolve_summary_model as resolve_summary_model

_exports: dict[str, str] = {}
"""Public name -> its module (relative to this package), read from the imports above on first use."""


def public_names() -> dict[str, str]:
    """Each public name and the module that defines it, as the ``if TYPE_CHECKING:`` block lists them."""
    if not _exports:
        import ast

        loader = __spec__.loader if __spec__ is not None else None
        source = loader.get_source(__name__) if loader is not None else None  # type: ignore[attr-defined]
        for node in ast.parse(source or "").body:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                _exports.update(
                    {alias.name: statement.module or "" for statement in node.body
                     if isinstance(statement, ast.ImportFrom) for alias in statement.names}
                )  # fmt: skip
    return _exports


def _export(name: str) -> object:
    """The public object called ``name``, imported from its module on first use and kept."""
    if name == "__all__":
        return sorted(public_names())
    module = public_names().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *public_names()})


if not TYPE_CHECKING:  # mypy sees the imports above, and no catch-all attribute
    __getattr__ = _export
