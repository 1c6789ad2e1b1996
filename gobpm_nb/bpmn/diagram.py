"""Diagram interchange (BPMN DI) for what the writer adds: shapes and edges from the layout.

A new file gets one ``BPMNDiagram`` whose plane shows the whole process, every subprocess
expanded (``isExpanded="true"``) around what it holds (``nested.py``). A file read earlier
keeps its diagram untouched; elements added since are laid out the same way and placed in a
band below everything already drawn, their flows routed from the shapes' actual bounds.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Process
from ..model import elements as el
from ..model.placeholders import Unsupported
from .layout import Box, Layout, place_boundaries, route
from .names import BPMNDI, DC, DI, children, di, local
from .nested import nested_layout
from .scopes import SCOPES
from .xmllib import etree

GATEWAYS = (el.ExclusiveGateway, el.ParallelGateway, el.EventGateway, el.InclusiveGateway,
            el.ComplexGateway)


def shape_of(e: el.Element) -> str:
    """``activity``, ``gateway`` or ``event``: what size of shape an element gets."""
    if isinstance(e, GATEWAYS) or (isinstance(e, Unsupported) and
                                   e.tag.endswith("Gateway")):
        return "gateway"
    if e.activity and not isinstance(e, el.Boundary):
        return "activity"
    return "event"


def process_layout(p: Process, flow_ids: dict[str, str]) -> Layout:
    """The layered layout of the whole process, subprocesses expanded, flows named by their
    XML ids."""
    links = [(f"{e.id}->{e.handler}", e.id, e.handler) for e in p.elements
             if isinstance(e, el.CompensationBoundary)]  # a handler right of its boundary
    return nested_layout(p.elements, [(flow_ids.get(f.id, f.id), f.source, f.target)
                                      for f in p.flows] +
                         [(flow_ids.get(k, k), s, t) for k, s, t in links], shape_of)


Fresh = Callable[[str], str]  # a new id, unique in the document, from a wanted one


def new_diagram(root: etree._Element, p: Process, flow_ids: dict[str, str],
                fresh: Fresh) -> None:
    """A diagram of the whole of ``p``: a shape per node, an edge per flow."""
    diagram = etree.SubElement(root, di(BPMNDI, "BPMNDiagram"),
                               id=fresh(f"BPMNDiagram_{p.id}"))
    plane = etree.SubElement(diagram, di(BPMNDI, "BPMNPlane"), id=fresh(f"BPMNPlane_{p.id}"),
                             bpmnElement=p.id)
    drawn = process_layout(p, flow_ids)
    places = label_places(p.elements)
    for e in p.elements:  # shapes before edges, as modelers write them
        if e.id in drawn.bounds:
            plane.append(_shape(e, drawn.bounds[e.id], fresh, places.get(e.id)))
    for f in p.flows:
        fid = flow_ids.get(f.id, f.id)
        if fid in drawn.waypoints:
            _edge(plane, fid, drawn.waypoints[fid], fresh)
    for e in p.elements:  # a compensation boundary's association to its handler
        aid = flow_ids.get(f"{e.id}->{getattr(e, 'handler', '')}")
        if isinstance(e, el.CompensationBoundary) and aid in drawn.waypoints:
            _edge(plane, aid, drawn.waypoints[aid], fresh)


def add_to_diagram(root: etree._Element, p: Process, elements: list[el.Element],
                   flows: list[el.Flow], flow_ids: dict[str, str], fresh: Fresh) -> None:
    """Shapes and edges for what ``p`` gained, in the plane that shows ``p``; nothing when
    the file has no diagram of it."""
    plane, bounds = _plane_of(root, p)
    if plane is None:
        return
    drawn = process_layout(p, flow_ids)
    new = [e for e in elements if not isinstance(e, el.Boundary) and e.id in drawn.bounds]
    if new:
        bottom = max((y + h for _, y, _, h in bounds.values()), default=0)
        top = min(drawn.bounds[e.id][1] for e in new)
        for e in new:
            x, y, w, h = drawn.bounds[e.id]
            bounds[e.id] = (x, y - top + bottom + 60, w, h)
    place_boundaries(bounds, [(e.id, e.attached_to) for e in elements
                              if isinstance(e, el.Boundary)])
    places = label_places(elements)
    at = next((i for i, c in enumerate(plane) if local(c) == "BPMNEdge"), len(plane))
    for e in elements:  # shapes before edges, as modelers write them
        if e.id in bounds:
            plane.insert(at, _shape(e, bounds[e.id], fresh, places.get(e.id)))
            at += 1
    boundary = {e.id for e in p.elements if isinstance(e, el.Boundary)}
    for f in flows:
        if f.source in bounds and f.target in bounds:
            _edge(plane, flow_ids[f.id], route(bounds[f.source], bounds[f.target],
                                               f.source in boundary), fresh)


def _plane_of(root: etree._Element, p: Process
              ) -> tuple[etree._Element | None, dict[str, Box]]:
    """The plane that draws ``p`` (the one with most of its shapes), and the bounds of
    every shape in it."""
    ids = {e.id for e in p.elements} | {p.id}
    best: etree._Element | None = None
    best_count = 0
    for diagram in children(root, BPMNDI, "BPMNDiagram"):
        for plane in children(diagram, BPMNDI, "BPMNPlane"):
            count = sum(1 for s in plane if s.get("bpmnElement") in ids) + \
                (1 if plane.get("bpmnElement") in ids else 0)
            if count > best_count:
                best, best_count = plane, count
    bounds: dict[str, Box] = {}
    if best is not None:
        for shape in children(best, BPMNDI, "BPMNShape"):
            box = shape.find(di(DC, "Bounds"))
            if box is not None and shape.get("bpmnElement"):
                x, y, w, h = (int(float(box.get(k) or 0)) for k in ("x", "y", "width", "height"))
                bounds[shape.get("bpmnElement", "")] = (x, y, w, h)
    return best, bounds


def label_places(elements: list[el.Element]) -> dict[str, tuple[int, int]]:
    """Each boundary event -> (its place on its host, how many its host has); 0 is the first,
    drawn rightmost (:func:`.layout.place_boundaries`)."""
    index: dict[str, int] = {}
    count: dict[str, int] = {}
    for e in elements:
        if isinstance(e, el.Boundary):
            index[e.id] = count.get(e.attached_to, 0)
            count[e.attached_to] = index[e.id] + 1
    return {e.id: (index[e.id], count[e.attached_to]) for e in elements
            if isinstance(e, el.Boundary)}


LABEL_W, LABEL_H, LABEL_ROW = 90, 14, 16  # a boundary event's name box, and between rows


def label_box(box: Box, place: tuple[int, int]) -> Box | None:
    """Where the name of a boundary event goes when its host has more than one: neighbours
    sit 44 px apart, closer than a name is wide, so the rightmost one's name starts at its
    event's left edge and the others' names end at their event's right edge (one row down
    for each one after the second). None: the viewer's own place (under the event)."""
    k, n = place
    if n < 2:
        return None
    x, y, w, h = box
    if k == 0:
        return (x, y + h + 4, LABEL_W, LABEL_H)
    return (x + w - LABEL_W, y + h + 4 + (k - 1) * LABEL_ROW, LABEL_W, LABEL_H)


