"""Timestamps: JP's forms accepted, impossible ones refused, ordering total."""

import pytest

from turnmark.core.stream.timestamps import is_timestamp, sort_key


@pytest.mark.parametrize(
    "text",
    [
        "2026-04-10 17:04:20.531233",
        "2023-01-01 00:00:00.0",
        "2026-04-10 17:04:20",
        "2026-04-10 17:04:20.123456789",
        "2024-02-29 12:00:00.5",
        "2023-01-01T00:00:00Z",
        "2023-01-01T10:00:00.25+02:00",
    ],
)
def test_accepted(text: str) -> None:
    assert is_timestamp(text)


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-31 10:00:00.0",
        "2023-02-29 10:00:00.0",
        "2026-13-01 10:00:00.0",
        "2026-01-01 25:00:00.0",
        "2026-01-01 10:61:00.0",
        "2026-01-01 10:00:00.1234567890",
        "2026-01-01T10:00:00",
        "2026-01-01T10:00:00+25:00",
        "yesterday",
        "",
    ],
)
def test_refused(text: str) -> None:
    assert not is_timestamp(text)


def test_ordering_is_by_moment_and_never_raises() -> None:
    stamps = ["2026-04-10 17:04:20.53", "2026-04-10T19:04:20.5+02:00", "2026-04-10 17:04:20.5", "not a time"]
    assert sorted(stamps, key=sort_key) == [
        "not a time",
        "2026-04-10T19:04:20.5+02:00",
        "2026-04-10 17:04:20.5",
        "2026-04-10 17:04:20.53",
    ]
    assert sort_key("2026-04-10T19:04:20.5+02:00") == sort_key("2026-04-10 17:04:20.5")
    assert sort_key("2026-13-45 10:00:00.0") == sort_key("garbage")


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00", "2016-12-31 23:59:60.5"])
def test_extreme_but_valid_timestamps_order_without_overflow(text: str) -> None:
    assert is_timestamp(text)
    assert sort_key(text) > sort_key("invalid")
