"""JP timestamps: kept as their exact text (up to nine fraction digits), validated, formatted."""

import re
from datetime import UTC, datetime

_NAIVE = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
_RFC3339 = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})"
_TIMESTAMP = re.compile(f"(?:{_NAIVE})|(?:{_RFC3339})")

EPOCH = "1970-01-01 00:00:00.0"


def is_timestamp(text: str) -> bool:
    """True for JP's naive UTC form (``2026-04-10 17:04:20.531233``) or RFC 3339 with an offset."""
    return _TIMESTAMP.fullmatch(text) is not None


def sort_key(text: str) -> tuple[datetime, int]:
    """Order timestamps by the moment they name (naive ones are UTC), to the nanosecond."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(.*)", text)
    if match is None:
        return datetime.min.replace(tzinfo=UTC), 0
    day, clock, fraction, zone = match.groups()
    zone = zone.replace("z", "Z").replace("Z", "+00:00") or "+00:00"
    moment = datetime.fromisoformat(f"{day}T{clock}{zone}").astimezone(UTC)
    nanos = int((fraction or "0")[:9].ljust(9, "0"))
    return moment, nanos
