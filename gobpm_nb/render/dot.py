"""DOT text for the lineage and process views, built from projections.

Deterministic: nodes and edges come out in track-id or definition order, attributes in a
fixed order, so the same engine state always gives the same bytes. Safe: every name, id and
value goes through :func:`q`, which always emits a double-quoted DOT string in which
Graphviz interprets nothing — backslash escapes (``\\N``, ``\\n``, ``\\l``), ``&``-entities,
quotes and HTML-like ``<...>`` labels all render as the literal characters. The only line
breaks in a label are the ones this module puts between already quoted parts.

``svg(dot)`` renders with the ``dot`` program when it is installed (the static fallback for
viewers without a live kernel) and returns None otherwise.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Sequence
from typing import Any

from ..observe.projections import HOLD_KINDS, TRACK_STATES, Lineage, ProcessState

FONT = "Arial,Helvetica,sans-serif"
BACKGROUND = "#ffffff"
INK = "#212529"
MUTED = "#868e96"

#: Fill, border and text colour of a track (lineage node, token) in each state.
STATE_COLOURS: dict[str, tuple[str, str, str]] = {
    "ready": ("#fff3bf", "#f08c00", INK),
    "running": ("#ffe8cc", "#e8590c", INK),
    "waiting": ("#d0ebff", "#1c7ed6", INK),
    "dehydrated": ("#edf2ff", "#5c7cfa", "#364fc7"),
    "merged": ("#f3f0ff", "#7950f2", INK),
    "completed": ("#d3f9d8", "#2f9e44", INK),
    "withdrawn": ("#f1f3f5", "#adb5bd", "#495057"),
    "cancelled": ("#ffe3e3", "#e03131", INK),
    "failed": ("#ffc9c9", "#c92a2a", "#c92a2a"),
}
#: Edge colour and style per origin of the child track.
EDGE_STYLES: dict[str, tuple[str, str]] = {
    "fork": ("#495057", "solid"),
    "join": ("#7950f2", "solid"),
    "continuation": ("#1c7ed6", "dashed"),
    "boundary": ("#e8590c", "bold"),
}
#: Look of the instance frame per residency: border colour, style, fill, words.
RESIDENCY_LOOKS: dict[str, tuple[str, str, str, str]] = {
    "resident": ("#2f9e44", "rounded", "#ffffff", "resident: in memory, coroutines live"),
    "dehydrated": ("#5c7cfa", "rounded,dashed,filled", "#f8f9ff",
                   "dehydrated: released to the store, no coroutines"),
    "finished": ("#adb5bd", "rounded,filled", "#f8f9fa", "finished: nothing held, no coroutines"),
}
#: Glyph and colour of an armed hold of each kind.
HOLD_LOOKS: dict[str, tuple[str, str]] = {
    "timer": ("◷", "#e8590c"),
    "message": ("✉", "#1971c2"),
    "signal": ("▲", "#9c36b5"),
    "task": ("☺", "#2f9e44"),
}
PATH_COLOUR = "#2b8a3e"
PATH_FILL = "#ebfbee"
TOKEN_COLOUR = "#1864ab"

#: Marker drawn inside a gateway diamond.
GATEWAY_MARKERS = {"exclusive_gateway": "×", "parallel_gateway": "+", "event_gateway": "◇"}
#: Glyph inside an intermediate event or boundary circle.
EVENT_GLYPHS = {
    "timer_catch": "◷", "timer_boundary": "◷",
    "message_catch": "✉", "message_boundary": "✉", "message_throw": "✉",
    "signal_catch": "△", "signal_boundary": "△", "signal_throw": "▲",
    "conditional_catch": "≡", "conditional_boundary": "≡",
    "error_boundary": "⚡",
}
TASKS = frozenset({"script_task", "service_task", "user_task", "receive_task"})
TASK_CAPTIONS = {"script_task": "script", "service_task": "service", "user_task": "user",
                 "receive_task": "receive"}

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# -- quoting ------------------------------------------------------------------------------
def literal(text: object) -> str:
    """``text`` escaped for the inside of a DOT string so that Graphviz shows it as is:
    backslashes doubled (no ``\\N``-style expansions), ``&`` as ``&amp;`` (no entities),
    quotes escaped, control characters (line breaks included) shown as spaces."""
    s = _CONTROL.sub(" ", str(text))
    return s.replace("\\", "\\\\").replace("&", "&amp;").replace('"', '\\"')


def q(text: object) -> str:
    """``text`` as one double-quoted DOT string that renders literally."""
    return f'"{literal(text)}"'


def lines(*parts: object) -> str:
    """A quoted label of several lines, each part shown literally (empty parts dropped)."""
    return '"' + "\\n".join(literal(p) for p in parts if p not in (None, "")) + '"'


def _attrs(pairs: Iterable[tuple[str, str]]) -> str:
    """``[k=v, ...]``; values are already DOT (quoted by ``q``/``lines``, or fixed words)."""
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _header(name: str, rankdir: str, label: str) -> list[str]:
    font = q(FONT)
    return [
        f"digraph {q(name)} {{",
        f"  graph [rankdir={rankdir}, fontname={font}, fontsize=12, fontcolor={q(INK)}, "
        f"label={label}, labelloc=t, labeljust=l, bgcolor={q(BACKGROUND)}, nodesep=0.35, "
        f"ranksep=0.45, pad=0.15, forcelabels=true]",
        f"  node [fontname={font}, fontsize=11, fontcolor={q(INK)}, penwidth=1.2, "
        'margin="0.2,0.06"]',
        f"  edge [fontname={font}, fontsize=10, fontcolor={q(INK)}, color={q(MUTED)}, "
        "arrowsize=0.7]",
    ]


# -- lineage ------------------------------------------------------------------------------
def lineage_title(view: Lineage) -> str:
    process = f"{view.process} v{view.version}" if view.process else "?"
    return f"{view.instance} · {process} · {view.state} · {view.residency}"


def lineage_dot(view: Lineage) -> str:
    """The lineage as DOT: one node per track ("t3 / node / state"), one edge per parent
    link labelled fork, join, continuation or boundary fork; dehydrated tracks and released
    instances dashed in grey-blue."""
    border, style, fill, words = RESIDENCY_LOOKS.get(
        view.residency, ("#adb5bd", "rounded", "#ffffff", view.residency))
    out = _header(f"lineage {view.instance}", "TB",
                  lines(f"lineage of {lineage_title(view)}", words))
    out.append(f"  subgraph {q('cluster_instance')} {{")
    frame = _attrs([("label", q(view.instance)), ("style", q(style)), ("color", q(border)),
                    ("fillcolor", q(fill)), ("fontcolor", q(border)), ("penwidth", "1.4")])
    out.append(f"    graph {frame}")
    for t in view.tracks:
        fill_, line_, ink = STATE_COLOURS.get(t.state, ("#ffffff", MUTED, INK))
        dashed = t.state == "dehydrated" or view.residency == "dehydrated"
        shape_style = "rounded,filled,dashed" if dashed else "rounded,filled"
        width = "2.2" if t.standing else "1.2"
        label = lines(t.id, t.label if t.label == t.node else f"{t.label} ({t.node})", t.state)
        out.append(f"    {q(t.id)} " + _attrs([
            ("label", label), ("shape", "box"), ("style", q(shape_style)),
            ("fillcolor", q(fill_)), ("color", q(line_)), ("fontcolor", q(ink)),
            ("penwidth", width), ("tooltip", q(f"{t.id} at {t.node}: {t.state}"))]))
    out.append("  }")
    for e in view.edges:
        colour, style_ = EDGE_STYLES.get(e.origin, (MUTED, "solid"))
        out.append(f"  {q(e.parent)} -> {q(e.child)} " + _attrs([
            ("label", q(e.label)), ("color", q(colour)), ("fontcolor", q(colour)),
            ("style", style_), ("penwidth", "1.4")]))
    out.append("}")
    return "\n".join(out) + "\n"


def lineage_legend() -> list[list[str]]:
    """What each look of the lineage means, as ``[label, colour]`` pairs."""
    legend = [[f"track {state}", STATE_COLOURS[state][1]] for state in TRACK_STATES]
    legend[TRACK_STATES.index("dehydrated")][0] = "track dehydrated (dashed: released)"
    legend += [
        ["edge fork (parallel gateway)", EDGE_STYLES["fork"][0]],
        ["edge join (merged parents)", EDGE_STYLES["join"][0]],
        ["edge continuation (wake, dashed)", EDGE_STYLES["continuation"][0]],
        ["edge boundary fork (bold)", EDGE_STYLES["boundary"][0]],
        ["frame: resident instance", RESIDENCY_LOOKS["resident"][0]],
        ["frame: dehydrated instance (dashed)", RESIDENCY_LOOKS["dehydrated"][0]],
        ["frame: finished instance", RESIDENCY_LOOKS["finished"][0]],
    ]
    return legend


# -- process view -------------------------------------------------------------------------
def process_title(view: ProcessState) -> str:
    process = f"{view.process} v{view.version}" if view.process else "?"
    return f"{process} · {view.instance} · {view.state} · {view.residency}"


def _hold_text(kind: str, deadline: str | None, keys: Sequence[str]) -> str:
    glyph = HOLD_LOOKS.get(kind, ("•", MUTED))[0]
    if kind == "timer" and deadline:
        return f"{glyph} {deadline}"
    if keys:
        return f"{glyph} {', '.join(keys)}"
    return f"{glyph} {kind}"


def process_dot(view: ProcessState) -> str:
    """The process graph as DOT: events as circles (end events bold), tasks as rounded
    boxes, gateways as diamonds with their marker, boundaries as small circles beside
    their activity (dashed when non-interrupting); token markers name the live tracks on
    each node, armed holds colour their node or boundary with a glyph per kind, and the
    path taken so far is drawn in green."""
    out = _header(f"process {view.instance}", "LR",
                  lines(f"process {process_title(view)}"))
    left = set(view.path)
    reached = left | set(view.entered) | {t.node for t in view.ended}
    marks = _Marks(view)
    out += [_process_node(n, n.id in left, marks) for n in view.nodes]
    out += _boundary_ranks(view)
    for f in view.flows:
        taken = f.source in left and f.target in reached
        attrs = [("color", q(PATH_COLOUR if taken else MUTED)),
                 ("penwidth", "2.4" if taken else "1.1")]
        if f.label:
            attrs.insert(0, ("label", q(f.label)))
            attrs.append(("fontcolor", q(PATH_COLOUR if taken else "#495057")))
        out.append(f"  {q(f.source)} -> {q(f.target)} {_attrs(attrs)}")
    out.append("}")
    return "\n".join(out) + "\n"


class _Marks:
    """What is drawn on each node: token texts and states, hold texts and kinds."""

    def __init__(self, view: ProcessState):
        self.tokens: dict[str, list[str]] = {}
        self.token_states: dict[str, list[str]] = {}
        for t in view.tokens:
            self.tokens.setdefault(t.node, []).append(f"● {t.track} {t.state}")
            self.token_states.setdefault(t.node, []).append(t.state)
        self.holds: dict[str, list[str]] = {}
        self.hold_kinds: dict[str, list[str]] = {}
        for h in view.holds:
            self.holds.setdefault(h.node, []).append(_hold_text(h.kind, h.deadline, h.keys))
            self.hold_kinds.setdefault(h.node, []).append(h.kind)


def _process_node(n: Any, on_path: bool, marks: _Marks) -> str:
    """One node's DOT line: its shape, captions, and the marks of tokens and holds."""
    extra = marks.tokens.get(n.id, []) + marks.holds.get(n.id, [])
    fill = PATH_FILL if on_path else "#ffffff"
    border = PATH_COLOUR if on_path else "#495057"
    penwidth = 1.2
    style = ["filled"]
    if n.id in marks.hold_kinds:
        border = HOLD_LOOKS.get(marks.hold_kinds[n.id][0], ("", MUTED))[1]
        penwidth = 2.4
    if n.id in marks.token_states:
        states = marks.token_states[n.id]
        border = STATE_COLOURS.get(states[0], ("", TOKEN_COLOUR, ""))[1]
        fill = STATE_COLOURS.get(states[0], ("#ffffff", "", ""))[0]
        penwidth = 2.6
        if "dehydrated" in states:
            style.append("dashed")
    attrs, penwidth = _shape(n, extra, style, penwidth)
    attrs += [("style", q(",".join(style))), ("fillcolor", q(fill)), ("color", q(border)),
              ("penwidth", f"{penwidth:g}"), ("tooltip", q(f"{n.kind} {n.id}"))]
    return f"  {q(n.id)} {_attrs(attrs)}"


