"""What a definition knows of compensation and transactions: each activity's handler, the
compensation event subprocess of each subprocess, which activities record themselves as
compensable when they complete, and what is wrong with any of it."""

from __future__ import annotations

from typing import NamedTuple

from . import elements as el

Nodes = dict[str, el.Element]
Flows = dict[str, list[el.Flow]]
Boundaries = dict[str, list[el.Boundary]]


class Compensation(NamedTuple):
    #: activity id -> its compensation handler (an activity ``for_compensation``)
    handlers: dict[str, str]
    #: subprocess id -> its compensation event subprocess
    events: dict[str, str]
    #: the activities that record themselves when they complete: those with a handler,
    #: and the subprocesses around them (whose record holds their inner records)
    compensable: frozenset[str]
    problems: list[str]


def compensation_of(nodes: Nodes, incoming: Flows, outgoing: Flows,
                    boundaries: Boundaries) -> Compensation:
    p: list[str] = []
    handlers: dict[str, str] = {}
    for bs in boundaries.values():
        for b in bs:
            if isinstance(b, el.CompensationBoundary):
                p.extend(_check_handler(b, nodes, handlers))
            elif isinstance(b, el.CancelBoundary) and \
                    not isinstance(nodes[b.attached_to], el.Transaction):
                p.append(f"cancel_boundary {b.id!r} is attached to {b.attached_to!r}, not a "
                         "transaction")
    events: dict[str, str] = {}
    for e in nodes.values():
        if isinstance(e, el.CompensationStart):
            host = nodes.get(e.within or "")
            outer = nodes.get(host.within or "") if host is not None else None
            if not isinstance(outer, el.SubProcess):
                p.append(f"compensation_start {e.id!r}: a compensation event subprocess "
                         "belongs in a subprocess")
            elif host is not None:
                events[outer.id] = host.id
        p.extend(_check_element(e, nodes, incoming, outgoing, boundaries))
    compensable = set(handlers) | set(events)
    for a in list(compensable):
        up = nodes[a].within
        while up is not None and isinstance(nodes.get(up), el.SubProcess):
            compensable.add(up)
            up = nodes[up].within
    for e in nodes.values():
        ref = getattr(e, "ref", None) if isinstance(
            e, (el.CompensationThrow, el.CompensationEnd)) else None
        target = nodes.get(ref) if ref is not None else None
        if ref is not None and (target is None or target.within != e.within
                                or target.id not in compensable):
            p.append(f"{e.kind} {e.id!r} compensates {ref!r}, which is not an activity of its "
                     "scope with a compensation handler (or a subprocess holding one)")
    return Compensation(handlers, events, frozenset(compensable), p)


def _check_handler(b: el.CompensationBoundary, nodes: Nodes,
                   handlers: dict[str, str]) -> list[str]:
    handler = nodes.get(b.handler)
    if handler is None or not handler.activity or not handler.for_compensation:
        return [f"compensation_boundary {b.id!r}: handler {b.handler!r} is not an activity "
                "with for_compensation=True"]
    if handler.within != b.within:
        return [f"compensation_boundary {b.id!r}: handler {b.handler!r} is not in the scope "
                f"of {b.attached_to!r}"]
    if b.attached_to in handlers:
        return [f"{b.attached_to!r} has two compensation boundaries"]
    handlers[b.attached_to] = b.handler
    return []


def _check_element(e: el.Element, nodes: Nodes, incoming: Flows, outgoing: Flows,
                   boundaries: Boundaries) -> list[str]:
    p: list[str] = []
    if e.for_compensation and (incoming[e.id] or outgoing[e.id]):
        p.append(f"{e.kind} {e.id!r} is a compensation handler: no sequence flow may enter "
                 "or leave it")
    if e.for_compensation and not e.activity:
        p.append(f"{e.kind} {e.id!r} is not an activity: it cannot be a compensation handler")
    if isinstance(e, el.CompensationBoundary) and outgoing[e.id]:
        p.append(f"compensation_boundary {e.id!r} has outgoing flows (its handler is linked "
                 "by handler=, not by a flow)")
    if isinstance(e, el.CancelEnd):
        tx = nodes.get(e.within or "")
        if not isinstance(tx, el.Transaction):
            p.append(f"cancel end event {e.id!r} is not directly inside a transaction")
        elif not any(isinstance(b, el.CancelBoundary) for b in boundaries.get(tx.id, ())):
            p.append(f"transaction {tx.id!r} has a cancel end event but no cancel boundary")
    return p
