"""The base of every wait (``waits`` has one class per kind) and the time text of its
checkpoint form."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from ...kernel import iso
from ...vocabulary import NODE
from .fields import Reader
from .holders import Holders
from .recent import Recent
from .records import Job, Task

#: A recovery step: (the order its holder was first armed in, what re-registers it).
Later = tuple[int, Callable[[], Any]]

#: ``iso`` of the last instants written: many instances are checkpointed at one instant, and
#: armed their timers at one instant for one deadline; the text of a time costs more than a
#: lookup.
_AT_TEXT = Recent(iso, 64)


def at_text(us: int) -> str:
    """``iso(us)``, the same text object for the same instant while it is remembered."""
    text: str = _AT_TEXT[us]
    return text


class Host(Protocol):
    """What waits need of the engine: the holders, the inbox and the job queue."""

    inbox: dict[str, Task]
    jobs: dict[str, Job]
    holders: Holders

    def close_task(self, task_id: str, how: str) -> None: ...
    def end_child(self, child: str, reason: str) -> None: ...


class Wait:
    """Base of every wait. ``node`` is where its trigger fires."""

    __slots__ = ("node", "fired", "order")
    kind: ClassVar[str] = "wait"
    #: Whether its instance may dehydrate with it armed: an engine holder keeps it, or none
    #: is needed (a subprocess's, a multi-instance body's, an error or escalation start's).
    holdable: ClassVar[bool] = False
    #: Whether its arms race: the first to fire withdraws the others (an event-based
    #: gateway's, a multiple event's).
    races: ClassVar[bool] = False
    #: Whether its track's other holds stay when its own fires (an ad-hoc subprocess's
    #: activation: the subprocess goes on, its boundaries armed).
    keeps: ClassVar[bool] = False
    #: The kind of its holder, when it is not its own kind.
    holds_as: ClassVar[str | None] = None

    def __init__(self, node: str):
        self.node = node
        self.fired = False
        #: The order its holder was armed in, as read from a checkpoint (recovery keeps it).
        self.order: int | None = None

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        """Register the engine holder (none for a wait no holder keeps)."""

    def unheld(self) -> str | None:
        """What part of this wait no holder can keep, named for a person; None if all held."""
        return None if self.holdable else f"{self.kind} wait at {self.node!r}"

    def conditions(self) -> int:
        """How many conditions over the instance data this wait evaluates."""
        return 0

    def remaining(self) -> int | None:
        """How long its own timer was when armed (microseconds), if it is a timer."""
        return None

    def withdraw(self, host: Host, reason: str) -> None:
        """Withdraw what it owns outside the instance (a task, a job); holds go separately."""

    def local(self, host: Host, iid: str, tid: str) -> None:
        """After a restore: re-arm what only a resident instance keeps."""

    def restore(self, host: Host, iid: str, tid: str, wait_kind: str, label: str,
                assignee: str | None) -> list[Later]:
        """Restart recovery: what re-registers its holder at the recorded values."""
        if not self.holdable:
            return []
        order = self.order

        def again() -> None:
            self.hold(host.holders, iid, tid, wait_kind, order)
        return [(order or 0, again)]

    def doc(self, order: int | None) -> dict[str, Any]:
        """The checkpoint form (keys sorted); ``order`` is its holder's number in the arming
        order."""
        out: dict[str, Any] = {"kind": self.kind}
        out.update(self.fields())
        if self.holdable:
            out["hold"] = order
        return dict(sorted(out.items()))

    def fields(self) -> dict[str, Any]:
        return {}

    @classmethod
    def read(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        """Build from the checkpoint form at ``path`` (fields checked by ``r``), with the
        order its holder was armed in when it has one."""
        w = cls.parse(r, obj, path, node)
        if cls.holdable:
            w.order = r.get(obj, "hold", "optint", path)
        return w

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        """The fields of its kind, from the checkpoint form at ``path``."""
        return cls(node)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.node}, {self.fields()})"
