"""What each element does when a track enters it (ENTER) and when its trigger fires (FIRE).

A behaviour returns the flows to leave by, ``PARK`` to wait for a trigger, or None when the
track ends there. FIRE is the wait node's fire path: it runs once per trigger, whether the
trigger reached a parked track or arrived with a continuation fork after a wake.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..kernel import to_datetime, to_us
from ..model import elements as el
from ..model.timers import Cycle, add
from .holders import correlation
from .records import TERMINAL, Track, Trigger
from .run import PARK, Incident, Run

Result = Any  # list of flows | PARK | None
ONE_US = timedelta(microseconds=1)


# -- leaving --------------------------------------------------------------------------------
def outgoing(run: Run, node: el.Element) -> Any:
    """Every outgoing flow whose condition holds (all of them when none has one)."""
    plain = run.defn.plain.get(node.id)
    if plain is not None:
        return plain
    flows = [f for f in run.defn.outgoing[node.id]
             if f.condition is None or check(run, node.id, f.condition)]
    if not flows:
        raise Incident(node.id, "no outgoing flow's condition holds")
    return flows


def check(run: Run, where: str, expr: Any) -> bool:
    try:
        return bool(expr(run.data or {}))
    except KeyError as exc:
        raise Incident(where, f"condition {expr.describe()!r} names missing field {exc}") from None
    except Exception as exc:  # a user's callable or expression failed
        raise Incident(where, f"condition {expr.describe()!r} raised "
                              f"{type(exc).__name__}") from None


def leave(run: Run, tr: Track, flows: list[el.Flow]) -> None:
    """Leave the track's node: the track takes the first flow, a child forks for each other."""
    run.emit("node_left", tr.id, tr.node, None)
    for f in flows[1:]:
        child = run.new_track(f.target, (tr.id,), "fork", f.id)
        run.spawn(child)
    tr.node = flows[0].target
    tr.via = flows[0].id


# -- events -----------------------------------------------------------------------------------
def enter_start(run: Run, tr: Track, node: el.Element) -> Result:
    return outgoing(run, node)


def enter_end(run: Run, tr: Track, node: el.EndEvent) -> Result:
    if node.error is not None:
        raise Incident(node.id, f"error end event threw {node.error!r} and nothing caught it",
                       node.error)
    run.emit("node_left", tr.id, node.id, None)
    run.end_track(tr, "completed")
    if node.terminate and run.state == "active":
        run.finish("terminated", tr)
    return None


