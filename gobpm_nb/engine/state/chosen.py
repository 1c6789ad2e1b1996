"""Which flows a person's choice at a decision names (``Engine.decide``): one flow, or at an
inclusive gateway one or more; each by its id or by the node it leads to. What cannot be
meant is an EngineError naming it, raised before anything changes."""

from __future__ import annotations

from typing import Any

from ...errors import EngineError
from .records import DecisionView


def chosen(views: list[DecisionView], flow: Any, instance: str
           ) -> tuple[DecisionView, list[str]]:
    """The decision ``flow`` (a name, or a list of names) is a choice at, among ``views``
    (the instance's decisions, not empty), and the flow ids it takes, in the gateway's
    order."""
    several = isinstance(flow, (list, tuple))
    names = list(flow) if several else [flow]
    if several and not names:
        raise EngineError(f"decide({instance!r}): an empty list takes no flow; name one or "
                          "more")
    for name in names:
        if not isinstance(name, str):
            raise EngineError(f"decide({instance!r}): {name!r} is not a flow (its id, or "
                              "the id of the node it leads to)")
    meant = [[v for v in views if _flow_of(v, name) is not None] for name in names]
    for name, where in zip(names, meant, strict=True):
        if not where:
            offered = list(dict.fromkeys(f for v in views for f, _ in v.flows))
            raise EngineError(f"{name!r} is not a flow of the decision(s) instance "
                              f"{instance!r} waits at; its flows: {', '.join(offered)}")
    common = [v for v in meant[0] if all(v in where for where in meant[1:])]
    said = ", ".join(map(repr, names))
    if not common:
        raise EngineError(f"{said} do not leave one decision of instance {instance!r}")
    if len(common) > 1:
        raise EngineError(f"{said} {'leave' if len(names) > 1 else 'leaves'} decisions on "
                          f"tracks {', '.join(v.track for v in common)} of instance "
                          f"{instance!r}: give track=")
    view = common[0]
    if several and not view.several:
        raise EngineError(f"decision {view.gateway!r} of instance {instance!r} takes one "
                          f"flow (an exclusive gateway): give one, not a list")
    ids = [_flow_of(view, name) for name in names]
    for i, fid in enumerate(ids):
        if fid in ids[:i]:
            raise EngineError(f"flow {fid!r} is given twice for decision {view.gateway!r} "
                              f"of instance {instance!r}")
    return view, [f for f, _ in view.flows if f in ids]


def _flow_of(view: DecisionView, name: str) -> str | None:
    """The flow of ``view`` that ``name`` names: its id, else the one flow into node
    ``name``."""
    targets = [t for _, t in view.flows]
    for f, target in view.flows:
        if f == name or (target == name and targets.count(name) == 1):
            return f
    return None


__all__ = ["chosen"]
