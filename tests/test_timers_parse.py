"""ISO 8601 durations, dates and repeating intervals as timers read them."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

import gobpm_nb as bpm
from gobpm_nb.model.timers import (
    Cycle,
    add,
    is_negative,
    parse_cycle,
    parse_date,
    parse_duration,
    timer_spec,
)


def test_parse_duration_hours():
    """PT24H is twenty-four hours."""
    assert parse_duration("PT24H") == timedelta(hours=24)
    assert parse_duration("P1DT30M") == timedelta(days=1, minutes=30)


def test_parse_duration_passes_timedelta_through():
    """A timedelta is accepted as it is."""
    assert parse_duration(timedelta(minutes=5)) == timedelta(minutes=5)


def test_months_follow_the_calendar():
    """P1M added to 31 January 2026 lands on 28 February 2026."""
    start = datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert add(start, parse_duration("P1M")) == datetime(2026, 2, 28, 12, tzinfo=UTC)
    assert add(start, parse_duration("P1Y")) == datetime(2027, 1, 31, 12, tzinfo=UTC)


@pytest.mark.parametrize("text", ["P1X", "", "24h", "PT", "P1DT", "T1H"])
def test_bad_duration_raises_model_error_naming_it(text):
    """A string that is not an ISO 8601 duration raises ModelError naming it."""
    with pytest.raises(bpm.ModelError, match="ISO 8601") as info:
        parse_duration(text)
    assert repr(text) in str(info.value)


def test_non_string_duration_is_refused():
    """A number is not a duration."""
    with pytest.raises(bpm.ModelError, match="3600"):
        parse_duration(3600)


def test_parse_cycle_bounded():
    """R3/PT10M repeats three times every ten minutes, from when it is armed."""
    assert parse_cycle("R3/PT10M") == Cycle(repeats=3, interval=timedelta(minutes=10))


def test_parse_cycle_unbounded():
    """R/PT1H repeats forever: repeats is None."""
    c = parse_cycle("R/PT1H")
    assert c.repeats is None
    assert c.interval == timedelta(hours=1)
    assert c.start is None


def test_parse_cycle_with_a_start_date():
    """R2/<date>/PT1H starts at the given date, read as UTC."""
    c = parse_cycle("R2/2026-03-01T09:00:00Z/PT1H")
    assert c == Cycle(2, timedelta(hours=1), datetime(2026, 3, 1, 9, tzinfo=UTC))
    naive = parse_cycle("R2/2026-03-01T09:00:00/PT1H")
    assert naive.start == datetime(2026, 3, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("text, why", [
    ("R3/PTxx", "not an ISO 8601 duration"),
    ("R0/PT1M", "zero"),
    ("R-1/PT1M", "not a number"),
    ("Rx/PT1M", "not a number"),
    ("PT1M", "repeating interval"),
    ("R3", "repeating interval"),
    ("R3/a/b/c", "repeating interval"),
    ("R3/not-a-date/PT1M", "not an ISO 8601 date-time"),
    ("R3/-PT1M", "not positive"),
    ("R3/PT0S", "not positive"),
])
def test_bad_cycle_raises_model_error_naming_it(text, why):
    """A malformed cycle raises ModelError naming the whole cycle text and the reason."""
    with pytest.raises(bpm.ModelError, match=why) as info:
        parse_cycle(text)
    assert repr(text) in str(info.value)


def test_negative_durations_are_refused_for_timers():
    """A timer that would fire in the past (a negative duration) is refused."""
    assert is_negative(parse_duration("-PT1H"))
    assert is_negative(parse_duration("-P1M"))
    assert not is_negative(parse_duration("PT0S"))
    for spec in (timer_spec(duration="-PT1H"), timer_spec(duration=timedelta(hours=-1))):
        with pytest.raises(bpm.ModelError, match="negative"):
            spec.parsed()


def test_naive_dates_are_taken_as_utc():
    """A date without a zone means UTC; one with a zone is converted to UTC."""
    assert parse_date("2026-03-01T09:00:00") == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert parse_date("2026-03-01T09:00:00").tzinfo == UTC
    assert parse_date(datetime(2026, 3, 1, 9)) == datetime(2026, 3, 1, 9, tzinfo=UTC)
    plus_one = parse_date("2026-03-01T10:00:00+01:00")
    assert plus_one == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert plus_one.utcoffset() == timedelta(0)
    aware = datetime(2026, 3, 1, 4, tzinfo=timezone(timedelta(hours=-5)))
    assert parse_date(aware) == datetime(2026, 3, 1, 9, tzinfo=UTC)


def test_naive_timer_date_is_utc():
    """timer_catch(date=...) with a naive date-time fires at that time in UTC."""
    spec = timer_spec(date=datetime(2026, 3, 1, 9))
    assert spec.parsed() == datetime(2026, 3, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("text", ["not-a-date", "2026-13-01T00:00:00", ""])
def test_bad_date_raises_model_error_naming_it(text):
    """A string that is not an ISO 8601 date-time raises ModelError naming it."""
    with pytest.raises(bpm.ModelError, match="date-time") as info:
        parse_date(text)
    assert repr(text) in str(info.value)


def test_timer_spec_takes_exactly_one():
    """timer_spec gives the one timer definition, or None for zero or two of them."""
    assert timer_spec() is None
    assert timer_spec(duration="PT1H", cycle="R/PT1H") is None
    assert timer_spec(duration="PT1H", date="2026-03-01T09:00:00Z", cycle="R/PT1H") is None
    spec = timer_spec(duration=timedelta(hours=1, minutes=30))
    assert (spec.kind, spec.text) == ("duration", "PT1H30M")
    assert spec.parsed() == timedelta(hours=1, minutes=30)
    assert timer_spec(cycle="R3/PT10M").parsed() == Cycle(3, timedelta(minutes=10))
