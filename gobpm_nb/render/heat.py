"""A population's tokens drawn on its process: the heat map of a population dashboard.

Each element is shaded by how many tokens stand on it **now** (at the dashboard's clock),
on a fixed scale (:data:`SHADES`: 1, 2-4, 5-9, 10-19, 20-49, 50 or more), and carries a badge
with that count. :func:`heat_marks` gives the marks the BPMN view draws
(``widgets/src/bpmn.js``: ``fill`` shades the shape, the ``heat`` badge writes the count),
:func:`heat_dot` the same picture in Graphviz (the fallback where no diagram can be had, and
the static drawing of a saved notebook), :func:`heat_legend` the legend of both.
Deterministic: definition order; everything is text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..observe.projections import definition_graph
from .dot import BACKGROUND, INK, MUTED, _attrs, _header, lines, q
from .marks import colours

#: (fewest tokens, shade, ink of the count on it), lightest first.
SHADES: tuple[tuple[int, str, str], ...] = (
    (1, "#fff3bf", "#212529"),
    (2, "#ffd8a8", "#212529"),
    (5, "#ffa94d", "#212529"),
    (10, "#f76707", "#ffffff"),
    (20, "#d9480f", "#ffffff"),
    (50, "#862e0b", "#ffffff"),
)
#: What the heat map counts, in the legend and the status line.
MEASURE = "tokens standing here now"


def shade(count: int) -> tuple[str, str]:
    """The shade of an element with ``count`` tokens (>= 1) and the ink of its count."""
    fill, ink = SHADES[0][1], SHADES[0][2]
    for least, colour, text in SHADES:
        if count >= least:
            fill, ink = colour, text
    return fill, ink


def heat_legend() -> list[list[str]]:
    """The shades as ``[label, colour]`` pairs; the first says what is counted."""
    out = []
    for i, (least, colour, _) in enumerate(SHADES):
        upper = SHADES[i + 1][0] - 1 if i + 1 < len(SHADES) else None
        span = str(least) if upper == least else \
            f"{least}-{upper}" if upper is not None else f"{least} or more"
        out.append([f"{MEASURE}: {span}" if i == 0 else span, colour])
    return out


def _noun(n: int) -> str:
    return f"{n} token" if n == 1 else f"{n} tokens"


def heat_marks(heat: Mapping[str, int], labels: Mapping[str, str], status: str
               ) -> dict[str, Any]:
    """The marks of a heat map: one element per id of ``heat`` (element id -> tokens),
    shaded, with its count in a badge; ``labels``: element id -> its name."""
    elements = []
    for node, count in heat.items():
        fill, ink = shade(count)
        tip = f"{labels.get(node, node)}: {_noun(count)} standing here now"
        elements.append({"id": node, "classes": ["gobpm-heat"], "fill": fill, "tip": tip,
                         "badges": [{"kind": "heat", "text": str(count), "fill": fill,
                                     "ink": ink, "tip": tip}]})
    return {"status": status, "instance": "", "residency": "", "elements": elements,
            "flows": [], "choices": [], "colours": colours()}


def heat_dot(definition: Any, heat: Mapping[str, int], title: Sequence[str]) -> str:
    """The heat map in DOT: the process's nodes (boundary events beside their activity),
    shaded and labelled with their counts; ``title``: the lines above it."""
    nodes, flows = definition_graph(definition)
    out = _header(definition.id, "LR", lines(*title))
    for n in nodes:
        count = heat.get(n.id, 0)
        label = lines(n.label, _noun(count) if count else "")
        fill, ink = shade(count) if count else (BACKGROUND, INK)
        pairs = [("label", label), ("style", q("filled,rounded" if _boxed(n.kind) else
                                              "filled")),
                 ("fillcolor", q(fill)), ("fontcolor", q(ink)),
                 ("color", q(INK if count else MUTED)), ("shape", _shape(n.kind))]
        if _event(n.kind):  # a small circle, its name (and count) beside it
            pairs[0] = ("label", q(str(count) if count else ""))
            pairs += [("xlabel", lines(n.label)), ("width", "0.35"), ("fixedsize", "true")]
        out.append(f"  {q(n.id)} {_attrs(pairs)}")
        if n.attached_to is not None:
            out.append(f"  {q(n.attached_to)} -> {q(n.id)} [style=dashed, arrowhead=none]")
    out.extend(f"  {q(f.source)} -> {q(f.target)}" for f in flows)
    out.append("}")
    return "\n".join(out)


def _boxed(kind: str) -> bool:
    return not ("gateway" in kind or _event(kind))


def _event(kind: str) -> bool:
    return kind in ("start", "end") or any(w in kind for w in ("_start", "_end", "catch",
                                                                "throw", "boundary"))


def _shape(kind: str) -> str:
    if "gateway" in kind:
        return "diamond"
    return "circle" if _event(kind) else "box"
