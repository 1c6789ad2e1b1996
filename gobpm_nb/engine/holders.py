"""The engine's wait holders: the permanent subscribers of every armed wait (see
docs/semantics.md, "Wait holders").

A holder is registered when a wait is armed and listed on its instance's record, which
outlives the instance's coroutines. Timers live in the kernel's one deadline heap; messages
are indexed by (name, correlation value) and signals by name, in the order they were armed;
tasks by task id. What a holder does on a trigger is the engine's business: it hands the
trigger to ``deliver``.

A hold is *held* until its trigger comes. A trigger for an instance that cannot be woken at
once makes its hold *waking*: out of every index (nothing else can fire it), still listed on
its instance, until the wake succeeds and the hold is released as fired.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from ..kernel import Deadline, Kernel, to_datetime
from .records import HoldView, Trigger
from .values import json_copy
from .vocabulary import BOUNDARY, HELD, HOLD_KINDS, NODE, WAKING


def correlation(value: Any) -> str:
    """The index form of a correlation value: 7 and "7" stay different, and so do {1: 2} and
    {"1": 2} (a value JSON would change, NaN, a tuple or a non-string key, is refused with
    ValueError)."""
    return json.dumps(json_copy(value, "key"), sort_keys=True, separators=(",", ":"))


class Site:
    """One place a hold can sit — kind, wait kind, node — shared by every hold armed there,
    with the details of its ``wait_held``, ``timer_fired`` and ``wait_released`` facts made
    once (a fact's details are only ever read through copies)."""

    __slots__ = ("kind", "wait_kind", "node", "held", "fired", "released")

    def __init__(self, kind: str, wait_kind: str, node: str):
        self.kind = kind
        self.wait_kind = wait_kind
        self.node = node
        self.held = {"kind": kind, "wait_kind": wait_kind}
        self.fired = {"wait_kind": wait_kind}
        self.released: dict[str, dict[str, str]] = {}

    def released_by(self, reason: str) -> dict[str, str]:
        details = self.released.get(reason)
        if details is None:
            details = self.released[reason] = {"kind": self.kind, "wait_kind": self.wait_kind,
                                               "reason": reason}
        return details


class Hold(Deadline):
    """One registered wait holder. A timer's holder is itself its entry in the kernel's
    deadline heap (``at`` is the deadline), so a held timer costs one object. ``seq`` comes
    from the kernel's one counter for every kind, so it is also the order holds were armed in
    (recovery keeps it). A hold is alive until it is released (``fn`` is cleared then). Each
    kind keeps only the fields it needs; the others read as None."""

    __slots__ = ("instance", "track", "site")
    event = "timer"
    name: str | None = None  # message or signal name
    correlation: str | None = None  # a message's correlation value, in index form
    task: str | None = None  # a task hold's task id
    child: str | None = None  # a call hold's child instance id
    cycles: int | None = None  # timer cycle repetitions left after this one; -1 unbounded

    def __init__(self, seq: int, instance: str, track: str, site: Site,
                 fire: Any, deadline: int = 0):
        # the Deadline fields, set here rather than through super(): one call per hold
        self.at = deadline
        self.seq = seq
        self.fn = fire  # called with the hold itself when its deadline falls due
        self.instance = instance
        self.track = track
        self.site = site  # where it sits, shared by the holds at one place

    @property
    def kind(self) -> str:
        """timer | message | signal | task"""
        return self.site.kind

    @property
    def wait_kind(self) -> str:
        """node | boundary"""
        return self.site.wait_kind

    @property
    def node(self) -> str:
        return self.site.node

    @property
    def alive(self) -> bool:
        return self.fn is not None

    @property
    def deadline(self) -> int | None:
        return self.at if self.kind == "timer" else None

    def __repr__(self) -> str:
        return f"Hold({self.instance}/{self.track} {self.kind} {self.wait_kind} {self.node})"


class TimerHold(Hold):
    """A deadline held (``cycles`` reads None: a timer that fires once)."""

    __slots__ = ()


class CycleHold(TimerHold):
    """A cycle timer's deadline, with the repetitions left after it."""

    __slots__ = ("cycles",)


class SubscriptionHold(Hold):
    __slots__ = ("name", "correlation")


class TaskHold(Hold):
    __slots__ = ("task",)


class CallHold(Hold):
    """A call activity's: the end of its child instance is the trigger."""

    __slots__ = ("child",)


#: The instance a start event's hold names: none yet (its track names the process).
DEPLOYED = ""


class Deployed:
    """The start events' holds of the deployed processes: they belong to no instance."""

    def __init__(self) -> None:
        self.holds: list[Hold] = []


class HoldList(Protocol):
    """An instance record as the holders see it: the holds listed on it, in arming order."""

    holds: Any


class Holders:
    """Registers, indexes and releases holds; emits ``wait_held`` and ``wait_released``.

    ``records`` maps instance ids to instance records; each lists its holds."""

    def __init__(self, kernel: Kernel, emit: Callable[..., Any],
                 deliver: Callable[..., None], records: Mapping[str, HoldList]):
        self._kernel = kernel
        self._emit = emit
        self._deliver = deliver
        self._records = records
        #: The holds of deployed processes' start events (no instance yet: ``DEPLOYED``).
        self.deployed = Deployed()
        #: What every hold's ``fn`` is while it is alive; a timer's heap entry calls it with
        #: the hold alone (no trigger: the deadline is the trigger).
        self._due = deliver
        #: Holds whose trigger came while their wake is pending, in the order accepted.
        self.waking: dict[Hold, None] = {}
        #: The place of every hold armed so far, by (kind, wait kind, node); timers' also by
        #: node, per wait kind (the hot path asks with strings, not a tuple).
        self._sites: dict[tuple[str, str, str], Site] = {}
        self._timer_sites: dict[str, dict[str, Site]] = {NODE: {}, BOUNDARY: {}, "start": {}}
        self._deadline = 0  # the deadline of the newest timer hold
        self.messages: dict[tuple[str, str], dict[int, Hold]] = {}
        self.signals: dict[str, dict[int, Hold]] = {}
        self.tasks: dict[str, Hold] = {}
        self.calls: dict[str, Hold] = {}  # child instance id -> its call activity's hold
        self.counts = dict.fromkeys(HOLD_KINDS, 0)
        #: Recorded triggers whose wait was not armed yet when the engine recovered (the
        #: instance's checkpoint is older than the wait): delivered when it is armed again.
        self.expected: dict[tuple[str, str, str, str, str], Trigger] = {}

    # -- registering ----------------------------------------------------------------------
    def _add(self, hold: Hold) -> Hold:
        iid = hold.instance  # inline ``record``: once per hold armed and released
        record = self._records[iid] if iid else self.deployed
        holds = record.holds
        if type(holds) is tuple:  # a dehydrated instance keeps a compact tuple
            record.holds = holds + (hold,)
        else:
            holds.append(hold)
        site = hold.site
        self.counts[site.kind] += 1
        self._emit("wait_held", hold.instance, hold.track, site.node, site.held)
        if self.expected:
            trigger = self.expected.pop(expectation(hold), None)
            if trigger is not None:
                self._deliver(hold, trigger)
        return hold

    def _site(self, kind: str, wait_kind: str, node: str) -> Site:
        site = self._sites.get((kind, wait_kind, node))
        if site is None:
            site = self._sites[(kind, wait_kind, node)] = Site(kind, wait_kind, node)
            if kind == "timer":
                self._timer_sites[wait_kind][node] = site
        return site

    def _seq(self, seq: int | None) -> int:
        return self._kernel.next_seq() if seq is None else seq

    def hold_timer(self, instance: str, track: str, node: str, deadline: int,
                   wait_kind: str = NODE, cycles: int | None = None,
                   seq: int | None = None) -> Hold:
        """Hold a deadline. ``seq`` is given only by recovery (the order it was armed in)."""
        site = self._timer_sites[wait_kind].get(node) or self._site("timer", wait_kind, node)
        if deadline == self._deadline:  # holds armed for one instant share one int object
            deadline = self._deadline
        else:
            self._deadline = deadline
        if cycles is None:
            hold: Hold = TimerHold(seq or 0, instance, track, site, self._due, deadline)
        else:
            hold = CycleHold(seq or 0, instance, track, site, self._due, deadline)
            hold.cycles = cycles
        if seq is None:
            self._kernel.push_next(hold)
        else:
            self._kernel.push(hold)
        return self._add(hold)

    def hold_subscription(self, instance: str, track: str, node: str, kind: str, name: str,
                          key: str | None = None, wait_kind: str = NODE,
                          seq: int | None = None) -> Hold:
        """Hold a message (``key``: its correlation value) or signal subscription."""
        hold = SubscriptionHold(self._seq(seq), instance, track,
                                self._site(kind, wait_kind, node), self._due)
        hold.name, hold.correlation = name, key
        if kind == "message":
            self.messages.setdefault((name, key or ""), {})[hold.seq] = hold
        else:
            self.signals.setdefault(name, {})[hold.seq] = hold
        return self._add(hold)

    def hold_task(self, instance: str, track: str, node: str, task: str,
                  seq: int | None = None) -> Hold:
        """Hold a user task: its completion is the trigger."""
        hold = TaskHold(self._seq(seq), instance, track, self._site("task", NODE, node),
                        self._due)
        hold.task = task
        self.tasks[task] = hold
        return self._add(hold)

    def hold_call(self, instance: str, track: str, node: str, child: str,
                  seq: int | None = None) -> Hold:
        """Hold a call activity: its child instance's end is the trigger."""
        hold = CallHold(self._seq(seq), instance, track, self._site("call", NODE, node),
                        self._due)
        hold.child = child
        self.calls[child] = hold
        return self._add(hold)

    # -- releasing ------------------------------------------------------------------------
    def _unindex(self, hold: Hold) -> None:
        """Take a hold out of the index its triggers find it by."""
        if hold.kind == "timer":
            hold.cancel()
        elif hold.kind == "message":
            _drop(self.messages, (hold.name, hold.correlation or ""), hold.seq)
        elif hold.kind == "signal":
            _drop(self.signals, hold.name, hold.seq)
        elif hold.kind == "task":
            self.tasks.pop(hold.task or "", None)
        elif hold.kind == "call":
            self.calls.pop(hold.child or "", None)

    def accept(self, hold: Hold) -> None:
        """The hold's trigger came but its instance is not back yet: nothing else may fire
        it, and it stays listed (``waking``) until ``release`` after the wake."""
        fn = hold.fn
        self._unindex(hold)
        hold.fn = fn  # still alive: it is released only after the wake
        self.waking[hold] = None

    def release(self, hold: Hold, reason: str) -> None:
        """Withdraw one hold: its deadline, subscription or task entry goes with it."""
        if hold.fn is None:
            return
        site = hold.site
        if site.kind != "timer":  # a timer's entry is dropped when it reaches the top
            self._unindex(hold)
        hold.fn = None
        if self.waking:
            self.waking.pop(hold, None)
        iid = hold.instance  # inline ``record``: once per hold armed and released
        record = self._records[iid] if iid else self.deployed
        holds = record.holds
        if type(holds) is tuple:
            record.holds = tuple(h for h in holds if h is not hold)
        else:
            holds.remove(hold)
        self.counts[site.kind] -= 1
        self._emit("wait_released", hold.instance, hold.track, site.node,
                   site.released.get(reason) or site.released_by(reason))

    def release_waits(self, instance: str, track: str, reason: str,
                      firing: Hold | None = None) -> None:
        """Withdraw every hold a track owns; ``firing`` is released as "fired"."""
        holds = self.record(instance).holds
        if len(holds) == 1:  # the common case: one hold on the instance
            if holds[0].track == track:
                self.release(holds[0], "fired" if holds[0] is firing else reason)
            return
        for hold in [h for h in holds if h.track == track]:
            self.release(hold, "fired" if hold is firing else reason)

    def holds_boundary(self, instance: str, track: str, node: str) -> bool:
        """Whether a hold for boundary ``node`` over ``track`` is registered (armed or waking)."""
        return any(h.node == node and h.wait_kind == BOUNDARY
                   for h in self.of_track(instance, track))

    def of_track(self, instance: str, track: str) -> list[Hold]:
        return [h for h in self.record(instance).holds if h.track == track]

    def of_instance(self, instance: str) -> list[Hold]:
        return list(self.record(instance).holds)

    def all(self) -> Iterator[Hold]:
        yield from self.deployed.holds
        for record in self._records.values():
            yield from record.holds

    def record(self, instance: str) -> HoldList:
        """What lists an instance's holds (``DEPLOYED``: the start events' holds)."""
        return self._records[instance] if instance != DEPLOYED else self.deployed

    # -- triggers -------------------------------------------------------------------------
    def first_message(self, name: str, key: str) -> Hold | None:
        bucket = self.messages.get((name, key))
        return next(iter(bucket.values())) if bucket else None

    def signal_holds(self, name: str) -> list[Hold]:
        return list(self.signals.get(name, {}).values())

    # -- views ----------------------------------------------------------------------------
    def views(self, instance: str | None = None) -> list[HoldView]:
        holds = self.all() if instance is None else iter(self.record(instance).holds)
        waking = self.waking
        return [view(h, WAKING if h in waking else HELD) for h in sorted(holds,
                                                                        key=lambda h: h.seq)]


def expectation(h: Hold | Trigger) -> tuple[str, str, str, str, str]:
    """What identifies the wait a recorded trigger belongs to, on a hold or a trigger."""
    instance = h.instance if isinstance(h, Hold) else ""
    return instance, h.kind, h.track, h.node, h.wait_kind


def _drop(index: dict[Any, dict[int, Hold]], key: Any, order: int) -> None:
    bucket = index.get(key)
    if bucket is not None:
        bucket.pop(order, None)
        if not bucket:
            del index[key]


def shown(key: str) -> str:
    """A correlation value as a person reads it: strings without their quotes."""
    value = json.loads(key)
    return value if isinstance(value, str) else key


def view(h: Hold, state: str = HELD) -> HoldView:
    keys: tuple[str, ...] = ()
    if h.kind in ("message", "signal"):
        keys = (h.name or "",) + ((shown(h.correlation),) if h.correlation is not None else ())
    elif h.kind == "task":
        keys = (h.task or "",)
    elif h.kind == "call":
        keys = (h.child or "",)
    deadline = to_datetime(h.at) if h.kind == "timer" else None
    return HoldView(h.instance, h.track, h.kind, h.wait_kind, h.node, deadline, keys, state)
