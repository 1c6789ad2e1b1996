"""Design-review mode: compensation and transactions drawn in a way the engine cannot run.

Compensation is run as written (``model/compensation.py`` says what is wrong with a part of
it, and validation refuses the process). A diagram drawn for review is read all the same:
each part that could not run becomes what does the same when nothing is to be compensated
or cancelled, with an ``as drawn:`` note (the callers in ``events.py`` build it):

- a **compensation boundary** with no association to a handler, or one whose handler is not
  an activity of its scope marked ``isForCompensation``: nothing would compensate it, so it
  stands in as an unsupported boundary (it waits for the signal its name names);
- a **cancel boundary** not attached to a transaction: likewise;
- a **second compensation boundary** on one activity: the first compensates it; the second
  stands in as an unsupported boundary;
- a **cancel end event** not directly inside a transaction, or in one without a cancel
  boundary: a plain end event;
- a **compensation throw or end** naming an activity that is not one of its scope with a
  handler (or a subprocess holding one): nothing to compensate; a milestone, or a plain end;
- a **compensation start** of an event subprocess that is not inside a subprocess: an event
  subprocess of the process is never compensated; it stands in as an unsupported start.
"""

from __future__ import annotations

from .context import Context
from .names import BPMN, local
from .xmllib import etree

#: the file's tags read as activities (what may be a compensation handler)
_ACTIVITIES = {"task", "manualTask", "scriptTask", "serviceTask", "sendTask", "receiveTask",
               "userTask", "businessRuleTask", "subProcess", "callActivity", "transaction"}
_SCOPES = ("subProcess", "transaction", "adHocSubProcess")


def _handler_node(ctx: Context, boundary: etree._Element) -> etree._Element | None:
    """Where a compensation boundary's association leads, if anywhere."""
    eid = boundary.get("id")
    for a in ctx.root.iter(f"{{{BPMN}}}association"):
        if a.get("sourceRef") == eid and a.get("targetRef"):
            return ctx.by_id.get((a.get("targetRef") or "").rpartition(":")[2])
    return None


def _host(ctx: Context, node: etree._Element) -> str:
    return (node.get("attachedToRef") or "").rpartition(":")[2]


def boundary_gap(ctx: Context, node: etree._Element) -> str | None:
    """Why a compensation boundary cannot run (None: it can)."""
    host = _host(ctx, node)
    for other in ctx.root.iter(f"{{{BPMN}}}boundaryEvent"):
        if other is node:
            break
        if _host(ctx, other) == host and \
                other.find(f"{{{BPMN}}}compensateEventDefinition") is not None:
            return f"{host!r} has a compensation boundary already, {other.get('id')!r}: " \
                   "that one compensates it"
    handler = _handler_node(ctx, node)
    if handler is None:
        return "a compensation boundary event with no association to its handler: nothing " \
               "compensates it"
    if local(handler) not in _ACTIVITIES or handler.get("isForCompensation") != "true" or \
            handler.getparent() is not node.getparent():
        return f"its handler {handler.get('id')!r} is not an activity of its scope marked " \
               "isForCompensation='true': nothing compensates it"
    return None


def cancel_gap(ctx: Context, node: etree._Element) -> str | None:
    """Why a cancel boundary cannot run: it is not attached to a transaction."""
    host = ctx.by_id.get((node.get("attachedToRef") or "").rpartition(":")[2])
    if host is not None and local(host) != "transaction":
        return f"a cancel boundary event attached to {host.get('id')!r}, a {local(host)}, " \
               "not a transaction: nothing cancels it"
    return None


def _cancel_boundary(ctx: Context, tx: etree._Element | None) -> bool:
    """Whether a cancel boundary is attached to transaction ``tx``."""
    return tx is not None and any(
        _host(ctx, b) == tx.get("id") and b.find(f"{{{BPMN}}}cancelEventDefinition") is not None
        for b in ctx.root.iter(f"{{{BPMN}}}boundaryEvent"))


def outside_transaction(node: etree._Element) -> bool:
    """Whether a cancel end event is not directly inside a transaction."""
    parent = node.getparent()
    return parent is None or local(parent) != "transaction"


def _compensable(ctx: Context, target: etree._Element) -> bool:
    """Whether an activity has a compensation handler, or holds one (a subprocess)."""
    tid = target.get("id")
    for b in ctx.root.iter(f"{{{BPMN}}}boundaryEvent"):
        held = b.get("attachedToRef", "").rpartition(":")[2] == tid or \
            (local(target) in _SCOPES and any(a is target for a in b.iterancestors()))
        if held and b.find(f"{{{BPMN}}}compensateEventDefinition") is not None and \
                boundary_gap(ctx, b) is None:
            return True
    return local(target) in _SCOPES and any(
        s.find(f"{{{BPMN}}}compensateEventDefinition") is not None
        for s in target.iter(f"{{{BPMN}}}startEvent"))


def throw_gap(ctx: Context, node: etree._Element, ref: str | None) -> str | None:
    """Why a compensation throw (or end) naming ``ref`` cannot run."""
    if ref is None:
        return None
    target = ctx.by_id.get(ref)
    if target is None or target.getparent() is not node.getparent() or \
            not _compensable(ctx, target):
        return f"it compensates {ref!r}, which is not an activity of its scope with a " \
               "compensation handler: nothing to compensate"
    return None


def start_gap(node: etree._Element) -> str | None:
    """Why a compensation start cannot run: its event subprocess is not in a subprocess."""
    host = node.getparent()
    outer = host.getparent() if host is not None else None
    if outer is None or local(outer) not in _SCOPES:
        return "a compensation event subprocess of the process: nothing compensates the " \
               "process"
    return None


def end_gap(ctx: Context, node: etree._Element, spec: etree._Element) -> str | None:
    """Why a cancel end event, or a compensation end or throw, cannot run."""
    if local(spec) == "cancelEventDefinition":
        if outside_transaction(node):
            return "a cancel end event not directly inside a transaction: nothing to cancel"
        return None if _cancel_boundary(ctx, node.getparent()) else \
            "its transaction has no cancel boundary: nothing leaves it when it is cancelled"
    ref = spec.get("activityRef")
    return throw_gap(ctx, node, ref.rpartition(":")[2] if ref else None)


def gap_at_end(ctx: Context, node: etree._Element, spec: etree._Element) -> bool:
    """In design-review mode, whether a cancel or compensation end (or a compensation
    throw) cannot run: noted here; the caller builds a plain end (or a milestone)."""
    gap = end_gap(ctx, node, spec) if ctx.as_drawn else None
    if gap:
        what = "a plain end event" if local(node) == "endEvent" else \
            "a milestone (a none throw event): the track passes"
        ctx.assume(node, f"{gap}; it is {what}")
    return bool(gap)
