"""The immutable, validated snapshot of a process that instances run on."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from ..errors import ModelError
from . import elements as el
from .expr import Expr
from .fingerprint import fingerprint
from .timers import Timer, TimerSpec


@dataclass(frozen=True)
class Definition:
    """A deployed-ready process graph. ``version`` is set by the engine at deployment."""

    id: str
    name: str | None
    nodes: MappingProxyType[str, el.Element]  # in the order they were added
    flows: tuple[el.Flow, ...]
    outgoing: MappingProxyType[str, tuple[el.Flow, ...]]
    incoming: MappingProxyType[str, tuple[el.Flow, ...]]
    boundaries: MappingProxyType[str, tuple[el.Boundary, ...]]  # by activity id
    timers: MappingProxyType[str, Timer]  # element id -> its parsed duration / date / Cycle
    #: element id -> its outgoing flows, when none has a condition
    plain: MappingProxyType[str, tuple[el.Flow, ...]]
    start: str  # the plain start event ("" when the process starts only by a trigger)
    #: the start events that create instances by a trigger (message, timer, signal)
    instance_starts: tuple[str, ...]
    #: subprocess id -> the start event inside it
    inner_start: MappingProxyType[str, str]
    #: scope ("" for the process, else a subprocess id) -> the start events of the event
    #: subprocesses directly in it, in the order they were added
    event_starts: MappingProxyType[str, tuple[str, ...]]
    #: link throw id -> the link catch it goes to
    links: MappingProxyType[str, str]
    #: inclusive gateway id -> incoming flow id -> every node of its scope from which a token
    #: could still reach that flow without passing the gateway (the join's rule)
    reach: MappingProxyType[str, MappingProxyType[str, frozenset[str]]]
    signature: str
    version: int = field(default=0, compare=False)
    #: Whether any element waits on a condition over the data (a conditional catch, alone
    #: or as an event gateway's arm, or a conditional boundary): without one, a change of
    #: the data has nothing to re-check.
    conditional: bool = field(default=False, compare=False)
    #: The builder's ``Process.origin`` (what a codec needs to draw the process as its file
    #: does; None for a process built in Python). Opaque to the model; not in the signature.
    origin: Any = field(default=None, compare=False, repr=False)

    def node(self, id: str) -> el.Element:
        return self.nodes[id]


def _describe(value: Any) -> Any:
    """A field's value as it counts for the signature; a callable by its fingerprint."""
    if isinstance(value, Expr):
        return value.fingerprint()
    if isinstance(value, TimerSpec):
        return [value.kind, value.text]
    if callable(value):
        return f"<fn {fingerprint(value)}>"
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, (el.Many, el.Loop)):
        return [[f.name, _describe(getattr(value, f.name))] for f in fields(value)]
    return value


#: What the checks below see while the graph is built: elements by id, flows by element id
#: (out of it or into it), boundary events by the id of the activity they are attached to.
Nodes = dict[str, el.Element]
Flows = dict[str, list[el.Flow]]
Boundaries = dict[str, list[el.Boundary]]

#: Fields a signature leaves out while they are None (graphs from before they existed keep
#: their signatures).
OPTIONAL = frozenset({"within", "many", "loop", "escalation"})


