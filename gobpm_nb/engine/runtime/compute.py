"""What a node computes from the instance data and the clock: flows taken, conditions,
correlation keys, timer deadlines and the flows decisions' rules draw. A user's expression
that fails is an incident."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import isodate

from ...errors import ModelError
from ...kernel import LAST_US, iso, to_datetime, to_us
from ...model import elements as el
from ...model.timers import CronCycle, Cycle, Timer, TimerExpr, add, parse_timer
from ..state.holders import correlation
from ..state.incident import Incident
from ..state.waits import TimerWait
from .run import Run

ONE_US = timedelta(microseconds=1)


def outgoing(run: Run, node: el.Element,
             why: str = "no outgoing flow's condition holds and there is no default flow"
             ) -> Any:
    """Every outgoing flow whose condition holds, and every one without a condition (BPMN's
    implicit inclusive split); the default flow only when no other one is taken. None
    taken and no default is an incident at the node, saying ``why``."""
    plain = run.defn.plain.get(node.id)
    if plain is not None:
        return plain
    default = node.default
    flows, fallback = [], None
    for f in run.defn.outgoing[node.id]:
        if default is not None and f.target == default:
            fallback = f
        elif f.condition is None or check(run, node.id, f.condition):
            flows.append(f)
    if flows:
        return flows
    if fallback is not None:
        return [fallback]
    raise Incident(node.id, why)


def check(run: Run, where: str, expr: Any) -> bool:
    """Whether a condition holds; one that is a Python callable answers through the tape
    (recorded live, served to a replay)."""
    if expr.python:
        answer: bool = run.core.tape.call(("condition", where), _check, run, where, expr)
        return answer
    return _check(run, where, expr)


def _check(run: Run, where: str, expr: Any) -> bool:
    try:
        return bool(expr(run.seen()))
    except KeyError as exc:
        raise Incident(where, f"condition {expr.describe()!r} names missing field {exc}") from None
    except Exception as exc:  # a user's callable or expression failed
        raise Incident(where, f"condition {expr.describe()!r} raised "
                              f"{type(exc).__name__}") from None


def deadline_of(run: Run, node_id: str, cycles: int | None = None,
                after: int | None = None) -> tuple[int, int | None]:
    """The absolute deadline of a timer armed now, and for a cycle the repetitions left after
    it (-1: unbounded). Re-arming a cycle gives ``cycles`` (what was left) and ``after`` (the
    deadline that just fired: the next one is one interval after it, however late the
    firing was handled). A deadline out of the calendar's range is an incident."""
    spec = run.defn.timers[node_id]
    if type(spec) is timedelta:  # the common case first: exact in microseconds
        return _within(run, node_id, spec), None
    if isinstance(spec, TimerExpr):
        spec = evaluated(run, node_id, spec)
    try:
        now = to_datetime(run.core.kernel.now)
        if isinstance(spec, CronCycle):
            return to_us(spec.after(to_datetime(after) if after is not None else now)), -1
        if isinstance(spec, Cycle):
            first = cycles is None
            if cycles is None:
                cycles = spec.repeats if spec.repeats is not None else -1
            base = to_datetime(after) if after is not None else now
            at = spec.start if (first and spec.start is not None and spec.start > now) \
                else add(base, spec.interval)
            return to_us(at), (cycles - 1 if cycles > 0 else -1)
        if isinstance(spec, datetime):
            return to_us(spec), None
        return to_us(add(now, spec)), None
    except (OverflowError, ValueError) as exc:
        raise Incident(node_id, f"its timer's deadline is out of range ({exc})") from None


def _within(run: Run, node_id: str, spec: timedelta) -> int:
    """The deadline ``spec`` from now, in microseconds; past the year 9999 (no date shows
    it) an incident."""
    at: int = run.core.kernel.now + spec // ONE_US
    if at > LAST_US:
        raise Incident(node_id, f"its timer's deadline is out of range "
                                f"({isodate.duration_isoformat(spec)} after "
                                f"{iso(run.core.kernel.now)} is past the year 9999)")
    return at


#: What the value of a timer's expression must be, by the timer's kind
_WANTED = {"duration": "an ISO 8601 duration", "date": "an ISO 8601 date-time",
           "cycle": "an ISO 8601 repeating interval or a cron cycle"}


def evaluated(run: Run, node_id: str, spec: TimerExpr) -> Timer:
    """A timer expression evaluated over the data the arming track reads, its value read as
    the timer's kind says. A missing field, a failure or a value of the wrong type or form is
    an incident naming the timer and the value's type (never the value)."""
    source = spec.expr.describe()
    try:
        value = spec.expr(run.seen())
    except KeyError as exc:
        raise Incident(node_id, f"timer {spec.kind} {source!r} names missing field "
                                f"{exc}") from None
    except Exception as exc:  # the expression failed on this data
        raise Incident(node_id, f"timer {spec.kind} {source!r} raised "
                                f"{type(exc).__name__}") from None
    wanted = _WANTED[spec.kind]
    if not isinstance(value, str):
        raise Incident(node_id, f"timer {spec.kind} {source!r} gave a value of type "
                                f"{type(value).__name__}, not {wanted} string")
    try:
        return parse_timer(spec.kind, value.strip())
    except ModelError:
        raise Incident(node_id, f"timer {spec.kind} {source!r} gave a string that is not "
                                f"{wanted}") from None


def timer_wait(run: Run, node_id: str, cycles: int | None = None,
               after: int | None = None) -> TimerWait:
    """The wait of a timer armed now (a duration, the common case, without a detour)."""
    spec = run.defn.timers[node_id]
    now = run.core.kernel.now
    if type(spec) is timedelta:
        return TimerWait(node_id, _within(run, node_id, spec), now)
    deadline, left = deadline_of(run, node_id, cycles, after)
    return TimerWait(node_id, deadline, now, left)


def key_of(run: Run, node: Any) -> str:
    """The correlation value of a message wait or throw; a key that fails is an incident. A
    key that is a Python callable answers through the tape."""
    if node.key.python:
        value: str = run.core.tape.call(("key", node.id), _key_of, run, node)
        return value
    return _key_of(run, node)


def _key_of(run: Run, node: Any) -> str:
    try:
        return correlation(node.key(run.seen()))
    except KeyError as exc:
        raise Incident(node.id, f"correlation key {node.key.describe()!r} names missing "
                                f"field {exc}") from None
    except Exception as exc:  # a user's callable or expression failed, or is not JSON
        raise Incident(node.id, f"correlation key {node.key.describe()!r} raised "
                                f"{type(exc).__name__}") from None
