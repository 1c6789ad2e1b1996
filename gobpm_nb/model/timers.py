"""ISO 8601 durations, dates and repeating intervals, parsed with ``isodate``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

import isodate

from ..errors import ModelError

#: A parsed ISO 8601 duration: a timedelta, or isodate's Duration when months or years are
#: involved (isodate has no type information: to mypy its Duration is Any)
Duration: TypeAlias = timedelta | isodate.Duration


def parse_duration(text: str | timedelta, what: str = "duration") -> Duration:
    """Parse an ISO 8601 duration such as ``PT24H``; raise ModelError naming the text."""
    if isinstance(text, timedelta):
        value: Duration = text
    elif not isinstance(text, str):
        raise ModelError(f"{what} {text!r} is not an ISO 8601 duration string")
    else:
        try:
            if text.endswith("T"):  # isodate takes "PT" as zero; ISO 8601 wants a time after T
                raise ValueError(text)
            value = isodate.parse_duration(text)
        except (isodate.ISO8601Error, ValueError, TypeError, OverflowError):
            raise ModelError(f"{what} {text!r} is not an ISO 8601 duration") from None
    try:
        is_negative(value)
    except (OverflowError, ValueError):
        raise ModelError(f"{what} {text!r} is out of the calendar's range") from None
    return value


def parse_date(text: str | datetime, what: str = "date") -> datetime:
    """Parse an ISO 8601 date-time; a naive one is taken as UTC."""
    if isinstance(text, datetime):
        value = text
    else:
        try:
            value = isodate.parse_datetime(str(text))
        except (isodate.ISO8601Error, ValueError, TypeError):
            raise ModelError(f"{what} {text!r} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def add(at: datetime, duration: Duration) -> datetime:
    """``at`` moved forward by an ISO duration (months and years by the calendar)."""
    return at + duration


def is_negative(duration: Duration) -> bool:
    """True if the duration points backwards in time."""
    probe = datetime(2026, 1, 1, tzinfo=UTC)
    return add(probe, duration) < probe


@dataclass(frozen=True)
class Cycle:
    """``R<n>/<duration>`` (or ``R<n>/<start>/<duration>``); ``repeats`` None means unbounded."""

    repeats: int | None
    interval: Duration
    start: datetime | None = None


#: What a timer waits for, parsed: a duration, a date or a cycle
Timer: TypeAlias = Duration | datetime | Cycle


def parse_cycle(text: str) -> Cycle:
    """Parse an ISO 8601 repeating interval such as ``R3/PT10M``."""
    parts = text.split("/") if isinstance(text, str) else []
    if len(parts) not in (2, 3) or not parts[0].startswith("R"):
        raise ModelError(f"cycle {text!r} is not an ISO 8601 repeating interval like R3/PT10M")
    count = parts[0][1:]
    if count and not count.isdigit():
        raise ModelError(f"cycle {text!r} has a repeat count that is not a number")
    repeats = int(count) if count else None
    if repeats == 0:
        raise ModelError(f"cycle {text!r} repeats zero times")
    try:
        start = parse_date(parts[1], "start") if len(parts) == 3 else None
        interval = parse_duration(parts[-1], "interval")
    except ModelError as exc:
        raise ModelError(f"cycle {text!r}: {exc}") from None
    if is_negative(interval) or add(datetime(2026, 1, 1, tzinfo=UTC), interval) == \
            datetime(2026, 1, 1, tzinfo=UTC):
        raise ModelError(f"cycle {text!r} has an interval that is not positive")
    return Cycle(repeats, interval, start)


@dataclass(frozen=True)
class TimerSpec:
    """What a timer waits for: exactly one of a duration, a date or a cycle."""

    kind: str  # "duration" | "date" | "cycle"
    text: str

    def parsed(self) -> Timer:
        if self.kind == "duration":
            value = parse_duration(self.text)
            if is_negative(value):
                raise ModelError(f"duration {self.text!r} is negative")
            return value
        if self.kind == "date":
            return parse_date(self.text)
        return parse_cycle(self.text)


def timer_spec(duration: Any = None, date: Any = None, cycle: Any = None) -> TimerSpec | None:
    """The one timer definition given, or None when zero or several are given."""
    given = [(k, v) for k, v in (("duration", duration), ("date", date), ("cycle", cycle))
             if v is not None]
    if len(given) != 1:
        return None
    kind, value = given[0]
    if isinstance(value, timedelta):
        value = isodate.duration_isoformat(value)
    elif isinstance(value, datetime):
        value = value.isoformat()
    return TimerSpec(kind, str(value))
