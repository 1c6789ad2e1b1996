"""Checks of a decision gateway's rule (``Process.decide``), and how a rule names a flow."""

from __future__ import annotations

import math

from . import elements as el


def check_decision(e: el.Element, d: el.Decision, outs: list[el.Flow]) -> list[str]:
    """A decision's rule names each of the gateway's flows once (by id or target), with a
    finite weight of at least zero, the weights adding up to more than zero; at an
    inclusive gateway a weight is the flow's own probability, so at most 1."""
    p: list[str] = []
    if len(outs) < 2:
        p.append(f"decision {e.id!r} has {len(outs)} outgoing flow(s): nothing to decide")
    seen: set[str] = set()
    for name, weight in d.weights:
        flow = flow_named(outs, name)
        if flow is None:
            p.append(f"decision {e.id!r}: {name!r} is not one of its outgoing flows (give a "
                     f"flow id or the id of the node it leads to)")
        elif flow.id in seen:
            p.append(f"decision {e.id!r}: flow {flow.id!r} is given twice")
        else:
            seen.add(flow.id)
        if not math.isfinite(weight) or weight < 0:
            p.append(f"decision {e.id!r}: the weight of {name!r} must be a finite number of "
                     f"at least 0, got {weight!r}")
        elif weight > 1 and isinstance(e, el.InclusiveGateway):
            p.append(f"decision {e.id!r}: the weight of {name!r} is the probability that "
                     f"the inclusive gateway takes it, at most 1, got {weight!r}")
    if d.weights and not sum(w for _, w in d.weights if math.isfinite(w) and w > 0) > 0:
        p.append(f"decision {e.id!r}: its weights add up to 0")
    return p


def flow_named(outs: list[el.Flow], name: str) -> el.Flow | None:
    """The outgoing flow ``name`` names: by its id, else the one flow into node ``name``."""
    for f in outs:
        if f.id == name:
            return f
    into = [f for f in outs if f.target == name]
    return into[0] if len(into) == 1 else None
