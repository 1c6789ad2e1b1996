"""When cases arrive: a Poisson process, a weekly schedule of hourly rates (a Poisson
process whose rate changes by the hour), or a replayed list of start times and data."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from .calendars import DAY, EPOCH_WEEKDAY, HOUR, WEEKDAYS
from .draws import Stream
from .reading import duration, json_value, mapping, moment, need, number, one_of, only, shown

WEEK_HOURS = 7 * 24
#: The highest hourly rate of a schedule (a million arrivals an hour)
MAX_RATE = 1e6


@dataclass(frozen=True)
class Arrivals:
    """``kind`` poisson (``mean`` gap, microseconds), schedule (``rates``: arrivals per hour
    for each of the week's 168 hours, Monday 00:00 first) or replay (``replay``: (at, data)
    pairs in order); ``form`` is the JSON form."""

    kind: str
    mean: int
    rates: tuple[float, ...]
    replay: tuple[tuple[int, dict[str, Any] | None], ...]
    form: Any

    def times(self, stream: Stream, begin: int, end: int
              ) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """The arrivals in [begin, end), in order, with the replayed data (or None)."""
        if self.kind == "replay":
            yield from ((at, data) for at, data in self.replay if begin <= at < end)
            return
        if self.kind == "poisson":
            at = begin
            while True:
                at += max(1, round(-self.mean * _log(stream.next())))
                if at >= end:
                    return
                yield at, None
        yield from self._scheduled(stream, begin, end)

    def expected(self, begin: int, end: int) -> float:
        """How many cases arrive in [begin, end) on average (a replay: how many do)."""
        if self.kind == "replay":
            return float(sum(1 for at, _ in self.replay if begin <= at < end))
        if self.kind == "poisson":
            return (end - begin) / self.mean
        week, total = WEEK_HOURS * HOUR, 0.0
        weeks = (end - begin) // week  # whole weeks: each brings the week's sum
        at = begin + weeks * week
        while at < end:  # and what is left, hour by hour (less than a week)
            edge = min((at // HOUR + 1) * HOUR, end)
            total += self.rates[(at // HOUR + EPOCH_WEEKDAY * 24) % WEEK_HOURS] * \
                (edge - at) / HOUR
            at = edge
        return weeks * sum(self.rates) + total

    def _scheduled(self, stream: Stream, begin: int, end: int
                   ) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """A Poisson process of piecewise-constant rate, by inverse transform of its
        cumulative rate: each gap is an Exp(1) amount of cumulative rate."""
        if not any(self.rates):
            return
        at = begin
        while True:
            need_rate = -_log(stream.next())  # in arrivals
            while True:
                hour = (at // HOUR + EPOCH_WEEKDAY * 24) % WEEK_HOURS
                rate = self.rates[hour] / HOUR  # arrivals per microsecond
                edge = (at // HOUR + 1) * HOUR
                if rate > 0 and need_rate <= rate * (edge - at):
                    at += max(1, round(need_rate / rate))
                    break
                need_rate -= rate * (edge - at)
                at = edge
                if at >= end:
                    return
            if at >= end:
                return
            yield at, None


def _log(u: float) -> float:
    return math.log1p(-u)


def read_arrivals(value: Any, path: str = "arrivals") -> Arrivals:
    kind, body = one_of(value, path, ("poisson", "schedule", "replay"))
    at = f"{path}.{kind}"
    if kind == "poisson":
        body = mapping(body, at)
        only(body, at, ("mean",))
        mean = duration(need(body, "mean", at), f"{at}.mean")
        if mean <= 0:
            raise ScenarioError(f"{at}.mean", "must be longer than zero")
        return Arrivals(kind, mean, (), (), value)
    if kind == "schedule":
        return Arrivals(kind, 0, _rates(body, at), (), value)
    if not isinstance(body, list):
        raise ScenarioError(at, f"{shown(body)} is not a list of arrivals")
    rows: list[tuple[int, dict[str, Any] | None]] = []
    for i, row in enumerate(body):
        where = f"{at}[{i}]"
        row = mapping(row, where)
        only(row, where, ("at", "data"))
        when = moment(need(row, "at", where), f"{where}.at")
        if rows and when < rows[-1][0]:
            raise ScenarioError(f"{where}.at", "is before the arrival above it")
        data = row.get("data")
        if data is not None:
            data = json_value(dict(mapping(data, f"{where}.data")), f"{where}.data")
        rows.append((when, data))
    return Arrivals(kind, 0, (), tuple(rows), value)


def _rates(body: Any, path: str) -> tuple[float, ...]:
    body = mapping(body, path)
    only(body, path, WEEKDAYS)
    rates = [0.0] * WEEK_HOURS
    for d, wd in enumerate(WEEKDAYS):
        hours = mapping(body.get(wd, {}), f"{path}.{wd}")
        for hour, rate in hours.items():
            where = f"{path}.{wd}.{hour}"
            if len(hour) != 2 or not hour.isdigit() or int(hour) > 23:
                raise ScenarioError(where, "an hour is \"00\" ... \"23\"")
            rates[d * 24 + int(hour)] = number(rate, where, 0, MAX_RATE)
    return tuple(rates)


__all__ = ["Arrivals", "DAY", "read_arrivals"]
