"""Runtime records (tracks, holds, tasks, jobs) and the plain views the public API returns."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from ..kernel import Deadline

#: Track states. A track in one of TERMINAL never runs again.
STATES = ("ready", "running", "waiting", "dehydrated", "merged", "completed", "withdrawn",
          "cancelled", "failed")
TERMINAL = frozenset({"dehydrated", "merged", "completed", "withdrawn", "cancelled", "failed"})


class TrackView(NamedTuple):
    """A track as the public API shows it. ``origin`` says how it came to be:
    start, fork, join, continuation (a wake) or boundary (a boundary fork)."""

    id: str
    node: str
    state: str
    parents: tuple[str, ...]
    origin: str = "start"


class HoldView(NamedTuple):
    """An engine wait holder: what would wake ``instance``/``track`` and at which node."""

    instance: str
    track: str
    kind: str  # timer | message | signal | task
    wait_kind: str  # node | boundary
    node: str
    deadline: datetime | None
    keys: tuple[str, ...]


class TaskView(NamedTuple):
    id: str
    instance: str
    track: str
    node: str
    name: str
    assignee: str | None
    created: datetime


class JobView(NamedTuple):
    id: str
    topic: str
    instance: str
    node: str
    worker: str | None
    data: dict[str, Any]


class EventView(NamedTuple):
    """What one ``step()`` ran."""

    at: datetime
    kind: str  # track | loop | timer | expiry | retry
    instance: str | None
    track: str | None
    node: str | None


class Track:
    """A thread of control: id, position, state, lineage, and what it waits for."""

    __slots__ = ("id", "node", "state", "parents", "origin", "via", "coro", "wait", "bounds",
                 "remaining")

    def __init__(self, id: str, node: str, parents: tuple[str, ...], origin: str,
                 via: str | None = None, state: str = "ready"):
        self.id = id
        self.node = node
        self.state = state
        self.parents = parents
        self.origin = origin
        self.via = via
        self.coro: Any = None
        #: What the track is parked on, as JSON-able data (deadlines in microseconds).
        self.wait: dict[str, Any] | None = None
        #: Armed boundaries of the activity it occupies: boundary id -> JSON-able arm record.
        self.bounds: dict[str, dict[str, Any]] = {}
        #: For a timer wait: how long it was when armed (what eligibility is judged on).
        self.remaining: int | None = None

    def view(self) -> TrackView:
        return TrackView(self.id, self.node, self.state, self.parents, self.origin)

    def __repr__(self) -> str:
        return f"Track({self.id}, {self.node}, {self.state})"


class Hold(Deadline):
    """One registered wait holder. A timer's holder is itself its entry in the kernel's
    deadline heap (``at`` is the deadline), so a held timer costs one object. ``seq`` comes
    from the kernel's one counter for every kind, so it is also the order holds were armed in.
    A hold is alive until it is released (``fn`` is cleared then). Each kind keeps only the
    fields it needs; the others read as None."""

    __slots__ = ("instance", "track", "site")
    name: str | None = None  # message or signal name
    key: str | None = None  # message correlation value (index form), or the task id
    cycles: int | None = None  # timer cycle repetitions left after this one; -1 unbounded

    def __init__(self, seq: int, instance: str, track: str, site: tuple[str, str, str],
                 fire: Any, deadline: int = 0):
        super().__init__(deadline, seq, fire, None)
        self.arg = self
        self.instance = instance
        self.track = track
        self.site = site  # (kind, wait kind, node), one tuple shared by holds at one place

    @property
    def kind(self) -> str:
        """timer | message | signal | task"""
        return self.site[0]

    @property
    def wait_kind(self) -> str:
        """node | boundary"""
        return self.site[1]

    @property
    def node(self) -> str:
        return self.site[2]

    @property
    def alive(self) -> bool:
        return self.fn is not None

    @property
    def deadline(self) -> int | None:
        return self.at if self.kind == "timer" else None

    @property
    def task(self) -> str | None:
        return self.key if self.kind == "task" else None

    def __repr__(self) -> str:
        return f"Hold({self.instance}/{self.track} {self.kind} {self.wait_kind} {self.node})"


class TimerHold(Hold):
    __slots__ = ("cycles",)


class SubscriptionHold(Hold):
    __slots__ = ("name", "key")


class TaskHold(Hold):
    __slots__ = ("key",)


class Trigger:
    """What woke a wait: the hold it came through and, for messages and tasks, a payload."""

    __slots__ = ("kind", "node", "wait_kind", "payload", "track", "ref")

    def __init__(self, kind: str, node: str, wait_kind: str, track: str,
                 payload: dict[str, Any] | None = None, ref: str | None = None):
        self.ref = ref  # the task or job id a completion belongs to
        self.kind = kind
        self.node = node
        self.wait_kind = wait_kind
        self.track = track
        self.payload = payload

    def __repr__(self) -> str:
        return f"Trigger({self.kind} at {self.node} for {self.track})"


class Task:
    __slots__ = ("id", "instance", "track", "node", "name", "assignee", "created")

    def __init__(self, id: str, instance: str, track: str, node: str, name: str,
                 assignee: str | None, created: int):
        self.id = id
        self.instance = instance
        self.track = track
        self.node = node
        self.name = name
        self.assignee = assignee
        self.created = created


class Job:
    __slots__ = ("id", "topic", "instance", "track", "node", "worker")

    def __init__(self, id: str, topic: str, instance: str, track: str, node: str):
        self.id = id
        self.topic = topic
        self.instance = instance
        self.track = track
        self.node = node
        self.worker: str | None = None
