"""Boundary events and conditions: arming the boundaries of an activity, the boundary fork
(Invariant 6, docs/architecture.md), errors thrown at an activity, and conditions re-checked
after each data change."""

from __future__ import annotations

from collections.abc import Callable

from ...model import elements as el
from ...model.multiple import MultipleBoundary, MultipleStart
from ...vocabulary import BOUNDARY, TERMINAL, WAITING
from ..runtime.compute import check, key_of, timer_wait
from ..runtime.run import Run
from ..runtime.tracks import spawn
from ..state.records import Track, Trigger
from ..state.waits import CatchWait, ConditionalWait, GatewayWait, MessageWait, SignalWait, Wait
from .multiple import arm_boundary as arm_multiple

#: What opens an event subprocess whose start fired over a track: (run, track id, start
#: id, trigger) (``subprocesses.open_event``, handed in: it imports this module).
Opener = Callable[[Run, str, str, Trigger], None]


def arm_boundaries(run: Run, tr: Track, node: el.Element) -> None:
    """Arm every waiting boundary of the activity the track now occupies (of a
    multi-instance activity or a loop, over its body, not over each inner instance)."""
    if tr.locals is not None and node.repeats:
        return
    for b in run.defn.boundaries.get(node.id, ()):
        arm_boundary(run, tr, b, None)


def arm_boundary(run: Run, tr: Track, b: el.Element, cycles: int | None) -> None:
    """Arm one boundary, or one event subprocess start over the track running its scope;
    ``cycles`` is what a cycle timer had left when it re-arms."""
    w: Wait
    if isinstance(b, (el.TimerBoundary, el.TimerStart)):
        w = timer_wait(run, b.id, cycles)
    elif isinstance(b, (el.MessageBoundary, el.MessageStart)):
        arm_message_boundary(run, tr, b)
        return
    elif isinstance(b, (el.SignalBoundary, el.SignalStart)):
        w = SignalWait(b.id, b.signal)
    elif isinstance(b, (MultipleBoundary, MultipleStart)):
        arm_multiple(run, tr, b)
        return
    elif isinstance(b, (el.ErrorStart, el.EscalationStart)):
        tr.boundaries[b.id] = CatchWait(b.id)  # caught where it is raised: nothing to hold
        return
    elif isinstance(b, (el.ConditionalBoundary, el.ConditionalStart)):
        # checked at the loop's next turn: one already true when armed fires then
        tr.boundaries[b.id] = ConditionalWait(b.id, order=run.core.kernel.next_seq())
        run.post(("data",))
        return
    else:
        return  # an error boundary arms nothing: it is resolved where the error is raised
    tr.boundaries[b.id] = w
    w.hold(run.core.holders, run.id, tr.id, BOUNDARY)


def arm_message_boundary(run: Run, tr: Track, b: el.MessageBoundary | el.MessageStart) -> None:
    """A message boundary takes what the ttl buffer holds for it first: an interrupting one
    the first message; a non-interrupting one every message there, in order, and then it
    subscribes, as it would had they come one by one."""
    key = key_of(run, b)
    tr.boundaries[b.id] = w = MessageWait(b.id, b.message, key)
    while (buffered := run.core.hub.take_buffered(b.message, key, run.id, run.stored)) is not None:
        run.emit("message_correlated", tr.id, b.id,
                 {"message": b.message, "fields": len(buffered), "buffered": True})
        verb = "event" if isinstance(b, el.MessageStart) else "boundary"
        run.post((verb, tr.id, b.id, Trigger("message", b.id, BOUNDARY, tr.id, buffered)))
        if b.interrupting:
            return
    w.hold(run.core.holders, run.id, tr.id, BOUNDARY)


def fire_boundary_event(run: Run, tid: str, bid: str, trigger: Trigger | None) -> None:
    """A boundary's trigger, handled by the loop: fork at the boundary over the guarded track."""
    tr = run.tracks.get(tid)
    b = run.defn.nodes[bid]
    assert isinstance(b, el.Boundary)
    if tr is None or tr.state in TERMINAL or tr.node != b.attached_to or bid not in tr.boundaries:
        return  # the activity finished first: the boundary was already withdrawn
    if not b.interrupting and not isinstance(tr.boundaries[bid], ConditionalWait) and \
            not run.core.holders.holds_boundary(run.id, tr.id, bid):
        del tr.boundaries[bid]  # spent: it was not armed again when its trigger came
    fork_boundary(run, tr, b, trigger)


