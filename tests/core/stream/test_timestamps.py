"""Timestamps: JP's forms accepted, impossible ones refused, ordering total."""

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.stream import timestamps
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


def _long_way(text: str) -> tuple[int, int]:
    """``sort_key`` by the full pattern alone, its day counted by ``date`` (years 1 to 9999)."""
    match = timestamps._match(text)
    if match is None:
        return timestamps._EARLIEST
    day = date(int(match.group("year")), int(match.group("month")), int(match.group("day"))).toordinal()
    hours, minutes, seconds = (int(part) for part in match.group("clock").split(":"))
    zone = match.group("zone") or "Z"
    offset = 0 if zone in "Zz" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    moment = day * 86_400 + hours * 3600 + minutes * 60 + seconds - offset
    return moment, int((match.group("fraction") or "0")[:9].ljust(9, "0"))


STAMPS = st.builds(
    lambda moment, fraction, separator, zone: (
        f"{moment.year:04d}-{moment:%m-%d}{separator}{moment:%H:%M:%S}{fraction}{zone}"
    ),
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    st.sampled_from(["", ".0", ".5", ".531233", ".123456789", ".1234567890"]),
    st.sampled_from([" ", "T"]),
    st.sampled_from(["", "Z", "+02:00", "-11:30"]),
)


@settings(max_examples=500, derandomize=True)
@given(text=STAMPS)
def test_sort_key_equals_the_long_way(text: str) -> None:
    """The quick way for JP's common form and the day counted without ``date`` order as ``date`` does."""
    assert sort_key(text) == _long_way(text)
    assert (sort_key(text) == timestamps._EARLIEST) == (not is_timestamp(text))


def test_year_zero_reads_and_orders_before_year_one() -> None:
    """chrono reads year 0 (a leap year); it must neither fail ``sort_key`` nor be refused."""
    assert is_timestamp("0000-01-01 00:00:00.0")
    assert is_timestamp("0000-02-29 10:00:00.0")
    assert not is_timestamp("0100-02-29 10:00:00.0")
    order = ["0000-01-01 00:00:00.0", "0000-02-29T10:00:00Z", "0000-12-31 23:59:59.9", "0001-01-01 00:00:00.0"]
    shuffled = [order[2], order[3], order[0], order[1]]
    assert sorted(shuffled, key=sort_key) == order
    assert sort_key("0001-01-01 00:00:00.0")[0] - sort_key("0000-01-01 00:00:00.0")[0] == 366 * 86_400
