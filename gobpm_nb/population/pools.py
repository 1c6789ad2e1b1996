"""Pools at run time: resources that take work from a queue (first in, first out, or by a
priority expression, highest first) while their calendar is open."""

from __future__ import annotations

import heapq
from typing import Any

from ..model.expr import Expr
from .spec import Pool


class Work:
    """One user task or worker job of a case, from its creation to its end. Times are
    virtual microseconds; ``work`` is the sampled working time, ``resource`` the number
    of the resource (1...) that took it."""

    __slots__ = ("case", "node", "ref", "kind", "pool", "track", "created", "started",
                 "ended", "resource", "work", "withdrawn")

    def __init__(self, case: str, node: str, ref: str, kind: str, pool: PoolRun, track: str,
                 created: int):
        self.case, self.node, self.ref, self.kind = case, node, ref, kind
        self.pool, self.track, self.created = pool, track, created
        self.started: int | None = None
        self.ended: int | None = None
        self.resource = 0
        self.work = 0
        self.withdrawn = False


class PoolRun:
    """A pool's resources, queue and history of (time, busy, queued) changes."""

    def __init__(self, spec: Pool, priority: Expr | None):
        self.spec = spec
        self.priority = priority
        #: resources given back and free again (a heap: the lowest numbered first)
        self.free: list[int] = []
        #: resources brought in so far: numbered 1, 2, ... as work first needs them (a pool
        #: of any size costs nothing until its resources work)
        self.made = 0
        self.queue: list[tuple[float, int, Work]] = []
        self.order = 0
        self.busy = 0
        self.waiting = 0  # queued work not withdrawn
        self.changes: list[tuple[int, int, int]] = []
        self.waking = False  # a driver event is due when the calendar opens

    def push(self, w: Work, data: dict[str, Any] | None) -> None:
        rank = 0.0
        if self.priority is not None and data is not None:
            try:
                rank = -float(self.priority(data))
            except Exception:  # a priority that fails on a case ranks it last
                rank = float("inf")
        self.order += 1
        self.waiting += 1
        heapq.heappush(self.queue, (rank, self.order, w))

    def take(self) -> Work | None:
        """The next queued work that was not withdrawn, or None."""
        while self.queue:
            w = heapq.heappop(self.queue)[2]
            if not w.withdrawn:
                self.waiting -= 1
                return w
        return None

    def resource(self) -> int | None:
        """A free resource (the lowest numbered), or None."""
        if self.free:  # each given back is numbered below any not brought in yet
            return heapq.heappop(self.free)
        if self.spec.size is None or self.made < self.spec.size:
            self.made += 1
            return self.made
        return None

    def has_free(self) -> bool:
        size = self.spec.size
        return size is None or bool(self.free) or self.made < size

    def give_back(self, resource: int) -> None:
        heapq.heappush(self.free, resource)
        self.busy -= 1

    def note(self, at: int) -> None:
        if self.changes and self.changes[-1][0] == at:
            self.changes[-1] = (at, self.busy, self.waiting)
        else:
            self.changes.append((at, self.busy, self.waiting))
