"""What a parked track waits for: one small class per wait kind.

A wait sits on a node: the node a track is parked on (``wait_kind`` node), an arm of the
event-based gateway it is parked on (also node), or a boundary over the activity it occupies
(``wait_kind`` boundary). Each class owns, for its kind: registering its engine holder
(``hold``), whether the instance may dehydrate with it armed (``holdable``), withdrawing
what it owns outside the instance (``withdraw``), its checkpoint form (``doc`` / ``load``) and
re-arming after a restore (``restore`` for holders, ``local`` for what only a resident
instance keeps). ``fired`` becomes True when its trigger was accepted and the track has not
yet run the fire path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...vocabulary import NODE
from .adhoc_wait import AdHocWait
from .fields import Reader
from .holders import Holders
from .records import Job, Task
from .wait_base import Host as Host
from .wait_base import Later as Later
from .wait_base import Wait as Wait
from .wait_base import at_text as at_text

if TYPE_CHECKING:
    from .records import Track

class TimerWait(Wait):
    """Fires when the virtual clock reaches ``deadline``. ``armed`` is when it was armed:
    ``deadline - armed`` is the wait as armed, which the dehydration threshold judges.
    On a boundary, ``cycles`` counts the repetitions left after this one (-1: unbounded)."""

    __slots__ = ("deadline", "armed", "cycles")
    kind = "timer"
    holdable = True

    def __init__(self, node: str, deadline: int, armed: int, cycles: int | None = None):
        self.node = node  # the base fields, set here: one call per timer armed
        self.fired = False
        self.order: int | None = None
        self.deadline = deadline
        self.armed = armed
        self.cycles = cycles

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_timer(iid, tid, self.node, self.deadline, wait_kind, self.cycles, seq)

    def remaining(self) -> int | None:
        return self.deadline - self.armed

    def fields(self) -> dict[str, Any]:
        return {"deadline": at_text(self.deadline), "armed": at_text(self.armed),
                "cycles": self.cycles}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, *r.fields(obj, path, (("deadline", "time"), ("armed", "time"),
                                                 ("cycles", "optint"))))


class MessageWait(Wait):
    """Fires when a message named ``name`` is published with correlation value ``key``
    (index form); a receive task waits this way too."""

    __slots__ = ("name", "key")
    kind = "message"
    holdable = True

    def __init__(self, node: str, name: str, key: str):
        super().__init__(node)
        self.name = name
        self.key = key

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_subscription(iid, tid, self.node, "message", self.name, self.key,
                                  wait_kind, seq)

    def fields(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, *r.fields(obj, path, (("name", "str"), ("key", "str"))))


class SignalWait(Wait):
    """Fires when the signal ``name`` is broadcast."""

    __slots__ = ("name",)
    kind = "signal"
    holdable = True

    def __init__(self, node: str, name: str):
        super().__init__(node)
        self.name = name

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_subscription(iid, tid, self.node, "signal", self.name, None, wait_kind,
                                  seq)

    def fields(self) -> dict[str, Any]:
        return {"name": self.name}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, r.get(obj, "name", "str", path))


class TaskWait(Wait):
    """Fires when user task ``task`` (in the engine's inbox since ``created``) is completed."""

    __slots__ = ("task", "created")
    kind = "task"
    holdable = True

    def __init__(self, node: str, task: str, created: int):
        super().__init__(node)
        self.task = task
        self.created = created

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_task(iid, tid, self.node, self.task, seq)

    def withdraw(self, host: Host, reason: str) -> None:
        host.close_task(self.task, reason)

    def restore(self, host: Host, iid: str, tid: str, wait_kind: str, label: str,
                assignee: str | None) -> list[Later]:
        task = Task(self.task, iid, tid, self.node, label, assignee, self.created)
        order = self.order

        def again() -> None:
            host.inbox[task.id] = task  # the inbox keeps its order too
            self.hold(host.holders, iid, tid, wait_kind, order)
        return [(order or 0, again)]

    def fields(self) -> dict[str, Any]:
        return {"task": self.task, "created": at_text(self.created)}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, *r.fields(obj, path, (("task", "str"), ("created", "time"))))


