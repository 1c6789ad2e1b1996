"""Timer plans: the hot path of a track handed from one timer to the next, or to its end.

A timer catch event whose one outgoing flow (without a condition) leads to another timer
catch event of a fixed duration, or to an end event, is compiled, once per deployed version,
into a plan: the flow, the next node and its duration. When such a timer's hold fires and it
is the only hold of a resident instance, the timer's event runs the plan instead of resuming
the track's coroutine: the same facts in the same order, the same sequence numbers and the
same state as the general path (fire, leave, enter, hold the next deadline, quiet point),
with the coroutine left parked where it was (it reads its node again whenever it is next
resumed). Into an end event, the plan runs the end event's behaviour itself and then ends
the track's coroutine, as the coroutine would have returned.

Everything else takes the general path (the router, ``Residency.route``): a start event's
timer, another hold on the instance, an instance dehydrated or with a wake pending, a trigger
expected after a recovery, a track that is not parked on that timer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from ...kernel import LAST_US, Kernel
from ...model import Definition
from ...model.elements import EndEvent
from ...vocabulary import ACTIVE, FINISHED, NODE, RESIDENT, RUNNING, WAITING
from ..durability.journal import Store
from ..elements.subprocesses import enter_end
from ..runtime.compute import ONE_US
from ..runtime.finished import Finished
from ..runtime.run import Run
from ..state.dehydrated import Dehydrated
from ..state.holders import Hold, Holders, Site
from ..state.incident import Incident
from ..state.records import Track
from ..state.waits import TimerWait
from .dehydration import Dehydration
from .router import Residency

log = logging.getLogger("gobpm_nb")
#: The details of a completed track's ``track_state`` fact and of ``instance_completed``
#: (facts' details are only ever read through copies).
COMPLETED = {"state": "completed"}
#: Facts of one track as ``emit_all`` takes them: (kind, node, details) rows, in order.
Rows = tuple[tuple[str, str, Any], ...]

class Plan:
    """One timer node's plan: the flow it leaves by, the node after it and, for a timer,
    its duration in microseconds (None: an end event); and, once known, whether the quiet
    point after it can do nothing (``TimerPlans.idle``)."""

    __slots__ = ("flow", "target", "duration", "latest", "idle", "tracks")

    def __init__(self, flow: str, target: str, duration: int | None):
        self.flow, self.target, self.duration = flow, target, duration
        #: the last instant it applies at: later, the next deadline would fall past the
        #: year 9999 (the general path makes that an incident)
        self.latest = LAST_US - duration if duration is not None else LAST_US
        self.idle: bool | None = None
        #: By track id (made once per track id, ``TimerPlans.known``): the holders' site of
        #: the next timer (None: an end event), and the facts of a firing as ``emit_all``
        #: takes them (every part of them is the same
        #: each time: the nodes, and the details the two sites made once).
        self.tracks: dict[str, tuple[Site | None, Rows]] = {}


def compile_plans(defn: Definition) -> dict[str, Plan]:
    """The plans of one version: every timer catch that hands its track to the next timer
    (a plan stands in for ``events.fire_pass`` then ``events.enter_timer``)."""
    plans: dict[str, Plan] = {}
    for node in defn.nodes.values():
        if node.kind != "timer_catch":
            continue
        flows = defn.plain.get(node.id)
        if flows is None or len(flows) != 1:
            continue
        target = defn.nodes[flows[0].target]
        spec = defn.timers.get(target.id)
        if target.kind == "timer_catch" and type(spec) is timedelta:
            plans[node.id] = Plan(flows[0].id, target.id, spec // ONE_US)
        elif target.kind == "end":
            plans[node.id] = Plan(flows[0].id, target.id, None)
    return plans


class TimerPlans:
    """The plans of every deployed version, and the kernel's handler of a timer hold: handed
    the engine's instance records, holders, kernel, facts' emitters and store, the router
    (the general path, and the triggers waiting for instances being woken), the quiet points
    (``Dehydration``) and what an ended instance's record becomes (``on_finished``: the
    core's)."""

    def __init__(self, runs: Mapping[str, Run | Dehydrated | Finished], holders: Holders,
                 kernel: Kernel, emit: Callable[..., Any], emit_all: Callable[..., Any],
                 store: Store, residency: Residency, dehydration: Dehydration,
                 on_finished: Callable[[Run], None]):
        #: What ``fire`` reads on every firing, held here (none is ever replaced): the
        #: instance records, the holders, the hold counts, the facts' emitter, the kernel,
        #: the triggers waiting for instances being woken, the general path and the quiet
        #: point.
        self.runs, self.holders = runs, holders
        self.counts, self.emit_all = holders.counts, emit_all
        self.kernel, self.pending = kernel, residency.pending
        self.deliver, self.on_quiet = residency.route, dehydration.on_quiet
        self.emit, self.store, self.dehydration = emit, store, dehydration
        self.on_finished = on_finished
        self.plans: dict[tuple[str, int], dict[str, Plan]] = {}
        self._last: tuple[Definition | None, dict[str, Plan]] = (None, {})

    def of(self, defn: Definition) -> dict[str, Plan]:
        key = (defn.id, defn.version)
        plans = self.plans.get(key)
        if plans is None:
            plans = self.plans[key] = compile_plans(defn)
        self._last = (defn, plans)
        return plans

    def fire(self, hold: Hold) -> None:
        """A timer hold fell due: its plan when one applies (module docstring), else the
        general path. The plan does what ``deliver``, ``apply``, the fire path, leaving,
        entering the next timer and parking do there, in that order."""
        run = self.runs.get(hold[2])
        site = hold[3]
        holders = self.holders
        if (type(run) is not Run or run.residency != RESIDENT or len(run.holds) != 1
                or site.wait_kind != NODE or holders.expected or holders.waking
                or (self.pending and run.id in self.pending)):
            self.deliver(hold)
            return
        last, plans = self._last
        if run.defn is not last:
            plans = self.of(run.defn)
        node, tid = site.node, site.track
        plan = plans.get(node)
        tr = run.tracks.get(tid)
        now = self.kernel.now
        if (plan is None or tr is None or tr.node != node or tr.state != WAITING
                or type(tr.wait) is not TimerWait or tr.coro is None or now > plan.latest):
            self.deliver(hold)
            return
        iid, holds, target = run.id, run.holds, plan.target
        del holds[0]  # the lone hold, released as fired (``Holders.release``)
        run.at = tr
        tr.node, tr.via = target, plan.flow
        if plan.duration is None:
            self.counts["timer"] -= 1
            self.end(run, tr, hold, plan)
            return
        w = tr.wait  # the fired wait becomes the next one (nothing else refers to it)
        w.node, w.armed, w.cycles, w.order = target, now, None, None
        w.deadline = deadline = now + plan.duration
        known = plan.tracks.get(tid) or self.known(plan, site)
        # one timer hold for another (a plan into a timer knows the next timer's site)
        holders.hold_next(holds, iid, known[0], deadline)  # type: ignore[arg-type]
        self.emit_all(iid, tid, known[1])
        if run.running or (plan.idle and len(run.tracks) == 1 and not run.joins
                               and not run.resets):
            return
        try:
            self.on_quiet(run)
            if plan.idle is None:
                plan.idle = self.idle(run, target)
        except Exception as exc:  # as the track's coroutine would: the instance fails
            log.exception("instance %s, track %s at %r raised", iid, tid, target)
            run.fail(tr, Incident(target, f"{type(exc).__name__}: {exc}"))

    def end(self, run: Run, tr: Track, hold: Hold, plan: Plan) -> None:
        """Into an end event: its behaviour, run as the track's coroutine would run it (an
        incident fails the instance), then the coroutine ends. The plain end of an instance's
        only track is done here outright (``last``)."""
        site, coro = hold[3], tr.coro
        assert coro is not None  # ``fire`` checked it: the track is parked on this timer
        iid, tid, target = run.id, site.track, plan.target
        end = run.defn.nodes[target]
        assert isinstance(end, EndEvent)  # ``compile_plans`` plans only into an end event
        rows = (plan.tracks.get(tid) or self.known(plan, site))[1]
        tr.wait = None
        plain = (end.error is None and end.escalation is None and not end.terminate
                 and tr.scope is None and run.root is None and len(run.tracks) == 1
                 and run.state == ACTIVE)
        if not plain:
            run._move(tr, RUNNING)
            self.emit_all(iid, tid, rows)
        try:
            if plain:
                self.last(run, tr, rows + (("node_left", target, None),
                                           ("track_state", target, COMPLETED)))
            else:
                enter_end(run, tr, end)
        except Incident as exc:
            run.fail(tr, exc)
        except Exception as exc:  # not an incident by design: the instance fails, never strands
            log.exception("instance %s, track %s at %r raised", iid, tid, target)
            run.fail(tr, Incident(target, f"{type(exc).__name__}: {exc}"))
        self.kernel.close(coro)

    def known(self, plan: Plan, site: Site) -> tuple[Site | None, Rows]:
        """What a plan's firing for the track of ``site`` (its timer's) needs, made once:
        the next timer's site (None: into an end event) and the firing's facts."""
        node, target, tid = site.node, plan.target, site.track
        rows: Rows = (("timer_fired", node, site.fired_details),
                      ("wait_released", node,
                       site.released_details.get("fired") or site.released_by("fired")),
                      ("node_left", node, None),
                      ("node_entered", target, None))
        next_site = None
        if plan.duration is not None:
            next_site = self.holders.timer_site(target, tid)
            rows += (("wait_held", target, next_site.held_details),)
        plan.tracks[tid] = known = (next_site, rows)
        return known

    def last(self, run: Run, tr: Track, rows: tuple[tuple[Any, ...], ...]) -> None:
        """The only track of an instance reaches a plain end event: what ``enter_end``,
        ``Run.end_track`` and ``Run.finish`` do for it, in their order (the track completes,
        then the instance; its loop ends and the engine keeps its summary)."""
        run._move(tr, "completed")
        tr.coro = None
        self.emit_all(run.id, tr.id, rows)
        run.joins = {}
        run.resets = {}
        run.state, run.residency = "completed", FINISHED
        self.emit("instance_completed", run.id, None, None, COMPLETED)
        if run.loop is not None:
            self.kernel.close(run.loop)
            run.loop = None
        self.on_finished(run)

    def idle(self, run: Run, node: str) -> bool | None:
        """Whether a quiet point with one track parked at ``node`` and no join always does
        nothing: the store keeps no checkpoint of a resident instance and the timer may not
        dehydrate (the answer its element gave, remembered per version; None: not known)."""
        if self.store.durable:
            return False
        answer = self.dehydration.memo(run.defn).get(node)
        return None if answer is None else not answer
