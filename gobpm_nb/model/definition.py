"""The immutable, validated snapshot of a process that instances run on."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from ..errors import ModelError
from . import elements as el
from .adhoc import AdHocSubProcess
from .checks import GATEWAYS, check_element
from .compensation import compensation_of
from .expr import Expr
from .fingerprint import fingerprint
from .multiple import EventDef, ThrowDef
from .placeholders import Unsupported, UnsupportedBoundary
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
    #: the start events that create instances by a trigger (message, timer, signal), and
    #: the event-based gateways that do (each arm a start event)
    instance_starts: tuple[str, ...]
    #: subprocess id -> the start event inside it
    inner_start: MappingProxyType[str, str]
    #: scope ("" for the process, else a subprocess id) -> the start events of the event
    #: subprocesses directly in it, in the order they were added
    event_starts: MappingProxyType[str, tuple[str, ...]]
    #: link throw id -> the link catch it goes to
    links: MappingProxyType[str, str]
    #: inclusive or complex gateway id -> incoming flow id -> every node of its scope from
    #: which a token could still reach that flow without passing the gateway (the join's rule)
    reach: MappingProxyType[str, MappingProxyType[str, frozenset[str]]]
    signature: str
    version: int = field(default=0, compare=False)
    #: Whether any element waits on a condition over the data (a conditional catch, alone
    #: or as an event gateway's arm, a conditional boundary or the conditional start of an
    #: event subprocess): without one, a change of
    #: the data has nothing to re-check.
    conditional: bool = field(default=False, compare=False)
    #: The builder's ``Process.origin`` (what a codec needs to draw the process as its file
    #: does; None for a process built in Python). Opaque to the model; not in the signature.
    origin: Any = field(default=None, compare=False, repr=False)
    #: What runs but may not be meant (an implicit end, an unreachable element), worded as
    #: ``validate()`` reports problems; not in the signature.
    warnings: tuple[str, ...] = field(default=(), compare=False)
    #: Compensation: activity id -> its handler; subprocess id -> its compensation event
    #: subprocess; the activities that record themselves as compensable when they complete.
    compensation: MappingProxyType[str, str] = field(
        default_factory=lambda: MappingProxyType({}), compare=False)
    compensation_events: MappingProxyType[str, str] = field(
        default_factory=lambda: MappingProxyType({}), compare=False)
    compensable: frozenset[str] = field(default=frozenset(), compare=False)
    #: ad-hoc subprocess id -> its activatable elements (inside it, no incoming flow)
    activatable: MappingProxyType[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), compare=False)

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
        return [_describe(v) for v in value]
    if isinstance(value, (EventDef, ThrowDef)):
        return value.describe()
    if isinstance(value, (el.Many, el.Loop)):
        return [[f.name, _describe(getattr(value, f.name))] for f in fields(value)]
    if isinstance(value, el.Mapping):
        return ["mapping", [[t, x.fingerprint()] for t, x in value.inputs],
                [[t, x.fingerprint()] for t, x in value.outputs]]
    if isinstance(value, el.Decision):
        return ["decision", [list(w) for w in value.weights]]
    return value


#: What the checks below see while the graph is built: elements by id, flows by element id
#: (out of it or into it), boundary events by the id of the activity they are attached to.
Nodes = dict[str, el.Element]
Flows = dict[str, list[el.Flow]]
Boundaries = dict[str, list[el.Boundary]]
#: Where a token entering a scope goes: a subprocess's start, an ad-hoc one's activatable
#: elements.
Into = dict[str, str | tuple[str, ...]]

#: Fields a signature leaves out while they are None (graphs from before they existed keep
#: their signatures).
OPTIONAL = frozenset({"within", "many", "loop", "escalation", "decision", "for_compensation",
                      "default", "no_wait", "instantiate", "parallel", "io",
                      "topic_from"})


#: The elements that wait on a condition over the data (``Definition.conditional``).
CONDITIONAL = (el.ConditionalCatch, el.ConditionalBoundary, el.ConditionalStart)

#: The gateways whose signature always had a ``default`` (None included).
DEFAULTED = (el.ExclusiveGateway, el.InclusiveGateway, el.ComplexGateway)


def signature_of(pid: str, elements: list[el.Element], flows: list[el.Flow]) -> str:
    """A stable hash of the graph: same graph, same signature, in any process."""
    doc: list[Any] = [pid]
    for e in elements:
        doc.append([e.kind] + [[f.name, _describe(getattr(e, f.name))] for f in fields(e)
                               if f.name not in OPTIONAL or getattr(e, f.name) is not None
                               or (f.name == "default" and isinstance(e, DEFAULTED))])
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
    adhoc, found_adhoc = _activatable(nodes, incoming)
    found.extend(found_scopes + found_links + found_adhoc)
    boundaries, timers = dict[str, list[el.Boundary]](), dict[str, Timer]()
    for e in nodes.values():
        found.extend(check_element(e, nodes, outgoing, incoming, boundaries, timers))
    found.extend((undo := compensation_of(nodes, incoming, outgoing, boundaries)).problems)
    lost = _unreachable(starts + list(triggered), nodes, outgoing, boundaries,
                        {**inner, **adhoc}, events, links) \
        if len(starts) <= 1 and (starts or triggered) else []
    warned = _warnings(nodes, outgoing, lost)
    if found:
        raise ModelError(found, warned)
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
        plain=freeze({k: tuple(v) for k, v in outgoing.items()  # () for an implicit end
                      if all(f.condition is None for f in v) and nodes[k].default is None}),
        signature=signature_of(pid, elements, flows), origin=origin, warnings=tuple(warned),
        conditional=any(isinstance(e, CONDITIONAL) for e in nodes.values()),
        compensation=freeze(undo.handlers),
        compensation_events=freeze(undo.events), compensable=undo.compensable,
        activatable=freeze(adhoc))


def _warnings(nodes: Nodes, outgoing: Flows, lost: list[el.Element]) -> list[str]:
    """Each implicit end (an element without an outgoing flow; not in an ad-hoc
    subprocess, where that is how an activated element ends), then each element never
    entered (``lost``; not an implicit end too)."""
    gone = {e.id for e in lost}
    return [f"{e.kind} {e.id!r} has no outgoing flow: its track ends there (an implicit "
            "end)" for e in nodes.values()
            if not outgoing[e.id] and _implicit_end(e) and e.id not in gone
            and not isinstance(nodes.get(e.within or ""), AdHocSubProcess)] + \
        [f"{e.kind} {e.id!r} is unreachable from the start event" for e in lost]


def _implicit_end(e: el.Element) -> bool:
    """Whether ``e`` without an outgoing flow ends its track there (BPMN's implicit end):
    any activity or event but an end, a link throw, a gateway (refused) or a placeholder."""
    return not e.for_compensation and not isinstance(
        e, (el.EndEvent, el.LinkThrow, el.EventSubProcess, Unsupported,
            UnsupportedBoundary, el.CompensationBoundary) + GATEWAYS)


def _top_starts(pid: str, nodes: Nodes, found: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """The process's own start events: the plain one (at most one), and those that create
    instances by a trigger; at least one of them."""
    starts = [e.id for e in nodes.values()
              if isinstance(e, el.StartEvent) and e.within is None
              and not isinstance(e, el.TriggeredStart)]
    triggered = tuple(e.id for e in nodes.values()
                      if (isinstance(e, el.TriggeredStart) or isinstance(e, el.EventGateway)
                          and e.instantiate) and e.within is None)
    if not starts and not triggered:
        found.append(f"process {pid!r} has no start event")
    elif len(starts) > 1:
        found.append(f"process {pid!r} has {len(starts)} plain start events {starts!r}; "
                     "give one")
    return starts, triggered


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
        if isinstance(e, AdHocSubProcess):
            p.extend(f"{s.kind} {s.id!r} is in ad-hoc subprocess {e.id!r}: an ad-hoc "
                     "subprocess has no start event (its elements are activated)"
                     for s in found)
        elif isinstance(e, el.SubProcess):
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
                         "trigger (message, timer, signal, conditional, error or escalation); "
                         f"it has {len(found)}" + ("" if len(found) != 1 else " without a trigger"))
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


def _activatable(nodes: Nodes, incoming: Flows) -> tuple[dict[str, tuple[str, ...]],
                                                         list[str]]:
    """Each ad-hoc subprocess's activatable elements: those directly inside it with no
    incoming flow (not a boundary, start, event subprocess or compensation handler); at
    least one."""
    out: dict[str, tuple[str, ...]] = {}
    for e in nodes.values():
        if isinstance(e, AdHocSubProcess):
            out[e.id] = tuple(
                x.id for x in nodes.values() if x.within == e.id and not incoming[x.id]
                and not x.for_compensation
                and not isinstance(x, (el.Boundary, el.StartEvent, el.EventSubProcess)))
    return out, [f"adhoc_subprocess {a!r} has no element to activate (an element inside it "
                 "with no incoming flow)" for a, ids in out.items() if not ids]


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


def _next(here: str, nodes: Nodes, outgoing: Flows, boundaries: Boundaries, inner: Into,
          events: dict[str, list[str]], links: dict[str, str]) -> list[str]:
    """Where a token at ``here`` may go next (into a subprocess: its start)."""
    nxt = [f.target for f in outgoing[here]] + [b.id for b in boundaries.get(here, ())]
    into = inner.get(here)  # a subprocess's start, or an ad-hoc one's activatable elements
    if into is not None:
        nxt.extend([into] if isinstance(into, str) else into)
    if isinstance(nodes[here], el.SubProcess):
        nxt.extend(_host(nodes, s) for s in events.get(here, ()))
    if here in links:
        nxt.append(links[here])
    node = nodes[here]
    if isinstance(node, el.CompensationBoundary) and node.handler in nodes:
        nxt.append(node.handler)
    return nxt


def _host(nodes: Nodes, start: str) -> str:
    """The event subprocess that holds ``start``, one of the starts ``_starts`` listed."""
    host = nodes[start].within
    assert host is not None  # ``_starts`` lists only the start events of event subprocesses
    return host


def _unreachable(starts: list[str], nodes: Nodes, outgoing: Flows, boundaries: Boundaries,
                 inner: Into, events: dict[str, list[str]], links: dict[str, str]
                 ) -> list[el.Element]:
    reached = set(starts)
    todo = list(starts) + [_host(nodes, s) for s in events.get("", ())]
    reached.update(todo)
    while todo:
        here = todo.pop()
        for n in _next(here, nodes, outgoing, boundaries, inner, events, links):
            if n not in reached:
                reached.add(n)
                todo.append(n)
    return [e for e in nodes.values() if e.id not in reached]


def _reach(nodes: Nodes, incoming: Flows, boundaries: Boundaries, links: dict[str, str]
           ) -> dict[str, MappingProxyType[str, frozenset[str]]]:
    """For each inclusive or complex gateway and each of its incoming flows: the nodes of its scope
    with a path to that flow that does not pass through the gateway (backwards along flows,
    from a boundary to its activity, from a link catch to its throws)."""
    throws: dict[str, list[str]] = {}
    for t, c in links.items():
        throws.setdefault(c, []).append(t)
    out: dict[str, MappingProxyType[str, frozenset[str]]] = {}
    for g in nodes.values():
        if not isinstance(g, (el.InclusiveGateway, el.ComplexGateway)):
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
