"""Events with several event definitions (BPMN 2.0 "multiple" and "parallel multiple").

A catch event, a boundary event or an event subprocess's start event may wait for several
triggers at once: a message, a timer and a signal, at most one of each kind. A multiple
one fires on the first of them (the others are withdrawn at once); a parallel multiple
catch (``parallel``) fires when every one of them has come. Each definition is held by a
holder of its own, on the event's node, as an event-based gateway's arms are.

An intermediate throw event or an end event with several definitions (``MultipleThrow``,
``MultipleEnd``) throws every one of them, in the order given: messages, signals and
escalations, several of a kind if it names them (two messages are two publications).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from .elements import Boundary, Element, EndEvent, TriggeredStart, WaitContext
from .expr import Expr
from .timers import Timer, TimerExpr, TimerSpec, at_deployment, timer_spec

KINDS = ("message", "timer", "signal")


@dataclass(frozen=True)
class EventDef:
    """One definition of a multiple event: a message (with its correlation ``key``), a
    timer, or a signal."""

    kind: str
    message: str = ""
    key: Expr | None = None
    timer: TimerSpec | None = None
    signal: str = ""

    def describe(self) -> list[Any]:
        """What it counts for the process signature."""
        return [self.kind, self.message, self.key.fingerprint() if self.key else None,
                [self.timer.kind, self.timer.text] if self.timer else None, self.signal]


@dataclass(frozen=True)
class MultipleCatch(Element):
    """An intermediate catch event with several definitions: it fires on the first one
    (multiple), or once every one has come (``parallel``: BPMN's parallelMultiple)."""

    events: tuple[EventDef, ...] = ()
    parallel: bool = False
    kind = "multiple_catch"

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True  # like an event-based gateway: a pure wait, its holders ask nothing


@dataclass(frozen=True)
class MultipleBoundary(Boundary):
    """A boundary event that fires on the first of its definitions."""

    events: tuple[EventDef, ...] = ()
    kind = "multiple_boundary"


@dataclass(frozen=True)
class MultipleStart(TriggeredStart):
    """The start of an event subprocess that opens on the first of its definitions."""

    events: tuple[EventDef, ...] = ()
    kind = "multiple_start"


MULTIPLE = (MultipleCatch, MultipleBoundary, MultipleStart)

#: What a throw with several definitions may throw.
THROWN = ("message", "signal", "escalation")


@dataclass(frozen=True)
class ThrowDef:
    """One definition of a multiple throw: a message (published with its correlation
    ``key``), a signal (broadcast) or an escalation (raised)."""

    kind: str
    message: str = ""
    key: Expr | None = None
    signal: str = ""
    escalation: str = ""

    def describe(self) -> list[Any]:
        """What it counts for the process signature."""
        return [self.kind, self.message, self.key.fingerprint() if self.key else None,
                self.signal, self.escalation]


@dataclass(frozen=True)
class MultipleThrow(Element):
    """An intermediate throw event that throws each of its definitions in order (messages
    and signals with the ``payload`` fields), then leaves."""

    events: tuple[ThrowDef, ...] = ()
    payload: tuple[str, ...] = ()
    kind = "multiple_throw"


@dataclass(frozen=True)
class MultipleEnd(EndEvent):
    """An end event that throws each of its definitions in order, then ends its track."""

    events: tuple[ThrowDef, ...] = ()
    payload: tuple[str, ...] = ()
    kind = "multiple_end"


THROWS = (MultipleThrow, MultipleEnd)


def throw_defs(owner: str, given: Any, expr: Any, problem: Any) -> tuple[ThrowDef, ...]:
    """The definitions given to the builder: a list of dicts, each with exactly one of
    ``message`` (and ``key``), ``signal`` or ``escalation``."""
    if not isinstance(given, (list, tuple)):
        problem(f"{owner!r}: give the events as a list of dicts, got {type(given).__name__}")
        return ()
    out = []
    for i, d in enumerate(given):
        kinds = [k for k in THROWN if isinstance(d, dict) and k in d]
        if not isinstance(d, dict) or len(kinds) != 1 or \
                set(d) - {kinds[0], "key"} or ("key" in d and kinds[0] != "message"):
            problem(f"{owner!r}: event {i} must be a dict with exactly one of message (and "
                    f"key), signal or escalation, got {d!r}")
            continue
        kind = kinds[0]
        if kind == "message":
            out.append(ThrowDef("message", message=d["message"],
                                key=expr(owner, "key", d.get("key"))))
        elif kind == "signal":
            out.append(ThrowDef("signal", signal=d["signal"]))
        else:
            out.append(ThrowDef("escalation", escalation=d["escalation"]))
    return tuple(out)


def check_throws(e: Element) -> list[str]:
    """A multiple throw's checks: two definitions or more, each naming what it throws."""
    assert isinstance(e, THROWS)
    p: list[str] = []
    kinds = [d.kind for d in e.events]
    if len(kinds) < 2:
        p.append(f"{e.kind} {e.id!r} needs two event definitions or more (it has "
                 f"{len(kinds)})")
    for d in e.events:
        named = {"message": d.message, "signal": d.signal, "escalation": d.escalation}
        if not isinstance(named[d.kind], str) or not named[d.kind]:
            p.append(f"{e.kind} {e.id!r} names no {d.kind}")
    if e.payload and not any(d.kind in ("message", "signal") for d in e.events):
        p.append(f"{e.kind} {e.id!r}: payload= needs a message or a signal")
    return p


def event_defs(owner: str, given: Any, expr: Any, problem: Any) -> tuple[EventDef, ...]:
    """The definitions given to the builder: a list of dicts, each with exactly one of
    ``message`` (and ``key``), ``timer`` (a duration text; or ``duration``, ``date``,
    ``cycle``) or ``signal``. ``expr`` compiles a key; ``problem`` records what is wrong."""
    if not isinstance(given, (list, tuple)):
        problem(f"{owner!r}: give the events as a list of dicts, got {type(given).__name__}")
        return ()
    out = []
    for i, d in enumerate(given):
        kinds = [k for k in KINDS if isinstance(d, dict) and k in d] + \
            ["timer"] * (isinstance(d, dict) and any(k in d for k in
                                                      ("duration", "date", "cycle")))
        if not isinstance(d, dict) or len(kinds) != 1:
            problem(f"{owner!r}: event {i} must be a dict with exactly one of message, "
                    f"timer (or duration, date, cycle) or signal, got {d!r}")
            continue
        kind = kinds[0]
        if kind == "message":
            out.append(EventDef("message", message=d["message"],
                                key=expr(owner, "key", d.get("key"))))
        elif kind == "signal":
            out.append(EventDef("signal", signal=d["signal"]))
        else:
            spec = timer_spec(d.get("duration", d.get("timer")), d.get("date"), d.get("cycle"))
            if spec is None:
                problem(f"{owner!r}: event {i}: give exactly one of timer/duration, date or "
                        "cycle")
                continue
            out.append(EventDef("timer", timer=spec))
    return tuple(out)


def check_multiple(e: Element, timers: dict[str, Timer]) -> list[str]:
    """A multiple event's checks: two definitions or more, at most one of each kind, each
    complete; a parallel one only as a catch (and it fires once: no cycle timer)."""
    assert isinstance(e, MULTIPLE)
    p: list[str] = []
    kinds = [d.kind for d in e.events]
    if len(kinds) < 2:
        p.append(f"{e.kind} {e.id!r} needs two event definitions or more (it has "
                 f"{len(kinds)})")
    top = isinstance(e, MultipleStart) and e.within is None  # each definition held alone
    if len(set(kinds)) != len(kinds) and not top:
        p.append(f"{e.kind} {e.id!r}: give at most one message, one timer and one signal")
    if top and kinds.count("timer") > 1:
        p.append(f"{e.kind} {e.id!r}: give at most one timer")
    for d in e.events:
        if d.kind == "message" and not d.message:
            p.append(f"{e.kind} {e.id!r} names no message")
        elif d.kind == "message" and d.key is None and not (
                isinstance(e, MultipleStart) and e.within is None):
            p.append(f"{e.kind} {e.id!r}: its message {d.message!r} has no correlation key "
                     "(give key=)")
        elif d.kind == "signal" and not d.signal:
            p.append(f"{e.kind} {e.id!r} names no signal")
        elif d.kind == "timer" and d.timer is not None:
            try:
                parsed = d.timer.parsed()
                timers[e.id] = at_deployment(parsed) if top and \
                    isinstance(parsed, TimerExpr) else parsed
            except ModelError as exc:
                p.append(f"{e.kind} {e.id!r}: {exc}")
            if d.timer.kind == "cycle":
                p.append(f"{e.kind} {e.id!r}: a cycle timer is not one of several "
                         "definitions here (give a duration or a date)")
    return p
