"""The engine's wait holders: the permanent subscribers of every armed wait (see
docs/semantics.md, "Wait holders"; Invariants 3 and 8 of docs/architecture.md).

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
from operator import attrgetter
from typing import Any, Protocol

from ...kernel import Deadline, Kernel, to_datetime
from ...kernel.scheduler import item
from ...vocabulary import BOUNDARY, HELD, HOLD_KINDS, NODE, WAKING
from .records import HoldView, Trigger
from .values import json_copy


def correlation(value: Any) -> str:
    """The index form of a correlation value: 7 and "7" stay different, and so do {1: 2} and
    {"1": 2} (a value JSON would change, NaN, a tuple or a non-string key, is refused with
    ValueError)."""
    if type(value) is str:  # the common key: nothing to copy or check
        return json.dumps(value)
    return json.dumps(json_copy(value, "key"), sort_keys=True, separators=(",", ":"))


class Site:
    """One place a hold can sit — kind, wait kind, node — for one track id (track ids are
    numbered per instance, so the same few come back in every instance): shared by every hold
    armed there, with the holders it belongs to and the details of its ``wait_held``,
    ``timer_fired`` and ``wait_released`` facts, made once per place (``like``: a site of the
    same place, whose details it shares; a fact's details are only ever read through copies).
    """

    __slots__ = ("kind", "wait_kind", "node", "track", "held_details", "fired_details",
                 "released_details", "holders")

    def __init__(self, kind: str, wait_kind: str, node: str, track: str, holders: Holders,
                 like: Site | None = None):
        self.kind = kind
        self.wait_kind = wait_kind
        self.node = node
        self.track = track
        self.holders = holders
        self.held_details: dict[str, str]
        self.fired_details: dict[str, str]
        self.released_details: dict[str, dict[str, str]]
        if like is not None:
            self.held_details = like.held_details
            self.fired_details = like.fired_details
            self.released_details = like.released_details
        else:
            self.held_details = {"kind": kind, "wait_kind": wait_kind}
            self.fired_details = {"wait_kind": wait_kind}
            self.released_details = {}

    def released_by(self, reason: str) -> dict[str, str]:
        details = self.released_details.get(reason)
        if details is None:
            details = self.released_details[reason] = {
                "kind": self.kind, "wait_kind": self.wait_kind, "reason": reason}
        return details


class Hold(Deadline):
    """One registered wait holder: a tuple ``(at, seq, instance, site, ...)`` that never
    changes. Its site names its track: a timer's is four items, the size of a plain object
    of six slots (a tuple subclass is allocated with one spare item). A timer's holder is
    itself its entry in the kernel's deadline heap (``at`` is the deadline; the others' is
    0), so a held timer costs one object. ``seq`` comes from the kernel's one counter for
    every kind, so it is also the order holds were armed in (recovery keeps it). A hold is
    alive while it is listed on its instance's record (``release`` takes it off, and
    withdraws a timer's entry from the heap). Each kind keeps only the items it needs; the
    others read as None."""

    __slots__ = ()
    event = "timer"
    instance: str = item(2)
    site: Site = item(3)  # where it sits, shared by the holds at one place of one track id
    # what its site says, read in C (a hold is read on every trigger)
    track: str = property(attrgetter("site.track"))  # type: ignore[assignment]
    #: timer | message | signal | task | call | decision
    kind: str = property(attrgetter("site.kind"))  # type: ignore[assignment]
    #: node | boundary
    wait_kind: str = property(attrgetter("site.wait_kind"))  # type: ignore[assignment]
    node: str = property(attrgetter("site.node"))  # type: ignore[assignment]
    name: str | None = None  # message or signal name
    correlation: str | None = None  # a message's correlation value, in index form
    task: str | None = None  # a task hold's task id
    child: str | None = None  # a call hold's child instance id
    cycles: int | None = None  # timer cycle repetitions left after this one; -1 unbounded

    @property
    def alive(self) -> bool:
        """Becomes False when it is released (it is still alive while waking)."""
        return self.site.holders.listed(self)

    @property
    def deadline(self) -> int | None:
        return self.at if self.kind == "timer" else None

    def __repr__(self) -> str:
        return f"Hold({self.instance}/{self.track} {self.kind} {self.wait_kind} {self.node})"


class TimerHold(Hold):
    """A deadline held, ``(at, seq, instance, site)`` (``cycles`` reads None: a timer that
    fires once)."""

    __slots__ = ()


class CycleHold(TimerHold):
    """A cycle timer's deadline, with the repetitions left after it: ``(..., cycles)``."""

    __slots__ = ()
    cycles: int | None = item(4)


