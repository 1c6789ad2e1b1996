"""Events: start, end, intermediate catch and throw, boundary — by their event definition.

A start event with a trigger inside a subprocess is the start of an event subprocess (the
builder's ``message_start``, ``timer_start``, ...; validation refuses one in a plain
subprocess). In the process itself a message, timer or signal start event creates instances
(the same builder calls; a message start there needs no correlation key, and always
interrupts); a conditional start there is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ModelError
from ..model.expr import NO_KEY
from ..model.timers import TimerExpr, at_deployment, timer_spec
from . import drawncomp
from .activiti import message_expression, never_fires, no_trigger, vendor_key
from .asdrawn import plain_start, trigger_in_subprocess
from .context import Context, drawn_name
from .drawnflows import paired_link
from .expressions import translate
from .names import BPMN, children, is_bpmn, local
from .timertext import timer_value
from .vendor import correlation_key, payload
from .xmllib import etree

# What each kind of event may carry here; any other definition becomes a placeholder.
_START = {"", "message", "timer", "signal", "conditional"}  # in the process itself
_SCOPE_START = {"", "message", "timer", "signal", "conditional", "error", "escalation",
                "compensate"}  # in a subprocess
_END = {"", "terminate", "error", "escalation", "message", "signal", "compensate", "cancel"}
_CATCH = {"timer", "message", "signal", "conditional", "link"}
_THROW = {"", "message", "signal", "escalation", "link", "compensate"}
_BOUNDARY = {"timer", "message", "signal", "error", "conditional", "escalation",
             "compensate", "cancel"}
_WHERE = {"startEvent": "start", "endEvent": "end", "intermediateCatchEvent": "intermediate catch",
          "intermediateThrowEvent": "intermediate throw", "boundaryEvent": "boundary"}


def definition(ctx: Context, node: etree._Element) -> tuple[str, etree._Element | None] | None:
    """The event's one definition: (``timer``, element), (``""``, None) for none; None (with
    a placeholder reason noted by the caller) for several or by reference."""
    defs = [c for c in node if is_bpmn(c) and local(c).endswith("EventDefinition")]
    if children(node, BPMN, "eventDefinitionRef"):
        return None
    if len(defs) > 1:
        return None
    if not defs:
        return "", None
    return local(defs[0])[: -len("EventDefinition")], defs[0]


def read_event(ctx: Context, node: etree._Element) -> None:
    """Add the event ``node`` to the process being read."""
    tag, eid, name = local(node), node.get("id", ""), node.get("name")
    found = definition(ctx, node)
    allowed = {"startEvent": _START if ctx.scope is None else _SCOPE_START, "endEvent": _END,
               "intermediateCatchEvent": _CATCH, "intermediateThrowEvent": _THROW,
               "boundaryEvent": _BOUNDARY}[tag]
    if found is None or found[0] not in allowed:
        _placeholder(ctx, node, found)
        return
    kind, spec = found
    p = ctx.p
    if tag == "startEvent" and kind and ctx.as_drawn and \
            trigger_in_subprocess(ctx, node, kind):
        return
    if tag == "startEvent" and kind:
        _triggered_start(ctx, node, kind, spec)
    elif tag == "startEvent":
        if not (ctx.as_drawn and plain_start(ctx, node)):
            p.start(eid, name)
    elif tag == "endEvent":
        _end(ctx, node, kind, spec)
    elif tag == "intermediateThrowEvent":
        _throw(ctx, node, kind, spec)
    else:
        _catch(ctx, node, kind, spec)


def _placeholder(ctx: Context, node: etree._Element,
                 found: tuple[str, etree._Element | None] | None) -> None:
    tag, eid = local(node), node.get("id", "")
    if found is None:
        reason = "several event definitions (or one by reference) are supported only on " \
                 "a catch, a boundary or an event subprocess's start, each a message, a " \
                 "timer or a signal, at most one of each (parallelMultiple: only a catch)"
    elif found[0] in ("error", "escalation") and tag == "intermediateCatchEvent":
        reason = f"an {found[0]} intermediate catch event is not valid BPMN: an {found[0]} is " \
                 "caught only by a boundary event on the activity that raises it, or by the " \
                 "start event of an event subprocess"
    elif found[0]:
        reason = f"{found[0]} {_WHERE[tag]} events are not supported yet"
    elif never_fires(ctx, node):
        return
    else:
        reason = no_trigger(node)
    kind = found[0] if found is not None else ""
    if tag == "boundaryEvent":
        ctx.unsupported(eid, node.get("name"), tag=tag, reason=reason,
                        attached_to=host_of(node),
                        interrupting=node.get("cancelActivity", "true") != "false",
                        definition=kind)
    else:
        ctx.unsupported(eid, node.get("name"), tag=tag, reason=reason, definition=kind)


def _triggered_start(ctx: Context, node: etree._Element, kind: str, spec: Any) -> None:
    """A start event with a trigger: of an event subprocess (its ``isInterrupting`` read),
    or of the process itself, where it creates instances."""
    eid, name, p = node.get("id", ""), node.get("name"), ctx.p
    interrupting = node.get("isInterrupting", "true") != "false"
    top = ctx.scope is None
    if top and not interrupting:
        ctx.warning(node, "a start event of the process starts a new instance: "
                          "isInterrupting='false' is ignored")
        interrupting = True
    if kind == "message" and top:
        message, _ = message_of(ctx, spec, eid, keyed=False)
        p.message_start(eid, name, message=message)
    elif kind == "compensate" and ctx.as_drawn and drawncomp.start_gap(node):
        ctx.unsupported(eid, name, tag="startEvent", reason=drawncomp.start_gap(node) or "")
    elif kind == "compensate":
        p.compensation_start(eid, name)
    elif kind == "error":
        if not interrupting:
            ctx.warning(node, "an error start event always interrupts; "
                              "isInterrupting='false' is ignored")
        p.error_start(eid, name, error=_error_code(ctx, spec, eid))
    elif kind == "escalation":
        p.escalation_start(eid, name, escalation=_escalation_code(ctx, spec, eid),
                           interrupting=interrupting)
    elif kind == "message":
        message, key = message_of(ctx, spec, eid)
        p.message_start(eid, name, message=message, key=key, interrupting=interrupting)
    elif kind == "conditional":
        condition = _condition(ctx, spec, eid)
        if condition is None and ctx.as_drawn:
            ctx.unsupported(eid, name, tag="startEvent", reason="a conditional start with no "
                            "condition the engine reads", definition=kind)
            return
        given: dict[str, Any] = {"condition": condition}  # None: validation names it
        p.conditional_start(eid, name, **given, interrupting=interrupting)
    elif kind == "timer":
        p.timer_start(eid, name, **timer(ctx, spec, eid), interrupting=interrupting)
    else:  # signal
        p.signal_start(eid, name, signal=_signal(ctx, spec, eid), interrupting=interrupting)


def host_of(node: etree._Element) -> str:
    """The id of the activity a boundary event is attached to."""
    return (node.get("attachedToRef") or "").rpartition(":")[2]  # an id or a QName


def _catch(ctx: Context, node: etree._Element, kind: str, spec: Any) -> None:
    """A catch event or a boundary event: the builder call that fits its definition."""
    eid, name, p = node.get("id", ""), node.get("name"), ctx.p
    boundary = local(node) == "boundaryEvent"
    where: dict[str, Any] = {}
    if boundary:
        where = {"attached_to": host_of(node)}
        if kind != "error":
            where["interrupting"] = node.get("cancelActivity", "true") != "false"
        elif node.get("cancelActivity") == "false":
            ctx.warning(node, "an error boundary always interrupts; cancelActivity='false' "
                              "is ignored")
    if kind == "error":
        p.error_boundary(eid, name, **where, error=_error_code(ctx, spec, eid))
        return
    if kind == "escalation":
        if ctx.as_drawn and not _raises_escalations(ctx, where.get("attached_to")):
            ctx.unsupported(eid, name, tag=local(node), reason="only a subprocess raises "
                            "escalations here", attached_to=where["attached_to"],
                            interrupting=where["interrupting"])
            return
        p.escalation_boundary(eid, name, **where,
                              escalation=_escalation_code(ctx, spec, eid))
        return
    if kind == "link":
        p.link_catch(eid, name, link=_link(ctx, node, spec))
        return
    gap = (drawncomp.boundary_gap(ctx, node) if kind == "compensate" else
           drawncomp.cancel_gap(ctx, node) if kind == "cancel" else None)
    if ctx.as_drawn and gap:
        ctx.unsupported(eid, name, tag=local(node), reason=gap, **where)
        return
    if kind == "compensate":
        p.compensation_boundary(eid, name, attached_to=where["attached_to"],
                                handler=_handler(ctx, node, eid))
        return
    if kind == "cancel":
        p.cancel_boundary(eid, name, attached_to=where["attached_to"])
        return
    args: dict[str, Any]
    if kind == "timer":
        args = timer(ctx, spec, eid)
    elif kind == "message":
        message, key = message_of(ctx, spec, eid)
        args = {"message": message, "key": key}
    elif kind == "signal":
        args = {"signal": _signal(ctx, spec, eid)}
    else:
        args = {"condition": _condition(ctx, spec, eid)}
        if args["condition"] is None and ctx.as_drawn:
            ctx.unsupported(eid, name, tag=local(node), reason="a conditional event with no "
                            "condition the engine reads", **where)
            return
    methods: dict[str, tuple[Callable[..., str], Callable[..., str]]] = {
        "timer": (p.timer_catch, p.timer_boundary),
        "message": (p.message_catch, p.message_boundary),
        "signal": (p.signal_catch, p.signal_boundary),
        "conditional": (p.conditional_catch, p.conditional_boundary)}
    methods[kind][boundary](eid, name, **where, **args)


def _end(ctx: Context, node: etree._Element, kind: str, spec: Any) -> None:
    """An end event: plain, terminate, or one that throws an error or escalation, publishes
    a message or broadcasts a signal (read as the intermediate throws read theirs)."""
    eid, name, p = node.get("id", ""), node.get("name"), ctx.p
    if kind == "message":
        message, key = message_of(ctx, spec, eid)
        p.end(eid, name, message=message, key=key, payload=payload(node))
    elif kind == "signal":
        p.end(eid, name, signal=_signal(ctx, spec, eid), payload=payload(node))
    elif kind in ("compensate", "cancel") and drawncomp.gap_at_end(ctx, node, spec):
        p.end(eid, name)
    elif kind == "compensate":
        p.end(eid, name, compensate=_activity_ref(ctx, spec) or True,
              wait=spec.get("waitForCompletion") != "false")
    elif kind == "cancel":
        p.end(eid, name, cancel=True)
    else:
        error = _error_code(ctx, spec, eid) if kind == "error" else None
        escalation = _escalation_code(ctx, spec, eid, thrown=True) \
            if kind == "escalation" else None
        p.end(eid, name, terminate=kind == "terminate", error=error, escalation=escalation)


def _throw(ctx: Context, node: etree._Element, kind: str, spec: Any) -> None:
    eid, name, p = node.get("id", ""), node.get("name"), ctx.p
    if kind == "message":
        message, key = message_of(ctx, spec, eid)
        p.message_throw(eid, name, message=message, key=key, payload=payload(node))
    elif kind == "signal":
        p.signal_throw(eid, name, signal=_signal(ctx, spec, eid), payload=payload(node))
    elif kind == "escalation":
        p.escalation_throw(eid, name,
                           escalation=_escalation_code(ctx, spec, eid, thrown=True) or "")
    elif kind == "link":
        p.link_throw(eid, name, link=_link(ctx, node, spec))
    elif kind == "compensate" and drawncomp.gap_at_end(ctx, node, spec):
        p.throw(eid, name)
    elif kind == "compensate":
        p.compensation_throw(eid, name, activity=_activity_ref(ctx, spec),
                             wait=spec.get("waitForCompletion") != "false")
    else:  # a none throw event marks a milestone: it passes through
        p.throw(eid, name)


def timer(ctx: Context, spec: etree._Element, eid: str) -> dict[str, str]:
    """The builder's timer arguments: the one of timeDuration, timeDate, timeCycle given
    (a FEEL string literal ``="PT1H"`` is its text; other text is left to the parser)."""
    out: dict[str, str] = {}
    for tag, arg in (("timeDuration", "duration"), ("timeDate", "date"), ("timeCycle", "cycle")):
        found = spec.find(f"{{{BPMN}}}{tag}")
        if found is not None:
            text = (found.text or "").strip()
            try:
                out[arg] = timer_value(text, found.get("language") or ctx.language, arg)
            except ModelError as exc:  # the process does not run; in design-review mode
                owner = spec.getparent()  # the timer waits for nothing
                tag = local(owner) if owner is not None else "timer"
                ctx.detail(found, f"{tag} {eid!r}: {exc}", "it waits for nothing (PT0S): the "
                                                         "timer fires at once")
                return {"duration": "PT0S"}
    if len(out) != 1:
        message = f"a timer needs exactly one of timeDuration, timeDate or timeCycle; this " \
                  f"one has {len(out) or 'none'}"
        if ctx.detail(spec, message, "it waits for nothing (PT0S): the timer fires at once"):
            return {"duration": "PT0S"}
        ctx.explained.add(eid)
    elif ctx.as_drawn:
        return _parsed_or_now(ctx, spec, out)
    return out


def _parsed_or_now(ctx: Context, spec: etree._Element, given: dict[str, str]
                   ) -> dict[str, str]:
    """In design-review mode, a timer whose text does not parse waits for nothing."""
    (arg, text), = given.items()
    found = timer_spec(**given)
    assert found is not None  # one definition is given
    try:
        parsed = found.parsed()
        owner = spec.getparent()
        if isinstance(parsed, TimerExpr) and ctx.scope is None and owner is not None and \
                local(owner) == "startEvent":
            at_deployment(parsed)  # a process's timer start: evaluated with no data
    except ModelError as exc:
        ctx.assume(spec, f"{arg} {text!r}: {exc}; it waits for nothing (PT0S): the timer "
                         "fires at once")
        return {"duration": "PT0S"}
    return given


def message_of(ctx: Context, owner: etree._Element, eid: str,
               keyed: bool = True) -> tuple[str, str | None]:
    """The message name and correlation key that ``owner``'s ``messageRef`` names (no key
    when not ``keyed``: a message start of the process correlates to no instance)."""
    node = ctx.by_id.get(eid, owner)
    keyed = keyed and not starts_only(ctx, eid)
    waits = keyed and not _throws(node)  # a throw needs no correlation key
    if owner.get("messageRef") is None:
        return _unreferenced(ctx, owner, node, eid, keyed)
    message = ctx.ref(owner, "messageRef", "message", eid)
    if message is None:
        return (owner.get("messageRef") or "").rpartition(":")[2], NO_KEY if keyed and \
            ctx.as_drawn else None
    key = correlation_key(ctx, message, eid) if keyed else None
    if keyed and key is None and eid not in ctx.explained:
        key = vendor_key(ctx, owner, eid)
    if waits and key is None and eid not in ctx.explained:  # as Camunda 7 correlates it
        (ctx.assume if ctx.as_drawn else ctx.warning)(
            owner, f"message {ctx.name_of(message)!r} has no correlation key{_BY_NAME}")
        key = NO_KEY
    return ctx.name_of(message), key


def starts_only(ctx: Context, eid: str) -> bool:
    """Whether ``eid`` is an arm of an exclusive event-based gateway that creates instances:
    its message only ever begins a new instance, so it has no key to correlate with."""
    for flow in ctx.flows.values():
        if flow.get("targetRef") == eid:
            gate = ctx.by_id.get(flow.get("sourceRef") or "")
            return gate is not None and local(gate) == "eventBasedGateway" and \
                ctx.instantiates(gate) and gate.get("eventGatewayType") != "Parallel"
    return False


def _unreferenced(ctx: Context, owner: etree._Element, node: etree._Element, eid: str,
                  keyed: bool) -> tuple[str, str | None]:
    """A message element with no ``messageRef``: the message its name names (as SpiffWorkflow
    reads it), a receive task with no name the one its id names (Activiti's plain wait
    state), each with a warning; as written, anything else is an error note."""
    named, by = drawn_name(node), "name" if (node.get("name") or "").strip() else "id"
    waits = keyed and not _throws(node)
    vendor = message_expression(ctx, owner, eid, waits, _BY_NAME)
    if vendor is not None:
        return vendor
    said = f"it is the message {named!r} (its {by}){_BY_NAME if waits else ''}"
    if not ctx.as_drawn and (by == "name" or local(node) == "receiveTask"):
        ctx.warning(owner, f"no messageRef: {said}")
        return named, NO_KEY if keyed else None
    unnamed = "" if ctx.as_drawn else " and no name"
    if ctx.detail(owner, f"no messageRef{unnamed}: it names no <message>, so nothing can "
                         f"correlate to it{_REFUSED if waits else ''}", said):
        return named, NO_KEY if keyed else None
    ctx.explained.add(eid)
    return "", None


_REFUSED = " (Flowable refuses such a wait when the process is deployed)"
_BY_NAME = ", correlated by its name alone: a message published with no key " \
           "(eng.publish_message(name)) reaches the first such wait armed"


def _throws(node: etree._Element) -> bool:
    """Whether an element sends its message (a throw needs no correlation key)."""
    return local(node) in ("intermediateThrowEvent", "endEvent", "sendTask")


def _signal(ctx: Context, spec: etree._Element, eid: str) -> str:
    if spec.get("signalRef") is None:
        named = drawn_name(ctx.by_id.get(eid, spec))
        if ctx.detail(spec, "no signalRef: it names no <signal>",
                      f"it is the signal {named!r} (its name)"):
            return named
        ctx.explained.add(eid)
        return ""
    signal = ctx.ref(spec, "signalRef", "signal", eid)
    if signal is None:
        return (spec.get("signalRef") or "").rpartition(":")[2]
    return ctx.name_of(signal)


def _error_code(ctx: Context, spec: etree._Element | None, eid: str) -> str | None:
    """The error code thrown or caught: the ``<error>``'s errorCode, else its name or id;
    None (catch every error) when no errorRef is given."""
    if spec is None:
        return None
    error = ctx.ref(spec, "errorRef", "error", eid)
    if error is None:
        ref = spec.get("errorRef")
        return ref.rpartition(":")[2] if ref else None
    code: str | None = error.get("errorCode") or error.get("name") or error.get("id")
    return code


def _escalation_code(ctx: Context, spec: etree._Element, eid: str,
                     thrown: bool = False) -> str | None:
    """The escalation code raised or caught: the ``<escalation>``'s escalationCode, else its
    name or id. Without an escalationRef a catch takes every escalation (None); a throw
    raises nothing, an error note."""
    if spec.get("escalationRef") is None:
        if thrown:
            named = drawn_name(ctx.by_id.get(eid, spec))
            if ctx.detail(spec, "no escalationRef: it names no <escalation>, so it raises no "
                                "escalation code", f"it raises the code {named!r} (its name)"):
                return named
            ctx.explained.add(eid)
        return None
    escalation = ctx.ref(spec, "escalationRef", "escalation", eid)
    if escalation is None:
        return (spec.get("escalationRef") or "").rpartition(":")[2]
    code: str | None = (escalation.get("escalationCode") or escalation.get("name")
                        or escalation.get("id"))
    return code


def _handler(ctx: Context, node: etree._Element, eid: str) -> str:
    """The compensation handler a compensation boundary's association leads to."""
    for a in node.getroottree().getroot().iter(f"{{{BPMN}}}association"):
        target: str = a.get("targetRef") or ""
        if a.get("sourceRef") == eid and target:
            return target
    ctx.error(node, "a compensation boundary event needs an association to its handler (an "
                    "activity with isForCompensation='true')")
    ctx.explained.add(eid)
    return ""


