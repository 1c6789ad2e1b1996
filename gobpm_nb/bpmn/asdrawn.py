"""Design-review mode (``load_bpmn(path, run_as_drawn=True)``): a diagram runs as drawn.

What a modeller's diagram leaves out is assumed, and each assumption is a warning note
beginning ``as drawn:`` (``Context.assume``, ``Context.detail``), on the element it concerns.
The assumptions made while elements are read live with their readers (a message event
with no ``messageRef`` waits for the message named by the event's name, ``events.py``); this
module holds the ones made on the whole graph once a process is read:

- **an element the engine cannot run** (``stand_in``) stands in for itself: an activity
  passes through as a task that does nothing, a boundary event waits for the signal named
  by its name, a start event is a plain start (in an event subprocess, a signal start named
  by its name), an end event a plain end, any other node a milestone (a none throw event:
  the track passes);
- **a scope without a start event** (``implicit_starts``: the process, or a subprocess, an
  empty one drawn collapsed too) starts, as BPMN 2.0's implicit start, at every node
  without an incoming flow, together: an added start event, and a parallel split when
  there are several such nodes; an empty scope starts and ends at once;
- **a gateway whose flows have no condition the engine reads** (``decisions``): an
  exclusive, inclusive or complex gateway with two or more outgoing flows, one of which
  (not its default) has no condition, or one that could not be read, is a decision
  (``Process.decide``): the track waits with a ``decision`` hold until a person chooses,
  ``eng.decide(instance, flow)``; an inclusive gateway's person picks one or more flows
  (``eng.decide(instance, [flow, ...])``), and it still joins as an inclusive gateway;
- **a gateway without an outgoing flow** ends its track there (an added end event).

Elements added here are not in the file and are never written back: ``to_bpmn`` writes what
was read (the origin's baseline lists them as read).
"""

from __future__ import annotations

from ..errors import ModelError
from ..model import elements as el
from ..model.adhoc import AdHocSubProcess
from ..model.builder import Builder
from .context import Context, drawn_name, pass_through
from .expressions import translate
from .names import BPMN, local
from .xmllib import etree

_GATEWAYS = {"exclusiveGateway", "inclusiveGateway", "complexGateway", "eventBasedGateway",
             "parallelGateway"}


def _node(ctx: Context, eid: str | None) -> etree._Element:
    """The file's element ``eid`` (a note's anchor), else the process being read."""
    found = ctx.by_id.get(eid or "") if eid else None
    if found is None:
        found = ctx.by_id.get(ctx.pid, ctx.root)
    return found


def stand_in(ctx: Context, eid: str, name: str | None, *, tag: str, reason: str,
             activity: bool, attached_to: str | None, interrupting: bool) -> None:
    """What an element the engine cannot run (``reason``) is in design-review mode."""
    node, p = _node(ctx, eid), ctx.p
    signal = drawn_name(node) if node.get("id") == eid else eid
    if attached_to is not None:
        p.signal_boundary(eid, name, attached_to=attached_to, interrupting=interrupting,
                          signal=signal)
        what = f"it waits for the signal {signal!r} (its name): " \
               f"eng.broadcast_signal({signal!r}) fires it"
    elif tag == "startEvent":
        if node.get("id") != eid or not plain_start(ctx, node):
            p.start(eid, name)
        what = "it stands for a plain start event"
    elif tag == "endEvent":
        p.end(eid, name)
        what = "it is a plain end event"
    elif activity:
        p.script_task(eid, name, fn=pass_through)
        what = "it passes through as a task that does nothing"
    elif tag == "eventBasedGateway" and event_arms(ctx, node, built=False):
        p.event_gateway(eid, name)
        what = "it is an exclusive event-based gateway"
    elif tag in _GATEWAYS:
        p.exclusive_gateway(eid, name)
        what = "it stands for an exclusive gateway (a decision when it splits)"
    else:
        p.throw(eid, name)
        what = "it passes through as a milestone (a none throw event)"
    ctx.assume(node, f"{reason}; {what}")


