"""Strict ISO 8601 timestamps, normalized to the original's ``toISOString`` form.

Accepted: ``YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH:MM]``. A value without an offset is
UTC (the original used the process's local zone, which made ids of time unstable).
Impossible dates (Feb 30, month 13, hour 24) are rejected instead of rolled over.
Output is always ``YYYY-MM-DDTHH:MM:SS.mmmZ``; fractions beyond milliseconds are
truncated, as the original did. Normalized strings compare correctly as strings.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import InvalidInputError

__all__ = ["add_millisecond", "format_timestamp", "later_of", "now_timestamp", "parse_timestamp"]

_PATTERN = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"(Z|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def timestamp_error(field: str) -> InvalidInputError:
    """The original's message, naming the field that actually failed."""
    return InvalidInputError(f"Invalid {field}; use an ISO timestamp.")


def _parse(value: object, field: str) -> datetime:
    if not isinstance(value, str):
        raise timestamp_error(field)
    match = _PATTERN.fullmatch(value)
    if match is None:
        raise timestamp_error(field)
    year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second = int(match.group(6) or 0)
    fraction = (match.group(7) or "").ljust(3, "0")[:3]
    zone = match.group(8) or "Z"
    try:
        if zone == "Z":
            tz = timezone.utc
        else:
            hours, minutes = int(zone[1:3]), int(zone[4:6])
            if hours > 23 or minutes > 59:
                raise ValueError(zone)
            sign = -1 if zone[0] == "-" else 1
            tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
        moment = datetime(year, month, day, hour, minute, second, int(fraction) * 1000, tz)
        return moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise timestamp_error(field) from None


def format_timestamp(moment: datetime) -> str:
    """``toISOString``: UTC, milliseconds, ``Z``."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(value: object, field: str = "updatedAt") -> str:
    """Validate and normalize one timestamp; errors name ``field``."""
    moment = _parse(value, field)
    if not 1 <= moment.year <= 9999:
        raise timestamp_error(field)
    return format_timestamp(moment)


def now_timestamp() -> str:
    """The current time, normalized."""
    return format_timestamp(datetime.now(timezone.utc))


def add_millisecond(normalized: str) -> str:
    """One millisecond after a normalized timestamp."""
    return format_timestamp(_parse(normalized, "updatedAt") + timedelta(milliseconds=1))


def later_of(now: str, after: str) -> str:
    """``max(now, after + 1 ms)``: a time strictly later than ``after``."""
    bumped = add_millisecond(after)
    return bumped if bumped > now else now
