"""A readable left-to-right diagram for a process that has none: a simple layered layout.

Pure and deterministic (lists in the process's own order; no sets iterated, no clock, no
randomness):

1. loops are broken by a depth-first walk from the start (flows in document order): a flow
   back to a node on the walk's stack is a back edge;
2. each node's column is its longest path from a source over the remaining flows; a flow that
   leaves a boundary event counts from the boundary's host;
3. rows, column by column: a node wants the highest row of its predecessors (one lower when
   it follows a boundary event), nodes take rows in (wanted row, walk order), never sharing;
   a column is as wide as its widest node and a row as tall as its tallest (an expanded
   subprocess; see ``nested.py``), every node centred in its cell;
4. boundary events sit on their host's bottom edge, from the right; flows are orthogonal
   polylines (a back edge runs under both of its ends).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

Box = tuple[int, int, int, int]  # x, y, width, height
Point = tuple[int, int]

SIZES = {"event": (36, 36), "gateway": (50, 50), "activity": (100, 80)}
X0, Y0, COLUMN, ROW = 150, 80, 170, 140
CELL_W, CELL_H = 100, 80  # the least cell; the gaps between cells are COLUMN - CELL_W, ...


@dataclass(frozen=True)
class Layout:
    bounds: dict[str, Box]  # node id -> its shape's bounds (boundary events included)
    waypoints: dict[str, list[Point]]  # flow id -> its polyline


def layout(nodes: list[tuple[str, str]], flows: list[tuple[str, str, str]],
           attached: dict[str, str], sizes: dict[str, tuple[int, int]] | None = None
           ) -> Layout:
    """Lay out ``nodes`` (id, shape: event|gateway|activity) joined by ``flows`` (id, source,
    target); ``attached`` maps each boundary event to its host; ``sizes`` gives a node a size
    of its own (an expanded subprocess) instead of its shape's."""
    size = {n: SIZES[kind] for n, kind in nodes} | (sizes or {})
    hosts = {n for n, _ in nodes if n not in attached}
    attached = {b: h for b, h in attached.items() if h in hosts}  # an orphan is drawn alone
    main = [n for n, _ in nodes if n not in attached]
    succ: dict[str, list[tuple[str, bool]]] = {n: [] for n in main}
    for _, source, target in flows:
        s, t = attached.get(source, source), attached.get(target, target)
        if s in succ and t in succ and s != t:
            succ[s].append((t, source in attached))
    order, back = _walk(main, succ)
    rank = _ranks(main, succ, back)
    row = _rows(main, succ, back, rank, order)
    left = _starts(main, rank, {n: size[n][0] for n in main}, X0, CELL_W, COLUMN - CELL_W)
    top = _starts(main, row, {n: size[n][1] for n in main}, Y0, CELL_H, ROW - CELL_H)
    bounds: dict[str, Box] = {}
    for n in main:
        w, h = size[n]
        x, cell_w = left[rank[n]]
        y, cell_h = top[row[n]]
        cx, cy = x + cell_w // 2, y + cell_h // 2
        bounds[n] = (cx - w // 2, cy - h // 2, w, h)
    place_boundaries(bounds, [(b, attached[b]) for b, _ in nodes if b in attached])
    return Layout(bounds, route_all(bounds, flows, attached))


def _starts(main: list[str], index: dict[str, int], extent: dict[str, int], origin: int,
            least: int, gap: int) -> dict[int, tuple[int, int]]:
    """Each column (or row) -> where it starts and how wide (tall) it is: its largest node,
    at least ``least``; ``gap`` between neighbours."""
    largest: dict[int, int] = {}
    for n in main:
        largest[index[n]] = max(largest.get(index[n], least), extent[n])
    out: dict[int, tuple[int, int]] = {}
    at = origin
    for i in range(max(largest, default=-1) + 1):
        out[i] = (at, largest.get(i, least))
        at += out[i][1] + gap
    return out


def _walk(main: list[str], succ: dict[str, list[tuple[str, bool]]]
          ) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """Depth-first preorder from the sources (then any node left), and the back edges."""
    has_in = {t for n in main for t, _ in succ[n]}
    roots = [n for n in main if n not in has_in] + main
    order: dict[str, int] = {}
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        order[root] = len(order)
        stack = [(root, iter(succ[root]))]
        while stack:
            node, todo = stack[-1]
            for target, _ in todo:
                if state.get(target) == 1:
                    back.add((node, target))
                elif target not in state:
                    state[target] = 1
                    order[target] = len(order)
                    stack.append((target, iter(succ[target])))
                    break
            else:
                state[node] = 2
                stack.pop()
    return order, back


def _ranks(main: list[str], succ: dict[str, list[tuple[str, bool]]],
           back: set[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a source, over the forward edges (Kahn's order, list-driven)."""
    indegree = {n: 0 for n in main}
    for n in main:
        for t, _ in succ[n]:
            if (n, t) not in back:
                indegree[t] += 1
    rank = {n: 0 for n in main}
    ready = deque(n for n in main if indegree[n] == 0)
    while ready:
        n = ready.popleft()
        for t, _ in succ[n]:
            if (n, t) in back:
                continue
            rank[t] = max(rank[t], rank[n] + 1)
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return rank


def _rows(main: list[str], succ: dict[str, list[tuple[str, bool]]],
          back: set[tuple[str, str]], rank: dict[str, int], order: dict[str, int]
          ) -> dict[str, int]:
    wants: dict[str, list[int]] = {n: [] for n in main}
    row: dict[str, int] = {}
    columns: dict[int, list[str]] = {}
    for n in main:
        columns.setdefault(rank[n], []).append(n)
    for r in sorted(columns):
        column = sorted(columns[r], key=lambda n: (min(wants[n], default=0), order[n]))
        used = -1
        for n in column:
            row[n] = max(min(wants[n], default=0), used + 1)
            used = row[n]
            for t, via_boundary in succ[n]:
                if (n, t) not in back:
                    wants[t].append(row[n] + (1 if via_boundary else 0))
    return row


def place_boundaries(bounds: dict[str, Box], boundaries: list[tuple[str, str]]) -> None:
    """Each boundary event on its host's bottom edge, the first at the right."""
    count: dict[str, int] = {}
    for b, host in boundaries:
        if host not in bounds:
            continue
        x, y, w, h = bounds[host]
        k = count.get(host, 0)
        count[host] = k + 1
        cx = x + w - 22 - 44 * k
        bounds[b] = (cx - 18, y + h - 18, 36, 36)


def route_all(bounds: dict[str, Box], flows: list[tuple[str, str, str]],
              attached: dict[str, str]) -> dict[str, list[Point]]:
    return {fid: route(bounds[s], bounds[t], s in attached)
            for fid, s, t in flows if s in bounds and t in bounds}


def route(src: Box, tgt: Box, from_boundary: bool = False) -> list[Point]:
    """An orthogonal polyline from ``src`` to ``tgt``: right side to left side when the
    target lies to the right, under both shapes otherwise; a boundary event leaves from its
    bottom."""
    sx, sy, sw, sh = src
    tx, ty, tw, th = tgt
    scx, scy, tcx, tcy = sx + sw // 2, sy + sh // 2, tx + tw // 2, ty + th // 2
    if from_boundary:
        if tx > scx and tcy > sy + sh:
            return [(scx, sy + sh), (scx, tcy), (tx, tcy)]
        low = max(sy + sh, ty + th) + 30
        return [(scx, sy + sh), (scx, low), (tcx, low), (tcx, ty + th)]
    if tx >= sx + sw + 10:
        if scy == tcy:
            return [(sx + sw, scy), (tx, tcy)]
        mid = (sx + sw + tx) // 2
        return [(sx + sw, scy), (mid, scy), (mid, tcy), (tx, tcy)]
    low = max(sy + sh, ty + th) + 30
    return [(scx, sy + sh), (scx, low), (tcx, low), (tcx, ty + th)]
