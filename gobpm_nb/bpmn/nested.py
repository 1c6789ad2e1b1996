"""Subprocesses drawn expanded: each scope laid out on its own, from the inside out.

A scope (the process, or a subprocess) is laid out by :func:`.layout.layout` over the elements
directly in it and the flows between them; a subprocess inside it takes part as one node,
as large as its own drawing plus a margin (room for its label at the top). Event
subprocesses have no flows: they sit in a row below the rest of their scope. Then each
subprocess's drawing is moved into its shape. Deterministic like the layout itself: every
list is in the process's own order.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import elements as el
from .layout import SIZES, X0, Y0, Box, Layout, Point, layout
from .scopes import SCOPES, children_of, scope_of

PAD_X, PAD_TOP, PAD_BOTTOM = 30, 40, 30  # the margin inside an expanded subprocess
BAND_GAP, EVENT_GAP = 50, 40  # above the row of event subprocesses, and between them

Flows = list[tuple[str, str, str]]  # (flow id, source, target)


def nested_layout(elements: list[el.Element], flows: Flows,
                  shape_of: Callable[[el.Element], str]) -> Layout:
    """Bounds of every element (each inside its subprocess's) and waypoints of every flow
    between two elements of one scope; ``shape_of`` names an element's shape kind."""
    kids = children_of(elements)
    scope = scope_of(elements)
    by_scope: dict[str | None, Flows] = {}
    for fid, source, target in flows:
        by_scope.setdefault(scope.get(source), []).append((fid, source, target))
    attached = {e.id: e.attached_to for e in elements if isinstance(e, el.Boundary)}
    return _scope(None, kids, by_scope, attached, shape_of)


def _scope(sid: str | None, kids: dict[str | None, list[el.Element]],
           flows: dict[str | None, Flows], attached: dict[str, str],
           shape_of: Callable[[el.Element], str]) -> Layout:
    """The drawing of scope ``sid`` and everything inside it, at the layout's origin."""
    members = kids.get(sid, [])
    inner = {e.id: _scope(e.id, kids, flows, attached, shape_of)
             for e in members if isinstance(e, SCOPES)}
    sizes = {k: size_of(v) for k, v in inner.items()}
    main = [e for e in members if not isinstance(e, el.EventSubProcess)]
    base = layout([(e.id, shape_of(e)) for e in main], flows.get(sid, []),
                  {e.id: attached[e.id] for e in main if e.id in attached}, sizes)
    bounds, waypoints = dict(base.bounds), dict(base.waypoints)
    x, y = X0, Y0
    if bounds:
        x, _, _, bottom = extent(bounds, waypoints)
        y = bottom + BAND_GAP
    for e in members:
        if isinstance(e, el.EventSubProcess):
            w, h = sizes[e.id]
            bounds[e.id] = (x, y, w, h)
            x += w + EVENT_GAP
    for k, drawn in inner.items():
        if drawn.bounds:
            bx, by, _, _ = bounds[k]
            left, top, _, _ = extent(drawn.bounds, drawn.waypoints)
            _move(drawn, bx + PAD_X - left, by + PAD_TOP - top, bounds, waypoints)
    return Layout(bounds, waypoints)


def size_of(drawn: Layout) -> tuple[int, int]:
    """The size of an expanded subprocess around ``drawn``: a task's when it is empty."""
    w, h = SIZES["activity"]
    if not drawn.bounds:
        return w, h
    left, top, right, bottom = extent(drawn.bounds, drawn.waypoints)
    return max(w, right - left + 2 * PAD_X), max(h, bottom - top + PAD_TOP + PAD_BOTTOM)


def extent(bounds: dict[str, Box], waypoints: dict[str, list[Point]]
           ) -> tuple[int, int, int, int]:
    """Left, top, right, bottom of every shape and waypoint."""
    xs = [x for x, _, _, _ in bounds.values()] + [p[0] for ps in waypoints.values() for p in ps]
    ys = [y for _, y, _, _ in bounds.values()] + [p[1] for ps in waypoints.values() for p in ps]
    rights = [x + w for x, _, w, _ in bounds.values()] + xs
    bottoms = [y + h for _, y, _, h in bounds.values()] + ys
    return min(xs), min(ys), max(rights), max(bottoms)


def _move(drawn: Layout, dx: int, dy: int, bounds: dict[str, Box],
          waypoints: dict[str, list[Point]]) -> None:
    for k, (x, y, w, h) in drawn.bounds.items():
        bounds[k] = (x + dx, y + dy, w, h)
    for k, points in drawn.waypoints.items():
        waypoints[k] = [(x + dx, y + dy) for x, y in points]
