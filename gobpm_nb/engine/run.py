"""A resident instance: its loop coroutine, its track coroutines, and the state they write.

The instance loop owns the mailbox (boundary fires, data changes, quiet points); each live
track is a coroutine that runs one node per scheduler event. Everything runs on the kernel's
one thread, one event at a time, so an instance's state has one writer at any moment.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
from collections import deque
from typing import TYPE_CHECKING, Any

from ..kernel import PASS, SUSPEND
from ..model import Definition
from ..model import elements as el
from .records import TERMINAL, Job, Task, Track, Trigger

if TYPE_CHECKING:
    from .core import Core

log = logging.getLogger("gobpm_nb")

PARK = "park"  # a behaviour's answer: the track waits for a trigger


class Incident(Exception):
    """The instance cannot go on: the message names the element and the cause."""

    def __init__(self, node: str, cause: str, error: str | None = None):
        self.node = node
        self.cause = cause
        self.error = error
        super().__init__(f"{node}: {cause}")


class Released:
    """A dehydrated instance's whole footprint in memory: who it is, the history of its ended
    tracks, and its engine holders. Everything else lives in its checkpoint in the store."""

    __slots__ = ("id", "defn", "history", "_holds")
    residency = "dehydrated"
    state = "active"
    stored = True

    def __init__(self, iid: str, defn: Definition | None, history: list[Any] | None,
                 holds: tuple[Any, ...]):
        self.id = iid
        self.defn = defn
        self.history = history or None
        self.holds = holds

    @property
    def holds(self) -> tuple[Any, ...]:
        """Its holders, in the order armed (one is kept bare: the common case, and cheaper)."""
        held = self._holds
        return held if type(held) is tuple else (held,)

    @holds.setter
    def holds(self, holds: tuple[Any, ...]) -> None:
        self._holds = holds[0] if len(holds) == 1 else holds


class Run:
    """One instance's record. While resident it holds live tracks and data; while dehydrated
    only its terminal tracks (history) stay here and the rest lives in the store."""

    __slots__ = ("core", "id", "defn", "state", "residency", "data", "tracks", "seq", "joins",
                 "mailbox", "loop", "loop_waiting", "running", "conditionals", "warned",
                 "stored", "holds")

    def __init__(self, core: Core, iid: str, defn: Definition,
                 data: dict[str, Any] | None):
        self.core = core
        self.id = iid
        self.defn = defn
        self.state = "active"
        self.residency = "resident"
        self.data: dict[str, Any] | None = data
        self.tracks: dict[str, Track] = {}
        self.seq = {"track": 0, "task": 0, "job": 0}
        self.joins: dict[str, dict[str, list[str]]] = {}
        self.mailbox: deque[tuple[Any, ...]] = deque()
        self.loop: Any = None
        self.loop_waiting = False
        self.running = 0  # tracks ready or running
        self.conditionals = 0  # armed conditional waits and boundaries
        self.warned: set[str] | None = None  # elements already warned about, once each
        self.stored = False  # whether the store holds a checkpoint of this instance
        self.holds: list[Any] = []  # this instance's engine holders, in the order armed

    # -- facts ----------------------------------------------------------------------------
    def emit(self, kind: str, track: str | None, node: str | None,
             details: dict[str, Any] | None = None) -> None:
        self.core.emit(kind, self.id, track, node, details)

    def set_state(self, tr: Track, state: str) -> None:
        if tr.state != state:
            tr.state = state
            self.emit("track_state", tr.id, tr.node, {"state": state})

    # -- tracks ---------------------------------------------------------------------------
    def new_track(self, node: str, parents: tuple[str, ...], origin: str,
                  via: str | None = None) -> Track:
        self.seq["track"] += 1
        tr = Track(sys.intern(f"t{self.seq['track']}"), node, parents, origin, via)
        self.tracks[tr.id] = tr
        self.emit("track_state", tr.id, node,
                  {"state": "ready", "origin": origin, "parents": len(parents)})
        return tr

    def spawn(self, tr: Track, trigger: Trigger | None = None, within: bool = False) -> None:
        """Give a track its coroutine; it enters its node (with ``trigger`` if one is in hand)
        in an event of its own, or ``within`` the event running now."""
        tr.coro = track_body(self, tr, trigger)
        self.running += 1
        if within:
            self.core.kernel.adopt(tr.coro, (self.id, tr.id))
            self.core.kernel.resume_within(tr.coro, None)
        else:
            self.core.kernel.spawn(tr.coro, (self.id, tr.id), None)

    def start_loop(self) -> None:
        self.loop = loop_body(self)
        self.loop_waiting = False
        self.core.kernel.spawn(self.loop, (self.id, None), None)

    def live_tracks(self) -> list[Track]:
        return [t for t in self.tracks.values() if t.state not in TERMINAL]

    def park(self, tr: Track) -> None:
        tr.state = "waiting"
        self.running -= 1
        if self.running == 0:
            self.core.on_quiet(self)

    def unpark(self, tr: Track) -> None:
        tr.state = "running"
        self.running += 1

    def end_track(self, tr: Track, state: str) -> None:
        """A track's coroutine is about to return for good (or was closed)."""
        if tr.state in ("ready", "running"):
            self.running -= 1
        self.set_state(tr, state)
        tr.coro = None
        if not self.live_tracks() and self.state == "active":
            self.finish("completed")
        elif self.running == 0 and self.state == "active":
            self.core.on_quiet(self)

    def stop_track(self, tr: Track, state: str, reason: str) -> None:
        """End a track from outside it: close its coroutine and withdraw all it owns."""
        if tr.coro is not None and tr.coro is not self.core.current:
            self.core.kernel.close(tr.coro)
        self.drop_waits(tr, reason)
        if tr.state in ("ready", "running"):
            self.running -= 1
        tr.coro = None
        self.set_state(tr, state)

    def withdraw(self, tr: Track, reason: str, firing: Any = None) -> None:
        """Withdraw at once everything outside the instance that could still fire for a
        track: its holds (``firing`` is released as fired), its task, its job."""
        self.core.holders.release_waits(self.id, tr.id, reason, firing=firing)
        wait = tr.wait
        if wait is not None:
            if wait.get("kind") == "job":
                self.core.jobs.pop(wait["job"], None)
            if wait.get("kind") == "task":
                self.core.close_task(wait["task"], reason)
            wait["fired"] = True

    def drop_waits(self, tr: Track, reason: str) -> None:
        """Withdraw everything a track owns: holds, task or job, conditional arms, join."""
        self.withdraw(tr, reason)
        wait = tr.wait or {}
        if wait.get("kind") == "conditional":
            self.conditionals -= 1
        for arm in (wait.get("arms") or ()):
            if arm["kind"] == "conditional":
                self.conditionals -= 1
        self.disarm(tr)
        for flows in self.joins.values():
            for waiting in flows.values():
                if tr.id in waiting:
                    waiting.remove(tr.id)
        tr.wait = None

    def disarm(self, tr: Track) -> None:
        """The activity is over: withdraw every boundary still armed over it."""
        holders = self.core.holders
        for hold in holders.of_track(self.id, tr.id):
            if hold.wait_kind == "boundary":
                holders.release(hold, "withdrawn")
        self.conditionals -= sum(1 for b in tr.bounds.values() if b["kind"] == "conditional")
        tr.bounds = {}

    # -- instance ends --------------------------------------------------------------------
    def finish(self, state: str, tr: Track | None = None, detail: dict | None = None) -> None:
        """End the instance: every live track is stopped, then the loop."""
        ending = {"terminated": "cancelled", "failed": "withdrawn"}.get(state, "completed")
        for other in self.live_tracks():
            if other is not tr:
                self.stop_track(other, ending, "withdrawn")
        self.joins = {}
        self.state = state
        self.residency = "finished"
        if state == "failed":
            self.emit("instance_failed", tr.id if tr else None, tr.node if tr else None, detail)
        else:
            self.emit("instance_completed", None, None, {"state": state})
        if self.loop is not None and self.loop is not self.core.current:
            self.core.kernel.close(self.loop)
        self.loop = None
        self.core.on_finished(self)

    def fail(self, tr: Track, exc: Incident) -> None:
        details = {"cause": exc.cause}
        if exc.error:
            details["error"] = exc.error
        self.emit("incident", tr.id, exc.node, details)
        if tr.state not in TERMINAL:
            self.stop_track(tr, "failed", "withdrawn")
        self.finish("failed", tr, details)

    # -- data -----------------------------------------------------------------------------
    def merge(self, values: dict[str, Any] | None, node: str) -> None:
        """Merge task outputs or a payload into the instance data (JSON values only)."""
        if not values:
            return
        if not isinstance(values, dict):
            raise Incident(node, f"returned {type(values).__name__}, not a dict")
        try:
            values = json.loads(json.dumps(values))
        except (TypeError, ValueError) as exc:
            raise Incident(node, f"returned data that is not JSON: {exc}") from None
        assert self.data is not None
        self.data.update(values)
        self.emit("data_changed", None, node, {"fields": sorted(values)})
        if self.conditionals:
            self.post(("data",))

    def data_copy(self) -> dict[str, Any]:
        return copy.deepcopy(self.data) if self.data is not None else {}

    # -- mailbox --------------------------------------------------------------------------
    def post(self, item: tuple[Any, ...]) -> None:
        self.mailbox.append(item)
        if self.loop_waiting and self.loop is not None:
            self.loop_waiting = False
            self.core.kernel.resume(self.loop)

    # -- ids ------------------------------------------------------------------------------
    def new_task(self, tr: Track, node: el.UserTask) -> Task:
        self.seq["task"] += 1
        tid = f"{self.id}:{node.id}:{self.seq['task']}"
        return Task(tid, self.id, tr.id, node.id, node.label, node.assignee, self.core.kernel.now)

    def new_job(self, tr: Track, node: el.ServiceTask) -> Job:
        self.seq["job"] += 1
        return Job(f"{self.id}:{node.id}:{self.seq['job']}", node.topic or "", self.id, tr.id,
                   node.id)


