"""ISO 8601 durations, dates and repeating intervals, parsed with ``isodate``; cron cycles
read with ``croniter`` (imported when a cron cycle is first read); timers given as an
expression over the instance data (``=...``), evaluated when the timer is armed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

import isodate

from ..errors import ModelError, shown
from .expr import Expr

#: A parsed ISO 8601 duration: a timedelta, or isodate's Duration when months or years are
#: involved (isodate has no type information: to mypy its Duration is Any)
Duration: TypeAlias = timedelta | isodate.Duration


def parse_duration(text: str | timedelta, what: str = "duration") -> Duration:
    """Parse an ISO 8601 duration such as ``PT24H``; raise ModelError naming the text."""
    if isinstance(text, timedelta):
        value: Duration = text
    elif not isinstance(text, str):
        raise ModelError(f"{what} {shown(text)} is not an ISO 8601 duration string")
    else:
        try:
            if text.endswith("T"):  # isodate takes "PT" as zero; ISO 8601 wants a time after T
                raise ValueError(text)
            value = isodate.parse_duration(text)
        except (isodate.ISO8601Error, ValueError, TypeError, OverflowError):
            raise ModelError(f"{what} {shown(text)} is not an ISO 8601 duration") from None
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
            if not isinstance(text, str):
                raise TypeError(text)
            value = isodate.parse_datetime(text)
        except (isodate.ISO8601Error, ValueError, TypeError):
            raise ModelError(f"{what} {shown(text)} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


#: A calendar day written alone (``2017-07-24``), read as its midnight
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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


@dataclass(frozen=True)
class CronCycle:
    """A cron cycle as Camunda reads one: six fields, seconds first (``0 0/5 * * * ?``), a
    seventh for the year allowed; it repeats without end, in UTC (the virtual clock's)."""

    text: str

    def after(self, at: datetime) -> datetime:
        """The first time strictly after ``at`` that the cycle names."""
        from croniter import croniter  # on first use: only a cron cycle needs it

        found: datetime = croniter(self.text, at, second_at_beginning=True).get_next(datetime)
        return found.astimezone(UTC)


@dataclass(frozen=True)
class TimerExpr:
    """A timer given as an expression over the instance data: evaluated when the timer is
    armed, its result read as ``kind`` says (an ISO 8601 duration, date or cycle, or a cron
    cycle)."""

    kind: str  # "duration" | "date" | "cycle"
    expr: Expr


#: What a timer waits for, parsed: a duration, a date or a cycle (ISO or cron), or an
#: expression evaluated when it is armed
Timer: TypeAlias = Duration | datetime | Cycle | CronCycle | TimerExpr

#: How many fields a cron cycle has: seconds first, the year last and optional
CRON_FIELDS = (6, 7)


def is_cron(text: str) -> bool:
    """Whether ``text`` is written as a cron cycle (fields apart by spaces), not ISO 8601."""
    return isinstance(text, str) and len(text.split()) > 1 and not text.startswith("R")


def parse_cron(text: str) -> CronCycle:
    """A cron cycle, checked: six fields (seven with a year), seconds first."""
    fields = text.split()
    if len(fields) not in CRON_FIELDS:
        raise ModelError(f"cycle {text!r} is a cron expression of {len(fields)} fields; a "
                         "cron cycle has six, seconds first (0 0/5 * * * ?), and an "
                         "optional seventh for the year")
    from croniter import croniter  # on first use: only a cron cycle needs it

    try:
        croniter(" ".join(fields), datetime(2026, 1, 1, tzinfo=UTC),
                 second_at_beginning=True).get_next(datetime)
    except (ValueError, KeyError, TypeError, OverflowError):
        raise ModelError(f"cycle {text!r} is not a cron expression: seconds, minutes, "
                         "hours, day of month, month, day of week (and a year)") from None
    return CronCycle(" ".join(fields))


def parse_cycle(text: str) -> Cycle | CronCycle:
    """Parse an ISO 8601 repeating interval such as ``R3/PT10M``, or a cron cycle."""
    if is_cron(text):
        return parse_cron(text)
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
    text: str  # ISO 8601 or cron text, or "=" and an expression over the instance data

    @property
    def expression(self) -> str | None:
        """The expression's source when the timer is given as one (``=...``), else None."""
        return self.text[1:].strip() if self.text.startswith("=") else None

    def parsed(self) -> Timer:
        source = self.expression
        if source is not None:
            if not source:
                raise ModelError(f"{self.kind} {self.text!r} has an empty expression")
            return TimerExpr(self.kind, Expr(source))
        return parse_timer(self.kind, self.text)


def parse_timer(kind: str, text: str) -> Duration | datetime | Cycle | CronCycle:
    """The text of a timer of this kind, parsed (ModelError naming it when it does not)."""
    if kind == "duration":
        value = parse_duration(text)
        if is_negative(value):
            raise ModelError(f"duration {text!r} is negative")
        return value
    if kind == "date":
        if _DAY.match(text.strip()):  # a timer's day alone (Activiti reads one): its midnight
            return parse_date(text.strip() + "T00:00:00")
        return parse_date(text)
    return parse_cycle(text)


def at_deployment(timer: TimerExpr) -> Duration | datetime | Cycle | CronCycle:
    """The timer expression of a start event of the process, evaluated when the process is
    deployed (as Camunda 8 does): no instance exists yet, so it reads no data."""
    source = timer.expr.describe()
    why = "a timer start of the process is evaluated when it is deployed, with no " \
          "instance data"
    try:
        value = timer.expr({})
    except KeyError as exc:
        raise ModelError(f"{timer.kind} {source!r} names field {exc}, but {why}") from None
    except Exception as exc:  # the expression fails without data
        raise ModelError(f"{timer.kind} {source!r} raised {type(exc).__name__} ({why})"
                         ) from None
    if not isinstance(value, str):
        raise ModelError(f"{timer.kind} {source!r} gave a value of type "
                         f"{type(value).__name__}, not a string")
    return parse_timer(timer.kind, value.strip())


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
