"""Why a request link does not bind (RFD 098): the one rule, for a loaded stream's links (``resolution``) and
for the light reader's (``count_unresolved``), which reads no entry's payload."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

from turnmark.core.stream.kinds import LINKABLE_TAGS, NOT_AN_ID, REQUEST_TAG

UnresolvedReason: TypeAlias = Literal["missing_target", "wrong_kind", "duplicated_target", "not_an_id"]


def unresolved_reason(target: str, kinds: Mapping[str, str], duplicated_ids: frozenset[str]) -> UnresolvedReason | None:
    """Why a present link does not bind (``None``: it resolves): the one rule."""
    if target == NOT_AN_ID:
        return "not_an_id"
    if target in duplicated_ids:
        return "duplicated_target"
    if target not in kinds:
        return "missing_target"
    if kinds[target] != REQUEST_TAG:
        return "wrong_kind"
    return None


def count_unresolved(links: Sequence[tuple[str, str, str | None]], duplicated_ids: frozenset[str]) -> int:
    """How many links do not resolve, from each entry's ``(event_id, type, request_id)`` (the light reader's)."""
    linked = [target for _, tag, target in links if target is not None and tag in LINKABLE_TAGS]
    if not linked:
        return 0
    kinds = {event_id: tag for event_id, tag, _ in links}
    return sum(1 for target in linked if unresolved_reason(target, kinds, duplicated_ids) is not None)
