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
from .timers import TimerSpec


@dataclass(frozen=True)
class Definition:
    """A deployed-ready process graph. ``version`` is set by the engine at deployment."""

    id: str
    name: str | None
    nodes: MappingProxyType  # id -> Element, in the order they were added
    flows: tuple[el.Flow, ...]
    outgoing: MappingProxyType  # id -> tuple[Flow, ...]
    incoming: MappingProxyType  # id -> tuple[Flow, ...]
    boundaries: MappingProxyType  # activity id -> tuple[Boundary, ...]
    timers: MappingProxyType  # element id -> parsed duration / date / Cycle
    plain: MappingProxyType  # element id -> its outgoing flows, when none has a condition
    start: str
    signature: str
    version: int = field(default=0, compare=False)
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
    return value


def signature_of(pid: str, elements: list[el.Element], flows: list[el.Flow]) -> str:
    """A stable hash of the graph: same graph, same signature, in any process."""
    doc: list[Any] = [pid]
    for e in elements:
        doc.append([e.kind] + [[f.name, _describe(getattr(e, f.name))] for f in fields(e)])
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
    starts = [e.id for e in nodes.values() if isinstance(e, el.StartEvent)]
    if not starts:
        found.append(f"process {pid!r} has no start event")
    elif len(starts) > 1:
        found.append(f"process {pid!r} has {len(starts)} start events {starts!r}; give one")
    boundaries: dict[str, list[el.Boundary]] = {}
    timers: dict[str, Any] = {}
    for e in nodes.values():
        found.extend(_check_element(e, nodes, outgoing, incoming, boundaries, timers))
    if len(starts) == 1:
        found.extend(_check_reachable(starts[0], nodes, outgoing, boundaries))
    if found:
        raise ModelError(found)
    freeze = MappingProxyType
    return Definition(
        id=pid, name=name, nodes=freeze(dict(nodes)), flows=tuple(flows),
        outgoing=freeze({k: tuple(v) for k, v in outgoing.items()}),
        incoming=freeze({k: tuple(v) for k, v in incoming.items()}),
        boundaries=freeze({k: tuple(v) for k, v in boundaries.items()}),
        timers=freeze(timers), start=starts[0],
        plain=freeze({k: tuple(v) for k, v in outgoing.items()
                      if v and all(f.condition is None for f in v)}),
        signature=signature_of(pid, elements, flows), origin=origin)


def _check_element(e: el.Element, nodes: dict, outgoing: dict, incoming: dict,
                   boundaries: dict, timers: dict) -> list[str]:
    p: list[str] = []
    outs = outgoing[e.id]
    if isinstance(e, el.StartEvent) and incoming[e.id]:
        p.append(f"start event {e.id!r} has incoming flows")
    placeholder = isinstance(e, (el.Unsupported, el.UnsupportedBoundary))
    if isinstance(e, (el.Unsupported, el.UnsupportedBoundary)):
        p.append(f"{e.tag} {e.id!r} is not supported: {e.reason}")
    if isinstance(e, el.EndEvent):
        if outs:
            p.append(f"end event {e.id!r} has outgoing flows")
    elif not outs and not placeholder:  # a placeholder may stand for an end event
        p.append(f"{e.kind} {e.id!r} has no way out (no outgoing flow)")
    timer = getattr(e, "timer", None)
    if isinstance(e, (el.TimerCatch, el.TimerBoundary)) and timer is not None:
        try:
            timers[e.id] = timer.parsed()
        except ModelError as exc:
            p.append(f"{e.kind} {e.id!r}: {exc}")
    if isinstance(e, (el.MessageCatch, el.ReceiveTask, el.MessageBoundary, el.MessageThrow)):
        if not e.message:
            p.append(f"{e.kind} {e.id!r} names no message")
        if e.key is None and not isinstance(e, el.MessageThrow):
            p.append(f"{e.kind} {e.id!r} has no correlation key (give key=)")
    if isinstance(e, (el.SignalCatch, el.SignalBoundary, el.SignalThrow)) and not e.signal:
        p.append(f"{e.kind} {e.id!r} names no signal")
    if isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary)) and e.condition is None:
        p.append(f"{e.kind} {e.id!r} has no condition")
    if isinstance(e, el.ScriptTask) and not callable(e.fn):
        p.append(f"script_task {e.id!r} needs fn=")
    if isinstance(e, el.ServiceTask) and (e.fn is None) == (e.topic is None):
        p.append(f"service_task {e.id!r} needs exactly one of fn= or topic=")
    if isinstance(e, el.ExclusiveGateway) and e.default is not None:
        if e.default not in [f.target for f in outs]:
            p.append(f"exclusive_gateway {e.id!r}: default {e.default!r} is not one of its "
                     "outgoing targets")
    p.extend(_check_links(e, nodes, outs, incoming, boundaries))
    return p


def _check_links(e: el.Element, nodes: dict, outs: list, incoming: dict,
                 boundaries: dict) -> list[str]:
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
        else:
            boundaries.setdefault(e.attached_to, []).append(e)
        if incoming[e.id]:
            p.append(f"{e.kind} {e.id!r} has incoming flows")
    return p


def _check_reachable(start: str, nodes: dict, outgoing: dict, boundaries: dict) -> list[str]:
    reached = {start}
    todo = [start]
    while todo:
        here = todo.pop()
        nxt = [f.target for f in outgoing[here]] + [b.id for b in boundaries.get(here, ())]
        for n in nxt:
            if n not in reached:
                reached.add(n)
                todo.append(n)
    return [f"{e.kind} {e.id!r} is unreachable from the start event"
            for e in nodes.values() if e.id not in reached]