def fork_boundary(run: Run, tr: Track, b: el.Boundary, trigger: Trigger | None) -> None:
    """The boundary fork: a new track at the boundary with the guarded track as parent;
    an interrupting boundary cancels the guarded track first."""
    if b.interrupting and tr.state not in TERMINAL:
        run.stop_track(tr, "cancelled", "cancelled")
    child = run.new_track(b.id, (tr.id,), "boundary", scope=tr.scope)
    if trigger is not None:  # its wait fired; else an error or escalation ``tr`` raised
        child.steps = trigger.steps
    spawn(run, child, trigger or Trigger("boundary", b.id, BOUNDARY, tr.id))


def check_conditions(run: Run, open_event: Opener) -> None:
    """After a data change: fire conditional catches, arms and boundaries and open the
    event subprocesses whose conditional starts now hold, track by track (the process's
    own scope, ``Run.root``, among them) in the order their first conditional wait was
    armed. ``open_event`` opens an event subprocess (``subprocesses.open_event``)."""
    tracks = run.live_tracks()
    if run.root is not None and run.root.boundaries:
        tracks.append(run.root)
    for tr in sorted(tracks, key=armed_first):
        run.at = tr
        wait = tr.wait
        if tr.state == WAITING and isinstance(wait, ConditionalWait):
            node = run.defn.nodes[tr.node]
            assert isinstance(node, el.ConditionalCatch)
            if check(run, node.id, node.condition) and tr.coro is not None:
                tr.wait = None
                run.core.kernel.resume(tr.coro, Trigger("conditional", node.id, "node", tr.id))
                continue
        if tr.state == WAITING and isinstance(wait, GatewayWait) and not wait.fired:
            for a in wait.arms:
                node = run.defn.nodes[a.node]
                if isinstance(a, ConditionalWait) and tr.coro is not None and \
                        isinstance(node, el.ConditionalCatch) and \
                        check(run, node.id, node.condition):
                    wait.fired = True
                    run.core.holders.release_waits(run.id, tr.id, "withdrawn")
                    run.core.kernel.resume(tr.coro, Trigger("conditional", node.id, "node",
                                                            tr.id))
                    break
        check_boundaries(run, tr, open_event)


def armed_first(tr: Track) -> int:
    """The sequence number of the first conditional wait a track armed (its wait, an arm of
    its event-based gateway, a boundary); 0 for none (such a track has nothing to check)."""
    orders = [w.order or 0 for w in (tr.wait, *tr.boundaries.values())
              if isinstance(w, ConditionalWait)]
    if isinstance(tr.wait, GatewayWait):
        orders += [a.order or 0 for a in tr.wait.arms if isinstance(a, ConditionalWait)]
    return min(orders, default=0)


def check_boundaries(run: Run, tr: Track, open_event: Opener) -> None:
    """Fire each conditional boundary of a track, and open each event subprocess whose
    conditional start is armed over it, whose condition has just become true (a rise:
    ``last`` was False; one already true when armed rises at its first check)."""
    for bid, arm in list(tr.boundaries.items()):
        if not isinstance(arm, ConditionalWait) or tr.boundaries.get(bid) is not arm:
            continue  # not conditional, or withdrawn by an interrupting start just opened
        b = run.defn.nodes[bid]
        assert isinstance(b, (el.ConditionalBoundary, el.ConditionalStart))
        now = check(run, bid, b.condition)
        if now and not arm.last:
            arm.last = True
            trigger = Trigger("conditional", bid, BOUNDARY, tr.id)
            if isinstance(b, el.ConditionalStart):
                open_event(run, tr.id, bid, trigger)
            else:
                if b.interrupting:
                    run.core.holders.release_waits(run.id, tr.id, "cancelled")
                fire_boundary_event(run, tr.id, bid, trigger)
            if tr.state in TERMINAL:
                break
        elif not now:
            arm.last = False