async def track_body(run: Run, tr: Track, trigger: Trigger | None,
                     parked: bool = False) -> None:
    """One track: enter a node, park while it waits, leave by its flows, one node per event.

    A track is born with ``await SUSPEND``. Born ``parked`` (a track rebuilt from a
    checkpoint), that first suspension is its wait: the first resume brings the trigger."""
    from .behaviour import ENTER, FIRE, leave

    first = await SUSPEND
    nodes = run.defn.nodes
    core = run.core
    core.current = tr.coro
    try:
        if parked:
            run.unpark(tr)
            trigger = first
        else:
            tr.state = "running"
            run.emit("node_entered", tr.id, tr.node, None)
        node = nodes[tr.node]
        if trigger is None:
            result = ENTER[node.kind](run, tr, node)
        else:
            result = FIRE[node.kind](run, tr, node, trigger)
            if result is not PARK:
                tr.wait = None
        while True:
            while result is PARK:
                run.park(tr)
                got = await SUSPEND
                core.current = tr.coro
                run.unpark(tr)
                result = FIRE[nodes[tr.node].kind](run, tr, nodes[tr.node], got)
                if result is not PARK:
                    tr.wait = None
            if result is None:
                return
            leave(run, tr, result)
            await PASS
            core.current = tr.coro
            run.emit("node_entered", tr.id, tr.node, None)
            node = nodes[tr.node]
            result = ENTER[node.kind](run, tr, node)
    except Incident as exc:
        run.fail(tr, exc)


async def loop_body(run: Run) -> None:
    """The instance loop: handles its mailbox one item per event, then sleeps."""
    from .behaviour import handle

    await SUSPEND
    while True:
        while run.mailbox:
            run.core.current = run.loop
            item = run.mailbox.popleft()
            try:
                handle(run, item)
            except Incident as exc:
                tr = run.tracks.get(item[1]) if len(item) > 1 else None
                run.fail(tr or next(iter(run.tracks.values())), exc)
            if run.residency != "resident":
                return
            if run.mailbox:
                await PASS
            elif item[0] != "quiet" and run.running == 0:
                run.core.on_quiet(run)  # what the item changed may have made it quiet
        run.loop_waiting = True
        await SUSPEND
