"""The flows an inclusive decision's rule draws (an exclusive one's: ``compute.drawn``).

Prosimos' rule for an OR gateway: each flow is taken on its own with its probability (its
weight, at most 1); when none is, one flow is drawn by weight. Each number is made as
``compute.drawn`` makes its one: the first 64 bits of the SHA-256 of a text naming the
engine's seed, the process, the gateway, the instance and n (the instance's count of draws
at that gateway, ``seq["draw:<gateway>"]``), over 2^64. An inclusive draw's texts add what
they are for, ``take/<flow id>`` for a flow's own draw and ``one`` for the draw by weight,
so no number is shared between flows, and adding a flow to a gateway changes none of the
others' numbers.
"""

from __future__ import annotations

import hashlib

from ...model import elements as el
from ...model.decisions import flow_named
from .run import Run


def drawn_flows(run: Run, node: el.Element, decision: el.Decision) -> list[el.Flow]:
    """The flows an inclusive decision's rule takes, in the gateway's order (module
    docstring): never none."""
    key = f"draw:{node.id}"
    n = run.seq[key] = run.seq.get(key, 0) + 1
    outs = run.defn.outgoing[node.id]
    weights = dict.fromkeys((f.id for f in outs), 0.0)
    for name, weight in decision.weights:
        flow = flow_named(list(outs), name)
        if flow is not None:
            weights[flow.id] += weight
    base = f"{run.core.seed}/{run.defn.id}/{node.id}/{run.id}/{n}"
    taken = [f for f in outs if unit(f"{base}/take/{f.id}") < weights[f.id]]
    if taken:
        return taken
    point = unit(f"{base}/one") * sum(weights.values())
    chosen = outs[-1]
    for f in outs:  # the walk of ``compute.drawn``
        if weights[f.id] > 0:
            chosen = f
            if point < weights[f.id]:
                break
            point -= weights[f.id]
    return [chosen]


def unit(text: str) -> float:
    """A number in [0, 1) made from ``text``: the same on every platform."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8]) / 2**64


__all__ = ["drawn_flows", "unit"]
