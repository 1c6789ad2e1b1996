"""Virtual time: integer microseconds since the Unix epoch, shown as aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_US = timedelta(microseconds=1)
#: The last virtual microsecond a datetime can show (9999-12-31T23:59:59.999999Z)
LAST_US = (datetime.max.replace(tzinfo=UTC) - EPOCH) // ONE_US


def to_datetime(us: int) -> datetime:
    """Virtual microseconds as an aware UTC datetime."""
    return EPOCH + timedelta(microseconds=us)


def to_us(at: datetime) -> int:
    """An aware datetime as virtual microseconds (a naive one is taken as UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - EPOCH) // ONE_US


def iso(us: int) -> str:
    """Virtual microseconds as ISO 8601 text ending in Z."""
    return to_datetime(us).isoformat().replace("+00:00", "Z")
