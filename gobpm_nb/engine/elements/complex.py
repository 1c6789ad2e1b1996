"""The complex gateway (BPMN 2.0.2 section 13.3.5): split as the inclusive gateway does; join
by its ``activation`` condition, then reset.

Waiting for start: arriving tokens park as at any join. Each time one arrives, the
activation condition is evaluated over the data with ``arrived`` set to the number of
tokens parked at the gateway (in its scope). When it first holds, the gateway fires once:
one token from each incoming flow that has one merges into a track that leaves by the
split (``compute.outgoing``). The incoming flows that had no token are remembered
(``Run.resets``, kept in the checkpoint): waiting for reset, a token arriving on one of
them is consumed at once (its track ends ``merged``, nothing fires); the reset ends when
each of them has had its token or no live token of the scope can reach it any more (the
inclusive join's rule, settled at quiet points too). Tokens that arrive on the other flows
meanwhile park for the next round, which begins when the reset ends. With no activation
condition the gateway joins as the inclusive gateway does (``inclusive``).
"""

from __future__ import annotations

from ...model import elements as el
from ...model.expr import Expr
from ...vocabulary import TERMINAL, WAITING
from ..runtime.compute import check, outgoing
from ..runtime.run import BUSY, Run
from ..runtime.tracks import spawn
from ..state.records import Track, Trigger, join_key, join_parts
from ..state.waits import JoinWait
from . import inclusive

Result = object

#: The name the activation condition reads the number of tokens waiting at the gateway by.
ARRIVED = "arrived"


def split(run: Run, node: el.ComplexGateway) -> Result:
    """Every flow whose condition holds; the default only when none does."""
    return outgoing(run, node, "no condition holds and there is no default flow")


def fire(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    assert isinstance(node, el.ComplexGateway)
    return split(run, node)


def enter(run: Run, tr: Track, node: el.ComplexGateway) -> Result:
    if len(run.defn.incoming[node.id]) <= 1:
        return split(run, node)
    if node.activation is None:
        return inclusive.enter(run, tr, node)  # type: ignore[arg-type]
    key = join_key(node.id, tr.scope)
    expected = run.resets.get(key)
    if expected is not None and tr.via in expected:  # waiting for reset: consumed
        expected.remove(tr.via)
        run.set_state(tr, "merged", {"state": "merged", "reset": True})
        settle(run, key)  # the reset may end, and the next round fire
        run.end_track(tr, "merged")
        return None
    run.joins.setdefault(key, {}).setdefault(tr.via or "", []).append(tr.id)
    tr.wait = JoinWait(node.id)
    tr.coro = None
    run.set_state(tr, WAITING, {"state": WAITING, "join": True})
    if not settle(run, key) and run.running == 0:
        run.core.on_quiet(run)
    return None


def settle(run: Run, key: str) -> bool:
    """End the reset of ``key`` if it may end, then fire the gateway if the tokens parked
    at it make the activation condition hold. True when it fired."""
    node_id, scope = join_parts(key)
    node = run.defn.nodes[node_id]
    assert isinstance(node, el.ComplexGateway)
    if node.activation is None:
        return inclusive.settle(run, key)
    if key in run.resets:
        if expecting(run, key, run.resets[key]):
            return False
        del run.resets[key]
        run.emit("gateway_reset", None, node_id, {})
    arrived = run.joins.get(key)
    if not arrived or not any(arrived.values()):
        return False
    if not activated(run, node, arrived):
        return False
    incoming = run.defn.incoming[node_id]
    merged = tuple(arrived[f.id].pop(0) for f in incoming if arrived.get(f.id))
    if not any(arrived.values()):
        del run.joins[key]
    run.resets[key] = [f.id for f in incoming
                       if f.id not in {run.tracks[t].via for t in merged}]
    for tid in merged:
        other = run.tracks[tid]
        other.wait = None
        run.set_state(other, "merged")
    child = run.new_track(node_id, merged, "join", scope=scope)
    spawn(run, child, Trigger("join", node_id, "node", child.id))
    if not expecting(run, key, run.resets[key]):
        del run.resets[key]  # nothing more can come: reset at once
    return True


def activated(run: Run, node: el.ComplexGateway, arrived: dict[str, list[str]]) -> bool:
    """The activation condition, read by one of the parked tracks (its data and locals)
    with ``arrived`` set to the number of tokens parked."""
    count = sum(len(ts) for ts in arrived.values())
    first = next(ts[0] for ts in arrived.values() if ts)
    held, run.at = run.at, run.tracks[first]
    try:
        expr = node.activation
        assert expr is not None
        return check(run, node.id, Counted(expr, count))
    finally:
        run.at = held


class Counted:
    """An activation condition with the count of arrived tokens over the data it reads."""

    __slots__ = ("expr", "count")

    def __init__(self, expr: Expr, count: int) -> None:
        self.expr = expr
        self.count = count

    @property
    def python(self) -> bool:
        return bool(self.expr.python)

    def describe(self) -> str:
        return str(self.expr.describe())

    def __call__(self, data: dict[str, object]) -> object:
        return self.expr({**data, ARRIVED: self.count})


def expecting(run: Run, key: str, flows: list[str]) -> bool:
    """Whether a token may still come on one of ``flows`` into the gateway of ``key``: a
    live token of its scope at a node upstream of one of them, or on one of them on its
    way in (the inclusive join's rule)."""
    if not flows:
        return False
    node, scope = join_parts(key)
    reach = run.defn.reach[node]
    upstream = set().union(*(reach[f] for f in flows))
    for t in run.tracks.values():
        if t.scope != scope or t.state in TERMINAL:
            continue
        if t.node in upstream:
            return True
        if t.node == node and t.state in BUSY and t.via in flows:
            return True
    return False


def settle_all(run: Run) -> bool:
    """At a quiet point: settle every waiting inclusive and complex join, and every complex
    gateway waiting for its reset, in the definition's order. True when one fired."""
    order = {n: i for i, n in enumerate(run.defn.reach)}
    keys = sorted({k for k in (*run.joins, *run.resets) if join_parts(k)[0] in order},
                  key=lambda k: (order[join_parts(k)[0]], k))
    fired = False
    for key in keys:
        if key not in run.joins and key not in run.resets:
            continue  # settled away by an earlier one
        node = run.defn.nodes[join_parts(key)[0]]
        if isinstance(node, el.ComplexGateway):
            fired = settle(run, key) or fired
        else:
            fired = inclusive.settle(run, key) or fired
    return fired
