"""The operating system's clock, as the core takes it: "now" as a JP timestamp, and the time for intervals."""

import time
from datetime import UTC, datetime

from turnmark.core.stream.timestamps import format_timestamp

monotonic = time.monotonic
"""Seconds for measuring intervals (settle periods, back-off), never set back."""


def now_timestamp() -> str:
    """The current UTC time as JP writes timestamps."""
    return format_timestamp(datetime.now(UTC))


def now_epoch() -> float:
    """Seconds since the epoch, to compare with file modification times."""
    return time.time()


def now_ns() -> int:
    """Nanoseconds since the epoch, on the scale of file modification times (``st_mtime_ns``)."""
    return time.time_ns()