def _in_event_subprocess(ctx: Context) -> bool:
    if ctx.scope is None or ctx.process is None:
        return False
    return any(isinstance(e, el.EventSubProcess) and e.id == str(ctx.scope)
               for e in ctx.process.elements)


def plain_start(ctx: Context, node: etree._Element) -> bool:
    """A plain start event that is not one: in an event subprocess, a signal start named by
    its name; beside other plain starts of its scope, a milestone a person's choice leads to
    (``alternative_starts``). False when it is the plain start it says."""
    eid, name = node.get("id", ""), node.get("name")
    if _in_event_subprocess(ctx):
        signal = drawn_name(node)
        ctx.p.signal_start(eid, name, signal=signal,
                           interrupting=node.get("isInterrupting", "true") != "false")
        ctx.assume(node, f"an event subprocess starts by a trigger: it starts on the signal "
                         f"{signal!r} (its name)")
        return True
    if len(_starts_beside(ctx, node)) < 2:
        return False
    ctx.p.throw(eid, name)
    ctx.alternatives.setdefault(None if ctx.scope is None else str(ctx.scope), []).append(eid)
    return True


def trigger_in_subprocess(ctx: Context, node: etree._Element, kind: str) -> bool:
    """A start event with a trigger in a plain subprocess (not an event subprocess): it
    stands as a plain start of that subprocess (True: read here)."""
    if ctx.scope is None or _in_event_subprocess(ctx):
        return False
    eid = node.get("id", "")
    ctx.assume(node, f"startEvent {eid!r} is in subprocess {str(ctx.scope)!r}: a start event "
                     f"with a trigger belongs in an event subprocess; it stands as a plain "
                     f"start of that subprocess (its {kind} trigger is not waited for)")
    if not plain_start(ctx, node):
        ctx.p.start(eid, node.get("name"))
    return True


def _starts_beside(ctx: Context, node: etree._Element) -> list[etree._Element]:
    """The start events of ``node``'s scope that a plain start stands for: those with no
    event definition, those whose definition the engine does not run there, and conditional
    ones whose condition the engine cannot read (their stand-ins are plain starts); in a
    plain subprocess, every one (``trigger_in_subprocess``)."""
    parent = node.getparent()
    if parent is None:
        return [node]
    plain_scope = local(parent) != "process" and parent.get("triggeredByEvent") != "true"
    return [c for c in parent if isinstance(c.tag, str) and c.tag == node.tag
            and (plain_scope or _definitions(c) - _TRIGGERS == _definitions(c)
                 or (_definitions(c) == {"conditional"} and not _readable(ctx, c)))]


def _readable(ctx: Context, node: etree._Element) -> bool:
    """Whether a conditional event's condition is one the engine reads."""
    found = node.find(f"{{{BPMN}}}conditionalEventDefinition/{{{BPMN}}}condition")
    if found is None or not (found.text or "").strip():
        return False
    try:
        translate(found.text or "", found.get("language") or ctx.language)
    except ModelError:
        return False
    return True


#: the start events' definitions that start a process as drawn (a conditional start whose
#: condition cannot be read stands in as a plain start all the same)
_TRIGGERS = {"message", "timer", "signal", "conditional"}
#: the catch events' definitions an event-based gateway's arm may wait on
_ARMS = {"message", "timer", "signal", "conditional"}


def _definitions(node: etree._Element) -> set[str]:
    """The kinds of the event definitions of ``node`` (one definition by reference:
    ``ref``), none when it has none; two or more: what the engine cannot run."""
    kinds = [local(d)[: -len("EventDefinition")] for d in node if isinstance(d.tag, str)
             and (local(d).endswith("EventDefinition") or local(d) == "eventDefinitionRef")]
    return {"several"} if len(kinds) > 1 else set(kinds)


def finish(ctx: Context) -> None:
    """The assumptions made on the whole graph of the process just read."""
    alternative_starts(ctx)
    implicit_starts(ctx)
    decisions(ctx)
    ways_out(ctx)


