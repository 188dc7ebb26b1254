"""When a conversation's file is still the one indexed: identity, the racy-clean rule, content hashes."""

from __future__ import annotations

import pytest

from turnmark.core.search.freshness import RACY_NS, FileIdentity, Freshness, combined, freshness

OLD = FileIdentity(1, 7, 120, 10 * RACY_NS)
LATER = 20 * RACY_NS


@pytest.mark.parametrize(
    ("stored", "checked", "current", "expected"),
    [
        (OLD, LATER, OLD, Freshness.SAME),
        (OLD, OLD.mtime_ns + RACY_NS - 1, OLD, Freshness.VERIFY),
        (OLD, LATER, FileIdentity(1, 8, 120, OLD.mtime_ns), Freshness.VERIFY),
        (OLD, LATER, FileIdentity(1, 7, 120, OLD.mtime_ns + 1), Freshness.VERIFY),
        (OLD, LATER, FileIdentity(1, 7, 121, OLD.mtime_ns), Freshness.CHANGED),
        (None, LATER, OLD, Freshness.CHANGED),
        (OLD, LATER, None, Freshness.CHANGED),
        (None, LATER, None, Freshness.SAME),
    ],
)
def test_freshness(
    stored: FileIdentity | None, checked: int, current: FileIdentity | None, expected: Freshness
) -> None:
    assert freshness(stored, checked, current) is expected


def test_combined() -> None:
    assert combined([Freshness.SAME, Freshness.SAME]) is Freshness.SAME
    assert combined([Freshness.SAME, Freshness.VERIFY]) is Freshness.VERIFY
    assert combined([Freshness.VERIFY, Freshness.CHANGED]) is Freshness.CHANGED
