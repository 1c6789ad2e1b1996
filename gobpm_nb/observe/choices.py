"""The decisions waiting for a person, as the dashboard shows them.

Read through ``engine.decisions(instance)`` only (``Engine.decisions``: each track waiting at a
decision gateway, with the flows it may take) and the instance's definition for the names of
the gateway and of the nodes the flows lead to. A flow is labelled by its name where the
process's file gives it one (``names(definition)``: flow id -> name; asked only when the
instance waits at a decision), else ``→ <target>`` (the target's name, or its id).

Plain dicts, in the order the engine lists them (the order the holds were armed; flows in the
gateway's order), so two runs of the same cells give equal rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: What a decision row's ``flows`` say about each flow: its id, the node it leads to, and
#: the words on its button.
FLOW_KEYS = ("flow", "target", "label")


def _label(definition: Any, node: str) -> str:
    element = definition.nodes.get(node) if definition is not None else None
    return str(element.label) if element is not None else node


def flow_label(definition: Any, flow: str, target: str,
               names: Mapping[str, str] | None = None) -> str:
    """The words on a flow's button: its name, else ``→`` and the name (or id) of its target."""
    name = (names or {}).get(flow)
    return name if name else f"→ {_label(definition, target)}"


Names = Callable[[Any], Mapping[str, str]]


def decision_rows(engine: Any, instance: str, names: Names | None = None
                  ) -> list[dict[str, Any]]:
    """The decisions instance ``instance`` waits at (none for ``""``): ``{instance, track,
    gateway, label, several, flows: [{flow, target, label}, ...]}`` each; ``several``: one or
    more flows may be taken (an inclusive gateway)."""
    if not instance:
        return []
    views = engine.decisions(instance)
    if not views:
        return []
    definition = engine.instance(instance).definition
    named = names(definition) if names is not None and definition is not None else {}
    return [{"instance": v.instance, "track": v.track, "gateway": v.gateway,
             "label": _label(definition, v.gateway), "several": bool(v.several),
             "flows": [{"flow": flow, "target": target,
                        "label": flow_label(definition, flow, target, named)}
                       for flow, target in v.flows]}
            for v in views]


def decisions_state(engine: Any, instance: str, names: Names | None = None
                    ) -> dict[str, Any]:
    """The dashboard's ``decisions`` trait: ``total`` (decisions waiting in the whole
    engine) and ``rows`` (those of ``instance``, :func:`decision_rows`)."""
    return {"total": len(engine.decisions()), "rows": decision_rows(engine, instance, names)}