def _activity_ref(ctx: Context, spec: etree._Element) -> str | None:
    """The activity a compensation throw names (None: every one of its scope)."""
    ref = spec.get("activityRef")
    return ref.rpartition(":")[2] if ref else None


def _link(ctx: Context, node: etree._Element, spec: etree._Element) -> str:
    """A link event's name (validation refuses one without; design-review mode takes the
    event's name)."""
    link = (spec.get("name") or "").strip()
    if ctx.as_drawn:
        link = " ".join(link.split())  # as drawn: a name on one line
    if not link and ctx.as_drawn:
        link = drawn_name(node)
        what = "the event's name" if node.get("name", "").strip() else "the event's id"
        ctx.assume(spec, f"the link has no name: it is the link {link!r} ({what})")
    return paired_link(ctx, node, link) if local(node) == "intermediateThrowEvent" else link


def _condition(ctx: Context, spec: etree._Element, eid: str) -> str | None:
    found = spec.find(f"{{{BPMN}}}condition")
    text = (found.text or "") if found is not None else ""
    if not text.strip():
        return None  # the builder reports a conditional event without a condition
    try:
        language = found.get("language") if found is not None else None
        return translate(text, language or ctx.language)
    except ModelError as exc:
        if not ctx.detail(found if found is not None else spec, str(exc), "it is not read"):
            ctx.explained.add(eid)
        return None


def _raises_escalations(ctx: Context, host: str | None) -> bool:
    """Whether the activity a boundary event is attached to is a subprocess (what raises an
    escalation here)."""
    node = ctx.by_id.get(host or "")
    return node is None or local(node) in ("subProcess", "transaction", "adHocSubProcess")
