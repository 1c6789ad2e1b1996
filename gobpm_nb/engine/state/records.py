"""Runtime records (tracks, tasks, jobs, triggers) and the plain views the public API returns."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ...errors import EngineError, shown
from ...vocabulary import HELD, ROOT

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping

    from ...kernel import Trap
    from .waits import Wait


class TrackView(NamedTuple):
    """A track as the public API shows it. ``origin`` says how it came to be:
    start, fork, join, continuation (a wake) or boundary (a boundary fork)."""

    id: str
    node: str
    state: str
    parents: tuple[str, ...]
    origin: str = "start"


class HoldView(NamedTuple):
    """An engine wait holder: what would wake ``instance``/``track`` and at which node.
    ``state`` is ``held`` (armed) or ``waking`` (its trigger came; the wake is pending)."""

    instance: str
    track: str
    kind: str  # timer | message | signal | task | call | decision
    wait_kind: str  # node | boundary
    node: str
    deadline: datetime | None
    keys: tuple[str, ...]
    state: str = HELD


class DecisionView(NamedTuple):
    """A track waiting at a decision gateway for a person's choice: the flows it may take,
    as (flow id, the node it leads to), in the order drawn; ``several``: one or more of
    them may be taken (an inclusive gateway), else exactly one."""

    instance: str
    track: str
    gateway: str
    flows: tuple[tuple[str, str], ...]
    several: bool = False


class AdHocView(NamedTuple):
    """A track running an ad-hoc subprocess that waits for a person to activate one of its
    ``elements`` (its activatable elements, in the order they were added)."""

    instance: str
    track: str
    adhoc: str
    elements: tuple[str, ...]


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
    kind: str  # track | loop | timer | expiry | retry | wake
    instance: str | None
    track: str | None
    node: str | None


class InstanceView(NamedTuple):
    """An instance's identity and lifecycle, as ``Engine.describe_instance`` returns it."""

    id: str
    process: str | None
    version: int | None
    state: str  # active | completed | terminated | failed
    residency: str  # resident | dehydrated | finished
    parent: str | None = None  # the instance whose call activity started it


class Track:
    """A thread of control: id, position, state, lineage, and what it waits for."""

    __slots__ = ("id", "node", "state", "parents", "origin", "via", "coro", "wait",
                 "boundaries", "scope", "locals", "inputs", "steps")

    def __init__(self, id: str, node: str, parents: tuple[str, ...], origin: str,
                 via: str | None = None, state: str = "ready"):
        self.id = id
        self.node = node
        self.state = state
        self.parents = parents
        self.origin = origin
        self.via = via
        self.coro: Generator[Trap, Any, Any] | None = None
        #: What the track is parked on (see ``waits``), or None.
        self.wait: Wait | None = None
        #: Armed boundaries of the activity it occupies: boundary id -> its wait (on a track
        #: that runs a subprocess, also the armed start events of the event subprocesses in it).
        self.boundaries: dict[str, Wait] = {}
        #: The track that runs the subprocess this one is inside; None: the process itself.
        self.scope: str | None = None
        #: An inner instance of a multi-instance activity: what it alone sees (its item,
        #: ``loopCounter``, and what it wrote when its outputs are collected); else None.
        self.locals: dict[str, Any] | None = None
        #: The values of the input mappings of the element it occupies (``Element.io``),
        #: seen by that element alone until it is left; else None.
        self.inputs: dict[str, Any] | None = None
        #: Nodes entered since its lineage last waited (``Run.entering``); not checkpointed.
        self.steps = 0

    def view(self) -> TrackView:
        return TrackView(self.id, self.node, self.state, self.parents, self.origin)

    def __repr__(self) -> str:
        return f"Track({self.id}, {self.node}, {self.state})"


class Trigger:
    """What woke a wait: its kind, where it fires and, for messages and tasks, a payload."""

    __slots__ = ("kind", "node", "wait_kind", "payload", "track", "ref", "steps")

    def __init__(self, kind: str, node: str, wait_kind: str, track: str,
                 payload: dict[str, Any] | None = None, ref: str | None = None):
        self.ref = ref  # the task or job id a completion belongs to
        #: The count of steps without a wait the track it resumes goes on from: 0 for a
        #: wait that fired (a timer, a message, a task...); the count of the track that ended
        #: a subprocess, a multi-instance activity or a called instance (``Run.entering``).
        self.steps = 0
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


def no_task(closed: Mapping[str, str], task_id: object) -> EngineError:
    """Why ``task_id`` names no open task: it was closed (``closed``: task id -> how), or
    it never was (a completing or a reading command raises it)."""
    how = closed.get(task_id) if isinstance(task_id, str) else None
    if how is not None:
        return EngineError(f"task {shown(task_id)} is already {how}")
    return EngineError(f"unknown task {shown(task_id)}")


class Job:
    __slots__ = ("id", "topic", "instance", "track", "node", "worker")

    def __init__(self, id: str, topic: str, instance: str, track: str, node: str):
        self.id = id
        self.topic = topic
        self.instance = instance
        self.track = track
        self.node = node
        self.worker: str | None = None


def join_key(node: str, scope: str | None) -> str:
    """Where a join's arrivals are kept: the gateway's id, and, inside a subprocess, the
    track running it (``gw@t3``: the same gateway may be waited at in several scopes)."""
    return node if scope is None else f"{node}@{scope}"


def join_parts(key: str) -> tuple[str, str | None]:
    node, at, scope = key.rpartition("@")
    if at and scope.startswith("t") and scope[1:].isdigit():
        return node, scope
    return key, None


def encloses(tracks: Mapping[str, Track], host: str, tid: str) -> bool:
    """Whether track ``tid`` is ``host`` or runs inside the scope ``host`` runs (``ROOT``:
    the process's, around every track)."""
    up: str | None = tid
    while up is not None and up != host and host != ROOT:
        tr = tracks.get(up)
        up = tr.scope if tr is not None else None
    return up is not None
