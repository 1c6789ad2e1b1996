"""The deterministic scheduler: virtual clock, ready queue, one deadline heap, coroutine registry.

Time and scheduling: events are ordered by ``(virtual time, sequence number)``. The sequence
number comes from one counter, so ties break first-in-first-out and the same input gives the
same order in every run. Virtual time is an integer count of microseconds since the Unix epoch.

Every event carries its kind: a deadline on the heap says it with ``event``; a resumed
coroutine's kind is the first item of the owner tag it was registered with. ``step()`` and
``run()`` share one next-event rule (``_next``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from .traps import PASS, SUSPEND, Trap

Callback = Callable[[Any], Any]
#: A kernel coroutine: a generator that yields traps and is resumed with values.
Coro = Generator[Trap, Any, Any]
#: What ``step()`` returns: (time, kind, subject). The subject is the owner tag of a resumed
#: coroutine, or the argument of a callback.
Event = tuple[int, str, Any]


class Deadline:
    """A scheduled call: ``fn(entry)`` runs when it falls due; ``cancel()`` makes it a no-op
    (it is dropped when it reaches the top). ``event`` is the kind of event it is: a class
    attribute, so an entry costs three slots (an engine holder is its own entry)."""

    __slots__ = ("at", "seq", "fn")
    event = "call"

    def __init__(self, at: int, seq: int, fn: Callback | None):
        self.at = at
        self.seq = seq
        self.fn = fn

    def __lt__(self, other: Deadline) -> bool:
        """(at, seq) order, compared without building tuples (the heap calls this a lot)."""
        at, other_at = self.at, other.at
        return at < other_at or (at == other_at and self.seq < other.seq)

    def cancel(self) -> None:
        self.fn = None

    @property
    def cancelled(self) -> bool:
        return self.fn is None


def _call(entry: Scheduled) -> Any:
    callback = entry.callback
    return callback(entry.arg) if callback is not None else None


class Scheduled(Deadline):
    """``callback(arg)`` as an event of the kind named when it is scheduled."""

    __slots__ = ("callback", "arg", "event")

    def __init__(self, at: int, seq: int, callback: Callback, arg: Any, event: str):
        super().__init__(at, seq, _call)
        self.callback: Callback | None = callback
        self.arg = arg
        self.event = event

    def cancel(self) -> None:
        self.fn = self.callback = self.arg = None


class Kernel:
    """Runs coroutines and callbacks one event at a time on a virtual clock."""

    def __init__(self, now: int, seq: int = 0):
        self.now = now
        self._seq = seq
        #: ``(seq, fn, arg, kind)``; a coroutine's resume is ``(seq, coro, value, "")``.
        self._ready: deque[tuple[int, Any, Any, str]] = deque()
        #: The entries themselves, ordered by ``Deadline.__lt__``: a tuple around each would
        #: compare faster but costs 64 bytes per held timer (every released instance has one).
        self._heap: list[Deadline] = []
        #: Every live coroutine and its owner tag ``(kind, ...)``, in the order spawned.
        self.live: dict[Coro, Any] = {}
        #: The coroutine running right now (None between events).
        self.current: Coro | None = None

    @property
    def seq(self) -> int:
        """The last number handed out by the kernel's one sequence."""
        return self._seq

    def advance_seq(self, to: int) -> None:
        """Continue the sequence after ``to`` (recovery: numbers recorded earlier stay unique)."""
        self._seq = max(self._seq, to)

    # -- scheduling -----------------------------------------------------------------------
    def call_soon(self, fn: Callback, arg: Any = None) -> None:
        """Run ``fn(arg)`` as an event at the current time, after those already queued."""
        self._seq += 1
        self._ready.append((self._seq, fn, arg, "call"))

    def call_at(self, at: int, fn: Callback, arg: Any = None, event: str = "call") -> Deadline:
        """Run ``fn(arg)`` as an event of kind ``event`` at virtual time ``at`` (never earlier
        than now)."""
        entry = Scheduled(max(at, self.now), self.next_seq(), fn, arg, event)
        heapq.heappush(self._heap, entry)
        return entry

    def push(self, entry: Deadline) -> None:
        """Put an entry whose ``at``, ``seq`` and ``fn`` are set on the heap. An
        entry already overdue keeps its ``at`` and runs at the next chance, the clock
        staying where it is."""
        heapq.heappush(self._heap, entry)

    def push_next(self, entry: Deadline) -> None:
        """Number an entry whose ``at`` and ``fn`` are set (the next in the one
        sequence) and put it on the heap."""
        self._seq = seq = self._seq + 1
        entry.seq = seq
        heapq.heappush(self._heap, entry)

    def next_seq(self) -> int:
        """A number from the kernel's one sequence (what orders events at one time)."""
        self._seq += 1
        return self._seq

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
        self._seq += 1
        self._ready.append((self._seq, coro, value, ""))


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
            self._seq += 1
            self._ready.append((self._seq, coro, None, ""))
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
        heap, ready = self._heap, self._ready
        while heap and heap[0].fn is None:
            heapq.heappop(heap)
        if ready and not (heap and heap[0].at <= self.now and heap[0].seq < ready[0][0]):
            _, fn, arg, kind = ready.popleft()
            return fn, arg, kind
        if not heap or (until is not None and heap[0].at > until):
            return None
        if idle and heap[0].event == idle and self.only(idle):
            return None
        entry = heapq.heappop(heap)
        at = entry.at
        if at > self.now:
            self.now = at
        return entry.fn, entry, entry.event

    def next_at(self) -> int | None:
        """When the earliest deadline falls due (None when the heap is empty)."""
        heap = self._heap
        while heap and heap[0].fn is None:
            heapq.heappop(heap)
        return heap[0].at if heap else None

    def only(self, kind: str) -> bool:
        """Whether every event still scheduled is of ``kind`` (the ready queue is empty)."""
        return not self._ready and all(e.fn is None or e.event == kind for e in self._heap)

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
        count = 0
        while True:
            event = nxt(until, idle)
            if event is None:
                return count
            if event[2]:
                event[0](event[1])
            else:
                send(event[0], event[1])
            count += 1

    def jump(self, to: int) -> None:
        """Move the clock forward to ``to``; it never moves backwards."""
        if to < self.now:
            raise ValueError(f"the clock cannot move backwards ({to} < {self.now})")
        self.now = to

    def pending(self) -> int:
        """Events waiting in the ready queue and the deadline heap (cancelled ones included)."""
        return len(self._ready) + len(self._heap)
