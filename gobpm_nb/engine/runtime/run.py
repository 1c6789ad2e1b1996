"""An instance's record: resident (``Run``) or dehydrated (``Dehydrated``).

A resident instance has a loop coroutine that owns its mailbox (boundary fires, data changes,
quiet points) and one coroutine per live track; everything runs on the kernel's one thread,
one event at a time, so an instance's state has one writer at any moment. What a ``Run``
needs of the engine it gets through ``RunHost``; it never imports the engine.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import TYPE_CHECKING, Any, Protocol

from ...model import Definition
from ...vocabulary import ACTIVE, FINISHED, NODE, RESIDENT, ROOT, TERMINAL, WAITING
from ..state.holders import Hold, Holders
from ..state.incident import Incident, clean
from ..state.records import Job, Task, Track, Trigger, join_parts
from .calls import Calls
from .outside import Outside
from .reading import Reading

if TYPE_CHECKING:
    from ...kernel import Kernel
    from .messaging import Messages

BUSY = frozenset({"ready", "running"})
#: Waits over tracks inside them: those the last ends (``close_scope``), those that stop them.
SCOPES, RUNS = ("scope", "compensate"), ("scope", "many", "compensate", "adhoc")
#: What an instance's end does to the tracks still live: by how it ended, else completed.
ENDING = {"terminated": "cancelled", "failed": "withdrawn"}


class RunHost(Calls, Protocol):
    """What an instance needs of the engine it runs in (its call activities: ``Calls``)."""

    kernel: Kernel
    holders: Holders
    inbox: dict[str, Task]
    jobs: dict[str, Job]
    tape: Outside  # what user callables answered (recorded live, served to a replay)
    max_steps: int  # nodes a track may enter without its lineage waiting (``entering``)
    seed: int  # what decisions' rules draw from (``draws.drawn``)

    @property
    def behaviour(self) -> Any:
        """What each element does (``tracks.Behaviour``), handed to the coroutines."""

    def emit(self, kind: str, instance: str | None, track: str | None, node: str | None,
             details: dict[str, Any] | None = None) -> None: ...
    def close_task(self, task_id: str, how: str) -> None: ...
    def end_child(self, child: str, reason: str) -> None: ...
    def on_quiet(self, run: Run) -> None: ...
    def on_finished(self, run: Run) -> None: ...
    @property
    def hub(self) -> Messages: ...  # messages and signals (``hub.Hub``)


class Run(Reading):
    """A resident instance: live tracks, data, joins, mailbox and loop (and, for a moment,
    a finished one: the engine keeps its summary, ``Finished``, once it has ended)."""

    __slots__ = ("core", "id", "defn", "state", "residency", "data", "tracks", "seq", "joins",
                 "mailbox", "loop", "loop_waiting", "running", "warned", "stored", "holds",
                 "root", "at", "parent", "thrown", "live", "inside", "generation",
                 "cascade", "steps", "looping", "opening_events", "compensable", "resets")

    def __init__(self, core: RunHost, iid: str, defn: Definition,
                 data: dict[str, Any] | None):
        self.core = core
        self.id = iid
        self.defn = defn
        self.state = ACTIVE
        self.residency = RESIDENT
        self.data: dict[str, Any] | None = data
        self.tracks: dict[str, Track] = {}
        self.seq = {"track": 0, "task": 0, "job": 0}
        self.joins: dict[str, dict[str, list[str]]] = {}
        #: Complex gateways waiting for their reset: join key -> incoming flows still expected
        self.resets: dict[str, list[str]] = {}
        self.mailbox: deque[tuple[Any, ...]] = deque()
        self.opening_events = 0  # event subprocess starts in the mailbox (``opening``)
        self.loop: Any = None
        self.loop_waiting = False
        #: Tracks ready or running; changed only by ``_move``.
        self.running = 0
        self.warned: set[str] | None = None  # elements already warned about, once each
        self.stored = False  # whether the store holds a checkpoint of this instance
        self.holds: list[Hold] = []  # this instance's engine holders, in the order armed
        #: The process's own scope, where the starts of its event subprocesses are armed
        #: (its ``boundaries``); None when the process has none.
        self.root: Track | None = None
        #: The track running now (what its expressions and functions read: ``seen``).
        self.at: Track | None = None
        #: The caller of a called instance: (instance, track of its call activity).
        self.parent: tuple[str, str] | None = None
        #: 0, or for an instance a start event created from another instance's throw (a
        #: signal, a message), that instance's generation + 1 (``Starts.fire``).
        self.generation = 0
        #: The error code a called instance ended with, for its caller to catch.
        self.thrown: str | None = None
        #: The live tracks in the order made, and each subprocess's by the track running it
        #: (kept by ``_move``): what "is its scope empty?", "is anything left?" read.
        self.live: dict[str, Track] = {}
        self.inside: dict[str, dict[str, Track]] = {}
        #: While tracks are stopped together (``stop_all``): the holds of each, by track.
        self.cascade: dict[str, list[Hold]] | None = None
        #: The count of steps without a wait of the track that ended the instance (for its
        #: caller); the nodes entered by tracks past the bound (``entering``).
        self.steps = 0
        self.looping: list[str] | None = None
        #: Completed compensable activities' records, by scope, oldest first (``compensation``)
        self.compensable: dict[str, list[dict[str, Any]]] = {}

    # -- facts and track states -----------------------------------------------------------
    def emit(self, kind: str, track: str | None, node: str | None,
             details: dict[str, Any] | None = None) -> None:
        self.core.emit(kind, self.id, track, node, details)

    def _move(self, tr: Track, state: str) -> None:
        """The one place a track's state changes (with the busy count and live index)."""
        was = tr.state
        self.running += (state in BUSY) - (was in BUSY)
        tr.state = state
        if state in TERMINAL and was not in TERMINAL:
            self.live.pop(tr.id, None)
            scope = tr.scope
            if scope is not None and scope in self.inside:
                members = self.inside[scope]
                members.pop(tr.id, None)
                if not members:
                    del self.inside[scope]
        elif was in TERMINAL and state not in TERMINAL:  # rebuilt from a checkpoint
            self._enter(tr)

    def _enter(self, tr: Track) -> None:
        self.live[tr.id] = tr
        if tr.scope is not None:
            self.inside.setdefault(tr.scope, {})[tr.id] = tr

    def reindex(self) -> None:
        """Index the live tracks again, in track order (after a rebuild from a checkpoint)."""
        self.live, self.inside = {}, {}
        for tr in self.tracks.values():
            if tr.state not in TERMINAL:
                self._enter(tr)

    def set_state(self, tr: Track, state: str, details: dict[str, Any] | None = None) -> None:
        """Change a track's state and say so with a ``track_state`` fact."""
        if tr.state != state:
            self._move(tr, state)
            self.core.emit("track_state", self.id, tr.id, tr.node, details or {"state": state})

    def new_track(self, node: str, parents: tuple[str, ...], origin: str,
                  via: str | None = None, quiet: bool = False,
                  scope: str | None = None) -> Track:
        """A new ready track inside ``scope`` (the track running its subprocess; None: the
        process); ``quiet``: its ``track_state`` fact comes later (``announce``). It goes on
        from the fewest steps without a wait among its parents (``entering``)."""
        self.seq["track"] += 1
        tr = Track(sys.intern(f"t{self.seq['track']}"), node, parents, origin, via)
        if parents:
            tracks = self.tracks
            tr.steps = min(tracks[p].steps if p in tracks else 0 for p in parents)
        if scope is not None:
            tr.scope = scope
        self.tracks[tr.id] = tr
        self.running += 1
        self._enter(tr)
        if not quiet:
            self.announce(tr)
        return tr

    def announce(self, tr: Track) -> None:
        self.core.emit("track_state", self.id, tr.id, tr.node,
                       {"state": "ready", "origin": tr.origin, "parents": len(tr.parents)})

    def revive(self, tr: Track) -> None:
        """A track rebuilt from a checkpoint that caught it before it parked: it is ready to
        enter its node again (the ``track_state`` fact says so)."""
        state, tr.state = tr.state, WAITING
        self.set_state(tr, "ready", {"state": "ready", "was": state})

    def entering(self, tr: Track) -> None:
        """A track enters its node: a ``node_entered`` fact, and one more step without a
        wait on its lineage. A track goes on from its parent's count (a fork, a boundary
        the parent raised, an inner instance; at a join, the fewest among those it merges);
        a wait that fires starts it again at 0. More steps than the engine's ``max_steps``
        is a loop with no wait: once a node comes round again among the nodes tracks past
        the bound enter, the track fails with an incident naming the loop."""
        core = self.core
        core.emit("node_entered", self.id, tr.id, tr.node, None)
        tr.steps = steps = tr.steps + 1
        if steps > core.max_steps:
            self.runaway(tr)

    def runaway(self, tr: Track) -> None:
        """A track past the bound enters its node (``entering``)."""
        seen = self.looping
        if seen is None:
            self.looping = seen = []
        if tr.node not in seen:
            seen.append(tr.node)
            return
        limit = self.core.max_steps
        loop = seen[seen.index(tr.node):]
        raise Incident(tr.node, f"entered more than {limit} nodes without a wait "
                                f"(max_steps_without_wait): a loop with no wait through "
                                f"{', '.join(map(repr, loop))}",
                       details={"loop": loop, "limit": limit})

    def live_tracks(self) -> list[Track]:
        return list(self.live.values())

    def track(self, tid: str) -> Track:
        """A track by id; ``ROOT`` is the process's own scope."""
        if tid == ROOT:
            assert self.root is not None, "the process scope has no armed event starts"
            return self.root
        return self.tracks[tid]

    def members(self, scope: str | None) -> list[Track]:
        """The live tracks directly inside ``scope`` (None: the process)."""
        if scope is not None:
            return list(self.inside.get(scope, {}).values())
        return [t for t in self.live.values() if t.scope is None]

    def close_scope(self, scope: str, last: Track) -> bool:
        """The last track inside a subprocess (``last``) has ended: the track running it goes
        on (a ``scope`` trigger, with ``last``'s steps). False while another track inside is
        live."""
        host = self.tracks[scope]
        w = host.wait
        if w is not None and w.kind == "adhoc" and host.state not in TERMINAL:
            return bool(self.core.behaviour.adhoc_ended(self, host, last))
        if host.state in TERMINAL or w is None or w.kind not in SCOPES or w.fired or \
                scope in self.inside or self.opening(scope):
            return False
        w.fired = True
        starts = self.defn.event_starts.get(host.node, ())
        for hold in self.core.holders.of_track(self.id, host.id) if starts else ():
            if hold.node in starts:  # done: no event subprocess of it can start now
                self.core.holders.release(hold, "withdrawn")
        assert host.coro is not None
        trigger = Trigger("scope", host.node, NODE, host.id)
        trigger.steps = last.steps
        self.core.kernel.resume(host.coro, trigger)
        return True

    def opening(self, scope: str) -> bool:
        """Whether the start of an event subprocess of ``scope`` (``ROOT``: the process) was
        accepted and waits in the mailbox: the scope is not done until it has run."""
        return self.opening_events > 0 and any(
            item[0] == "event" and item[1] == scope for item in self.mailbox)

    def has_conditions(self) -> bool:
        """Whether any live track evaluates a condition over the data after each change."""
        if not self.defn.conditional:
            return False
        root = self.root
        if root is not None and any(b.conditions() for b in root.boundaries.values()):
            return True
        for tr in self.live.values():
            if ((tr.wait is not None and tr.wait.conditions())
                    or any(b.conditions() for b in tr.boundaries.values())):
                return True
        return False

    def has_unfired(self) -> bool:
        """Whether a trigger was accepted that its track has not run yet."""
        return any(t.wait is not None and t.wait.fired for t in self.live.values())

    # -- withdrawing ----------------------------------------------------------------------
    def withdraw(self, tr: Track, reason: str, firing: Hold | None = None) -> None:
        """Withdraw at once everything outside the instance that could still fire for a
        track: its holds (``firing`` is released as fired), its task, its job."""
        cascade = self.cascade
        held = cascade.get(tr.id) if cascade is not None and firing is None else None
        if cascade is None or held is None:
            self.core.holders.release_waits(self.id, tr.id, reason, firing=firing)
        else:  # stopped with others: its holds were found with theirs
            cascade[tr.id] = []
            for hold in held:
                self.core.holders.release(hold, reason)
        if tr.wait is not None:
            tr.wait.withdraw(self.core, reason)
            tr.wait.fired = True

    def fired(self, tr: Track, hold: Hold) -> None:
        """A track's own wait's hold fired: release it and all else the track holds (if any)."""
        holders = self.core.holders
        w = tr.wait
        if len(self.holds) == 1 or (w is not None and (
                w.keeps or (not tr.boundaries and not w.races))):
            holders.release(hold, "fired")
        else:
            holders.release_waits(self.id, tr.id, "withdrawn", firing=hold)

    def withdraw_inside(self, scope: str) -> None:
        """An interrupting trigger over the track running a scope or a multi-instance
        activity (``ROOT``: the process's) was accepted: all that could fire inside, however
        deep, is withdrawn at once, the holds found in one pass (as ``stop_all``)."""
        members = self.members(None if scope == ROOT else scope)
        outer = self.cascade is None
        if outer:
            self.cascade = self.holds_of(members)
        try:
            for tr in members:
                self.withdraw(tr, "cancelled")
                if tr.id in self.inside:
                    self.withdraw_inside(tr.id)
        finally:
            if outer:
                self.cascade = None

    def disarm(self, tr: Track) -> None:
        """The activity is over: withdraw every boundary still armed over it."""
        holders = self.core.holders  # (none armed: no look; in a cascade: withdrawn already)
        if tr.boundaries and (self.cascade is None or tr.id not in self.cascade):
            for hold in holders.of_track(self.id, tr.id):
                if hold.wait_kind == "boundary":
                    holders.release(hold, "withdrawn")
        tr.boundaries = {}

    def drop_waits(self, tr: Track, reason: str) -> None:
        """Withdraw everything a track owns: holds, task or job, boundaries, join arrival."""
        self.withdraw(tr, reason)
        self.disarm(tr)
        self.leave_joins(tr.id)
        self.compensable.pop(tr.id, None)  # what completed inside can be compensated no more
        if tr.wait is not None and tr.wait.kind in RUNS:  # and what runs inside
            state = "cancelled" if reason == "cancelled" else "withdrawn"
            self.stop_all(self.members(tr.id), state, reason)
        tr.wait = None

    def leave_joins(self, tid: str) -> None:
        """A track stops: its join arrivals go, and the joins of the scope it ran; a join
        nobody waits at is forgotten (a checkpoint never names a gone track or scope)."""
        for key in list(self.joins):
            flows = self.joins[key]
            for waiting in flows.values():
                if tid in waiting:
                    waiting.remove(tid)
            if join_parts(key)[1] == tid or not any(flows.values()):
                del self.joins[key]
        for key in [k for k in self.resets if join_parts(k)[1] == tid]:
            del self.resets[key]

    def stop_all(self, tracks: list[Track], state: str, reason: str) -> None:
        """Stop ``tracks`` in order, and through them all inside them; the holds of all are
        found in one pass over the instance's holds, not one per track."""
        if not tracks:  # (an instance ending at its last track's end: nothing to look for)
            return
        outer = self.cascade is None
        if outer:
            self.cascade = self.holds_of(tracks)
        try:
            for tr in tracks:
                self.stop_track(tr, state, reason)
        finally:
            if outer:
                self.cascade = None

    def holds_of(self, tracks: list[Track]) -> dict[str, list[Hold]]:
        """The holds of ``tracks`` and of every track inside them, by track."""
        found = dict[str, list[Hold]]()
        todo = list(tracks)
        while todo:
            tr = todo.pop()
            found[tr.id] = []
            todo.extend(self.inside.get(tr.id, {}).values())
        for h in self.holds:
            held = found.get(h.site.track)
            if held is not None:
                held.append(h)
        return found

    def stop_track(self, tr: Track, state: str, reason: str) -> None:
        """End a track from outside it: close its coroutine and withdraw all it owns (a
        track that has ended already is left as it is)."""
        if tr.state in TERMINAL:
            return
        kernel = self.core.kernel
        if tr.coro is not None and tr.coro is not kernel.current:
            kernel.close(tr.coro)
        self.drop_waits(tr, reason)
        tr.coro = None
        self.set_state(tr, state)

    def end_track(self, tr: Track, state: str, quiet: bool = True) -> None:
        """A track's coroutine is about to return for good (or was closed). ``quiet``: the
        instance may take a quiet point now (not when a terminate end is about to end it)."""
        self.set_state(tr, state)
        tr.coro = None
        if tr.scope is not None and self.state == ACTIVE and self.close_scope(tr.scope, tr):
            return
        if not self.live and self.state == ACTIVE and not self.opening(ROOT):
            self.finish("completed", tr)
        elif quiet and self.running == 0 and self.state == ACTIVE:
            self.core.on_quiet(self)

    # -- instance ends --------------------------------------------------------------------
    def finish(self, state: str, tr: Track | None = None,
               detail: dict[str, Any] | None = None) -> None:
        """End the instance: every live track is stopped, then the loop."""
        ending = ENDING.get(state, "completed")
        if tr is not None:
            self.steps = tr.steps  # what its caller goes on from (``call_activities.returned``)
        self.stop_all([t for t in self.live.values() if t is not tr], ending, "withdrawn")
        self.joins = {}
        self.resets = {}
        if self.root is not None:  # the process's event subprocesses can start no more
            self.core.holders.release_waits(self.id, ROOT, "withdrawn")
            self.root.boundaries = {}
        self.state = state
        self.residency = FINISHED
        if state == "failed":
            self.emit("instance_failed", tr.id if tr else None, tr.node if tr else None, detail)
        else:
            self.emit("instance_completed", None, None, {"state": state})
        kernel = self.core.kernel
        if self.loop is not None and self.loop is not kernel.current:
            kernel.close(self.loop)
        self.loop = None
        self.core.on_finished(self)

    def fail(self, tr: Track, exc: Incident) -> None:
        if exc.error is not None and self.parent is not None and self.state == ACTIVE:
            # a called instance's uncaught error goes to its call activity, not an incident
            self.thrown = exc.error
            self.emit("error_to_caller", tr.id, exc.node, {"error": exc.error,
                                                          "caller": self.parent[0]})
            if tr.state not in TERMINAL:
                self.stop_track(tr, "cancelled", "cancelled")
            self.finish("terminated", tr)
            return
        details: dict[str, Any] = {"cause": exc.cause}
        if exc.error:
            details["error"] = exc.error
        if exc.details:
            details.update(exc.details)
        self.emit("incident", tr.id, exc.node, details)
        if tr.state not in TERMINAL:
            self.stop_track(tr, "failed", "withdrawn")
        self.finish("failed", tr, details)

    # -- data -----------------------------------------------------------------------------
    def merge(self, values: dict[str, Any] | None, node: str, copied: bool = False) -> None:
        """Merge outputs or a payload into the data, as a JSON copy (``copied``: it is one)."""
        values = values if copied else clean(values, node)
        if values is None:
            return
        fields = sorted(values)
        into = self.written()
        scoped = self.scoped() if self.at is not None and self.at.scope is not None else ()
        for layer in scoped:  # a field an enclosing element maps in is written there
            for name in [n for n in values if n in layer]:
                layer[name] = values.pop(name)
        into.update(values)
        self.emit("data_changed", None, node, {"fields": fields})
        if self.has_conditions():
            self.post(("data",))

    # -- mailbox --------------------------------------------------------------------------
    def post(self, item: tuple[Any, ...]) -> None:
        """Hand the loop an item; a sleeping loop is resumed in order with other events."""
        self.mailbox.append(item)
        if item[0] == "event":
            self.opening_events += 1
        if self.loop_waiting and self.loop is not None:
            self.loop_waiting = False
            self.core.kernel.resume(self.loop)


__all__ = ["Incident", "Run", "RunHost"]
