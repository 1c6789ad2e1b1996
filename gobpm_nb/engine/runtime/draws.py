"""The flows a decision's rule draws: an exclusive one's by weight (``drawn``); an inclusive
one's by Prosimos' rule (``drawn_flows``).

An exclusive decision's n-th draw at a gateway is a number in [0, 1) made from the SHA-256 of
the engine's seed, the process, the gateway, the instance and n (``kernel.unit``): a run is
reproducible on every platform, and a draw elsewhere (another gateway, another instance)
never shifts it. n is kept with the instance's id counters (``seq["draw:<gateway>"]``), in
its checkpoint.

Prosimos' rule for an OR gateway: each flow is taken on its own with its probability (its
weight, at most 1); when none is, one flow is drawn by weight. Each number is made as
``drawn`` makes its one: the first 64 bits of the SHA-256 of a text naming the
engine's seed, the process, the gateway, the instance and n (the instance's count of draws
at that gateway, ``seq["draw:<gateway>"]``), over 2^64. An inclusive draw's texts add what
they are for, ``take/<flow id>`` for a flow's own draw and ``one`` for the draw by weight,
so no number is shared between flows, and adding a flow to a gateway changes none of the
others' numbers.
"""

from __future__ import annotations

from ...kernel import unit
from ...model import elements as el
from ...model.decisions import flow_named
from .run import Run


def _weighed(run: Run, node: el.Element, decision: el.Decision
             ) -> tuple[list[object], tuple[el.Flow, ...], dict[str, float]]:
    """The parts naming this draw (seed, process, gateway, instance, n: n counted up here),
    the gateway's flows and each flow's weight."""
    key = f"draw:{node.id}"
    n = run.seq[key] = run.seq.get(key, 0) + 1
    outs = run.defn.outgoing[node.id]
    weights = dict.fromkeys((f.id for f in outs), 0.0)
    for name, weight in decision.weights:
        flow = flow_named(list(outs), name)
        if flow is not None:
            weights[flow.id] += weight
    return [run.core.seed, run.defn.id, node.id, run.id, n], outs, weights


def _by_weight(outs: tuple[el.Flow, ...], weights: dict[str, float], u: float) -> el.Flow:
    """The flow a number ``u`` in [0, 1) falls on, flows laid end to end by weight."""
    point = u * sum(weights.values())
    chosen = outs[-1]
    for f in outs:
        if weights[f.id] > 0:
            chosen = f
            if point < weights[f.id]:
                break
            point -= weights[f.id]
    return chosen


def drawn(run: Run, node: el.Element, decision: el.Decision) -> el.Flow:
    """The flow an exclusive decision's rule draws, by weight (module docstring)."""
    parts, outs, weights = _weighed(run, node, decision)
    return _by_weight(outs, weights, unit(*parts))


def drawn_flows(run: Run, node: el.Element, decision: el.Decision) -> list[el.Flow]:
    """The flows an inclusive decision's rule takes, in the gateway's order (module
    docstring): never none."""
    parts, outs, weights = _weighed(run, node, decision)
    taken = [f for f in outs if unit(*parts, "take", f.id) < weights[f.id]]
    return taken or [_by_weight(outs, weights, unit(*parts, "one"))]


__all__ = ["drawn", "drawn_flows"]
