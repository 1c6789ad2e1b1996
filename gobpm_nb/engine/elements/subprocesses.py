"""Scopes: embedded subprocesses, event subprocesses, and what is thrown across them (errors,
escalations), and link events.

A track that enters a subprocess *runs* it: it parks on a ``ScopeWait``, arms the boundaries
of the subprocess and the starts of the event subprocesses inside it, and a new track (origin
``scope``) enters the inner start event. Every track inside names it as its ``scope``. When
the last track inside ends, the running track goes on by the subprocess's flows; when it is
stopped (an interrupting boundary, a failure), everything inside goes with it.

The starts of an event subprocess are armed on the track running its enclosing scope (on the
process's own scope, ``Run.root``, for one in the process), beside that scope's boundaries:
held like them, checkpointed like them, woken like them. Their trigger opens the event
subprocess in a new track (origin ``event``); an interrupting one first cancels everything
else in the scope. An error or escalation looks for its catch from the scope it was raised in
outwards: the event subprocesses of that scope, then the boundaries of the subprocess, then
the scope around it.
"""

from __future__ import annotations

from ...model import elements as el
from ...model.multiple import MultipleEnd, MultipleThrow
from ...vocabulary import BOUNDARY, ROOT, TERMINAL, WAITING
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK, spawn
from ..state.incident import Incident
from ..state.records import Track, Trigger
from ..state.waits import CompensateWait, ScopeWait
from . import compensation, multi_instance
from .boundaries import arm_boundaries, arm_boundary, fork_boundary
from .events import broadcast, publish

Result = object  # list of flows | PARK | None


# -- subprocesses -----------------------------------------------------------------------------
def enter_subprocess(run: Run, tr: Track, node: el.Element) -> Result:
    return open_scope(run, tr, node, None)


def open_scope(run: Run, tr: Track, node: el.Element, trigger: Trigger | None) -> Result:
    """The track runs ``node``'s scope: it parks, its guards are armed, and a track enters
    the start inside (with ``trigger`` in hand for an event subprocess's start)."""
    tr.wait = ScopeWait(node.id)
    if isinstance(node, el.SubProcess):
        arm_boundaries(run, tr, node)
    arm_events(run, tr, node.id)
    child = run.new_track(run.defn.inner_start[node.id], (tr.id,), "scope", scope=tr.id)
    spawn(run, child, trigger)
    return PARK


