"""Events with several definitions (``model.multiple``): a catch, a boundary or an event
subprocess's start that waits for a message, a timer and a signal at once.

Each definition is an arm: a wait of its kind on the event's own node, held on its own (as
an event-based gateway's arms are). A multiple event races them: the first to fire wins and
the others are withdrawn at once (``Run.fired`` for the track's own wait, the boundary's
interrupting withdrawal or the router's ``accept``). A parallel multiple catch keeps
waiting: each arm that comes is released, its payload merged, its kind recorded in the
wait (``came``, in the checkpoint), and the track leaves when the last one has come; a
dehydrated instance woken by one of its arms resumes the parked track in place (no
continuation fork), so the arms still to come stay held by that track.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...model import elements as el
from ...model.multiple import EventDef, MultipleBoundary, MultipleCatch, MultipleStart
from ...vocabulary import BOUNDARY, NODE
from ..runtime.compute import key_of, outgoing, timer_wait
from ..runtime.run import Run
from ..runtime.tracks import PARK
from ..state.records import Track, Trigger
from ..state.waits import MessageWait, MultipleWait, SignalWait, Wait

Result = Any  # list of flows | PARK | None


class Keyed(NamedTuple):
    """What ``key_of`` reads of a message definition: the event's id and its key."""

    id: str
    key: Any


def arm_one(run: Run, tr: Track, node: el.Element, d: EventDef, w: MultipleWait,
            wait_kind: str, listen: bool = False) -> Trigger | None:
    """Arm one definition on ``node`` and hold it; a message the buffer already has is
    returned instead (``listen``: and held all the same, for a non-interrupting boundary)."""
    a: Wait
    if d.kind == "timer":
        a = timer_wait(run, node.id)
    elif d.kind == "message":
        key = key_of(run, Keyed(node.id, d.key))
        got = run.core.hub.take_buffered(d.message, key, run.id, run.stored)
        a = MessageWait(node.id, d.message, key)
        if got is not None:
            run.emit("message_correlated", tr.id, node.id,
                     {"message": d.message, "fields": len(got), "buffered": True})
            if listen:
                w.arms.append(a)
                a.hold(run.core.holders, run.id, tr.id, wait_kind)
            return Trigger("message", node.id, wait_kind, tr.id, got)
    else:
        a = SignalWait(node.id, d.signal)
    w.arms.append(a)
    a.hold(run.core.holders, run.id, tr.id, wait_kind)
    return None


def enter(run: Run, tr: Track, node: MultipleCatch) -> Result:
    """Arm every definition; a buffered message fires a multiple catch at once, and counts
    as come for a parallel one."""
    tr.wait = w = MultipleWait(node.id, parallel=node.parallel)
    for d in node.events:
        got = arm_one(run, tr, node, d, w, NODE)
        if got is None:
            continue
        if not node.parallel:
            run.core.holders.release_waits(run.id, tr.id, "withdrawn")
            tr.wait = None
            return fire_pass(run, tr, node, got)
        came(run, node, w, got)
    return PARK if w.arms else outgoing(run, node)


def fire(run: Run, tr: Track, node: MultipleCatch, trigger: Trigger) -> Result:
    """A definition came: a multiple catch leaves (the others were withdrawn as it was
    accepted); a parallel one leaves once the last has come, else it waits on."""
    if not node.parallel:
        return fire_pass(run, tr, node, trigger)
    w = tr.wait  # resumed in place, resident or woken (``Router.hydrate``)
    assert isinstance(w, MultipleWait)
    came(run, node, w, trigger)
    if w.arms:
        w.fired = False
        tr.wait = w
        return PARK
    return outgoing(run, node)


def fire_pass(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The event fired: bind the payload, then leave (as ``events.fire_pass``)."""
    if trigger.payload:
        run.merge(trigger.payload, node.id)
    return outgoing(run, node)


def came(run: Run, node: el.Element, w: MultipleWait, trigger: Trigger) -> None:
    """Record one arm of a parallel multiple catch as come, and bind its payload."""
    arm = w.arm(trigger.kind)
    if arm is not None:
        w.arms.remove(arm)
    w.came.append(trigger.kind)
    if trigger.payload:
        run.merge(trigger.payload, node.id)


def arm_boundary(run: Run, tr: Track, b: MultipleBoundary | MultipleStart) -> None:
    """A multiple boundary (or event subprocess start) over ``tr``: every definition held;
    a message the buffer has fires it in the loop's next turn (an interrupting one then
    arms nothing more)."""
    tr.boundaries[b.id] = w = MultipleWait(b.id)
    verb = "event" if isinstance(b, el.TriggeredStart) else "boundary"
    for d in b.events:
        got = arm_one(run, tr, b, d, w, BOUNDARY, listen=not b.interrupting)
        if got is not None:
            run.post((verb, tr.id, b.id, got))
            if b.interrupting:
                return


def rearm(run: Run, tr: Track, w: MultipleWait, fired: Any) -> None:
    """A non-interrupting multiple boundary fired by one arm: a message or signal arm
    listens again (unless a hold for it is there already, taken while waking); a timer arm
    is spent."""
    arm = w.arm(fired.kind)
    holders = run.core.holders
    if arm is None:
        return
    if not isinstance(arm, (MessageWait, SignalWait)):
        w.arms.remove(arm)
        return
    if not any(h.node == fired.node and h.kind == fired.kind and h.wait_kind == BOUNDARY
               for h in holders.of_track(run.id, tr.id)):
        arm.hold(holders, run.id, tr.id, BOUNDARY)
