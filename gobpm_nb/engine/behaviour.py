"""What each element does when a track enters it (ENTER) and when its trigger fires (FIRE).

A behaviour returns the flows to leave by, ``PARK`` to wait for a trigger, or None when the
track ends there. FIRE is the wait node's fire path: it runs once per trigger, whether the
trigger reached a parked track or arrived with a continuation fork after a wake. Boundaries
live in ``boundaries``; the waits a behaviour arms are the classes of ``waits``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import GobpmError
from ..model import elements as el
from ..vocabulary import WAITING
from . import calls, inclusive, many, scopes
from .boundaries import arm_boundaries, check_conditions, fire_boundary_event
from .compute import check, key_of, outgoing, timer_wait
from .incident import Incident, clean
from .records import Track, Trigger, join_key
from .run import Run
from .tracks import PARK, spawn
from .values import Opaque, json_copy
from .waits import (
    ConditionalWait,
    GatewayWait,
    JobWait,
    JoinWait,
    MessageWait,
    SignalWait,
    TaskWait,
    Wait,
)

Result = Any  # list of flows | PARK | None


# -- leaving --------------------------------------------------------------------------------
def leave(run: Run, tr: Track, flows: list[el.Flow]) -> None:
    """Leave the track's node: the track takes the first flow, a child forks for each other."""
    run.core.emit("node_left", run.id, tr.id, tr.node, None)
    if len(flows) > 1:
        for f in flows[1:]:
            child = run.new_track(f.target, (tr.id,), "fork", f.id, scope=tr.scope)
            spawn(run, child)
    first = flows[0]
    tr.node = first.target
    tr.via = first.id


# -- events -----------------------------------------------------------------------------------
def enter_start(run: Run, tr: Track, node: el.Element) -> Result:
    return outgoing(run, node)


