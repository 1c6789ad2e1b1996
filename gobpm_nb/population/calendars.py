"""Working calendars: periods of the day by weekday, and holidays. Times are virtual
microseconds since the epoch (the kernel's), in UTC. A resource starts work only while
its calendar is open; its work pauses while it is closed (Prosimos' rule)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from ..errors import ScenarioError
from .reading import day, mapping, only, shown

DAY = 86_400_000_000
HOUR = 3_600_000_000
MINUTE = 60_000_000
#: 1970-01-01 was a Thursday: the weekday (Monday 0) of day 0.
EPOCH_WEEKDAY = 3
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
PERIOD = re.compile(r"^(\d\d):(\d\d)-(\d\d):(\d\d)$")
#: How many days ahead a calendar looks for its next open period before giving up.
LOOKAHEAD = 3660


class Calendar:
    """When work is done: ``week[weekday]`` lists (start, end) microseconds of the day."""

    def __init__(self, name: str, week: tuple[tuple[tuple[int, int], ...], ...],
                 holidays: frozenset[int], form: Any):
        self.name, self.week, self.holidays, self.form = name, week, holidays, form

    def periods(self, day_number: int) -> tuple[tuple[int, int], ...]:
        """The open periods of a day (days counted from the epoch)."""
        if day_number in self.holidays:
            return ()
        return self.week[(day_number + EPOCH_WEEKDAY) % 7]

    def next_open(self, at: int) -> int | None:
        """The first instant at or after ``at`` when the calendar is open (None: never,
        within ten years)."""
        d, into = divmod(at, DAY)
        for n in range(d, d + LOOKAHEAD):
            for start, end in self.periods(n):
                if n > d or into < end:
                    return n * DAY + max(start, into if n == d else 0)
        return None

    def finish(self, at: int, work: int) -> int:
        """When ``work`` microseconds of open time started at ``at`` are done."""
        d, into = divmod(at, DAY)
        for n in range(d, d + LOOKAHEAD * 10):
            for start, end in self.periods(n):
                begin = max(start, into) if n == d else start
                if begin >= end:
                    continue
                if work <= end - begin:
                    return n * DAY + begin + work
                work -= end - begin
        return at + work  # never open again: the work ends as if it were (cannot happen
        #                   for a calendar that opened once, within a century)

    def switches(self, a: int, b: int) -> list[tuple[int, bool]]:
        """Where the calendar opens (True) or closes (False) in [a, b), with its state at
        ``a`` first."""
        out = [(a, self.next_open(a) == a)]
        for n in range(a // DAY, b // DAY + 1):
            for start, end in self.periods(n):
                for at, state in ((n * DAY + start, True), (n * DAY + end, False)):
                    if a < at < b and out[-1][1] != state:
                        out.append((at, state))
        return out

    def open_between(self, a: int, b: int) -> int:
        """Open microseconds in [a, b)."""
        total = 0
        for n in range(a // DAY, b // DAY + 1):
            for start, end in self.periods(n):
                lo, hi = max(n * DAY + start, a), min(n * DAY + end, b)
                total += max(0, hi - lo)
        return total


ALWAYS = Calendar("24/7", tuple(((0, DAY),) for _ in WEEKDAYS), frozenset(), None)


def read_calendar(name: str, value: Any, path: str) -> Calendar:
    """A calendar's JSON form: weekday -> ["HH:MM-HH:MM", ...], and ``holidays``."""
    body = mapping(value, path)
    only(body, path, (*WEEKDAYS, "holidays"))
    week = []
    for wd in WEEKDAYS:
        given = body.get(wd, [])
        if not isinstance(given, list):
            raise ScenarioError(f"{path}.{wd}", f"{shown(given)} is not a list of periods")
        week.append(_periods(given, f"{path}.{wd}"))
    holidays = body.get("holidays", [])
    if not isinstance(holidays, list):
        raise ScenarioError(f"{path}.holidays", f"{shown(holidays)} is not a list of dates")
    days = frozenset((day(h, f"{path}.holidays[{i}]") - date(1970, 1, 1)).days
                     for i, h in enumerate(holidays))
    return Calendar(name, tuple(week), days, value)


def _periods(given: list[Any], path: str) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for i, text in enumerate(given):
        at = f"{path}[{i}]"
        m = PERIOD.match(text) if isinstance(text, str) else None
        if m is None:
            raise ScenarioError(at, f"{shown(text)} is not a period \"HH:MM-HH:MM\"")
        h1, m1, h2, m2 = map(int, m.groups())
        start, end = h1 * HOUR + m1 * MINUTE, h2 * HOUR + m2 * MINUTE
        if m1 > 59 or m2 > 59 or start >= DAY or end > DAY or end <= start:
            raise ScenarioError(at, f"{text!r} is not a period of one day that ends after "
                                    "it starts")
        out.append((start, end))
    out.sort()
    for (_, e1), (s2, _) in zip(out, out[1:], strict=False):
        if s2 < e1:
            raise ScenarioError(path, "periods overlap")
    return tuple(out)
