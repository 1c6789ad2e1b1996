"""Times and spans given to the public API, read once: a bad one is an EngineError that
names the argument (the model's parsers raise ModelError, which is about processes)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from .errors import EngineError, ModelError, shown
from .model.timers import Duration, is_negative, parse_date, parse_duration


def instant(value: Any, what: str) -> datetime:
    """``value`` (a datetime or ISO 8601 text) as an aware datetime."""
    try:
        return parse_date(value, what)
    except ModelError as exc:
        raise EngineError(str(exc)) from None


def span(value: Any, what: str) -> Duration:
    """``value`` (a timedelta or an ISO 8601 duration) as a duration that is not negative (a
    timedelta, or isodate's Duration when it counts months or years)."""
    try:
        length = parse_duration(value, what)
    except ModelError as exc:
        raise EngineError(str(exc)) from None
    if is_negative(length):
        raise EngineError(f"{what} {shown(value)} is negative; the clock never moves backwards")
    return length


def fixed_span(value: Any, what: str) -> timedelta:
    """``value`` as ``span`` reads it, of a fixed length: a span that counts months or years
    (its length depends on the date it starts from) is an EngineError naming ``what``."""
    length = span(value, what)
    if not isinstance(length, timedelta):
        raise EngineError(f"{what} {shown(value)} counts months or years, whose length depends on "
                          "the date; give it in days, hours, minutes or seconds")
    return length