class CallWait(Wait):
    """Fires when the child instance a call activity started ends (completed, or with an
    error it did not catch). Withdrawing it terminates the child."""

    __slots__ = ("child",)
    kind = "call"
    holdable = True

    def __init__(self, node: str, child: str):
        super().__init__(node)
        self.child = child

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_call(iid, tid, self.node, self.child, seq)

    def withdraw(self, host: Host, reason: str) -> None:
        host.end_child(self.child, reason)

    def fields(self) -> dict[str, Any]:
        return {"child": self.child}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, r.get(obj, "child", "str", path))


class DecisionWait(Wait):
    """Fires when a person chooses one of a decision gateway's flows (``Engine.decide``);
    the chosen flow is the trigger's ``ref``."""

    __slots__ = ()
    kind = "decision"
    holdable = True

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        holders.hold_decision(iid, tid, self.node, seq)


class JobWait(Wait):
    """Fires when worker job ``job`` is completed or failed. Active work, not a passive
    wait: no holder keeps it, so its instance stays resident."""

    __slots__ = ("job", "topic")
    kind = "job"

    def __init__(self, node: str, job: str, topic: str = ""):
        super().__init__(node)
        self.job = job
        self.topic = topic

    def withdraw(self, host: Host, reason: str) -> None:
        host.jobs.pop(self.job, None)

    def local(self, host: Host, iid: str, tid: str) -> None:
        if self.job not in host.jobs:
            host.jobs[self.job] = Job(self.job, self.topic, iid, tid, self.node)

    def fields(self) -> dict[str, Any]:
        return {"job": self.job, "topic": self.topic}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, r.get(obj, "job", "str", path), r.get(obj, "topic", "str", path))


