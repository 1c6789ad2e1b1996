"""What ``build_definition`` checks of each element on its own and with its flows: the
names it must give, its flows and conditions, its boundaries, a decision's rule, its
multi-instance and standard-loop settings. The graph's checks (starts, scopes, links,
reachability) stay in ``definition``."""

from __future__ import annotations

from ..errors import ModelError
from . import elements as el
from .decisions import check_decision
from .multiple import MULTIPLE, THROWS, check_multiple, check_throws
from .placeholders import Unsupported, UnsupportedBoundary
from .timers import Timer, TimerExpr, TimerSpec, at_deployment

Nodes = dict[str, el.Element]
Flows = dict[str, list[el.Flow]]
Boundaries = dict[str, list[el.Boundary]]

GATEWAYS = (el.ExclusiveGateway, el.InclusiveGateway, el.ParallelGateway, el.EventGateway,
            el.ComplexGateway)


def where(e: el.Element) -> str:
    return f"in subprocess {e.within!r}" if e.within is not None else "in the process"


def _check_timer(e: el.Element, timer: TimerSpec, timers: dict[str, Timer]) -> list[str]:
    """A timer parsed into ``timers``; a start event of the process evaluates its
    expression now, when the process is deployed (it has no instance data)."""
    try:
        parsed = timer.parsed()
        if isinstance(parsed, TimerExpr) and isinstance(e, el.TimerStart) and e.within is None:
            parsed = at_deployment(parsed)
    except ModelError as exc:
        return [f"{e.kind} {e.id!r}: {exc}"]
    timers[e.id] = parsed
    return []


def check_element(e: el.Element, nodes: Nodes, outgoing: Flows, incoming: Flows,
                   boundaries: Boundaries, timers: dict[str, Timer]) -> list[str]:
    p: list[str] = []
    outs = outgoing[e.id]
    if isinstance(e, (el.StartEvent, el.LinkCatch, el.EventSubProcess)) and incoming[e.id]:
        p.append(f"{e.kind} {e.id!r} has incoming flows")
    if isinstance(e, (el.LinkThrow, el.EventSubProcess)) and outs:
        p.append(f"{e.kind} {e.id!r} has outgoing flows")
    for f in outs:
        target = nodes.get(f.target)
        if target is not None and target.within != e.within:
            p.append(f"flow {f.id!r} crosses the border of a subprocess ({e.id!r} is "
                     f"{where(e)}, {f.target!r} is {where(target)})")
    if isinstance(e, (Unsupported, UnsupportedBoundary)):
        p.append(f"{e.tag} {e.id!r} is not supported: {e.reason}")
    if isinstance(e, el.EndEvent):
        if outs:
            p.append(f"end event {e.id!r} has outgoing flows")
    elif not outs and isinstance(e, GATEWAYS):  # any other node ends its track (a warning)
        p.append(f"{e.kind} {e.id!r} has no way out (no outgoing flow)")
    timer = getattr(e, "timer", None)
    if isinstance(e, (el.TimerCatch, el.TimerBoundary, el.TimerStart)) and timer is not None:
        p.extend(_check_timer(e, timer, timers))
    if isinstance(e, (el.MessageCatch, el.ReceiveTask, el.MessageBoundary, el.MessageThrow,
                      el.MessageStart, el.MessageEnd)):
        if not e.message:
            p.append(f"{e.kind} {e.id!r} names no message")
        starts_instances = (isinstance(e, el.MessageStart) and e.within is None) or \
            _only_starts(e, nodes, incoming)
        thrown = isinstance(e, (el.MessageThrow, el.MessageEnd))
        if e.key is None and not thrown and not starts_instances:
            p.append(f"{e.kind} {e.id!r} has no correlation key (give key=)")
    if isinstance(e, (el.SignalCatch, el.SignalBoundary, el.SignalThrow, el.SignalStart,
                      el.SignalEnd)) and not e.signal:
        p.append(f"{e.kind} {e.id!r} names no signal")
    if isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary, el.ConditionalStart)) and \
            e.condition is None:
        p.append(f"{e.kind} {e.id!r} has no condition")
    if isinstance(e, MULTIPLE):
        p.extend(check_multiple(e, timers))
    if isinstance(e, THROWS):
        p.extend(check_throws(e))
    if isinstance(e, el.ScriptTask) and not callable(e.fn):
        p.append(f"script_task {e.id!r} needs fn=")
    if isinstance(e, el.ServiceTask):
        p.extend(_check_service(e))
    if e.default is not None:
        p.extend(_check_default(e, outs))
    if isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway)) and e.decision is not None:
        p.extend(check_decision(e, e.decision, outs))
    p.extend(_check_names(e))
    p.extend(_check_links(e, nodes, outs, incoming, boundaries))
    if e.many is not None:
        p.extend(_check_many(e))
    if e.loop is not None:
        p.extend(_check_loop(e))
    return p