def fresh(ctx: Context, base: str) -> str:
    """An id for an added element: in neither the file nor the process."""
    assert ctx.process is not None
    taken = set(ctx.by_id) | {e.id for e in ctx.process.elements} | \
        {f.id for f in ctx.process.flows}
    made, n = base, 1
    while made in taken:
        n += 1
        made = f"{base}_{n}"
    return made


def _builder(ctx: Context, scope: str | None) -> Builder:
    assert ctx.process is not None
    return ctx.process if scope is None else ctx.process.scope(scope)


def implicit_starts(ctx: Context) -> None:
    """A start event for the process, and for each plain subprocess, that has none."""
    p = ctx.process
    assert p is not None
    scopes: list[str | None] = [None]
    scopes += [e.id for e in p.elements if isinstance(e, (el.SubProcess, el.EventSubProcess))
               and not isinstance(e, AdHocSubProcess)]  # what runs in one is activated
    triggered = {e.id for e in p.elements if isinstance(e, el.EventSubProcess)}
    targets = {f.target for f in p.flows} | ctx.cut  # (cut: only a left-out element led there)
    for scope in scopes:
        members = [e for e in p.elements if e.within == scope]
        if any(isinstance(e, el.StartEvent) or isinstance(e, el.EventGateway) and
               e.instantiate for e in members):  # a gateway that creates instances starts it
            continue
        entries = [e.id for e in members if e.id not in targets and _may_start(ctx, e)]
        _start_at(ctx, scope, entries, scope in triggered)


def _may_start(ctx: Context, e: el.Element) -> bool:
    """Whether a node without an incoming flow starts its scope: not a boundary event, an
    event subprocess, a link catch (a link throw leads there) or a compensation handler."""
    if isinstance(e, (el.Boundary, el.EventSubProcess, el.LinkCatch)):
        return False
    node = ctx.by_id.get(e.id)
    return node is None or node.get("isForCompensation") != "true"


def _start_at(ctx: Context, scope: str | None, entries: list[str], triggered: bool) -> None:
    """Add a start event to ``scope`` leading to ``entries`` (all of them, in parallel); an
    event subprocess's starts on the signal named by the subprocess's name."""
    b = _builder(ctx, scope)
    owner = scope if scope is not None else ctx.pid
    node = _node(ctx, owner)
    if triggered:
        signal = drawn_name(node)
        start = b.signal_start(fresh(ctx, f"{owner}_start"), "start (as drawn)",
                               signal=signal)
        ctx.assume(node, f"event subprocess {owner!r} has no start event: it starts on the "
                         f"signal {signal!r} (its name)")
    else:
        start = b.start(fresh(ctx, f"{owner}_start"), "start (as drawn)")
    if not entries:
        end = b.end(fresh(ctx, f"{owner}_end"), "end (as drawn)")
        b.flow(start, end, id=fresh(ctx, f"{start}_flow"))
        ctx.assume(node, f"{local(node)} {owner!r} has no start event and nothing to run "
                         "(drawn collapsed, or empty): it starts and ends at once")
        return
    first = start
    if len(entries) > 1:
        first = b.parallel_gateway(fresh(ctx, f"{owner}_split"), "start (as drawn)")
        b.flow(start, first, id=fresh(ctx, f"{start}_flow"))
    for entry in entries:
        b.flow(first, entry, id=fresh(ctx, f"{first}_{entry}"))
    ctx.assume(node, f"{local(node)} {owner!r} has no start event: it starts at "
                     f"{_listed(entries)}, every node without an incoming flow"
                     f"{', together' if len(entries) > 1 else ''} (BPMN 2.0's implicit start)")