def _shape(n: Any, extra: list[str], style: list[str], penwidth: float
           ) -> tuple[list[tuple[str, str]], float]:
    """A node's shape and labels by kind (``style`` may gain a modifier)."""
    caption = n.label if n.label == n.id else f"{n.label} ({n.id})"
    if n.kind in TASKS:
        if n.kind == "receive_task":
            kind_line = f"«receive {n.detail}»"
        else:
            kind_line = f"«{n.detail or TASK_CAPTIONS[n.kind]}»"
        style.insert(0, "rounded")
        return [("shape", "box"), ("label", lines(caption, kind_line, *extra))], penwidth
    if n.kind in GATEWAY_MARKERS:
        return [("shape", "diamond"), ("label", q(GATEWAY_MARKERS[n.kind])),
                ("fontsize", "14"), ("width", "0.5"), ("height", "0.5"),
                ("fixedsize", "true"), ("xlabel", lines(caption, *extra))], penwidth
    if n.attached_to is not None:
        if not n.interrupting:
            style.append("dashed")
        return [("shape", "doublecircle"), ("label", q(EVENT_GLYPHS.get(n.kind, ""))),
                ("width", "0.32"), ("height", "0.32"), ("fixedsize", "true"),
                ("fontsize", "10"),
                ("xlabel", lines(caption, n.detail,
                                 "interrupting" if n.interrupting else "non-interrupting",
                                 *extra))], penwidth
    glyph = EVENT_GLYPHS.get(n.kind, "")
    if n.kind == "start":
        shape, width = "circle", 0.42
    elif n.kind == "end":
        shape, width = ("doublecircle", 0.38) if n.terminate else ("circle", 0.42)
        penwidth = max(penwidth, 3.2)
        glyph = "●" if n.terminate else ("⚡" if n.detail else "")
    else:
        shape, width = "doublecircle", 0.38
    return [("shape", shape), ("label", q(glyph)), ("width", str(width)),
            ("height", str(width)), ("fixedsize", "true"),
            ("xlabel", lines(caption, n.detail if n.kind != "end" else "", *extra))], penwidth