def _check_default(e: el.Element, outs: list[el.Flow]) -> list[str]:
    """A default flow: a gateway's (exclusive or inclusive) or an activity's, one of its own
    flows; an activity's carries no condition (BPMN 2.0: it is the flow taken when no
    condition holds)."""
    if not isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway, el.ComplexGateway)) and \
            not e.activity:
        return [f"{e.kind} {e.id!r} cannot have a default flow (only an activity or an "
                "exclusive or inclusive gateway)"]
    flow = next((f for f in outs if f.target == e.default), None)
    if flow is None:
        return [f"{e.kind} {e.id!r}: default {e.default!r} is not one of its outgoing "
                "targets"]
    if e.activity and flow.condition is not None:
        return [f"{e.kind} {e.id!r}: its default flow {flow.id!r} may not carry a condition"]
    return []


def _check_names(e: el.Element) -> list[str]:
    """What calls, escalations, links and ends must name."""
    p: list[str] = []
    if isinstance(e, el.CallActivity):
        if not isinstance(e.process, str) or not e.process:
            p.append(f"call_activity {e.id!r} names no process")
        if e.version is not None and (type(e.version) is not int or e.version < 1):
            p.append(f"call_activity {e.id!r}: version {e.version!r} is not a version number")
        for what in ("inputs", "outputs"):
            names = getattr(e, what)
            if names is not None and not all(isinstance(n, str) and n for n in names):
                p.append(f"call_activity {e.id!r}: {what} must be field names")
    if isinstance(e, el.EscalationThrow) and not e.escalation:
        p.append(f"escalation_throw {e.id!r} names no escalation")
    if isinstance(e, (el.LinkThrow, el.LinkCatch)) and not e.link:
        p.append(f"{e.kind} {e.id!r} names no link")
    if isinstance(e, el.EndEvent):
        given = [what for what, on in (("terminate", e.terminate), ("error", e.error),
                                       ("escalation", e.escalation),
                                       ("message", isinstance(e, el.MessageEnd)),
                                       ("signal", isinstance(e, el.SignalEnd))) if on]
        if len(given) > 1 and isinstance(e, (el.MessageEnd, el.SignalEnd)):
            p.append(f"end event {e.id!r}: give at most one of terminate, error, escalation, "
                     f"message or signal (it has {' and '.join(given)})")
        elif len(given) > 1:
            p.append(f"end event {e.id!r}: give at most one of terminate, error or escalation")
    return p


def _check_many(e: el.Element) -> list[str]:
    m = e.many
    assert m is not None
    p: list[str] = []
    if not isinstance(e, MANY_KINDS):
        p.append(f"{e.kind} {e.id!r} cannot be multi-instance (only tasks, subprocesses and "
                 "call activities)")
    if (m.collection is None) == (m.cardinality is None):
        p.append(f"multi-instance {e.id!r} needs exactly one of collection or cardinality")
    if m.element is not None and m.collection is None:
        p.append(f"multi-instance {e.id!r}: element {m.element!r} needs a collection")
    if (m.output_collection is None) != (m.output_element is None):
        p.append(f"multi-instance {e.id!r} needs both output_collection and output_element, "
                 "or neither")
    return p


def _check_loop(e: el.Element) -> list[str]:
    loop = e.loop
    assert loop is not None
    p: list[str] = []
    if not isinstance(e, MANY_KINDS):
        p.append(f"{e.kind} {e.id!r} cannot loop (only tasks, subprocesses and call "
                 "activities)")
    if e.many is not None:
        p.append(f"{e.kind} {e.id!r} is multi-instance: it cannot also be a standard loop")
    if loop.maximum is not None and (type(loop.maximum) is not int or loop.maximum < 0):
        p.append(f"loop {e.id!r}: maximum {loop.maximum!r} is not a count")
    elif loop.condition is None and loop.maximum is None:
        p.append(f"loop {e.id!r} has neither a condition nor a maximum: it would run for ever")
    return p


