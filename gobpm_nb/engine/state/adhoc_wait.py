"""The wait of a track running an ad-hoc subprocess (``elements.adhoc``)."""

from __future__ import annotations

from typing import Any

from ...vocabulary import NODE
from .fields import Reader
from .holders import Holders
from .wait_base import Wait


class AdHocWait(Wait):
    """A track runs an ad-hoc subprocess: it waits while the elements activated inside it
    run, and holds a person's choice of the next one to activate (a ``decision`` hold at
    the subprocess; ``Engine.activate``) whenever one may be activated: not while a
    sequential one runs one (``busy``), nor once its completion condition has held and it
    waits for what still runs (``closing``). ``queue``: activated elements a sequential one
    has still to run, in order; ``started``, ``done``: elements activated, tracks inside
    that completed."""

    __slots__ = ("queue", "busy", "closing", "started", "done")
    kind = "adhoc"
    holdable = True
    keeps = True
    holds_as = "decision"

    def __init__(self, node: str, queue: list[str] | None = None, busy: bool = False,
                 closing: bool = False, started: int = 0, done: int = 0):
        super().__init__(node)
        self.queue: list[str] = queue if queue is not None else []
        self.busy = busy
        self.closing = closing
        self.started = started
        self.done = done

    @property
    def open(self) -> bool:
        """Whether a person may activate an element now (its hold is held)."""
        return not self.busy and not self.closing

    def hold(self, holders: Holders, iid: str, tid: str, wait_kind: str = NODE,
             seq: int | None = None) -> None:
        if self.open and (iid, tid) not in holders.decisions:
            holders.hold_decision(iid, tid, self.node, seq)

    def fields(self) -> dict[str, Any]:
        return {"busy": self.busy, "closing": self.closing, "done": self.done,
                "queue": list(self.queue), "started": self.started}

    @classmethod
    def parse(cls, r: Reader, obj: Any, path: str, node: str) -> Wait:
        queue = r.get(obj, "queue", "list", path)
        if not all(isinstance(q, str) for q in queue):
            raise r.fail(f"{path}.queue", "is not a list of element ids")
        w = cls(node, queue, r.get(obj, "busy", "bool", path),
                r.get(obj, "closing", "bool", path), r.get(obj, "started", "int", path),
                r.get(obj, "done", "int", path))
        if w.done < 0 or w.started < 0:
            raise r.fail(path, "its counts of activations do not add up")
        return w


__all__ = ["AdHocWait"]