class ConditionalWait(Wait):
    """Fires when its condition over the instance's own data holds, checked after each data
    change. Never held (the spec's dehydratable waits: its trigger is the instance's own
    data commits, so releasing the instance would give up what fires it): an armed one keeps
    its instance resident; a checkpoint keeps it with no holder's number. On a boundary,
    ``last`` is the condition's value at the last check (it fires on a rise). ``order`` (no
    holder's, as for held waits: its own): a number from the kernel's sequence when it was
    armed; after a data change the waits are checked in that order (a track's
    id would not do: a continuation fork gives a woken track a new one)."""

    __slots__ = ("last",)
    kind = "conditional"
    holdable = False

    def __init__(self, node: str, last: bool = False, order: int = 0):
        super().__init__(node)
        self.last = last
        self.order = order

    def conditions(self) -> int:
        return 1

    def restore(self, host: Host, iid: str, tid: str, wait_kind: str, label: str,
                assignee: str | None) -> list[Later]:
        return []  # no holder to register again

    def doc(self, order: int | None) -> dict[str, Any]:
        return {"kind": self.kind, "last": self.last, "order": self.order}  # no holder's

    def fields(self) -> dict[str, Any]:
        return {"last": self.last, "order": self.order}

    @classmethod
    def read(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls.parse(r, obj, path, node)  # its order is its own, not a holder's

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        order = obj.get("order", 0) if isinstance(obj, dict) else 0  # (absent before)
        if type(order) is not int or order < 0:
            raise r.fail(f"{path}.order", "is not a sequence number")
        return cls(node, r.get(obj, "last", "bool", path), order)


class JoinWait(Wait):
    """A track arrived at a parallel join before its siblings. It gave up its coroutine and
    fires nothing itself: the last arrival merges every waiting track."""

    __slots__ = ()
    kind = "join"


class ScopeWait(Wait):
    """A track runs a subprocess: it waits until every track inside has ended. No holder
    keeps it, and none is needed: only a trigger of a track inside (each held on its own)
    or of a boundary over it can move it."""

    __slots__ = ()
    kind = "scope"
    holdable = True


class ManyWait(Wait):
    """A multi-instance activity's body: it waits while its inner instances run. ``items``
    are a sequential one's items still to come (captured when it began), ``outputs`` the
    output collection so far (None without one)."""

    __slots__ = ("total", "started", "done", "items", "outputs")
    kind = "many"
    holdable = True

    def __init__(self, node: str, total: int, items: list[Any] | None = None,
                 outputs: list[Any] | None = None, started: int = 0, done: int = 0):
        super().__init__(node)
        self.total = total
        self.items = items
        self.outputs = outputs
        self.started = started
        self.done = done

    def fields(self) -> dict[str, Any]:
        return {"total": self.total, "started": self.started, "done": self.done,
                "items": self.items, "outputs": self.outputs}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        w = cls(node, r.get(obj, "total", "int", path), r.get(obj, "items", "optlist", path),
                r.get(obj, "outputs", "optlist", path), r.get(obj, "started", "int", path),
                r.get(obj, "done", "int", path))
        if not 0 <= w.done <= w.started <= w.total or (
                w.outputs is not None and len(w.outputs) != w.total):
            raise r.fail(path, "its counts of inner instances do not add up")
        return w


class CompensateWait(Wait):
    """A compensation throw, or a cancelled transaction, runs the handlers of its records one
    at a time: ``queue`` holds the records still to compensate (next first), ``current`` the
    activity whose handler runs now (its tracks are inside the waiting track, as in a
    scope). No holder keeps it, and none is needed: only the handler's tracks move it."""

    __slots__ = ("queue", "current")
    kind = "compensate"
    holdable = True

    def __init__(self, node: str, queue: list[dict[str, Any]], current: str | None = None):
        super().__init__(node)
        self.queue = queue
        self.current = current

    def fields(self) -> dict[str, Any]:
        return {"current": self.current, "queue": self.queue}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        return cls(node, r.get(obj, "queue", "list", path), r.get(obj, "current", "optstr", path))


class CatchWait(Wait):
    """The start of an event subprocess caught where an error or escalation is raised:
    armed while its scope is active, held by nothing because nothing outside fires it."""

    __slots__ = ()
    kind = "catch"
    holdable = True


class ArmsWait(Wait):
    """A wait made of arms, each a wait of its own with its own holder: holdable when every
    arm is; holding it (again, after a restore) holds each arm."""

    __slots__ = ("arms",)

    def __init__(self, node: str, arms: list[Wait] | None = None):
        super().__init__(node)
        self.arms: list[Wait] = arms if arms is not None else []

    @property
    def holdable(self) -> bool:  # type: ignore[override]
        return all(a.holdable for a in self.arms)

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        for a in self.arms:
            a.hold(holders, iid, tid, wait_kind)

    def restore(self, host: Host, iid: str, tid: str, wait_kind: str, label: str,
                assignee: str | None) -> list[Later]:
        return [step for a in self.arms
                for step in a.restore(host, iid, tid, wait_kind, label, assignee)]


class GatewayWait(ArmsWait):
    """An event-based gateway: a race of its arms (each a timer, message, signal or
    conditional wait on its catch node). The first arm to fire wins; the others are
    withdrawn at once, so a loser never fires."""

    __slots__ = ()
    kind = "gateway"
    races = True

    def unheld(self) -> str | None:
        for a in self.arms:
            if not a.holdable:
                return f"{a.kind} arm {a.node!r} of {self.node!r}"
        return None

    def conditions(self) -> int:
        return sum(a.conditions() for a in self.arms)

    def doc(self, order: int | None) -> dict[str, Any]:
        raise NotImplementedError("a gateway's form needs each arm's order: use arms_doc")

    def arms_doc(self, orders: dict[str, int]) -> dict[str, Any]:
        return {"arms": [dict(sorted({**a.doc(orders.get(a.node)), "node": a.node}.items()))
                         for a in self.arms], "kind": self.kind}

    @classmethod
    def read(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        arms = []
        for i, a in enumerate(r.get(obj, "arms", "list", path)):
            where = f"{path}.arms[{i}]"
            arms.append(read_wait(r, a, where, r.get(a, "node", "str", where), ARM_KINDS))
        return cls(node, arms)


class MultipleWait(ArmsWait):
    """An event with several definitions (``model.multiple``): one arm per definition not
    come yet (a timer, message or signal wait on the event's own node, each held), and the
    kinds that have come (``fired``). A multiple one races its arms, as an event-based
    gateway does; a ``parallel`` one waits until every arm has come, each arm's hold
    released as it comes."""

    __slots__ = ("parallel", "came")
    kind = "multiple"

    def __init__(self, node: str, arms: list[Wait] | None = None, parallel: bool = False,
                 came: list[str] | None = None):
        super().__init__(node, arms)
        self.parallel = parallel
        self.came: list[str] = came if came is not None else []

    @property
    def races(self) -> bool:  # type: ignore[override]
        return not self.parallel

    def unheld(self) -> str | None:
        return None if self.holdable else f"multiple wait at {self.node!r}"

    def arm(self, kind: str) -> Wait | None:
        return next((a for a in self.arms if a.kind == kind), None)

    def doc(self, order: int | None) -> dict[str, Any]:
        raise NotImplementedError("its form needs each arm's order: use arms_doc")

    def arms_doc(self, orders: dict[str, int]) -> dict[str, Any]:
        return {"arms": [a.doc(orders.get(a.kind)) for a in self.arms], "came": self.came,
                "kind": self.kind, "parallel": self.parallel}

    @classmethod
    def read(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        arms = [read_wait(r, a, f"{path}.arms[{i}]", node, ("timer", "message", "signal"))
                for i, a in enumerate(r.get(obj, "arms", "list", path))]
        came = r.get(obj, "came", "list", path)
        if not all(isinstance(k, str) for k in came):
            raise r.fail(f"{path}.came", "is not a list of kinds")
        return cls(node, arms, r.get(obj, "parallel", "bool", path), came)


KINDS: dict[str, type[Wait]] = {w.kind: w for w in (
    TimerWait, MessageWait, SignalWait, TaskWait, JobWait, ConditionalWait, JoinWait,
    GatewayWait, ScopeWait, CatchWait, ManyWait, CallWait, DecisionWait, CompensateWait,
    MultipleWait, AdHocWait)}
ARM_KINDS = ("timer", "message", "signal", "conditional")
BOUNDARY_KINDS = ("timer", "message", "signal", "conditional", "catch", "multiple")


def read_wait(r: Reader, obj: Any, path: str, node: str,
              allowed: tuple[str, ...] | None = None) -> Wait:
    """The wait in checkpoint form at ``path``, of one of the ``allowed`` kinds."""
    kind = r.get(obj, "kind", "str", path)
    if kind not in KINDS or (allowed is not None and kind not in allowed):
        raise r.fail(f"{path}.kind", f"unknown kind {kind!r}")
    return KINDS[kind].read(r, obj, path, node)


def track_holdable(tr: Track) -> str | None:
    """What of a parked track's waits (its own and its boundaries') no holder keeps
    (Invariant 2, docs/architecture.md)."""
    missing = tr.wait.unheld() if tr.wait is not None else f"track at {tr.node!r}"
    if missing is not None:
        return missing
    for bid, w in tr.boundaries.items():
        if not w.holdable:
            return f"{w.kind} boundary {bid!r} on {tr.node!r}"
    return None


def wait_doc(w: Wait | None, orders: dict[tuple[str, str, str], int], wait_kind: str
             ) -> dict[str, Any] | None:
    """A wait's checkpoint form, with the order of each of its holders (``orders``: (node,
    wait kind, hold kind) -> number)."""
    if w is None:
        return None
    if isinstance(w, GatewayWait):
        return w.arms_doc({node: n for (node, wk, _), n in orders.items() if wk == NODE})
    if isinstance(w, MultipleWait):
        return w.arms_doc({kind: n for (node, wk, kind), n in orders.items()
                           if wk == wait_kind and node == w.node})
    return w.doc(orders.get((w.node, wait_kind, w.holds_as or w.kind)))
