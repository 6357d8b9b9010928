"""The times ``--since`` and ``--until`` take: a date (``2026-12-01``), a date and time
(``2026-12-01T10:30``, ``2026-12-01 10:30:00``; UTC unless it names its offset, as entries'
times are written), or a span back from now (``30m``, ``6h``, ``2d``, ``1w``). Each becomes an
ISO 8601 time in UTC, compared with entries' ``ts`` as text (their format sorts by time).
``--until`` a date means to the end of that day."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from convgit.base.errors import UsageError

_SPAN = re.compile(r"(\d+)\s*(m|min|h|d|w)", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNITS = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def moment(text: str, option: str, *, until: bool = False) -> str:
    """``text`` as an ISO 8601 time in UTC (``YYYY-MM-DDTHH:MM:SS.mmmZ``); UsageError in one
    sentence when it is none of the forms this module names."""
    given = text.strip()
    span = _SPAN.fullmatch(given)
    if span:
        back = timedelta(**{_UNITS[span[2].lower()]: int(span[1])})
        return _iso(datetime.now(timezone.utc) - back)
    try:
        when = datetime.fromisoformat(given.replace("Z", "+00:00").replace(" ", "T", 1))
    except ValueError:
        raise UsageError(
            f"{option} takes a date (2026-12-01), a date and time (2026-12-01T10:30) or a span"
            f" back from now (30m, 6h, 2d, 1w), not {text!r}."
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    if until and _DATE.fullmatch(given):
        when += timedelta(days=1)
    return _iso(when)


def _iso(when: datetime) -> str:
    utc = when.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
