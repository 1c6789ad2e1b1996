"""The decisions waiting for a person, as the dashboard shows them.

Read through ``engine.decisions(instance)`` and ``engine.adhocs(instance)`` only
(``Engine.decisions``: each track waiting at a decision gateway, with the flows it may take;
``Engine.adhocs``: each ad-hoc subprocess waiting for a person, with its activatable
elements) and the instance's definition for the names of the gateway and of the nodes the
flows lead to. A flow is labelled by its name where the
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


def activation_rows(engine: Any, instance: str) -> list[dict[str, Any]]:
    """The ad-hoc subprocesses of ``instance`` waiting for a person's activation
    (``Engine.adhocs``; none for ``""``): ``{instance, track, adhoc, label, elements:
    [{element, label}, ...]}`` each, the elements in the order they were added."""
    if not instance:
        return []
    views = engine.adhocs(instance)
    if not views:
        return []
    definition = engine.instance(instance).definition
    return [{"instance": v.instance, "track": v.track, "adhoc": v.adhoc,
             "label": _label(definition, v.adhoc),
             "elements": [{"element": e, "label": _label(definition, e)} for e in v.elements]}
            for v in views]


def decisions_state(engine: Any, instance: str, names: Names | None = None
                    ) -> dict[str, Any]:
    """The dashboard's ``decisions`` trait: ``total`` (a person's choices waiting in the
    whole engine: decisions and ad-hoc activations), ``rows`` (the decisions of
    ``instance``, :func:`decision_rows`) and ``activations`` (its ad-hoc subprocesses,
    :func:`activation_rows`)."""
    return {"total": len(engine.decisions()) + len(engine.adhocs()),
            "rows": decision_rows(engine, instance, names),
            "activations": activation_rows(engine, instance)}
