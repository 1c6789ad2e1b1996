"""The deterministic scheduler: virtual clock, ready queue, one deadline heap, coroutine registry.

Time and scheduling: events are ordered by ``(virtual time, sequence number)``. The sequence
number comes from one counter, so ties break first-in-first-out and the same input gives the
same order in every run (Invariant 14, docs/architecture.md). Virtual time is an integer
count of microseconds since the Unix epoch.

Every event carries its kind: a deadline on the heap says it with ``event``; a resumed
coroutine's kind is the first item of the owner tag it was registered with. ``step()`` and
``run()`` share one next-event rule (``_next``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Generator
from operator import itemgetter
from typing import Any, TypeVar

try:  # namedtuple's field reader: a C descriptor, faster than property(itemgetter(i))
    from _collections import _tuplegetter
except ImportError:  # pragma: no cover
    def _tuplegetter(i: int, doc: str | None) -> Any:
        return property(itemgetter(i), doc=doc)

from .traps import PASS, SUSPEND, Trap

Callback = Callable[[Any], Any]
#: A kernel coroutine: a generator that yields traps and is resumed with values.
Coro = Generator[Trap, Any, Any]
#: What ``step()`` returns: (time, kind, subject). The subject is the owner tag of a resumed
#: coroutine, or the argument of a callback.
Event = tuple[int, str, Any]
D = TypeVar("D", bound="Deadline")


def item(i: int) -> Any:
    """A read-only attribute that is item ``i`` of a tuple, read in C (``namedtuple``'s)."""
    return _tuplegetter(i, None)


class Deadline(tuple[Any, ...]):
    """An entry of the deadline heap: a tuple whose first items are ``(at, seq)``. The heap
    compares entries as tuples, in C (``seq`` is unique, so the items after it are never
    compared), and an entry costs no more than its items. An entry never changes: what runs
    it is the kernel's handler for its class (``Kernel.handle``), and whether it still counts
    is the kernel's too (``Kernel.cancel``). ``event`` is the kind of event it is."""

    __slots__ = ()
    __hash__ = object.__hash__  # by identity: a set of entries never compares their items
    event = "call"
    at: int = item(0)
    seq: int = item(1)


def _interrupted(_: Any) -> None:
    raise KeyboardInterrupt


#: The ready-queue entry of an interrupt: first whatever else is ready or due
#: (``Kernel.interrupt``)
INTERRUPT = (0, _interrupted, None, "interrupt")


def _call(entry: Scheduled) -> Any:
    return entry[2](entry[3])


class Scheduled(Deadline):
    """``callback(arg)`` as an event of the kind named when it is scheduled: the items are
    ``(at, seq, callback, arg, event, kernel)``."""

    __slots__ = ()
    callback: Callback = item(2)
    arg: Any = item(3)
    event: str = item(4)

    def cancel(self) -> None:
        """It will not run: it is dropped when it reaches the top of the heap."""
        self[5].cancel(self)

    @property
    def cancelled(self) -> bool:
        return self in self[5].cancelled


class Kernel:
    """Runs coroutines and callbacks one event at a time on a virtual clock."""

    def __init__(self, now: int, seq: int = 0, fast: bool = True):
        self.now = now
        #: The last number handed out by the kernel's one sequence (a plain attribute: every
        #: command reads it as it begins, ``travel.history``).
        self.seq = seq
        #: Whether ``run`` takes its inline next-event rule (off: ``_next`` every time).
        self.fast = fast
        #: ``(seq, fn, arg, kind)``; a coroutine's resume is ``(seq, coro, value, "")``.
        self._ready: deque[tuple[int, Any, Any, str]] = deque()
        #: The entries themselves (tuples: ordered by ``(at, seq)`` in C, no wrapper around
        #: each, which would cost 64 bytes per held timer, that is per dehydrated instance).
        self._heap: list[Deadline] = []
        #: Entries withdrawn while on the heap: dropped, not run, when they reach the top.
        self.cancelled: set[Deadline] = set()
        #: The entry last taken off the heap to run (the one running, during its event).
        self.firing: Deadline | None = None
        #: What runs an entry of each class, called with the entry.
        self._handlers: dict[type, Callback] = {Scheduled: _call}
        #: Every live coroutine and its owner tag ``(kind, ...)``, in the order spawned.
        self.live: dict[Coro, Any] = {}
        #: The coroutine running right now (None between events).
        self.current: Coro | None = None
        #: The events the last ``run`` that raised had run (``take_cut_short``)
        self.cut_short = 0

    def advance_seq(self, to: int) -> None:
        """Continue the sequence after ``to`` (recovery: numbers recorded earlier stay unique)."""
        self.seq = max(self.seq, to)

    # -- scheduling -----------------------------------------------------------------------
    def call_soon(self, fn: Callback, arg: Any = None, event: str = "call") -> None:
        """Run ``fn(arg)`` as an event of kind ``event`` at the current time, after those
        already queued."""
        self.seq += 1
        self._ready.append((self.seq, fn, arg, event))

    def call_at(self, at: int, fn: Callback, arg: Any = None, event: str = "call") -> Deadline:
        """Run ``fn(arg)`` as an event of kind ``event`` at virtual time ``at`` (never earlier
        than now)."""
        self.seq = seq = self.seq + 1
        entry = Scheduled((max(at, self.now), seq, fn, arg, event, self))
        heapq.heappush(self._heap, entry)
        return entry

    def handle(self, cls: type, fn: Callback) -> None:
        """Run every entry of class ``cls`` (exactly) as ``fn(entry)`` when it falls due."""
        self._handlers[cls] = fn

    def push(self, entry: Deadline) -> None:
        """Put an entry on the heap (its class has a handler). An entry already overdue
        keeps its ``at`` and runs at the next chance, the clock staying where it is."""
        heapq.heappush(self._heap, entry)

    def push_next(self, cls: type[D], at: int, *rest: Any) -> D:
        """Make the entry ``cls((at, seq, *rest))``, ``seq`` the next number in the one
        sequence, and put it on the heap."""
        self.seq = seq = self.seq + 1
        entry = cls((at, seq) + rest)  # one allocation (``(at, seq, *rest)`` makes a list)
        heapq.heappush(self._heap, entry)  # type: ignore[misc]  # a D is a Deadline
        return entry

    def cancel(self, entry: Deadline) -> None:
        """Withdraw an entry: it is dropped, not run, when it reaches the top of the heap. The
        entry running now is off the heap already, and so is left alone."""
        if entry is not self.firing:
            dead = self.cancelled
            dead.add(entry)
            if len(dead) > len(self._heap):  # some had run already: keep those still on it
                dead.intersection_update(self._heap)

    def next_seq(self) -> int:
        """A number from the kernel's one sequence (what orders events at one time)."""
        self.seq += 1
        return self.seq

    # -- coroutines -----------------------------------------------------------------------
    def _prime(self, coro: Coro) -> None:
        if coro.send(None) is not SUSPEND:
            coro.close()
            raise TypeError("a kernel coroutine must begin with `yield SUSPEND`")

    def spawn(self, coro: Coro, owner: Any, value: Any = None) -> None:
        """Register a coroutine and schedule its first run.

        Every kernel coroutine begins with ``yield SUSPEND``: spawning primes it to that point
        (running none of its work), so a coroutine dropped before it ever ran is closed
        quietly instead of being reported as never awaited."""
        self._prime(coro)
        self.live[coro] = owner
        self.resume(coro, value)

    def adopt(self, coro: Coro, owner: Any) -> None:
        """Register a coroutine born suspended: it runs only when someone resumes it."""
        self._prime(coro)
        self.live[coro] = owner

    def resume(self, coro: Coro, value: Any = None) -> None:
        """Schedule a suspended coroutine to continue with ``value``."""
        self.seq += 1
        self._ready.append((self.seq, coro, value, ""))

    def interrupt(self) -> None:
        """Stop the events running with KeyboardInterrupt between two of them, not inside
        one: a person's interrupt (SIGINT) caught while events run (``travel.interrupts``).
        The events already run stand, and the one running ends first."""
        if not (self._ready and self._ready[0] is INTERRUPT):
            self._ready.appendleft(INTERRUPT)

    def take_cut_short(self) -> int:
        """How many events the last ``run`` that raised had run (then 0 again)."""
        n, self.cut_short = self.cut_short, 0
        return n

    def take_interrupt(self) -> bool:
        """Whether an interrupt was waiting for the next event; it no longer is."""
        if self._ready and self._ready[0] is INTERRUPT:
            self._ready.popleft()
            return True
        return False

    def close(self, coro: Coro) -> None:
        """End a coroutine where it stands; a pending resume of it becomes a no-op."""
        if self.live.pop(coro, None) is not None:
            coro.close()

    def _send(self, coro: Coro, value: Any) -> None:
        """Continue a suspended coroutine with ``value``, now."""
        if coro not in self.live:
            return  # closed while a resume was queued
        outer, self.current = self.current, coro
        try:
            trap = coro.send(value)
        except StopIteration:
            self.live.pop(coro, None)
            return
        except BaseException:
            self.live.pop(coro, None)
            raise
        finally:
            self.current = outer
        if trap is PASS:
            self.seq += 1
            self._ready.append((self.seq, coro, None, ""))
        elif trap is not SUSPEND:
            self.close(coro)
            raise TypeError(f"a kernel coroutine yielded {trap!r}, which is not a kernel trap")

    #: Continue a suspended coroutine as part of the event running now (a timer's event
    #: runs the woken wait's fire path itself).
    resume_within = _send

    # -- running --------------------------------------------------------------------------
    def _next(self, until: int | None, idle: str) -> tuple[Any, Any, str] | None:
        """The one next-event rule: the ready queue first, unless a deadline that is due now
        was scheduled before it; else the earliest deadline at or before ``until`` (moving the
        clock there). With ``idle`` an event kind, stop when only events of that kind are left.
        Returns ``(fn, arg, kind)``: ``arg`` is the entry itself for a deadline, and a
        coroutine's resume is ``(coro, value, "")``."""
        heap, ready, dead = self._heap, self._ready, self.cancelled
        if dead:
            while heap and heap[0] in dead:
                dead.discard(heapq.heappop(heap))
        if ready and not (heap and heap[0][0] <= self.now and heap[0][1] < ready[0][0]):
            _, fn, arg, kind = ready.popleft()
            return fn, arg, kind
        if not heap or (until is not None and heap[0][0] > until):
            return None
        if idle and heap[0].event == idle and self.only(idle):
            return None
        self.firing = entry = heapq.heappop(heap)
        at = entry[0]
        if at > self.now:
            self.now = at
        return self._handlers[type(entry)], entry, entry.event

    def next_at(self) -> int | None:
        """When the earliest deadline falls due (None when the heap is empty)."""
        heap, dead = self._heap, self.cancelled
        while heap and heap[0] in dead:
            dead.discard(heapq.heappop(heap))
        return heap[0][0] if heap else None

    def only(self, kind: str) -> bool:
        """Whether every event still scheduled is of ``kind`` (the ready queue is empty)."""
        dead = self.cancelled
        return not self._ready and all(e in dead or e.event == kind for e in self._heap)

    def step(self, before: Callable[[str, Any], Any] | None = None) -> Event | None:
        """Run one event, moving the clock to the next deadline if nothing is ready now.
        Returns (time, kind, subject), or None when nothing is scheduled at all. ``before``
        is called with (kind, subject) once the event is chosen, before it runs."""
        nxt = self._next(None, "")
        if nxt is None:
            return None
        fn, arg, kind = nxt
        subject = arg.arg if isinstance(arg, Scheduled) else arg
        if not kind:
            subject = self.live.get(fn)
            kind = subject[0] if isinstance(subject, tuple) and subject else "call"
        if before is not None:
            before(kind, subject)
        if nxt[2]:
            fn(arg)
        else:
            self._send(fn, arg)
        return self.now, kind, subject

    def run(self, until: int | None = None, idle: str = "") -> int:
        """Run events until none is left at or before ``until``, or (with ``idle``) until
        only events of that kind are left; return how many ran."""
        nxt, send = self._next, self._send
        heap, ready, dead, handlers, pop = \
            self._heap, self._ready, self.cancelled, self._handlers, heapq.heappop
        count = 0
        try:
            if not self.fast:  # the general path alone: ``_next`` for every event
                while (event := nxt(until, idle)) is not None:
                    if event[2]:
                        event[0](event[1])
                    else:
                        send(event[0], event[1])
                    count += 1
                return count
            while True:
                # the common cases, as ``_next`` decides them, without a call: the ready queue's
                # first (no deadline due now was scheduled before it) or, nothing ready, the
                # earliest deadline due and not of the ``idle`` kind
                if dead:
                    while heap and heap[0] in dead:
                        dead.discard(pop(heap))
                if ready:
                    if not heap or heap[0][0] > self.now or heap[0][1] > ready[0][0]:
                        _, fn, arg, kind = ready.popleft()
                        if kind:
                            fn(arg)
                        else:
                            send(fn, arg)
                        count += 1
                        continue
                elif heap:
                    entry = heap[0]
                    at = entry[0]
                    if (until is None or at <= until) and not (idle and entry.event == idle):
                        self.firing = entry = pop(heap)
                        if at > self.now:
                            self.now = at
                        handlers[type(entry)](entry)
                        count += 1
                        continue
                event = nxt(until, idle)
                if event is None:
                    return count
                if event[2]:
                    event[0](event[1])
                else:
                    send(event[0], event[1])
                count += 1
        except BaseException:  # an interrupt between two events, or an event that raised:
            self.cut_short = count  # the events it ran (``take_cut_short``)
            raise

    def due_by(self, at: int) -> bool:
        """Whether an event would run at or before ``at``: one ready now, or a deadline."""
        if self._ready:
            return True
        nxt = self.next_at()
        return nxt is not None and nxt <= at

    def jump(self, to: int) -> None:
        """Move the clock forward to ``to``; it never moves backwards."""
        if to < self.now:
            raise ValueError(f"the clock cannot move backwards ({to} < {self.now})")
        self.now = to

    def pending(self) -> int:
        """Events waiting in the ready queue and the deadline heap (cancelled ones included)."""
        return len(self._ready) + len(self._heap)