class SubscriptionHold(Hold):
    """A message or signal subscription: ``(0, seq, instance, site, name, correlation)``."""

    __slots__ = ()
    name: str | None = item(4)
    correlation: str | None = item(5)


class TaskHold(Hold):
    """A user task's: ``(0, seq, instance, site, task)``."""

    __slots__ = ()
    task: str | None = item(4)


class DecisionHold(Hold):
    """A decision gateway's: the person's choice of a flow is the trigger. ``(0, seq,
    instance, site)``; its index key is (instance, track)."""

    __slots__ = ()


class CallHold(Hold):
    """A call activity's: the end of its child instance is the trigger. ``(0, seq,
    instance, site, child)``."""

    __slots__ = ()
    child: str | None = item(4)


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
                 deliver: Callable[..., object], records: Mapping[str, HoldList]):
        self._kernel = kernel
        self._emit = emit
        self._deliver = deliver
        self._records = records
        #: The holds of deployed processes' start events (no instance yet: ``DEPLOYED``).
        self.deployed = Deployed()
        #: Holds whose trigger came while their wake is pending, in the order accepted.
        self.waking: dict[Hold, None] = {}
        #: The site of every hold armed so far, by (kind, wait kind, node, track id); the
        #: first of each place also under track id "" (the others share its details). Timers'
        #: also by (node, track id), per wait kind (what the hot path asks with).
        self._sites: dict[tuple[str, str, str, str], Site] = {}
        self._timer_sites: dict[str, dict[tuple[str, str], Site]] = {
            NODE: {}, BOUNDARY: {}, "start": {}}
        self._deadline = 0  # the deadline of the newest timer hold
        self.messages: dict[tuple[str, str], dict[int, Hold]] = {}
        self.signals: dict[str, dict[int, Hold]] = {}
        self.tasks: dict[str, Hold] = {}
        self.calls: dict[str, Hold] = {}  # child instance id -> its call activity's hold
        #: (instance, track) -> the hold of the decision that track waits at
        self.decisions: dict[tuple[str, str], Hold] = {}
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
        self._emit("wait_held", iid, site.track, site.node, site.held_details)
        if self.expected:
            trigger = self.expected.pop(expectation(hold), None)
            if trigger is not None:
                self._deliver(hold, trigger)
        return hold

    def _site(self, kind: str, wait_kind: str, node: str, track: str) -> Site:
        sites = self._sites
        site = sites.get((kind, wait_kind, node, track))
        if site is None:
            like = sites.get((kind, wait_kind, node, ""))
            site = Site(kind, wait_kind, node, track, self, like)
            sites[(kind, wait_kind, node, track)] = site
            if like is None:  # the first of its place: the others share its details
                sites[(kind, wait_kind, node, "")] = site
            if kind == "timer":
                self._timer_sites[wait_kind][(node, track)] = site
        return site

    def _seq(self, seq: int | None) -> int:
        return self._kernel.next_seq() if seq is None else seq

    def hold_timer(self, instance: str, track: str, node: str, deadline: int,
                   wait_kind: str = NODE, cycles: int | None = None,
                   seq: int | None = None) -> Hold:
        """Hold a deadline. ``seq`` is given only by recovery (the order it was armed in)."""
        site = self.timer_site(node, track, wait_kind)
        if deadline == self._deadline:  # holds armed for one instant share one int object
            deadline = self._deadline
        else:
            self._deadline = deadline
        kernel = self._kernel
        hold: Hold
        if seq is not None:
            hold = (TimerHold((deadline, seq, instance, site)) if cycles is None else
                    CycleHold((deadline, seq, instance, site, cycles)))
            kernel.push(hold)
        elif cycles is None:
            hold = kernel.push_next(TimerHold, deadline, instance, site)
        else:
            hold = kernel.push_next(CycleHold, deadline, instance, site, cycles)
        return self._add(hold)

    def timer_site(self, node: str, track: str, wait_kind: str = NODE) -> Site:
        """The site of a timer at ``node`` for track id ``track``."""
        return (self._timer_sites[wait_kind].get((node, track))
                or self._site("timer", wait_kind, node, track))

    def hold_next(self, holds: list[Hold], instance: str, site: Site, deadline: int) -> None:
        """``hold_timer`` for a node timer of a resident instance (``holds``: its list) at
        ``site`` when no recovered trigger is expected, in place of the timer hold it just
        released (the count of timer holds stays as it was): the same hold and number, in
        one call (the timer plan's). The caller emits the ``wait_held`` fact."""
        if deadline == self._deadline:
            deadline = self._deadline
        else:
            self._deadline = deadline
        holds.append(self._kernel.push_next(TimerHold, deadline, instance, site))

    def hold_subscription(self, instance: str, track: str, node: str, kind: str, name: str,
                          key: str | None = None, wait_kind: str = NODE,
                          seq: int | None = None) -> Hold:
        """Hold a message (``key``: its correlation value) or signal subscription."""
        hold = SubscriptionHold((0, self._seq(seq), instance,
                                 self._site(kind, wait_kind, node, track), name, key))
        if kind == "message":
            self.messages.setdefault((name, key or ""), {})[hold.seq] = hold
        else:
            self.signals.setdefault(name, {})[hold.seq] = hold
        return self._add(hold)

    def hold_task(self, instance: str, track: str, node: str, task: str,
                  seq: int | None = None) -> Hold:
        """Hold a user task: its completion is the trigger."""
        hold = TaskHold((0, self._seq(seq), instance, self._site("task", NODE, node, track),
                         task))
        self.tasks[task] = hold
        return self._add(hold)

    def hold_decision(self, instance: str, track: str, node: str,
                      seq: int | None = None) -> Hold:
        """Hold a decision: a person's choice of one of the gateway's flows is the trigger."""
        hold = DecisionHold((0, self._seq(seq), instance,
                             self._site("decision", NODE, node, track)))
        self.decisions[(instance, track)] = hold
        return self._add(hold)

    def hold_call(self, instance: str, track: str, node: str, child: str,
                  seq: int | None = None) -> Hold:
        """Hold a call activity: its child instance's end is the trigger."""
        hold = CallHold((0, self._seq(seq), instance, self._site("call", NODE, node, track),
                         child))
        self.calls[child] = hold
        return self._add(hold)

    # -- releasing ------------------------------------------------------------------------
    def _unindex(self, hold: Hold) -> None:
        """Take a hold out of the index its triggers find it by."""
        if hold.kind == "timer":
            self._kernel.cancel(hold)
        elif hold.kind == "message":
            _drop(self.messages, (hold.name, hold.correlation or ""), hold.seq)
        elif hold.kind == "signal":
            _drop(self.signals, hold.name, hold.seq)
        elif hold.kind == "task":
            self.tasks.pop(hold.task or "", None)
        elif hold.kind == "call":
            self.calls.pop(hold.child or "", None)
        elif hold.kind == "decision":
            self.decisions.pop((hold.instance, hold.track), None)

    def accept(self, hold: Hold) -> None:
        """The hold's trigger came but its instance is not back yet: nothing else may fire
        it, and it stays listed (``waking``) until ``release`` after the wake."""
        self._unindex(hold)
        self.waking[hold] = None  # still listed, so still alive: released after the wake

    def release(self, hold: Hold, reason: str) -> None:
        """Withdraw one hold: its deadline, subscription or task entry goes with it. A hold
        no longer listed on its instance was released already: nothing happens."""
        iid = hold.instance  # inline ``record``: once per hold armed and released
        record = self._records[iid] if iid else self.deployed
        holds = record.holds
        if type(holds) is tuple:
            kept = tuple(h for h in holds if h is not hold)
            if len(kept) == len(holds):
                return
            record.holds = kept
        elif holds and holds[0] is hold:  # the common case: the first (often the only) one
            del holds[0]
        else:
            for i, h in enumerate(holds):
                if h is hold:
                    del holds[i]
                    break
            else:
                return
        site = hold.site
        waking = self.waking
        if waking and hold in waking:
            del waking[hold]  # out of every index since it was accepted
        elif site.kind != "timer":
            self._unindex(hold)
        elif hold is not self._kernel.firing:  # not the one firing: still on the heap
            self._kernel.cancel(hold)
        self.counts[site.kind] -= 1
        self._emit("wait_released", iid, site.track, site.node,
                   site.released_details.get(reason) or site.released_by(reason))

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

    def listed(self, hold: Hold) -> bool:
        """Whether a hold is alive: listed on its instance's record."""
        iid = hold.instance
        record = self._records.get(iid) if iid else self.deployed
        return record is not None and any(h is hold for h in record.holds)

    def record(self, instance: str) -> HoldList:
        """What lists an instance's holds (``DEPLOYED``: the start events' holds)."""
        return self._records[instance] if instance != DEPLOYED else self.deployed

    # -- triggers -------------------------------------------------------------------------
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
