"""Events with several event definitions (``model.multiple``): read and written.

An intermediate catch event, a boundary event or a start event (of an event subprocess, or of
the process: there several messages or signals too, each held alone) with two or more
message, timer or signal definitions — ``*EventDefinition`` children, or
``eventDefinitionRef``s naming definitions at the document's root — is read as the
builder's ``catch`` (``parallelMultiple="true"``: ``all_of``), ``boundary`` or ``start_on``.
An intermediate throw event or an end event with two or more message, signal or escalation
definitions (several of a kind too) is read as ``throw(events=...)`` or ``end(events=...)``:
each thrown in document order. Anything else with several definitions stays a placeholder
(``events``).
"""

from __future__ import annotations

from typing import Any

from ..model import elements as el
from ..model.multiple import MULTIPLE, THROWN, THROWS, MultipleCatch
from .context import Context
from .events import _escalation_code, _signal, host_of, message_of, timer
from .names import BPMN, children, is_bpmn, local
from .timertext import timer_text
from .vendor import payload
from .xmllib import etree

_KINDS = ("message", "timer", "signal")
TIMER_TAGS = {"duration": "timeDuration", "date": "timeDate", "cycle": "timeCycle"}


def definitions(ctx: Context, node: etree._Element) -> list[etree._Element]:
    """The event's definitions, its own children first, then those it names by reference
    (an unresolved reference is left out)."""
    defs = [c for c in node if is_bpmn(c) and local(c).endswith("EventDefinition")]
    for ref in children(node, BPMN, "eventDefinitionRef"):
        found = ctx.by_id.get((ref.text or "").strip().rpartition(":")[2])
        if found is not None and local(found).endswith("EventDefinition"):
            defs.append(found)
    return defs


def read_multiple(ctx: Context, node: etree._Element) -> bool:
    """Read ``node`` if it is an event with several definitions this engine runs; False
    leaves it to ``events.read_event`` (one definition, or a placeholder)."""
    tag, eid, name = local(node), node.get("id", ""), node.get("name")
    defs = definitions(ctx, node)
    kinds = [local(d)[: -len("EventDefinition")] for d in defs]
    parallel = node.get("parallelMultiple") == "true"
    if tag in ("intermediateThrowEvent", "endEvent"):
        return _read_throw(ctx, node, defs, kinds)
    top = tag == "startEvent" and ctx.scope is None  # starts instances: each held alone
    where = tag in ("intermediateCatchEvent", "boundaryEvent", "startEvent")
    if len(defs) < 2 or not where or any(k not in _KINDS for k in kinds) or \
            (len(set(kinds)) != len(kinds) and not top) or \
            (parallel and tag != "intermediateCatchEvent"):
        return False
    events: list[dict[str, Any]] = []
    for kind, spec in zip(kinds, defs, strict=True):
        if kind == "message":
            message, key = message_of(ctx, spec, eid)
            events.append({"message": message, "key": key})
        elif kind == "timer":
            events.append(timer(ctx, spec, eid))
        else:
            events.append({"signal": _signal(ctx, spec, eid)})
    p = ctx.p
    if tag == "intermediateCatchEvent":
        p.catch(eid, name, **{"all_of" if parallel else "any_of": events})
    elif tag == "boundaryEvent":
        p.boundary(eid, name, attached_to=host_of(node), any_of=events,
                   interrupting=node.get("cancelActivity", "true") != "false")
    else:
        p.start_on(eid, name, any_of=events,
                   interrupting=node.get("isInterrupting", "true") != "false")
    return True


def _read_throw(ctx: Context, node: etree._Element, defs: list[etree._Element],
                kinds: list[str]) -> bool:
    """A throw or end event with several definitions it can throw: each in document order."""
    if len(defs) < 2 or any(k not in THROWN for k in kinds):
        return False
    eid, name = node.get("id", ""), node.get("name")
    events: list[dict[str, Any]] = []
    for kind, spec in zip(kinds, defs, strict=True):
        if kind == "message":
            message, key = message_of(ctx, spec, eid)
            events.append({"message": message, **({"key": key} if key is not None else {})})
        elif kind == "signal":
            events.append({"signal": _signal(ctx, spec, eid)})
        else:
            events.append({"escalation": _escalation_code(ctx, spec, eid, thrown=True) or ""})
    if local(node) == "endEvent":
        ctx.p.end(eid, name, events=events, payload=payload(node))
    else:
        ctx.p.throw(eid, name, events=events, payload=payload(node))
    return True


def write_multiple(writer: Any, node: etree._Element, e: el.Element) -> None:
    """A multiple event's definitions, in the order given (and ``parallelMultiple``)."""
    if isinstance(e, THROWS):
        for t in e.events:
            if t.kind == "message":
                etree.SubElement(node, f"{{{BPMN}}}messageEventDefinition",
                                 messageRef=writer.message(t.message, t.key))
            elif t.kind == "signal":
                etree.SubElement(node, f"{{{BPMN}}}signalEventDefinition",
                                 signalRef=writer.global_("signal", t.signal))
            else:
                etree.SubElement(node, f"{{{BPMN}}}escalationEventDefinition",
                                 escalationRef=writer.escalation(t.escalation))
        return
    if not isinstance(e, MULTIPLE):
        return
    if isinstance(e, MultipleCatch) and e.parallel:
        node.set("parallelMultiple", "true")
    for d in e.events:
        if d.kind == "timer" and d.timer is not None:
            spec = etree.SubElement(node, f"{{{BPMN}}}timerEventDefinition")
            writer.formal(spec, TIMER_TAGS[d.timer.kind], *timer_text(d.timer))
        elif d.kind == "message":
            etree.SubElement(node, f"{{{BPMN}}}messageEventDefinition",
                             messageRef=writer.message(d.message, d.key))
        elif d.kind == "signal":
            etree.SubElement(node, f"{{{BPMN}}}signalEventDefinition",
                             signalRef=writer.global_("signal", d.signal))