def fire_pass(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """Fire path of a catch event: bind the payload, then leave."""
    run.merge(trigger.payload, node.id)
    return outgoing(run, node)


def deadline_of(run: Run, node_id: str, cycles: int | None = None) -> tuple[int, int | None]:
    """The absolute deadline of a timer armed now, and for a cycle the repetitions left after
    it (-1: unbounded). ``cycles`` is what was left when re-arming a cycle."""
    spec = run.defn.timers[node_id]
    if type(spec) is timedelta:  # the common case first: exact in microseconds
        return run.core.kernel.now + spec // ONE_US, None
    now = to_datetime(run.core.kernel.now)
    if isinstance(spec, Cycle):
        first = cycles is None
        if cycles is None:
            cycles = spec.repeats if spec.repeats is not None else -1
        at = spec.start if (first and spec.start is not None and spec.start > now) \
            else add(now, spec.interval)
        return to_us(at), (cycles - 1 if cycles > 0 else -1)
    if isinstance(spec, datetime):
        return to_us(spec), None
    return to_us(add(now, spec)), None


def enter_timer(run: Run, tr: Track, node: el.TimerCatch) -> Result:
    deadline, _ = deadline_of(run, node.id)
    tr.wait = {"kind": "timer", "deadline": deadline}
    tr.remaining = deadline - run.core.kernel.now
    run.core.holders.hold_timer(run.id, tr.id, node.id, deadline)
    return PARK


def key_of(run: Run, node: Any) -> str:
    try:
        return correlation(node.key(run.data or {}))
    except KeyError as exc:
        raise Incident(node.id, f"correlation key {node.key.describe()!r} names missing "
                                f"field {exc}") from None


def enter_message(run: Run, tr: Track, node: Any) -> Result:
    key = key_of(run, node)
    buffered = run.core.take_buffered(node.message, key)
    if buffered is not None:
        run.emit("message_correlated", tr.id, node.id,
                 {"message": node.message, "fields": len(buffered), "buffered": True})
        return fire_pass(run, tr, node, Trigger("message", node.id, "node", tr.id, buffered))
    tr.wait = {"kind": "message", "name": node.message, "key": key}
    run.core.holders.hold_subscription(run.id, tr.id, node.id, "message", node.message, key)
    arm_boundaries(run, tr, node)
    return PARK


def enter_signal(run: Run, tr: Track, node: el.SignalCatch) -> Result:
    tr.wait = {"kind": "signal", "name": node.signal}
    run.core.holders.hold_subscription(run.id, tr.id, node.id, "signal", node.signal)
    return PARK


def enter_conditional(run: Run, tr: Track, node: el.ConditionalCatch) -> Result:
    if check(run, node.id, node.condition):
        return outgoing(run, node)
    tr.wait = {"kind": "conditional"}
    run.conditionals += 1
    return PARK


def fire_conditional(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    run.conditionals -= 1
    return outgoing(run, node)


def enter_message_throw(run: Run, tr: Track, node: el.MessageThrow) -> Result:
    key = node.key(run.data or {}) if node.key is not None else None
    run.core.publish_message(node.message, key=key, payload=pick(run, node))
    return outgoing(run, node)


def enter_signal_throw(run: Run, tr: Track, node: el.SignalThrow) -> Result:
    run.core.broadcast_signal(node.signal, payload=pick(run, node) or None)
    return outgoing(run, node)


def pick(run: Run, node: Any) -> dict[str, Any]:
    data = run.data or {}
    missing = [f for f in node.payload if f not in data]
    if missing:
        raise Incident(node.id, f"payload field {missing[0]!r} is not in the data")
    return {f: data[f] for f in node.payload}


# -- tasks ------------------------------------------------------------------------------------
def call_fn(run: Run, tr: Track, node: Any) -> Result:
    """Run a script or inline service: a copy of the data in, a dict merged back."""
    try:
        result = node.fn(run.data_copy())
    except Exception as exc:
        return throw(run, tr, node, getattr(exc, "code", None) or type(exc).__name__)
    run.merge(result, node.id)
    return outgoing(run, node)


def throw(run: Run, tr: Track, node: el.Element, code: str) -> Result:
    """An error at an activity: its matching error boundary forks, or the instance fails."""
    for b in run.defn.boundaries.get(node.id, ()):
        if isinstance(b, el.ErrorBoundary) and b.error in (None, code):
            run.emit("error_caught", tr.id, node.id, {"error": code, "boundary": b.id})
            fork_boundary(run, tr, b, None)
            return None
    raise Incident(node.id, f"raised {code} and no error boundary caught it", code)


def enter_service(run: Run, tr: Track, node: el.ServiceTask) -> Result:
    if node.fn is not None:
        return call_fn(run, tr, node)
    job = run.new_job(tr, node)
    run.core.jobs[job.id] = job
    tr.wait = {"kind": "job", "job": job.id}
    run.emit("job_created", tr.id, node.id, {"job": job.id, "topic": job.topic})
    arm_boundaries(run, tr, node)
    return PARK


def fire_job(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    if trigger.kind == "error":
        return throw(run, tr, node, str((trigger.payload or {}).get("error")))
    run.emit("job_completed", tr.id, node.id, {"job": trigger.ref,
                                               "outputs": sorted(trigger.payload or {})})
    return fire_pass(run, tr, node, trigger)


def enter_user_task(run: Run, tr: Track, node: el.UserTask) -> Result:
    task = run.new_task(tr, node)
    run.core.inbox[task.id] = task
    tr.wait = {"kind": "task", "task": task.id, "created": task.created}
    run.emit("task_created", tr.id, node.id, {"task": task.id})
    run.core.holders.hold_task(run.id, tr.id, node.id, task.id)
    arm_boundaries(run, tr, node)
    return PARK


def fire_task(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    run.emit("task_completed", tr.id, node.id, {"task": trigger.ref,
                                                "outputs": sorted(trigger.payload or {})})
    return fire_pass(run, tr, node, trigger)


def finish_activity(fire: Callable[..., Result]) -> Callable[..., Result]:
    """The activity is done: its boundaries are disarmed before it fires."""
    def fired(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
        run.disarm(tr)
        return fire(run, tr, node, trigger)
    return fired


# -- gateways -------------------------------------------------------------------------------
def enter_exclusive(run: Run, tr: Track, node: el.ExclusiveGateway) -> Result:
    default = None
    for f in run.defn.outgoing[node.id]:
        if node.default is not None and f.target == node.default:
            default = f
        elif f.condition is None or check(run, node.id, f.condition):
            return [f]
    if default is not None:
        return [default]
    raise Incident(node.id, "no condition holds and there is no default flow")


def enter_parallel(run: Run, tr: Track, node: el.ParallelGateway) -> Result:
    incoming = run.defn.incoming[node.id]
    if len(incoming) <= 1:
        return list(run.defn.outgoing[node.id])
    arrived = run.joins.setdefault(node.id, {})
    arrived.setdefault(tr.via or "", []).append(tr.id)
    tr.wait = {"kind": "join"}
    if any(not arrived.get(f.id) for f in incoming):
        run.running -= 1
        tr.state = "waiting"
        tr.coro = None
        run.emit("track_state", tr.id, node.id, {"state": "waiting", "join": True})
        if run.running == 0:
            run.core.on_quiet(run)
        return None
    merged = tuple(arrived[f.id].pop(0) for f in incoming)
    if not any(arrived.values()):
        del run.joins[node.id]
    for tid in merged:
        other = run.tracks[tid]
        other.wait = None
        if other is not tr:
            other.state = "waiting"
            run.set_state(other, "merged")
    child = run.new_track(node.id, merged, "join")
    run.spawn(child, Trigger("join", node.id, "node", child.id))
    run.end_track(tr, "merged")
    return None


def fire_join(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    return list(run.defn.outgoing[node.id])


def enter_event_gateway(run: Run, tr: Track, node: el.EventGateway) -> Result:
    arms: list[dict[str, Any]] = []
    tr.wait = {"kind": "ebg", "arms": arms}
    for f in run.defn.outgoing[node.id]:
        arm = run.defn.nodes[f.target]
        won = arm_wait(run, tr, arm, "node", arms)
        if won is not None:
            run.core.holders.release_waits(run.id, tr.id, "withdrawn")
            for a in arms:
                if a["kind"] == "conditional":
                    run.conditionals -= 1
            tr.wait = None
            return fire_gateway(run, tr, node, won)
    return PARK


def arm_wait(run: Run, tr: Track, arm: el.Element, wait_kind: str,
             arms: list[dict[str, Any]]) -> Trigger | None:
    """Arm one catch of a gateway; a trigger already in hand (buffered message, true
    condition) is returned instead."""
    holders = run.core.holders
    if isinstance(arm, el.TimerCatch):
        deadline, _ = deadline_of(run, arm.id)
        arms.append({"node": arm.id, "kind": "timer", "deadline": deadline})
        holders.hold_timer(run.id, tr.id, arm.id, deadline, wait_kind)
    elif isinstance(arm, (el.MessageCatch, el.ReceiveTask)):
        key = key_of(run, arm)
        buffered = run.core.take_buffered(arm.message, key)
        if buffered is not None:
            return Trigger("message", arm.id, wait_kind, tr.id, buffered)
        arms.append({"node": arm.id, "kind": "message", "name": arm.message, "key": key})
        holders.hold_subscription(run.id, tr.id, arm.id, "message", arm.message, key, wait_kind)
    elif isinstance(arm, el.SignalCatch):
        arms.append({"node": arm.id, "kind": "signal", "name": arm.signal})
        holders.hold_subscription(run.id, tr.id, arm.id, "signal", arm.signal, None, wait_kind)
    elif isinstance(arm, el.ConditionalCatch):
        if check(run, arm.id, arm.condition):
            return Trigger("conditional", arm.id, wait_kind, tr.id)
        arms.append({"node": arm.id, "kind": "conditional"})
        run.conditionals += 1
    return None


def fire_gateway(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The winning arm: the track passes the gateway and fires that catch event."""
    for a in (tr.wait or {}).get("arms", ()):
        if a["kind"] == "conditional":
            run.conditionals -= 1
    tr.wait = None
    run.emit("node_left", tr.id, node.id, None)
    arm = run.defn.nodes[trigger.node]
    tr.node = arm.id
    run.emit("node_entered", tr.id, arm.id, {"won": trigger.kind})
    if isinstance(arm, el.ReceiveTask):
        return fire_pass(run, tr, arm, trigger)
    if isinstance(arm, el.ConditionalCatch):
        return outgoing(run, arm)
    return fire_pass(run, tr, arm, trigger)


# -- boundaries -------------------------------------------------------------------------------
def arm_boundaries(run: Run, tr: Track, node: el.Element) -> None:
    """Arm every waiting boundary of the activity the track now occupies."""
    for b in run.defn.boundaries.get(node.id, ()):
        arm_boundary(run, tr, b, None)


def arm_boundary(run: Run, tr: Track, b: el.Boundary, cycles: int | None) -> None:
    """Arm one boundary; ``cycles`` is what a cycle timer had left when it re-arms."""
    holders = run.core.holders
    if isinstance(b, el.TimerBoundary):
        deadline, cycles = deadline_of(run, b.id, cycles)
        tr.bounds[b.id] = {"kind": "timer", "deadline": deadline, "cycles": cycles}
        holders.hold_timer(run.id, tr.id, b.id, deadline, "boundary", cycles)
    elif isinstance(b, el.MessageBoundary):
        key = key_of(run, b)
        tr.bounds[b.id] = {"kind": "message", "name": b.message, "key": key}
        buffered = run.core.take_buffered(b.message, key)
        if buffered is not None:
            run.post(("boundary", tr.id, b.id, Trigger("message", b.id, "boundary", tr.id,
                                                       buffered)))
        else:
            holders.hold_subscription(run.id, tr.id, b.id, "message", b.message, key,
                                      "boundary")
    elif isinstance(b, el.SignalBoundary):
        tr.bounds[b.id] = {"kind": "signal", "name": b.signal}
        holders.hold_subscription(run.id, tr.id, b.id, "signal", b.signal, None, "boundary")
    elif isinstance(b, el.ConditionalBoundary):
        tr.bounds[b.id] = {"kind": "conditional", "last": False}
        run.conditionals += 1
        run.post(("data",))


def fire_boundary_event(run: Run, tid: str, bid: str, trigger: Trigger | None) -> None:
    """A boundary's trigger, handled by the loop: fork at the boundary over the guarded track."""
    tr = run.tracks.get(tid)
    b = run.defn.nodes[bid]
    assert isinstance(b, el.Boundary)
    if tr is None or tr.state in TERMINAL or tr.node != b.attached_to or bid not in tr.bounds:
        return  # the activity finished first: the boundary was already withdrawn
    if not b.interrupting and tr.bounds[bid]["kind"] != "conditional":
        arm = tr.bounds.pop(bid)
        repeat = arm["kind"] in ("message", "signal") or arm.get("cycles") not in (None, 0)
        if repeat and not (tr.wait or {}).get("fired"):
            arm_boundary(run, tr, b, arm.get("cycles"))
    fork_boundary(run, tr, b, trigger)


def fork_boundary(run: Run, tr: Track, b: el.Boundary, trigger: Trigger | None) -> None:
    """The boundary fork: a new track at the boundary with the guarded track as parent;
    an interrupting boundary cancels the guarded track first."""
    if b.interrupting and tr.state not in TERMINAL:
        run.stop_track(tr, "cancelled", "cancelled")
    child = run.new_track(b.id, (tr.id,), "boundary")
    run.spawn(child, trigger or Trigger("boundary", b.id, "boundary", tr.id))


def enter_boundary(run: Run, tr: Track, node: el.Element) -> Result:
    return outgoing(run, node)


def check_conditions(run: Run) -> None:
    """After a data change: fire conditional catches, arms and boundaries that now hold."""
    for tr in run.live_tracks():
        wait = tr.wait or {}
        if tr.state == "waiting" and wait.get("kind") == "conditional":
            node = run.defn.nodes[tr.node]
            if check(run, node.id, node.condition):
                tr.wait = None
                run.core.kernel.resume(tr.coro, Trigger("conditional", node.id, "node", tr.id))
                continue
        if tr.state == "waiting" and wait.get("kind") == "ebg":
            for a in wait["arms"]:
                node = run.defn.nodes[a["node"]]
                if a["kind"] == "conditional" and not wait.get("fired") and \
                        check(run, node.id, node.condition):
                    wait["fired"] = True
                    run.core.holders.release_waits(run.id, tr.id, "withdrawn")
                    run.core.kernel.resume(tr.coro, Trigger("conditional", node.id, "node",
                                                            tr.id))
                    break
        for bid, arm in list(tr.bounds.items()):
            if arm["kind"] != "conditional":
                continue
            b = run.defn.nodes[bid]
            now = check(run, bid, b.condition)
            if now and not arm["last"]:
                arm["last"] = True
                if b.interrupting:
                    run.core.holders.release_waits(run.id, tr.id, "cancelled")
                fire_boundary_event(run, tr.id, bid, Trigger("conditional", bid, "boundary",
                                                             tr.id))
                if tr.state in TERMINAL:
                    break
            elif not now:
                arm["last"] = False


def handle(run: Run, item: tuple[Any, ...]) -> None:
    """The loop's dispatch, by verb."""
    verb = item[0]
    if verb == "boundary":
        fire_boundary_event(run, item[1], item[2], item[3])
    elif verb == "data":
        check_conditions(run)
    elif verb == "quiet":
        run.core.quiet_point(run)


ENTER: dict[str, Callable[..., Result]] = {
    "start": enter_start,
    "end": enter_end,
    "script_task": call_fn,
    "service_task": enter_service,
    "user_task": enter_user_task,
    "receive_task": enter_message,
    "timer_catch": enter_timer,
    "message_catch": enter_message,
    "signal_catch": enter_signal,
    "conditional_catch": enter_conditional,
    "message_throw": enter_message_throw,
    "signal_throw": enter_signal_throw,
    "exclusive_gateway": enter_exclusive,
    "parallel_gateway": enter_parallel,
    "event_gateway": enter_event_gateway,
}
for _kind in ("timer_boundary", "message_boundary", "signal_boundary", "error_boundary",
              "conditional_boundary"):
    ENTER[_kind] = enter_boundary

FIRE: dict[str, Callable[..., Result]] = {
    "timer_catch": fire_pass,
    "message_catch": fire_pass,
    "signal_catch": fire_pass,
    "receive_task": finish_activity(fire_pass),
    "conditional_catch": fire_conditional,
    "user_task": finish_activity(fire_task),
    "service_task": finish_activity(fire_job),
    "parallel_gateway": fire_join,
    "event_gateway": fire_gateway,
}
for _kind in ("timer_boundary", "message_boundary", "signal_boundary", "error_boundary",
              "conditional_boundary"):
    FIRE[_kind] = fire_pass