def alternative_starts(ctx: Context) -> None:
    """A scope with several plain start events starts at a decision: a person chooses the
    start event an instance begins at (each read as a milestone)."""
    for scope, starts in ctx.alternatives.items():
        b = _builder(ctx, scope)
        owner = scope if scope is not None else ctx.pid
        trigger = ctx.triggers.get(scope)  # an event subprocess's (drawnflows.several_starts)
        start = trigger or b.start(fresh(ctx, f"{owner}_start"), "start (as drawn)")
        choice = b.exclusive_gateway(fresh(ctx, f"{owner}_choice"), "where it starts")
        b.flow(start, choice, id=fresh(ctx, f"{start}_flow"))
        for entry in starts:
            b.flow(choice, entry, id=fresh(ctx, f"{choice}_{entry}"))
        b.decide(choice)
        if trigger is not None:
            continue  # its note is said where it was read
        node = _node(ctx, owner)
        ctx.assume(node, f"{local(node)} {owner!r} has {len(starts)} plain start events: an "
                         "instance starts at a decision, where a person chooses one "
                         f"(eng.decide(instance, {starts[0]!r})); each passes as a milestone")


def _listed(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def decisions(ctx: Context) -> None:
    """Each splitting exclusive, inclusive or complex gateway with a flow (not its default)
    that has no condition the engine reads becomes a decision a person takes."""
    p = ctx.process
    assert p is not None
    for e in p.elements:
        if not isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway, el.ComplexGateway)) \
                or (not isinstance(e, el.ComplexGateway) and e.decision is not None):
            continue
        known = {n.id for n in p.elements}
        outs = [f for f in p.flows if f.source == e.id and f.target in known]  # not dangling
        open_ = [f.id for f in outs if f.condition is None and f.target != e.default]
        if len(outs) < 2 or not open_:
            continue
        p.decide(e.id)
        node = _node(ctx, e.id)
        one = " one or more flows, each taken (it joins as an inclusive gateway)" \
            if not isinstance(e, el.ExclusiveGateway) else " the flow"
        ctx.assume(node, f"{local(node)} {e.id!r}: {_listed(open_)} "
                         f"{'has' if len(open_) == 1 else 'have'} no condition the engine "
                         f"reads; it is a decision: a person chooses{one}, "
                         "eng.decide(instance, flow)")


def ways_out(ctx: Context) -> None:
    """A gateway without an outgoing flow ends its track there (an added end event)."""
    p = ctx.process
    assert p is not None
    sources = {f.source for f in p.flows}
    for e in p.elements:
        if not isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway, el.ParallelGateway,
                              el.EventGateway, el.ComplexGateway)) or e.id in sources:
            continue
        b = _builder(ctx, e.within)
        end = b.end(fresh(ctx, f"{e.id}_end"), "end (as drawn)")
        b.flow(e.id, end, id=fresh(ctx, f"{e.id}_{end}"))
        ctx.assume(_node(ctx, e.id), f"{local(_node(ctx, e.id))} {e.id!r} has no outgoing "
                                     "flow: its track ends there, as at an end event")


def event_arms(ctx: Context, node: etree._Element, built: bool = True) -> bool:
    """Whether every flow out of an event-based gateway leads to a catch event or a receive
    task; in design-review mode, one that does not is an exclusive gateway (a decision;
    ``built``: build it, else only note it)."""
    eid = node.get("id", "")
    arms = [ctx.by_id.get(f.get("targetRef") or "") for f in ctx.flows.values()
            if f.get("sourceRef") == eid]
    wrong = [a.get("id", "") for a in arms if a is not None and local(a) != "receiveTask"
             and (local(a) != "intermediateCatchEvent" or len(_definitions(a) & _ARMS) != 1)]
    if arms and not wrong:
        return True
    if built:
        ctx.p.exclusive_gateway(eid, node.get("name"))
    what = f"leads to {_listed(wrong)}, not a catch event: it is an exclusive gateway (a " \
        "decision)" if arms else "has no outgoing flow: it is an exclusive gateway"
    ctx.assume(node, f"eventBasedGateway {eid!r} {what}")
    return False


def is_flow_of_gateway(ctx: Context, flow: etree._Element) -> bool:
    """Whether a sequence flow leaves a gateway (its condition is then the gateway's to
    decide)."""
    source = ctx.by_id.get(flow.get("sourceRef") or "")
    return source is not None and source.tag.startswith(f"{{{BPMN}}}") and \
        local(source) in _GATEWAYS