def signature_of(pid: str, elements: list[el.Element], flows: list[el.Flow]) -> str:
    """A stable hash of the graph: same graph, same signature, in any process."""
    doc: list[Any] = [pid]
    for e in elements:
        doc.append([e.kind] + [[f.name, _describe(getattr(e, f.name))] for f in fields(e)
                               if f.name not in OPTIONAL or getattr(e, f.name) is not None])
    for f in flows:
        doc.append(["flow", f.source, f.target, _describe(f.condition)])
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_definition(pid: str, name: str | None, elements: list[el.Element],
                     flows: list[el.Flow], problems: list[str],
                     origin: Any = None) -> Definition:
    """Validate the graph and freeze it; raise ModelError naming every problem."""
    found = list(problems)
    nodes: dict[str, el.Element] = {}
    for e in elements:
        if e.id in nodes:
            found.append(f"duplicate id {e.id!r}")
        else:
            nodes[e.id] = e
    outgoing: dict[str, list[el.Flow]] = {i: [] for i in nodes}
    incoming: dict[str, list[el.Flow]] = {i: [] for i in nodes}
    seen_flows: set[tuple[str, str]] = set()
    for f in flows:
        if f.id in nodes:
            found.append(f"duplicate id {f.id!r}: a flow and an element share it")
        missing = [x for x in (f.source, f.target) if x not in nodes]
        if missing:
            found.append(f"flow {f.id!r} is dangling: no element "
                         + " or ".join(repr(x) for x in missing))
            continue
        if (f.source, f.target) in seen_flows:
            found.append(f"duplicate flow {f.id!r}")
            continue
        seen_flows.add((f.source, f.target))
        outgoing[f.source].append(f)
        incoming[f.target].append(f)
    found.extend(_check_scopes(nodes))
    starts, triggered = _top_starts(pid, nodes, found)
    (inner, events, found_scopes), (links, found_links) = _starts(nodes), _links(nodes)
    found.extend(found_scopes + found_links)
    boundaries: dict[str, list[el.Boundary]] = {}
    timers: dict[str, Timer] = {}
    for e in nodes.values():
        found.extend(_check_element(e, nodes, outgoing, incoming, boundaries, timers))
    if len(starts) <= 1 and (starts or triggered):
        found.extend(_check_reachable(starts + list(triggered), nodes, outgoing, boundaries,
                                      inner, events, links))
    if found:
        raise ModelError(found)
    freeze = MappingProxyType
    return Definition(
        id=pid, name=name, nodes=freeze(dict(nodes)), flows=tuple(flows),
        outgoing=freeze({k: tuple(v) for k, v in outgoing.items()}),
        incoming=freeze({k: tuple(v) for k, v in incoming.items()}),
        boundaries=freeze({k: tuple(v) for k, v in boundaries.items()}),
        timers=freeze(timers), start=starts[0] if starts else "", instance_starts=triggered,
        inner_start=freeze(inner),
        event_starts=freeze({k: tuple(v) for k, v in events.items()}), links=freeze(links),
        reach=freeze(_reach(nodes, incoming, boundaries, links)),
        plain=freeze({k: tuple(v) for k, v in outgoing.items()
                      if v and all(f.condition is None for f in v)}),
        signature=signature_of(pid, elements, flows), origin=origin,
        conditional=any(isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary))
                        for e in nodes.values()))


def _check_element(e: el.Element, nodes: Nodes, outgoing: Flows, incoming: Flows,
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
                     f"{_where(e)}, {f.target!r} is {_where(target)})")
    placeholder = isinstance(e, (el.Unsupported, el.UnsupportedBoundary))
    if isinstance(e, (el.Unsupported, el.UnsupportedBoundary)):
        p.append(f"{e.tag} {e.id!r} is not supported: {e.reason}")
    if isinstance(e, el.EndEvent):
        if outs:
            p.append(f"end event {e.id!r} has outgoing flows")
    elif not outs and not placeholder and not isinstance(e, (el.LinkThrow,
                                                              el.EventSubProcess)):
        # a placeholder may stand for an end event
        p.append(f"{e.kind} {e.id!r} has no way out (no outgoing flow)")
    timer = getattr(e, "timer", None)
    if isinstance(e, (el.TimerCatch, el.TimerBoundary, el.TimerStart)) and timer is not None:
        try:
            timers[e.id] = timer.parsed()
        except ModelError as exc:
            p.append(f"{e.kind} {e.id!r}: {exc}")
    if isinstance(e, (el.MessageCatch, el.ReceiveTask, el.MessageBoundary, el.MessageThrow,
                      el.MessageStart)):
        if not e.message:
            p.append(f"{e.kind} {e.id!r} names no message")
        starts_instances = isinstance(e, el.MessageStart) and e.within is None
        if e.key is None and not isinstance(e, el.MessageThrow) and not starts_instances:
            p.append(f"{e.kind} {e.id!r} has no correlation key (give key=)")
    if isinstance(e, (el.SignalCatch, el.SignalBoundary, el.SignalThrow, el.SignalStart)) \
            and not e.signal:
        p.append(f"{e.kind} {e.id!r} names no signal")
    if isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary)) and e.condition is None:
        p.append(f"{e.kind} {e.id!r} has no condition")
    if isinstance(e, el.ScriptTask) and not callable(e.fn):
        p.append(f"script_task {e.id!r} needs fn=")
    if isinstance(e, el.ServiceTask) and (e.fn is None) == (e.topic is None):
        p.append(f"service_task {e.id!r} needs exactly one of fn= or topic=")
    if isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway)) and e.default is not None:
        if e.default not in [f.target for f in outs]:
            p.append(f"{e.kind} {e.id!r}: default {e.default!r} is not one of its "
                     "outgoing targets")
    p.extend(_check_names(e))
    p.extend(_check_links(e, nodes, outs, incoming, boundaries))
    if e.many is not None:
        p.extend(_check_many(e))
    if e.loop is not None:
        p.extend(_check_loop(e))
    return p


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
    if isinstance(e, el.EndEvent) and sum(map(bool, (e.terminate, e.error is not None,
                                                     e.escalation is not None))) > 1:
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
    if isinstance(e, el.Boundary):
        host = nodes.get(e.attached_to)
        if host is None:
            p.append(f"{e.kind} {e.id!r} is attached to unknown element {e.attached_to!r}")
        elif not host.activity:
            p.append(f"{e.kind} {e.id!r} is attached to {e.attached_to!r}, a {host.kind}, "
                     "not an activity")
        elif host.within != e.within:
            p.append(f"{e.kind} {e.id!r} is {_where(e)} but {e.attached_to!r} is "
                     f"{_where(host)}")
        elif isinstance(e, el.EscalationBoundary) and not isinstance(host, el.SubProcess):
            p.append(f"{e.kind} {e.id!r} is attached to {e.attached_to!r}, a {host.kind}: "
                     "only a subprocess raises escalations here")
        else:
            boundaries.setdefault(e.attached_to, []).append(e)
        if incoming[e.id]:
            p.append(f"{e.kind} {e.id!r} has incoming flows")
    return p


