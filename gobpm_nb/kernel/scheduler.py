"""The deterministic scheduler: virtual clock, ready queue, one deadline heap, coroutine registry.

Time and scheduling: events are ordered by ``(virtual time, sequence number)``. The sequence
number comes from one counter, so ties break first-in-first-out and the same input gives the
same order in every run. Virtual time is an integer count of microseconds since the Unix epoch.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from .traps import PASS, RESUMED, SUSPEND

Callback = Callable[[Any], Any]


class Deadline:
    """A scheduled call; ``cancel()`` makes it a no-op (it is dropped when it reaches the top)."""

    __slots__ = ("at", "seq", "fn", "arg")

    def __init__(self, at: int, seq: int, fn: Callback | None, arg: Any):
        self.at = at
        self.seq = seq
        self.fn = fn
        self.arg = arg

    def __lt__(self, other: Deadline) -> bool:
        return (self.at, self.seq) < (other.at, other.seq)

    def cancel(self) -> None:
        self.fn = None
        self.arg = None

    @property
    def cancelled(self) -> bool:
        return self.fn is None


class Kernel:
    """Runs coroutines and callbacks one event at a time on a virtual clock."""

    def __init__(self, now: int):
        self.now = now
        self._seq = 0
        self._ready: deque[tuple[int, Callback, Any]] = deque()
        self._heap: list[Deadline] = []
        #: Every live coroutine and its owner tag, in the order they were spawned.
        self.live: dict[Coroutine[Any, Any, Any], Any] = {}
        self._send_cb = self._send  # one bound method for every resume

    # -- scheduling -----------------------------------------------------------------------
    def call_soon(self, fn: Callback, arg: Any = None) -> None:
        """Run ``fn(arg)`` as an event at the current time, after those already queued."""
        self._seq += 1
        self._ready.append((self._seq, fn, arg))

    def call_at(self, at: int, fn: Callback, arg: Any = None) -> Deadline:
        """Run ``fn(arg)`` as an event at virtual time ``at`` (never earlier than now)."""
        return self.schedule(Deadline(at, 0, None, None), fn, arg)

    def schedule(self, entry: Deadline, fn: Callback, arg: Any = None) -> Deadline:
        """Put a prepared entry (its ``at`` set) on the deadline heap to run ``fn(arg)``."""
        self._seq += 1
        if entry.at < self.now:
            entry.at = self.now
        entry.seq = self._seq
        entry.fn = fn
        entry.arg = arg
        heapq.heappush(self._heap, entry)
        return entry

    def push(self, entry: Deadline) -> None:
        """Put an entry whose ``at``, ``seq``, ``fn`` and ``arg`` are set on the heap. An
        entry already overdue keeps its ``at`` and runs at the next chance, the clock
        staying where it is."""
        heapq.heappush(self._heap, entry)

    def next_seq(self) -> int:
        """A number from the kernel's one sequence (what orders events at one time)."""
        self._seq += 1
        return self._seq

    # -- coroutines -----------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any], owner: Any, value: Any = None) -> None:
        """Register a coroutine and schedule its first run.

        Every kernel coroutine begins with ``await SUSPEND``: spawning primes it to that point
        (running none of its work), so a coroutine dropped before it ever ran is closed
        quietly instead of being reported as never awaited."""
        if coro.send(None) is not SUSPEND:
            coro.close()
            raise TypeError("a kernel coroutine must begin with `await SUSPEND`")
        self.live[coro] = owner
        self.call_soon(self._send_cb, (coro, value))

    def adopt(self, coro: Coroutine[Any, Any, Any], owner: Any) -> None:
        """Register a coroutine born suspended: it runs only when someone resumes it."""
        if coro.send(None) is not SUSPEND:
            coro.close()
            raise TypeError("a kernel coroutine must begin with `await SUSPEND`")
        self.live[coro] = owner

    def resume(self, coro: Coroutine[Any, Any, Any], value: Any = None) -> None:
        """Schedule a suspended coroutine to continue with ``value``."""
        self._seq += 1
        self._ready.append((self._seq, self._send_cb, (coro, value)))

    def resume_within(self, coro: Coroutine[Any, Any, Any], value: Any) -> None:
        """Continue a suspended coroutine as part of the event running now (a timer's event
        runs the woken wait's fire path itself)."""
        self._send((coro, value))

    def close(self, coro: Coroutine[Any, Any, Any]) -> None:
        """End a coroutine where it stands; a pending resume of it becomes a no-op."""
        if self.live.pop(coro, None) is not None:
            coro.close()

    def _send(self, pair: tuple[Coroutine[Any, Any, Any], Any]) -> None:
        coro, value = pair
        if coro not in self.live:
            return  # closed while a resume was queued
        try:
            trap = coro.send(RESUMED if value is None else value)
        except StopIteration:
            self.live.pop(coro, None)
            return
        except BaseException:
            self.live.pop(coro, None)
            raise
        if trap is PASS:
            self._seq += 1
            self._ready.append((self._seq, self._send_cb, (coro, None)))
        elif trap is not SUSPEND:
            self.close(coro)
            raise TypeError(f"a kernel coroutine awaited {trap!r}, which is not a kernel trap")

    # -- running --------------------------------------------------------------------------
    def _drop_cancelled(self) -> None:
        heap = self._heap
        while heap and heap[0].fn is None:
            heapq.heappop(heap)

    def step(self) -> tuple[int, Callback, Any, Any] | None:
        """Run one event, moving the clock to the next deadline if nothing is ready now.
        Returns (time, callback, argument, owner of the coroutine it resumed, if any)."""
        self._drop_cancelled()
        heap, ready = self._heap, self._ready
        if ready and not (heap and heap[0].at <= self.now and heap[0].seq < ready[0][0]):
            _, fn, arg = ready.popleft()
        elif heap:
            entry = heapq.heappop(heap)
            self.now = max(self.now, entry.at)
            fn, arg = entry.fn, entry.arg  # type: ignore[assignment]
        else:
            return None
        owner = self.live.get(arg[0]) if fn == self._send_cb else None
        fn(arg)
        return self.now, fn, arg, owner

    def run(self, until: int | None = None) -> int:
        """Run events until none is left at or before ``until``; return how many ran."""
        heap, ready, pop = self._heap, self._ready, heapq.heappop
        count = 0
        while True:
            while heap and heap[0].fn is None:
                pop(heap)
            if ready and not (heap and heap[0].at <= self.now and heap[0].seq < ready[0][0]):
                _, fn, arg = ready.popleft()
            elif heap and (until is None or heap[0].at <= until):
                entry = pop(heap)
                if entry.at > self.now:
                    self.now = entry.at
                fn, arg = entry.fn, entry.arg  # type: ignore[assignment]
            else:
                return count
            fn(arg)
            count += 1

    def jump(self, to: int) -> None:
        """Move the clock forward to ``to``; it never moves backwards."""
        if to < self.now:
            raise ValueError(f"the clock cannot move backwards ({to} < {self.now})")
        self.now = to

    def pending(self) -> int:
        """Events waiting in the ready queue and the deadline heap (cancelled ones included)."""
        return len(self._ready) + len(self._heap)