def _shape(e: el.Element, box: Box, fresh: Fresh,
           place: tuple[int, int] | None = None) -> etree._Element:
    shape = etree.Element(di(BPMNDI, "BPMNShape"), id=fresh(f"{e.id}_di"), bpmnElement=e.id)
    if isinstance(e, el.ExclusiveGateway):
        shape.set("isMarkerVisible", "true")
    if isinstance(e, SCOPES):
        shape.set("isExpanded", "true")
    x, y, w, h = box
    etree.SubElement(shape, di(DC, "Bounds"), x=str(x), y=str(y), width=str(w),
                     height=str(h))
    named = label_box(box, place) if place is not None else None
    if named is not None:
        label = etree.SubElement(shape, di(BPMNDI, "BPMNLabel"))
        lx, ly, lw, lh = named
        etree.SubElement(label, di(DC, "Bounds"), x=str(lx), y=str(ly), width=str(lw),
                         height=str(lh))
    return shape


def _edge(plane: etree._Element, fid: str, points: list[tuple[int, int]],
          fresh: Fresh) -> None:
    edge = etree.SubElement(plane, di(BPMNDI, "BPMNEdge"), id=fresh(f"{fid}_di"),
                            bpmnElement=fid)
    for x, y in points:
        etree.SubElement(edge, di(DI, "waypoint"), x=str(x), y=str(y))