def _top_starts(pid: str, nodes: Nodes, found: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """The process's own start events: the plain one (at most one), and those that create
    instances by a trigger; at least one of them."""
    starts = [e.id for e in nodes.values()
              if isinstance(e, el.StartEvent) and e.within is None
              and not isinstance(e, el.TriggeredStart)]
    triggered = tuple(e.id for e in nodes.values()
                      if isinstance(e, el.TriggeredStart) and e.within is None)
    if not starts and not triggered:
        found.append(f"process {pid!r} has no start event")
    elif len(starts) > 1:
        found.append(f"process {pid!r} has {len(starts)} plain start events {starts!r}; "
                     "give one")
    return starts, triggered


def _where(e: el.Element) -> str:
    return f"in subprocess {e.within!r}" if e.within is not None else "in the process"


SCOPES = (el.SubProcess, el.EventSubProcess)


def _check_scopes(nodes: Nodes) -> list[str]:
    """Every ``within`` names a subprocess, and no subprocess is inside itself."""
    p: list[str] = []
    for e in nodes.values():
        if e.within is None:
            continue
        host = nodes.get(e.within)
        if not isinstance(host, SCOPES):
            what = f"a {host.kind}" if host is not None else "no element"
            p.append(f"{e.kind} {e.id!r} is within {e.within!r}, {what}, not a subprocess")
            continue
        seen = {e.id}
        while host is not None and host.within is not None:
            if host.id in seen:
                p.append(f"subprocess {host.id!r} is inside itself")
                break
            seen.add(host.id)
            host = nodes.get(host.within)
    return p


def _starts(nodes: Nodes) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """Each subprocess's one start; each scope's event subprocess starts (by scope, "" for
    the process); and what is wrong with them."""
    p: list[str] = []
    inner: dict[str, str] = {}
    events: dict[str, list[str]] = {}
    by_scope: dict[str, list[el.Element]] = {}
    for e in nodes.values():
        if isinstance(e, el.StartEvent) and e.within is not None:
            by_scope.setdefault(e.within, []).append(e)
    for e in nodes.values():
        if not isinstance(e, SCOPES):
            continue
        found = by_scope.get(e.id, [])
        if isinstance(e, el.SubProcess):
            plain = [s for s in found if not isinstance(s, el.TriggeredStart)]
            if len(plain) != 1:
                p.append(f"subprocess {e.id!r} has {len(plain)} plain start events; give one")
            else:
                inner[e.id] = plain[0].id
            p.extend(f"{s.kind} {s.id!r} is in subprocess {e.id!r}: a start event with a "
                     "trigger belongs in an event subprocess" for s in found
                     if isinstance(s, el.TriggeredStart))
        else:
            if len(found) != 1 or not isinstance(found[0], el.TriggeredStart):
                p.append(f"event_subprocess {e.id!r} needs exactly one start event, with a "
                         f"trigger (message, timer, signal, error or escalation); it has "
                         f"{len(found)}" + ("" if len(found) != 1 else " without a trigger"))
            else:
                inner[e.id] = found[0].id
                events.setdefault(e.within or "", []).append(found[0].id)
    for e in nodes.values():
        if isinstance(e, (el.ErrorStart, el.EscalationStart)) and e.within is None:
            p.append(f"{e.kind} {e.id!r} is in the process itself: an {e.kind[:-6]} start "
                     "belongs in an event subprocess")
        elif isinstance(e, el.TriggeredStart) and e.within is None and not e.interrupting:
            p.append(f"{e.kind} {e.id!r} starts instances: it cannot be non-interrupting")
        elif isinstance(e, el.MessageStart) and e.within is None and e.key is not None:
            p.append(f"message_start {e.id!r} starts instances: a correlation key has no use "
                     "there (a new instance has nothing to correlate with)")
    return inner, events, p


def _links(nodes: Nodes) -> tuple[dict[str, str], list[str]]:
    """Each link throw's catch: the one link catch of its name in its scope."""
    p: list[str] = []
    catches: dict[tuple[str | None, str], list[str]] = {}
    for e in nodes.values():
        if isinstance(e, el.LinkCatch):
            catches.setdefault((e.within, e.link), []).append(e.id)
    for (_, link), ids in catches.items():
        if len(ids) > 1:
            p.append(f"link {link!r} has {len(ids)} catch events {ids!r} in one scope")
    links: dict[str, str] = {}
    for e in nodes.values():
        if isinstance(e, el.LinkThrow):
            ids = catches.get((e.within, e.link), [])
            if not ids:
                p.append(f"link_throw {e.id!r}: no link catch named {e.link!r} in its scope")
            else:
                links[e.id] = ids[0]
    return links, p


def _next(here: str, nodes: Nodes, outgoing: Flows, boundaries: Boundaries,
          inner: dict[str, str], events: dict[str, list[str]], links: dict[str, str]
          ) -> list[str]:
    """Where a token at ``here`` may go next (into a subprocess: its start)."""
    nxt = [f.target for f in outgoing[here]] + [b.id for b in boundaries.get(here, ())]
    if here in inner:
        nxt.append(inner[here])
    if isinstance(nodes[here], el.SubProcess):
        nxt.extend(_host(nodes, s) for s in events.get(here, ()))
    if here in links:
        nxt.append(links[here])
    return nxt


def _host(nodes: Nodes, start: str) -> str:
    """The event subprocess that holds ``start``, one of the starts ``_starts`` listed."""
    host = nodes[start].within
    assert host is not None  # ``_starts`` lists only the start events of event subprocesses
    return host


def _check_reachable(starts: list[str], nodes: Nodes, outgoing: Flows,
                     boundaries: Boundaries, inner: dict[str, str],
                     events: dict[str, list[str]], links: dict[str, str]) -> list[str]:
    reached = set(starts)
    todo = list(starts) + [_host(nodes, s) for s in events.get("", ())]
    reached.update(todo)
    while todo:
        here = todo.pop()
        for n in _next(here, nodes, outgoing, boundaries, inner, events, links):
            if n not in reached:
                reached.add(n)
                todo.append(n)
    return [f"{e.kind} {e.id!r} is unreachable from the start event"
            for e in nodes.values() if e.id not in reached]


def _reach(nodes: Nodes, incoming: Flows, boundaries: Boundaries, links: dict[str, str]
           ) -> dict[str, MappingProxyType[str, frozenset[str]]]:
    """For each inclusive gateway and each of its incoming flows: the nodes of its scope
    with a path to that flow that does not pass through the gateway (backwards along flows,
    from a boundary to its activity, from a link catch to its throws)."""
    throws: dict[str, list[str]] = {}
    for t, c in links.items():
        throws.setdefault(c, []).append(t)
    out: dict[str, MappingProxyType[str, frozenset[str]]] = {}
    for g in nodes.values():
        if not isinstance(g, el.InclusiveGateway):
            continue
        per_flow: dict[str, frozenset[str]] = {}
        for f in incoming[g.id]:
            seen: set[str] = set()
            todo = [f.source] if f.source != g.id else []
            seen.update(todo)
            while todo:
                here = todo.pop()
                before = [x.source for x in incoming[here]] + throws.get(here, [])
                node = nodes[here]
                if isinstance(node, el.Boundary):
                    before.append(node.attached_to)
                for n in before:
                    if n != g.id and n not in seen and n in nodes:
                        seen.add(n)
                        todo.append(n)
            per_flow[f.id] = frozenset(seen)
        out[g.id] = MappingProxyType(per_flow)
    return out