MANY_KINDS = (el.UserTask, el.ServiceTask, el.ScriptTask, el.ReceiveTask, el.SubProcess,
              el.CallActivity)


def _check_links(e: el.Element, nodes: Nodes, outs: list[el.Flow], incoming: Flows,
                 boundaries: Boundaries) -> list[str]:
    """Gateway arms and boundary attachments."""
    p: list[str] = []
    if isinstance(e, (el.ParallelGateway, el.EventGateway)):
        p.extend(f"{e.kind} {e.id!r}: flow {f.id!r} may not carry a condition"
                 for f in outs if f.condition is not None)
    if isinstance(e, el.EventGateway):
        for f in outs:
            target = nodes.get(f.target)
            if target is not None and not target.catch:
                p.append(f"event_gateway {e.id!r}: arm {f.target!r} is a {target.kind}, "
                         "not a catch event or receive task")
            elif target is not None and len(incoming[f.target]) > 1:
                p.append(f"event_gateway {e.id!r}: arm {f.target!r} has other incoming flows")
        p.extend(_check_instantiating(e, nodes, outs, incoming))
    if isinstance(e, el.Boundary):
        host = nodes.get(e.attached_to)
        if host is None:
            p.append(f"{e.kind} {e.id!r} is attached to unknown element {e.attached_to!r}")
        elif not host.activity:
            p.append(f"{e.kind} {e.id!r} is attached to {e.attached_to!r}, a {host.kind}, "
                     "not an activity")
        elif host.within != e.within:
            p.append(f"{e.kind} {e.id!r} is {where(e)} but {e.attached_to!r} is "
                     f"{where(host)}")
        elif isinstance(e, el.EscalationBoundary) and not isinstance(host, el.SubProcess):
            p.append(f"{e.kind} {e.id!r} is attached to {e.attached_to!r}, a {host.kind}: "
                     "only a subprocess raises escalations here")
        else:
            boundaries.setdefault(e.attached_to, []).append(e)
        if incoming[e.id]:
            p.append(f"{e.kind} {e.id!r} has incoming flows")
    return p


def _check_instantiating(e: el.EventGateway, nodes: Nodes, outs: list[el.Flow],
                         incoming: Flows) -> list[str]:
    """An event-based gateway that creates instances: at the start of the process itself,
    nothing flowing in, each arm an event a new instance can begin with. A parallel one must
    instantiate (BPMN 2.0, 10.6.6: the parallel type is only for instantiation)."""
    p: list[str] = []
    if e.parallel and not e.instantiate:
        p.append(f"event_gateway {e.id!r} is parallel but does not instantiate: BPMN allows "
                 "the parallel type only on a gateway that starts the process (instantiate)")
    if not e.instantiate:
        return p
    if e.within is not None:
        p.append(f"event_gateway {e.id!r} instantiates: it belongs in the process itself, not "
                 f"in {e.within!r}")
    if incoming[e.id]:
        p.append(f"event_gateway {e.id!r} instantiates: it may have no incoming flow")
    for f in outs:
        target = nodes.get(f.target)
        if isinstance(target, el.ConditionalCatch):
            p.append(f"event_gateway {e.id!r} instantiates: arm {f.target!r} is a condition, "
                     "which no instance's data can make true before there is an instance")
        elif isinstance(target, el.Element) and target.repeats:
            p.append(f"event_gateway {e.id!r} instantiates: arm {f.target!r} repeats "
                     "(multi-instance or a loop)")
    return p


def _only_starts(e: el.Element, nodes: Nodes, incoming: Flows) -> bool:
    """Whether ``e`` is an arm of an exclusive gateway that creates instances: its event
    only ever begins a new instance, so a correlation key has nothing to match."""
    flows = incoming[e.id]
    gateway = nodes.get(flows[0].source) if len(flows) == 1 else None
    return isinstance(gateway, el.EventGateway) and bool(gateway.instantiate) and \
        not gateway.parallel


def _check_service(e: el.ServiceTask) -> list[str]:
    """A service task runs a function or is a job on a topic, fixed or computed."""
    if [e.fn, e.topic, e.topic_from].count(None) == 2:
        return []
    return [f"service_task {e.id!r} needs exactly one of fn= or topic="
            + (" (or topic_from=)" if e.topic_from is not None else "")]
