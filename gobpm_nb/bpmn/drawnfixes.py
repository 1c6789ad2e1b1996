"""Design-review mode: structural defects of a well-formed file, repaired as a reviewer
reading the diagram expects. As written each stays an error; in design-review mode each is
an ``as drawn:`` note naming the element and what the engine did:

- **a dangling flow** (its source or target is no element of the process: none, an empty
  reference, an element of another pool) and **a flow that crosses the border of a
  subprocess** are left out;
- **a boundary event attached to no activity of its scope** (an unknown or empty
  reference, an activity of another pool or of another scope) is left out with its flows;
  what only it led to is not reached;
- **flows into a start event, a boundary event or a link catch** are left out (what
  follows them runs from elsewhere if it can);
- **several link catches of one link in one scope**: the first in document order is the
  link's, each other one a milestone no throw reaches.

They are repaired on the graph read (``Process.leave_out``), before the assumptions made on
the whole graph (``asdrawn.finish``); the file keeps them: ``to_bpmn`` writes what was read.
"""

from __future__ import annotations

from ..model import elements as el
from .context import Context
from .names import local
from .xmllib import etree


def repair(ctx: Context) -> None:
    """Every repair of a structural defect, in order."""
    stray_boundaries(ctx)
    dangling_flows(ctx)
    crossing_flows(ctx)
    flows_into_starts(ctx)
    several_links(ctx)


def _node(ctx: Context, eid: str) -> etree._Element:
    """The file's element ``eid`` (a note's anchor, a flow's too), else the process."""
    found = ctx.by_id.get(eid)
    return found if found is not None else ctx.by_id.get(ctx.pid, ctx.root)


def _where(scope: str | None) -> str:
    return f"in subprocess {scope!r}" if scope is not None else "in the process"


def _missing(ctx: Context, ref: str) -> str:
    """What a reference to no element of this process leads to."""
    if not ref:
        return "an empty reference"
    pid = ctx.process_of.get(ref)
    if pid is not None and pid != ctx.pid:
        return f"{ref!r} is in process {pid!r}, another pool: only a message flow joins two " \
               "pools"
    return f"no element {ref!r}"


def dangling_flows(ctx: Context) -> None:
    """A flow whose source or target is no element of the process is left out."""
    p = ctx.process
    assert p is not None
    known = {e.id for e in p.elements}
    for f in p.flows:
        missing = [r for r in dict.fromkeys((f.source, f.target)) if r not in known]
        if not missing:
            continue
        p.leave_out(f.id)
        said = "; ".join(_missing(ctx, r) for r in missing)
        ctx.assume(_node(ctx, f.id),
                   f"sequence flow {f.id!r} is dangling ({said}): it is left out")


def crossing_flows(ctx: Context) -> None:
    """A flow that joins an element inside a subprocess to one outside it is left out."""
    p = ctx.process
    assert p is not None
    within = {e.id: e.within for e in p.elements}
    for f in p.flows:
        if within[f.source] == within[f.target]:
            continue
        p.leave_out(f.id)
        ctx.assume(_node(ctx, f.id),
                   f"sequence flow {f.id!r} crosses the border of a subprocess ({f.source!r} "
                   f"is {_where(within[f.source])}, {f.target!r} is "
                   f"{_where(within[f.target])}): it is left out (only the subprocess itself "
                   "joins its inside to what is around it)")


def stray_boundaries(ctx: Context) -> None:
    """A boundary event attached to no activity of its own scope is left out, with its
    flows: what only it led to is not reached."""
    p = ctx.process
    assert p is not None
    nodes = {e.id: e for e in p.elements}
    for e in p.elements:
        if not isinstance(e, el.Boundary):
            continue
        host = nodes.get(e.attached_to)
        if host is not None and not host.activity:
            continue  # attached to what is not an activity: refused as written
        if host is None:
            why = f"is attached to {_missing(ctx, e.attached_to)}"
        elif host.within != e.within:
            why = f"is {_where(e.within)} but {e.attached_to!r} is {_where(host.within)}"
        else:
            continue
        flows = [f for f in p.flows if e.id in (f.source, f.target)]
        ctx.cut.update(f.target for f in flows if f.source == e.id)
        p.leave_out(e.id, *(f.id for f in flows))
        node = _node(ctx, e.id)
        ctx.assume(node, f"{local(node)} {e.id!r} {why}: it is left out, with its flows (what "
                         "only it leads to is not reached)")


def flows_into_starts(ctx: Context) -> None:
    """Flows into a start event, a boundary event or a link catch are left out."""
    p = ctx.process
    assert p is not None
    for e in p.elements:
        if not isinstance(e, (el.StartEvent, el.Boundary, el.LinkCatch)):
            continue
        into = [f.id for f in p.flows if f.target == e.id]
        if not into:
            continue
        p.leave_out(*into)
        node = _node(ctx, e.id)
        what = "a start event begins its scope" if isinstance(e, el.StartEvent) else \
            "a link catch is entered only by its link's throw" if isinstance(e, el.LinkCatch) \
            else "a boundary event is entered only by its activity's trigger"
        ctx.assume(node, f"{local(node)} {e.id!r} has incoming flows ({_listed(into)}): "
                         f"they are left out ({what})")


def several_links(ctx: Context) -> None:
    """Of several link catches of one link in one scope, the first in document order is the
    link's; each other one is a milestone no throw reaches."""
    p = ctx.process
    assert p is not None
    seen: dict[tuple[str | None, str], str] = {}
    for e in p.elements:
        if not isinstance(e, el.LinkCatch):
            continue
        first = seen.setdefault((e.within, e.link), e.id)
        if first == e.id:
            continue
        p.leave_out(e.id)
        (p if e.within is None else p.scope(e.within)).throw(e.id, e.name)
        ctx.assume(_node(ctx, e.id), f"link {e.link!r} has another catch event in this scope, "
                                     f"{first!r}, first in the file: a throw goes there; "
                                     f"{e.id!r} passes as a milestone no throw reaches")


def _listed(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
