"""The engine's wait holders: the permanent subscribers of every armed wait (ADR-007 §2.4).

A holder is registered when a wait is armed and listed on its instance's record, which
outlives the instance's coroutines. Timers live in the kernel's one deadline heap; messages
are indexed by (name, correlation value) and signals by name, in the order they were armed.
What a holder does on a trigger is the engine's business: it hands the trigger to ``deliver``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..kernel import Kernel, to_datetime
from .records import Hold, HoldView, SubscriptionHold, TaskHold, TimerHold, Trigger

KINDS = ("timer", "message", "signal", "task")


def correlation(value: Any) -> str:
    """The index form of a correlation value: 7 and "7" stay different."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Holders:
    """Registers, indexes and releases holds; emits ``wait_held`` and ``wait_released``.

    ``records`` maps instance ids to instance records; each has a ``holds`` list."""

    def __init__(self, kernel: Kernel, emit: Callable[..., Any],
                 deliver: Callable[[Hold, Trigger], None], records: Mapping[str, Any]):
        self._kernel = kernel
        self._emit = emit
        self._deliver = deliver
        self._records = records
        self._due = self._timer_due  # one bound method shared by every hold
        #: Holds whose wake failed, with the trigger to retry; skipped by new triggers.
        self.waking: dict[Hold, Trigger] = {}
        #: (kind, wait kind, node) tuples shared by every hold armed at the same place.
        self._sites: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        self.messages: dict[tuple[str, str], dict[int, Hold]] = {}
        self.signals: dict[str, dict[int, Hold]] = {}
        self.tasks: dict[str, Hold] = {}
        self.counts = dict.fromkeys(KINDS, 0)

    # -- registering ----------------------------------------------------------------------
    def _add(self, hold: Hold) -> Hold:
        record = self._records[hold.instance]
        if isinstance(record.holds, tuple):  # a released instance keeps a compact tuple
            record.holds += (hold,)
        else:
            record.holds.append(hold)
        self.counts[hold.kind] += 1
        self._emit("wait_held", hold.instance, hold.track, hold.node,
                   {"kind": hold.kind, "wait_kind": hold.wait_kind})
        return hold

    def _site(self, kind: str, wait_kind: str, node: str) -> tuple[str, str, str]:
        return self._sites.setdefault((kind, wait_kind, node), (kind, wait_kind, node))

    def hold_timer(self, instance: str, track: str, node: str, deadline: int,
                   wait_kind: str = "node", cycles: int | None = None) -> Hold:
        hold = TimerHold(self._kernel.next_seq(), instance, track,
                         self._site("timer", wait_kind, node), self._due, deadline)
        hold.cycles = cycles
        self._kernel.push(hold)
        return self._add(hold)

    def hold_subscription(self, instance: str, track: str, node: str, kind: str, name: str,
                          key: str | None = None, wait_kind: str = "node") -> Hold:
        hold = SubscriptionHold(self._kernel.next_seq(), instance, track,
                                self._site(kind, wait_kind, node), self._due)
        hold.name, hold.key = name, key
        if kind == "message":
            self.messages.setdefault((name, key or ""), {})[hold.seq] = hold
        else:
            self.signals.setdefault(name, {})[hold.seq] = hold
        return self._add(hold)

    def hold_task(self, instance: str, track: str, node: str, task: str) -> Hold:
        hold = TaskHold(self._kernel.next_seq(), instance, track,
                        self._site("task", "node", node), self._due)
        hold.key = task
        self.tasks[task] = hold
        return self._add(hold)

    # -- releasing ------------------------------------------------------------------------
    def release(self, hold: Hold, reason: str) -> None:
        """Withdraw one hold: its deadline, subscription or task entry goes with it."""
        if hold.fn is None:
            return
        hold.cancel()
        self.waking.pop(hold, None)
        if hold.kind == "message":
            self._unindex(self.messages, (hold.name, hold.key or ""), hold.seq)
        elif hold.kind == "signal":
            self._unindex(self.signals, hold.name, hold.seq)
        elif hold.kind == "task":
            self.tasks.pop(hold.key or "", None)
        record = self._records[hold.instance]
        if isinstance(record.holds, tuple):
            record.holds = tuple(h for h in record.holds if h is not hold)
        else:
            record.holds.remove(hold)
        self.counts[hold.kind] -= 1
        self._emit("wait_released", hold.instance, hold.track, hold.node,
                   {"kind": hold.kind, "wait_kind": hold.wait_kind, "reason": reason})

    @staticmethod
    def _unindex(index: dict, key: Any, order: int) -> None:
        bucket = index.get(key)
        if bucket is not None:
            bucket.pop(order, None)
            if not bucket:
                del index[key]

    def release_waits(self, instance: str, track: str, reason: str,
                      firing: Hold | None = None) -> None:
        """Withdraw every hold a track owns; ``firing`` is released as "fired"."""
        for hold in self.of_track(instance, track):
            self.release(hold, "fired" if hold is firing else reason)

    def of_track(self, instance: str, track: str) -> list[Hold]:
        return [h for h in self._records[instance].holds if h.track == track]

    def of_instance(self, instance: str) -> list[Hold]:
        return list(self._records[instance].holds)

    def all(self) -> Iterator[Hold]:
        for record in self._records.values():
            yield from record.holds

    # -- triggers -------------------------------------------------------------------------
    def _timer_due(self, hold: Hold) -> None:
        if hold.fn is not None:
            self._deliver(hold, Trigger("timer", hold.node, hold.wait_kind, hold.track))

    def first_message(self, name: str, key: str) -> Hold | None:
        bucket = self.messages.get((name, key))
        if not bucket:
            return None
        return next((h for h in bucket.values() if h not in self.waking), None)

    def signal_holds(self, name: str) -> list[Hold]:
        return list(self.signals.get(name, {}).values())

    # -- views ----------------------------------------------------------------------------
    def views(self, instance: str | None = None) -> list[HoldView]:
        holds = self.all() if instance is None else iter(self._records[instance].holds)
        return [view(h) for h in sorted(holds, key=lambda h: h.seq)]


def shown(key: str) -> str:
    """A correlation value as a person reads it: strings without their quotes."""
    value = json.loads(key)
    return value if isinstance(value, str) else key


def view(h: Hold) -> HoldView:
    keys: tuple[str, ...] = ()
    if h.kind in ("message", "signal"):
        keys = (h.name or "",) + ((shown(h.key),) if h.key is not None else ())
    elif h.kind == "task":
        keys = (h.key or "",)
    deadline = to_datetime(h.at) if h.kind == "timer" else None
    return HoldView(h.instance, h.track, h.kind, h.wait_kind, h.node, deadline, keys)