def fire_scope(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The scope's last track has ended (a ``scope`` trigger): the track goes on by the
    subprocess's flows, or, running an event subprocess, ends. Any other trigger is an event
    subprocess's start: the track opens its scope. A cancelled transaction compensates."""
    if isinstance(tr.wait, CompensateWait):
        return compensation.fire_throw(run, tr, node, trigger)
    if trigger.kind != "scope":
        return open_scope(run, tr, node, trigger)
    run.disarm(tr)
    if isinstance(node, el.EventSubProcess):
        run.compensable.pop(tr.id, None)  # what completed in it is not compensable outside
        run.emit("node_left", tr.id, node.id, None)
        run.end_track(tr, "completed")
        return None
    return outgoing(run, node)


def arm_events(run: Run, host: Track, scope: str) -> None:
    """Arm the start of every event subprocess directly in ``scope`` over ``host``, the
    track running it (``Run.root`` for the process)."""
    for sid in run.defn.event_starts.get(scope, ()):
        arm_boundary(run, host, run.defn.nodes[sid], None)


def open_root(run: Run, tr: Track) -> bool:
    """A new instance whose process has event subprocesses (``tr``: its start track): their
    starts are armed on the process's own scope. A start that cannot be armed (a message
    start's key that fails) is an incident that fails the instance: False."""
    run.root = Track(ROOT, ROOT, (), "start", state=WAITING)
    try:
        arm_events(run, run.root, ROOT)
    except Incident as exc:
        run.fail(tr, exc)
        return False
    return True


# -- event subprocesses -----------------------------------------------------------------------
def open_event(run: Run, hid: str, sid: str, trigger: Trigger) -> None:
    """An event subprocess's start has fired over the track ``hid`` running its scope (the
    loop hands it here, or a catch of an error or escalation does): a new track runs it; an
    interrupting start first cancels everything else in the scope."""
    host = run.track(hid)
    start = run.defn.nodes[sid]
    assert isinstance(start, el.TriggeredStart)
    if host.state in TERMINAL or sid not in host.boundaries:
        return  # the scope ended (or was interrupted) first: the start was withdrawn
    holders = run.core.holders
    if start.interrupting:
        interrupt(run, host)
    elif host.boundaries[sid].kind not in ("catch", "conditional") and \
            not holders.holds_boundary(run.id, hid, sid):
        del host.boundaries[sid]  # spent: it was not armed again when its trigger came
    scope = hid if hid != ROOT else None
    sub = run.new_track(start.within or "", (hid,) if scope else (), "event", scope=scope)
    sub.steps = trigger.steps  # its wait fired (0), or the raising track's (``catch``)
    spawn(run, sub, trigger)


def interrupt(run: Run, host: Track) -> None:
    """An interrupting event subprocess opens: the other starts of its scope are withdrawn
    and every track in the scope is cancelled (the subprocess's own boundaries stay)."""
    starts = run.defn.event_starts.get(host.node, ())
    holders = run.core.holders
    for hold in holders.of_track(run.id, host.id):
        if hold.node in starts:
            holders.release(hold, "cancelled")
    for sid in starts:
        host.boundaries.pop(sid, None)
    run.stop_all(run.members(host.id if host.id != ROOT else None), "cancelled", "cancelled")


# -- errors and escalations -------------------------------------------------------------------
def catches(node: el.Element, kind: str, code: str) -> bool:
    if kind == "error":
        return isinstance(node, (el.ErrorStart, el.ErrorBoundary)) and node.error in (None, code)
    return isinstance(node, (el.EscalationStart, el.EscalationBoundary)) and \
        node.escalation in (None, code)


def catch(run: Run, tr: Track, kind: str, code: str) -> bool:
    """Find the catch of an error or escalation raised by ``tr``, from its own scope
    outwards: an event subprocess start of the scope, then a boundary of the subprocess.
    It opens (or forks) there; False when nothing catches it."""
    scope = tr.scope
    while True:
        host = run.tracks[scope] if scope is not None else run.root
        if host is not None:
            for sid in run.defn.event_starts.get(host.node, ()):
                if sid in host.boundaries and catches(run.defn.nodes[sid], kind, code):
                    run.emit(f"{kind}_caught", tr.id, tr.node, {kind: code, "start": sid})
                    raised = Trigger(kind, sid, BOUNDARY, host.id)
                    raised.steps = tr.steps
                    open_event(run, host.id, sid, raised)
                    return True
        if scope is None:
            return False
        assert host is not None
        # a multi-instance subprocess's boundaries guard its body
        if multi_instance.inner(run, host):
            host = run.tracks[host.scope or ""]
        for b in run.defn.boundaries.get(host.node, ()):
            if catches(b, kind, code):
                run.emit(f"{kind}_caught", tr.id, tr.node, {kind: code, "boundary": b.id})
                fork_boundary(run, host, b, None)
                return True
        scope = host.scope


def throw(run: Run, tr: Track, node: el.Element, code: str) -> None:
    """An error at an activity: its matching error boundary forks, else the scopes around it
    are asked (``catch``), else the instance fails. Raised in an inner instance of a
    multi-instance activity or a run of a loop, it is raised at the activity's body."""
    if node.repeats and multi_instance.inner(run, tr):
        tr = run.tracks[tr.scope or ""]
    for b in run.defn.boundaries.get(node.id, ()):
        if isinstance(b, el.ErrorBoundary) and b.error in (None, code):
            run.emit("error_caught", tr.id, node.id, {"error": code, "boundary": b.id})
            fork_boundary(run, tr, b, None)
            return None
    if catch(run, tr, "error", code):
        return None
    raise Incident(node.id, f"raised {code} and no error boundary caught it", code)


def escalate(run: Run, tr: Track, code: str) -> None:
    """Raise an escalation: caught, it opens its catch (which may cancel ``tr``); uncaught,
    a fact says so and the track goes on, as BPMN says."""
    if not catch(run, tr, "escalation", code):
        run.emit("escalation_uncaught", tr.id, tr.node, {"escalation": code})


def enter_end(run: Run, tr: Track, node: el.EndEvent) -> Result:
    """An end event: an error or escalation is raised, a message published or a signal
    broadcast first; a terminate end ends its scope (the instance, or the subprocess it is
    in, whose track goes on)."""
    if isinstance(node, el.MessageEnd):
        publish(run, node)
    elif isinstance(node, el.SignalEnd):
        broadcast(run, node)
    elif isinstance(node, MultipleEnd) and not throw_all(run, tr, node):
        return None  # an escalation's interrupting catch cancelled this track
    if node.error is not None:
        if catch(run, tr, "error", node.error):
            return None  # the catch cancelled the scope this track was in
        raise Incident(node.id, f"error end event threw {node.error!r} and nothing caught it",
                       node.error)
    if node.escalation is not None:
        escalate(run, tr, node.escalation)
        if tr.state in TERMINAL:
            return None
    run.emit("node_left", tr.id, node.id, None)
    if node.terminate and tr.scope is not None:
        for other in run.members(tr.scope):
            if other is not tr:
                run.stop_track(other, "cancelled", "cancelled")
        run.end_track(tr, "completed")
        return None
    run.end_track(tr, "completed", quiet=not node.terminate)
    if node.terminate and run.state == "active":
        run.finish("terminated", tr)
    return None


def enter_multiple_throw(run: Run, tr: Track, node: MultipleThrow) -> Result:
    if not throw_all(run, tr, node):
        return None
    return outgoing(run, node)


def throw_all(run: Run, tr: Track, node: MultipleThrow | MultipleEnd) -> bool:
    """Throw each definition of a multiple throw or end, in order: a message published, a
    signal broadcast (each with the node's payload), an escalation raised. False when an
    escalation's interrupting catch cancelled the track: what comes after is not thrown."""
    for d in node.events:
        if d.kind == "message":
            publish(run, el.MessageThrow(node.id, message=d.message, key=d.key,
                                         payload=node.payload))
        elif d.kind == "signal":
            broadcast(run, el.SignalThrow(node.id, signal=d.signal, payload=node.payload))
        else:
            escalate(run, tr, d.escalation)
            if tr.state in TERMINAL:
                return False
    return True


def enter_escalation_throw(run: Run, tr: Track, node: el.EscalationThrow) -> Result:
    escalate(run, tr, node.escalation)
    if tr.state in TERMINAL:
        return None
    return outgoing(run, node)


# -- links ----------------------------------------------------------------------------------
def enter_link_throw(run: Run, tr: Track, node: el.LinkThrow) -> Result:
    """Go to the link catch of the same name (a flow that is not drawn)."""
    target = run.defn.links[node.id]
    return [el.Flow(f"{node.id}->{target}", node.id, target)]
