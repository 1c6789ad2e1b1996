"""Gateways: exclusive (the first condition that holds, else the default flow), parallel
(fork, and join by counting tokens per incoming flow), and event-based (the first of its
catch events to fire wins); decisions, where a person or a rule chooses the flows of an
exclusive or inclusive gateway. The inclusive gateway is ``inclusive``."""

from __future__ import annotations

from typing import Any

from ...model import elements as el
from ...vocabulary import WAITING
from ..runtime.compute import check, key_of, outgoing, timer_wait
from ..runtime.draws import drawn, drawn_flows
from ..runtime.run import Run
from ..runtime.tracks import PARK, adopt_parked, behaviour_of, spawn
from ..state.incident import Incident
from ..state.records import Track, Trigger, join_key
from ..state.waits import (
    ConditionalWait,
    DecisionWait,
    GatewayWait,
    JoinWait,
    MessageWait,
    SignalWait,
    Wait,
)
from . import inclusive
from .events import fire_pass

Result = Any  # list of flows | PARK | None


def enter_exclusive(run: Run, tr: Track, node: el.ExclusiveGateway) -> Result:
    if node.decision is not None:
        return decide(run, tr, node, node.decision)
    default = None
    for f in run.defn.outgoing[node.id]:
        if node.default is not None and f.target == node.default:
            default = f
        elif f.condition is None or check(run, node.id, f.condition):
            return [f]
    if default is not None:
        return [default]
    raise Incident(node.id, "no condition holds and there is no default flow")


def decide(run: Run, tr: Track, node: el.ExclusiveGateway | el.InclusiveGateway,
           decision: el.Decision) -> Result:
    """A decision: its rule draws the flow (an inclusive gateway: the flows) at once;
    without one, the track waits with a ``decision`` hold until a person chooses
    (``Engine.decide``)."""
    if decision.weights:
        if isinstance(node, el.InclusiveGateway):
            flows = drawn_flows(run, node, decision)
        else:
            flows = [drawn(run, node, decision)]
        run.emit("decision_made", tr.id, node.id, made(node, flows, "rule"))
        return flows
    tr.wait = w = DecisionWait(node.id)
    w.hold(run.core.holders, run.id, tr.id)
    return PARK


def made(node: el.Element, flows: list[el.Flow], by: str) -> dict[str, Any]:
    """A ``decision_made`` fact's details: ``flow`` (at an inclusive gateway the first of
    ``flows``, every flow taken in the gateway's order) and ``by`` (person or rule)."""
    if isinstance(node, el.InclusiveGateway):
        return {"flow": flows[0].id, "flows": [f.id for f in flows], "by": by}
    return {"flow": flows[0].id, "by": by}


def fire_decision(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """A person chose: the track leaves by the flow the trigger names (at an inclusive
    gateway, by each of the flows its payload lists: ``flows``)."""
    outs = run.defn.outgoing[node.id]
    if isinstance(node, el.InclusiveGateway):
        names = (trigger.payload or {}).get("flows")
        flows = [f for f in outs if isinstance(names, list) and f.id in names]
        if not flows or len(flows) != len(names or ()):
            raise Incident(node.id, f"decision names flows {names!r}, not of its own")
        run.emit("decision_made", tr.id, node.id, made(node, flows, "person"))
        return flows
    for f in outs:
        if f.id == trigger.ref:
            run.emit("decision_made", tr.id, node.id, {"flow": f.id, "by": "person"})
            return [f]
    raise Incident(node.id, f"decision names flow {trigger.ref!r}, not one of its own")


def enter_inclusive(run: Run, tr: Track, node: el.InclusiveGateway) -> Result:
    """An inclusive gateway that is a decision and does not join decides at once; one that
    joins decides when its join fires (``fire_inclusive``)."""
    if node.decision is None or len(run.defn.incoming[node.id]) > 1:
        return inclusive.enter(run, tr, node)
    return decide(run, tr, node, node.decision)


def fire_inclusive(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The track leaving an inclusive join (or, at a decision, a person's choice)."""
    assert isinstance(node, el.InclusiveGateway)
    if node.decision is None:
        return inclusive.fire(run, tr, node, trigger)
    if trigger.kind == "decision":
        return fire_decision(run, tr, node, trigger)
    return decide(run, tr, node, node.decision)


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
    if node.instantiate and tr.via is not None:  # the event of ``via``'s arm created it
        catch = next(run.defn.nodes[f.target] for f in run.defn.outgoing[node.id]
                     if f.id == tr.via)
        return fire_gateway(run, tr, node, Trigger(_kind_of(catch), catch.id, "node", tr.id))
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


def _kind_of(catch: el.Element) -> str:
    """The trigger kind of a gateway arm."""
    if isinstance(catch, el.TimerCatch):
        return "timer"
    return "signal" if isinstance(catch, el.SignalCatch) else "message"


def open_arms(run: Run, tr: Track) -> bool:
    """A new instance that a parallel event-based gateway created (``tr``: its first track,
    at the gateway, ``via`` the arm whose event created it): each other arm is a track of
    its own, forked from ``tr`` and parked on its catch event at once, before anything
    else can come for it (a second message published at the same instant correlates with
    it). A wait that cannot be armed (a key that fails) is an incident that fails the
    instance: False. Any other gateway: nothing to do."""
    node = run.defn.nodes[tr.node]
    if not (isinstance(node, el.EventGateway) and node.parallel and tr.via is not None):
        return True
    enter = behaviour_of(run).ENTER
    for f in run.defn.outgoing[node.id]:
        if f.id == tr.via:
            continue
        catch = run.defn.nodes[f.target]
        child = run.new_track(catch.id, (tr.id,), "fork", f.id, scope=tr.scope)
        run.at = child
        try:
            run.entering(child)
            got = _buffered(run, child, catch)
            if got is not None:
                spawn(run, child, got)  # it fires in an event of its own
                continue
            assert enter[catch.kind](run, child, catch) is PARK
        except Incident as exc:
            run.fail(child, exc)
            return False
        finally:
            run.at = None
        adopt_parked(run, child)
        run._move(child, WAITING)  # no fact, as for any track that parks: its holds say so
    return True


def _buffered(run: Run, tr: Track, catch: el.Element) -> Trigger | None:
    """A buffered message for a message arm, taken: the arm's trigger, in hand."""
    if not isinstance(catch, (el.MessageCatch, el.ReceiveTask)):
        return None
    payload = run.core.hub.take_buffered(catch.message, key_of(run, catch), run.id, run.stored)
    if payload is None:
        return None
    run.emit("message_correlated", tr.id, catch.id,
             {"message": catch.message, "fields": len(payload), "buffered": True})
    return Trigger("message", catch.id, "node", tr.id, payload)