def fire_pass(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """Fire path of a catch event: bind the payload, then leave."""
    if trigger.payload:
        run.merge(trigger.payload, node.id)
    plain = run.defn.plain.get(node.id)  # flows without conditions: the common case
    return plain if plain is not None else outgoing(run, node)


def enter_timer(run: Run, tr: Track, node: el.TimerCatch) -> Result:
    tr.wait = w = timer_wait(run, node.id)
    run.core.holders.hold_timer(run.id, tr.id, node.id, w.deadline)  # w.hold(), one call less
    return PARK


def enter_message(run: Run, tr: Track, node: Any) -> Result:
    key = key_of(run, node)
    buffered = run.core.hub.take_buffered(node.message, key, run.id, run.stored)
    if buffered is not None:
        run.emit("message_correlated", tr.id, node.id,
                 {"message": node.message, "fields": len(buffered), "buffered": True})
        return fire_pass(run, tr, node, Trigger("message", node.id, "node", tr.id, buffered))
    tr.wait = w = MessageWait(node.id, node.message, key)
    w.hold(run.core.holders, run.id, tr.id)
    arm_boundaries(run, tr, node)
    return PARK


def enter_signal(run: Run, tr: Track, node: el.SignalCatch) -> Result:
    tr.wait = w = SignalWait(node.id, node.signal)
    w.hold(run.core.holders, run.id, tr.id)
    return PARK


def enter_conditional(run: Run, tr: Track, node: el.ConditionalCatch) -> Result:
    if check(run, node.id, node.condition):
        return outgoing(run, node)
    tr.wait = ConditionalWait(node.id, order=run.core.kernel.next_seq())
    return PARK


def fire_conditional(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    return outgoing(run, node)


def enter_message_throw(run: Run, tr: Track, node: el.MessageThrow) -> Result:
    key = None
    if node.key is not None:  # a Python callable's key goes through the tape
        key = run.core.tape.call(("key", node.id), throw_key, run, node) if node.key.python \
            else throw_key(run, node)
    try:
        run.core.hub.publish_message(node.message, key=key,
                                 payload=pick(run, node))
    except GobpmError as exc:
        raise Incident(node.id, str(exc)) from None
    return outgoing(run, node)


def throw_key(run: Run, node: el.MessageThrow) -> Any:
    """The key a message throw publishes with (a copy; a value that is not JSON is kept as
    an ``Opaque`` that the publish refuses as it would the value)."""
    assert node.key is not None
    try:
        key = node.key(run.seen())
    except KeyError as exc:  # worded as a wait's key that names a missing field
        raise Incident(node.id, f"correlation key {node.key.describe()!r} names missing "
                                f"field {exc}") from None
    except Exception as exc:  # a user's key failed: an incident, never an escape
        raise Incident(node.id, f"correlation key {node.key.describe()!r} raised "
                                f"{type(exc).__name__}: {exc}") from None
    try:
        return json_copy(key, "key")
    except (TypeError, ValueError, RecursionError):
        return Opaque(key)


def enter_signal_throw(run: Run, tr: Track, node: el.SignalThrow) -> Result:
    run.core.hub.broadcast_signal(node.signal,
                              payload=pick(run, node) or None)
    return outgoing(run, node)


def pick(run: Run, node: Any) -> dict[str, Any]:
    data = run.seen()
    missing = [f for f in node.payload if f not in data]
    if missing:
        raise Incident(node.id, f"payload field {missing[0]!r} is not in the data")
    return {f: data[f] for f in node.payload}


# -- tasks ------------------------------------------------------------------------------------
def call_fn(run: Run, tr: Track, node: Any) -> Result:
    """Run a script or inline service: a copy of the data in, a dict merged back. What the
    function gave (or the error code it raised) goes on the tape: a replay is served it and
    never calls the function again."""
    code, values = run.core.tape.call(("fn", node.id), outcome_of, run, node)
    if code is not None:
        return scopes.throw(run, tr, node, code)
    run.merge(values, node.id, copied=True)  # ``outcome_of`` made the copy
    return outgoing(run, node)


def outcome_of(run: Run, node: Any) -> tuple[Any, dict[str, Any] | None]:
    """Call a script or inline service: (the error code it raised, None), or (None, what to
    merge); what cannot be merged is an incident."""
    try:
        result = node.fn(run.seen_copy())
    except Exception as exc:
        return getattr(exc, "code", None) or type(exc).__name__, None
    return None, clean(result, node.id)


def enter_service(run: Run, tr: Track, node: el.ServiceTask) -> Result:
    if node.fn is not None:
        return call_fn(run, tr, node)
    job = run.new_job(tr, node)
    run.core.jobs[job.id] = job
    tr.wait = JobWait(node.id, job.id, job.topic)
    run.emit("job_created", tr.id, node.id, {"job": job.id, "topic": job.topic})
    arm_boundaries(run, tr, node)
    return PARK


def fire_job(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    if trigger.kind == "error":
        return scopes.throw(run, tr, node, str((trigger.payload or {}).get("error")))
    run.emit("job_completed", tr.id, node.id, {"job": trigger.ref,
                                               "outputs": sorted(trigger.payload or {})})
    return fire_pass(run, tr, node, trigger)


def enter_user_task(run: Run, tr: Track, node: el.UserTask) -> Result:
    task = run.new_task(tr, node)
    run.core.inbox[task.id] = task
    tr.wait = w = TaskWait(node.id, task.id, task.created)
    run.emit("task_created", tr.id, node.id, {"task": task.id})
    w.hold(run.core.holders, run.id, tr.id)
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
    key = join_key(node.id, tr.scope)
    arrived = run.joins.setdefault(key, {})
    arrived.setdefault(tr.via or "", []).append(tr.id)
    tr.wait = JoinWait(node.id)
    if any(not arrived.get(f.id) for f in incoming):
        tr.coro = None
        run.set_state(tr, WAITING, {"state": WAITING, "join": True})
        if run.running == 0:
            run.core.on_quiet(run)
        return None
    merged = tuple(arrived[f.id].pop(0) for f in incoming)
    if not any(arrived.values()):
        del run.joins[key]
    for tid in merged:
        other = run.tracks[tid]
        other.wait = None
        if other is not tr:
            run.set_state(other, "merged")
    child = run.new_track(node.id, merged, "join", scope=tr.scope)
    spawn(run, child, Trigger("join", node.id, "node", child.id))
    run.end_track(tr, "merged")
    return None


def fire_join(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    return list(run.defn.outgoing[node.id])


def enter_event_gateway(run: Run, tr: Track, node: el.EventGateway) -> Result:
    tr.wait = gw = GatewayWait(node.id)
    for f in run.defn.outgoing[node.id]:
        won = arm(run, tr, run.defn.nodes[f.target], gw.arms)
        if won is not None:
            run.core.holders.release_waits(run.id, tr.id, "withdrawn")
            tr.wait = None
            return fire_gateway(run, tr, node, won)
    return PARK


def arm(run: Run, tr: Track, catch: el.Element, arms: list[Wait]) -> Trigger | None:
    """Arm one catch of a gateway; a trigger already in hand (buffered message, true
    condition) is returned instead."""
    w: Wait
    if isinstance(catch, el.TimerCatch):
        w = timer_wait(run, catch.id)
    elif isinstance(catch, (el.MessageCatch, el.ReceiveTask)):
        key = key_of(run, catch)
        buffered = run.core.hub.take_buffered(catch.message, key, run.id, run.stored)
        if buffered is not None:
            return Trigger("message", catch.id, "node", tr.id, buffered)
        w = MessageWait(catch.id, catch.message, key)
    elif isinstance(catch, el.SignalCatch):
        w = SignalWait(catch.id, catch.signal)
    else:
        assert isinstance(catch, el.ConditionalCatch)
        if check(run, catch.id, catch.condition):
            return Trigger("conditional", catch.id, "node", tr.id)
        w = ConditionalWait(catch.id, order=run.core.kernel.next_seq())
    arms.append(w)
    w.hold(run.core.holders, run.id, tr.id)
    return None


def fire_gateway(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The winning arm: the track passes the gateway and fires that catch event."""
    tr.wait = None
    run.emit("node_left", tr.id, node.id, None)
    catch = run.defn.nodes[trigger.node]
    tr.node = catch.id
    run.emit("node_entered", tr.id, catch.id, {"won": trigger.kind})
    if isinstance(catch, el.ConditionalCatch):
        return outgoing(run, catch)
    return fire_pass(run, tr, catch, trigger)


def enter_boundary(run: Run, tr: Track, node: el.Element) -> Result:
    return outgoing(run, node)


def handle(run: Run, item: tuple[Any, ...]) -> None:
    """The loop's dispatch, by verb."""
    verb = item[0]
    if verb == "boundary":
        fire_boundary_event(run, item[1], item[2], item[3])
    elif verb == "event":
        scopes.open_event(run, item[1], item[2], item[3])
    elif verb == "data":
        check_conditions(run)


ENTER: dict[str, Callable[..., Result]] = {
    "start": enter_start,
    "end": scopes.enter_end,
    "subprocess": scopes.enter_subprocess,
    "escalation_throw": scopes.enter_escalation_throw,
    "link_throw": scopes.enter_link_throw,
    "link_catch": enter_start,
    "inclusive_gateway": inclusive.enter,
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
              "conditional_boundary", "escalation_boundary"):
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
    "inclusive_gateway": inclusive.fire,
    "event_gateway": fire_gateway,
    "subprocess": scopes.fire_scope,
    "event_subprocess": scopes.fire_scope,
}
for _kind in ("timer_boundary", "message_boundary", "signal_boundary", "error_boundary",
              "conditional_boundary", "escalation_boundary", "message_start", "timer_start",
              "signal_start", "error_start", "escalation_start"):
    FIRE[_kind] = fire_pass

for _kind in ("user_task", "service_task", "script_task", "receive_task", "subprocess"):
    ENTER[_kind] = many.entering(ENTER[_kind])
    FIRE[_kind] = many.firing(FIRE.get(_kind, fire_pass))  # a script task fires as a body

for _kind in ("message_start", "timer_start", "signal_start"):  # starting an instance
    ENTER[_kind] = enter_start
ENTER["call_activity"] = calls.enter_call
FIRE["call_activity"] = finish_activity(calls.fire_call)

settle_joins = inclusive.settle_all
open_root = scopes.open_root
