"""JP timestamps: kept as their exact text (up to nine fraction digits), validated, ordered."""

import re
from collections.abc import Iterable
from datetime import UTC, datetime

_TIMESTAMP = re.compile(
    r"(?P<year>\d{4})-(?P<month>0[1-9]|1[0-2])-(?P<day>0[1-9]|[12]\d|3[01])"
    r"(?:(?P<naive> )|[Tt ])(?P<clock>(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60))(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)?"
)

COMMON_TIMESTAMP = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8]) (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?"
)
"""JP's own form on a day every month has: valid without further checks (most timestamps, at load; the light
reader tries it first, as ``is_timestamp`` does)."""

EPOCH = "1970-01-01 00:00:00.0"
_EARLIEST = (-(2**63), 0)


def _match(text: str) -> re.Match[str] | None:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    naive = match.group("zone") is None
    if naive and (match.group("naive") is None or len(match.group("fraction") or "") > 9):
        return None
    day = int(match.group("day"))
    if day > 28 and day > _days_in_month(int(match.group("year")), int(match.group("month"))):
        return None
    return match


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if _leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _ordinal(year: int, month: int, day: int) -> int:
    """``date.toordinal()`` (0001-01-01 is 1), extended to year 0, which chrono reads and ``date`` refuses."""
    before = year - 1
    days = before * 365 + before // 4 - before // 100 + before // 400 + _DAYS_BEFORE_MONTH[month]
    return days + (month > 2 and _leap(year)) + day


def is_timestamp(text: str) -> bool:
    """True for JP's naive UTC form (``2026-04-10 17:04:20.531233``) or RFC 3339 with an offset.

    The date must exist and the clock be in range, as chrono's parser requires.
    """
    return COMMON_TIMESTAMP.fullmatch(text) is not None or _match(text) is not None


def sort_key(text: str) -> tuple[int, int]:
    """Order timestamps by the moment they name (naive ones are UTC): (UTC seconds, nanoseconds).

    Plain integer arithmetic, so no valid timestamp overflows; invalid ones sort first.
    """
    if COMMON_TIMESTAMP.fullmatch(text) is not None:
        day = _ordinal(int(text[:4]), int(text[5:7]), int(text[8:10]))
        moment = day * 86_400 + int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
        return moment, int(text[20:].ljust(9, "0")) if len(text) > 19 else 0
    match = _match(text)
    if match is None:
        return _EARLIEST
    day = _ordinal(int(match.group("year")), int(match.group("month")), int(match.group("day")))
    hours, minutes, seconds = (int(part) for part in match.group("clock").split(":"))
    zone = match.group("zone") or "Z"
    offset = 0 if zone in "Zz" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    moment = day * 86_400 + hours * 3600 + minutes * 60 + seconds - offset
    return moment, int((match.group("fraction") or "0")[:9].ljust(9, "0"))


def format_timestamp(moment: datetime) -> str:
    """A moment the way JP writes it: UTC, no zone, fraction with trailing zeros stripped (``.0`` if none)."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment
    fraction = f"{utc.microsecond:06d}".rstrip("0") or "0"
    return f"{utc.strftime('%Y-%m-%d %H:%M:%S')}.{fraction}"


def activity_key(last_activated_at: str, conversation: int) -> tuple[int, int, int]:
    """What orders conversations by their last activity (``most_recently_active``): the moment, then the ID."""
    moment, nanoseconds = sort_key(last_activated_at)
    return moment, nanoseconds, conversation


def latest_active(keys: Iterable[tuple[int, int, int]]) -> int | None:
    """The conversation whose ``activity_key`` is the latest, ``None`` among none."""
    latest = max(keys, default=None)
    return latest[2] if latest is not None else None


def most_recently_active(dated: Iterable[tuple[str, int]]) -> int | None:
    """The conversation a command takes when ``CONV`` is not given: the latest ``last_activated_at``, the higher
    ID on a tie, among ``(last_activated_at, conversation ID)`` of the conversations whose metadata reads.

    >>> most_recently_active([("2026-06-01 10:00:00.0", 17), ("2026-06-02 09:00:00.0", 12),
    ...     ("2026-06-02 09:00:00.0", 11)])
    12
    >>> most_recently_active([]) is None
    True
    """
    return latest_active(activity_key(at, conversation) for at, conversation in dated)
