"""Design-review mode: flows, boundary events and links written in a way the engine cannot
read as they stand, though the diagram leaves no doubt what they join.

Each is read as drawn with an ``as drawn:`` note (as written, each stays an error), but
for the first, which is valid BPMN and read as written too, with a warning:

- **two flows joining the same two nodes** (a split whose two arms meet at once, a
  gateway's conditional flow and its default to one task): the engine keeps one flow per
  pair of nodes, so the second passes through an added milestone (a none throw event) on
  its way; each still carries its own token. In design-review mode a flow written twice
  with one id and the same ends (in a subprocess and again in the process) is read once;
- **a flow written in the process (or a subprocess) that joins two elements of a
  subprocess inside it** is read as a flow of that subprocess (``reader``);
- **a boundary event written inside the subprocess it is attached to** (or in any scope
  other than its host's) is read in its host's scope, on its host's border, when each of
  its outgoing flows leads to an element of that scope; one whose flows lead elsewhere
  would leave its subprocess by the side and is left out (``drawnfixes``);
- **a link throw whose name no link catch of its scope has** goes to the only link catch
  of that scope that no throw names (the names were meant to match); a link catch's name
  is its link's name, else its event's name, else its id;
- **a boundary event attached to an event subprocess** (which the engine gives no border)
  is not armed: it passes as a milestone that nothing reaches, and the path after it is
  not run;
- **an event subprocess with several start events** (the engine opens one on one trigger)
  opens on its first start event's trigger; then a person chooses the start event whose
  path it takes, each start event passing as a milestone (as a scope with several plain
  start events does, ``asdrawn.alternative_starts``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ..errors import ModelError
from ..model.builder import Scope
from .asdrawn import fresh
from .context import Context, drawn_name
from .names import BPMN, local
from .xmllib import etree


def twin_flow(ctx: Context, node: etree._Element, condition: str | None) -> str | None:
    """Read a flow joining the nodes an earlier flow joins: "via" (it
    passes through a milestone), "again" (the same flow written twice: left out); None
    leaves it to the reader."""
    p = ctx.process
    if p is None:
        return None
    fid, source, target = node.get("id"), node.get("sourceRef", ""), node.get("targetRef", "")
    twin = next((f for f in p.flows if f.source == source and f.target == target), None)
    if twin is None:
        return None
    if fid and twin.id == fid:
        if not ctx.as_drawn:
            return None  # the same id twice: refused as written (a duplicate flow)
        ctx.assume(node, f"sequence flow {fid!r} is written twice, with the same ends: it is "
                         "read once")
        return "again"
    what = f"sequence flow {fid!r}" if fid else "a sequence flow without an id"
    fid = fid or fresh(ctx, f"{source}->{target}")
    via = fresh(ctx, f"{fid}_via")
    ctx.p.throw(via, node.get("name"))
    ctx.p.flow(source, via, id=fid, condition=condition)
    ctx.p.flow(via, target, id=fresh(ctx, f"{via}_flow"))
    ctx.rerouted[fid] = (source, via)
    (ctx.assume if ctx.as_drawn else ctx.warning)(
        node, f"{what} joins {source!r} to {target!r}, as {twin.id!r} does: it passes "
              f"through an added milestone {via!r} on the way (one flow per pair of nodes "
              "here), and carries its own token")
    return "via"


def keep_defaults(ctx: Context) -> None:
    """A default flow that passes through a milestone (``twin_flow``) is still its node's
    default."""
    for fid, (source, via) in ctx.rerouted.items():
        found = ctx.by_id.get(source)
        if found is not None and found.get("default") == fid:
            assert ctx.process is not None
            ctx.process.default_flow(source, via)


def boundary_home(ctx: Context, node: etree._Element) -> tuple[bool, Scope | None]:
    """In design-review mode, where a boundary event written outside its host's scope is
    read: (True, the host's scope; None: the process), noted; (False, None) to read it where
    it is written (validation refuses it when it is misplaced)."""
    host = ctx.by_id.get((node.get("attachedToRef") or "").rpartition(":")[2])
    written, eid = node.getparent(), node.get("id", "")
    if not ctx.as_drawn or host is None or written is None or ctx.process is None:
        return False, None
    home = host.getparent()
    if home is None or home is written or ctx.process_of.get(host.get("id", "")) != ctx.pid:
        return False, None
    outs = [ctx.by_id.get(f.get("targetRef") or "") for f in ctx.flows.values()
            if f.get("sourceRef") == eid]
    if any(t is None or t.getparent() is not home for t in outs):
        return False, None
    try:
        scope = None if local(home) == "process" else ctx.process.scope(home.get("id", ""))
    except ModelError:
        return False, None
    ctx.assume(node, f"boundaryEvent {eid!r} is written in {_where(written)} but "
                     f"{host.get('id')!r} is in {_where(home)}: it is read on the border of "
                     f"{host.get('id')!r}, in {_where(home)}, where its flows lead")
    return True, scope


def _where(container: etree._Element) -> str:
    if local(container) == "process":
        return "the process"
    return f"subprocess {container.get('id')!r}"


def _link_name(event: etree._Element) -> str:
    """What names a link event's link as drawn: its link's name, else the event's."""
    spec = event.find(f"{{{BPMN}}}linkEventDefinition")
    given = " ".join((spec.get("name") or "").split()) if spec is not None else ""
    return given or drawn_name(event)


def paired_link(ctx: Context, node: etree._Element, link: str) -> str:
    """In design-review mode, the link a link throw goes to: ``link`` when a link catch of
    its scope has it, else the only catch of its scope that no throw names, noted."""
    scope = node.getparent()
    if not ctx.as_drawn or scope is None:
        return link
    catches = [c for c in scope if isinstance(c.tag, str) and local(c) ==
               "intermediateCatchEvent" and c.find(f"{{{BPMN}}}linkEventDefinition") is not None]
    names = [_link_name(c) for c in catches]
    if link in names:
        return link
    thrown = {_link_name(t) for t in scope if isinstance(t.tag, str) and local(t) ==
              "intermediateThrowEvent" and t.find(f"{{{BPMN}}}linkEventDefinition") is not None}
    free = [n for n in names if n not in thrown]
    if len(free) != 1:
        return link
    ctx.assume(node, f"no link catch of its scope is named {link!r}: it goes to the link "
                     f"{free[0]!r}, the only link catch there that no throw names")
    return free[0]


def several_starts(ctx: Context, node: etree._Element,
                   read: Callable[[Context, etree._Element], None]) -> bool:
    """In design-review mode, read a start event of an event subprocess that has several
    (True); ``read`` reads an event (the first one's trigger, under a fresh id)."""
    host = node.getparent()
    if not ctx.as_drawn or local(node) != "startEvent" or ctx.scope is None or \
            host is None or host.get("triggeredByEvent") != "true":
        return False
    starts = [c for c in host if isinstance(c.tag, str) and local(c) == "startEvent"
              and c.get("id")]
    if len(starts) < 2:
        return False
    eid, scope = node.get("id", ""), str(ctx.scope)
    if node is starts[0]:
        trigger = copy.deepcopy(node)
        trigger.set("id", fresh(ctx, f"{eid}_trigger"))
        trigger.set("name", drawn_name(node))  # what names its message or signal as drawn
        ctx.by_id[trigger.get("id", "")] = trigger
        read(ctx, trigger)
        ctx.triggers[scope] = trigger.get("id", "")
        ctx.assume(host, f"event subprocess {scope!r} has {len(starts)} start events, and "
                         f"opens here on one trigger: it opens on the first's, {eid!r} (as "
                         f"{trigger.get('id')!r}); then a person chooses the start event whose "
                         f"path it takes (eng.decide(instance, {eid!r})); each start event "
                         "passes as a milestone")
    ctx.p.throw(eid, node.get("name"))
    ctx.alternatives.setdefault(scope, []).append(eid)
    return True


def on_event_subprocess(ctx: Context, node: etree._Element) -> bool:
    """In design-review mode, a boundary event attached to an event subprocess: a milestone
    nothing reaches (True: read here)."""
    host = ctx.by_id.get((node.get("attachedToRef") or "").rpartition(":")[2])
    if not ctx.as_drawn or local(node) != "boundaryEvent" or host is None or \
            host.get("triggeredByEvent") != "true":
        return False
    eid = node.get("id", "")
    ctx.p.throw(eid, node.get("name"))
    ctx.assume(node, f"boundaryEvent {eid!r} is attached to {host.get('id')!r}, an event "
                     "subprocess, which has no border here: it is not armed; it passes as a "
                     "milestone that nothing reaches, and the path after it is not run")
    return True