def _boundary_ranks(view: ProcessState) -> list[str]:
    """Boundaries sit on the same rank as their activity, tied to it by a short dotted line."""
    by_host: dict[str, list[str]] = {}
    for n in view.nodes:
        if n.attached_to is not None:
            by_host.setdefault(n.attached_to, []).append(n.id)
    out = []
    for host in (n.id for n in view.nodes if n.id in by_host):
        members = " ".join(q(b) for b in [host, *by_host[host]])
        out.append(f"  {{ rank=same; {members} }}")
        for b in by_host[host]:
            out.append(f"  {q(host)} -> {q(b)} " + _attrs([
                ("dir", "none"), ("style", "dotted"), ("color", q(MUTED)), ("minlen", "1"),
                ("weight", "8")]))
    return out


def process_legend() -> list[list[str]]:
    """What each look of the process view means, as ``[label, colour]`` pairs."""
    legend = [["path taken (nodes left)", PATH_COLOUR]]
    legend += [[f"token: track {state}", STATE_COLOURS[state][1]]
               for state in ("ready", "running", "waiting", "dehydrated")]
    legend += [[f"{HOLD_LOOKS[kind][0]} armed {kind} hold", HOLD_LOOKS[kind][1]]
               for kind in HOLD_KINDS]
    legend += [["dashed boundary: non-interrupting", MUTED]]
    return legend


# -- static SVG ---------------------------------------------------------------------------
def has_dot() -> bool:
    """Whether the Graphviz ``dot`` program is installed."""
    return shutil.which("dot") is not None


def svg(dot: str) -> str | None:
    """``dot`` rendered as SVG text by the ``dot`` program, or None where it is missing."""
    if not dot or not has_dot():
        return None
    import graphviz

    return graphviz.Source(dot).pipe(format="svg", encoding="utf-8")
