"""DOT text for the lineage and process views, built from projections.

Deterministic: nodes and edges come out in track-id or definition order, attributes in a
fixed order, so the same engine state always gives the same bytes. Safe: every name, id and
value goes through :func:`q`, which always emits a double-quoted DOT string in which
Graphviz interprets nothing — backslash escapes (``\\N``, ``\\n``, ``\\l``), ``&``-entities,
quotes and HTML-like ``<...>`` labels all render as the literal characters. The only line
breaks in a label are the ones this module puts between already quoted parts.

``svg(dot)`` and ``png(dot)`` render with the ``dot`` program when it is installed (the PNG
is the static drawing stored beside each view for viewers without a live kernel) and return
None otherwise.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Sequence
from typing import Any

from ..observe.projections import SCOPE_KINDS, ProcessState
from ..vocabulary import (
    CANCELLED,
    COMPLETED,
    DEHYDRATED,
    FAILED,
    FINISHED,
    HOLD_KINDS,
    LIVE,
    MERGED,
    READY,
    RESIDENT,
    RUNNING,
    WAITING,
    WITHDRAWN,
)

FONT = "Arial,Helvetica,sans-serif"
BACKGROUND = "#ffffff"
INK = "#212529"
MUTED = "#868e96"

#: Fill, border and text colour of a track (lineage node, token) in each state.
STATE_COLOURS: dict[str, tuple[str, str, str]] = {
    READY: ("#fff3bf", "#f08c00", INK),
    RUNNING: ("#ffe8cc", "#e8590c", INK),
    WAITING: ("#d0ebff", "#1c7ed6", INK),
    DEHYDRATED: ("#edf2ff", "#5c7cfa", "#364fc7"),
    MERGED: ("#f3f0ff", "#7950f2", INK),
    COMPLETED: ("#d3f9d8", "#2f9e44", INK),
    WITHDRAWN: ("#f1f3f5", "#adb5bd", "#495057"),
    CANCELLED: ("#ffe3e3", "#e03131", INK),
    FAILED: ("#ffc9c9", "#c92a2a", "#c92a2a"),
}
#: Edge colour and style per origin of the child track.
EDGE_STYLES: dict[str, tuple[str, str]] = {
    "fork": ("#495057", "solid"),
    "join": ("#7950f2", "solid"),
    "continuation": ("#1c7ed6", "dashed"),
    "boundary": ("#e8590c", "bold"),
    "scope": ("#0c8599", "solid"),
    "event": ("#d6336c", "dashed"),
    "many": ("#5c940d", "dotted"),
    "loop": ("#5c940d", "dashed"),
    "compensation": ("#862e9c", "dashed"),
}
#: Look of the instance frame per residency: border colour, style, fill, words.
RESIDENCY_LOOKS: dict[str, tuple[str, str, str, str]] = {
    RESIDENT: ("#2f9e44", "rounded", "#ffffff", "resident: in memory, coroutines live"),
    DEHYDRATED: ("#5c7cfa", "rounded,dashed,filled", "#f8f9ff",
                   "dehydrated: checkpoint in the store, no coroutines"),
    FINISHED: ("#adb5bd", "rounded,filled", "#f8f9fa", "finished: nothing held, no coroutines"),
}
#: Glyph and colour of an armed hold of each kind.
HOLD_LOOKS: dict[str, tuple[str, str]] = {
    "timer": ("◷", "#e8590c"),
    "message": ("✉", "#1971c2"),
    "signal": ("▲", "#9c36b5"),
    "task": ("☺", "#2f9e44"),
    "call": ("⇲", "#5f3dc4"),  # a call activity's: its child instance's end
    "decision": ("?", "#c2255c"),  # a decision gateway's: a person's choice of a flow
}
PATH_COLOUR = "#2b8a3e"
PATH_FILL = "#ebfbee"
TOKEN_COLOUR = "#1864ab"

#: Marker drawn inside a gateway diamond.
GATEWAY_MARKERS = {"exclusive_gateway": "×", "parallel_gateway": "+", "event_gateway": "◇",
                   "inclusive_gateway": "○", "complex_gateway": "✱"}
#: Marker of an event-based gateway that creates instances (by its detail), as BPMN draws
#: them: a pentagon, or a cross, in a circle.
STARTING_MARKERS = {"instantiates": "⬠", "parallel · instantiates": "⊕"}
#: Glyph inside an intermediate event, boundary or event subprocess start circle (catching
#: events hollow, throwing ones filled, as BPMN draws them).
EVENT_GLYPHS = {
    "timer_catch": "◷", "timer_boundary": "◷", "timer_start": "◷",
    "message_catch": "✉", "message_boundary": "✉", "message_throw": "✉", "message_start": "✉",
    "signal_catch": "△", "signal_boundary": "△", "signal_throw": "▲", "signal_start": "△",
    "conditional_catch": "≡", "conditional_boundary": "≡", "conditional_start": "≡",
    "error_boundary": "⚡", "error_start": "⚡",
    "escalation_boundary": "⇧", "escalation_start": "⇧", "escalation_throw": "⬆",
    "link_catch": "⇨", "link_throw": "➜",
    "message_end": "✉", "signal_end": "▲",
    "compensation_boundary": "◀◀", "compensation_start": "◀◀", "compensation_throw": "◀◀",
    "compensation_end": "◀◀", "cancel_boundary": "✕", "cancel_end": "✕",
    "multiple_catch": "⬠", "multiple_boundary": "⬠", "multiple_start": "⬠",
    "multiple_throw": "⬟", "multiple_end": "⬟",
}
#: Glyph inside an end event by what it throws (the first word of its detail).
END_GLYPHS = {"error": "⚡", "escalation": "⬆"}
#: End events, drawn thick (a message or signal end with its glyph and its detail).
END_KINDS = frozenset({"end", "message_end", "signal_end", "compensation_end", "cancel_end",
                       "multiple_end"})
#: The starts of event subprocesses (drawn as start events, dashed when non-interrupting).
TRIGGERED_STARTS = frozenset({"message_start", "timer_start", "signal_start", "error_start",
                              "escalation_start", "compensation_start", "multiple_start",
                              "conditional_start"})
#: The kind line of a subprocess's frame.
SCOPE_CAPTIONS = {"subprocess": "«subprocess»", "event_subprocess": "«event subprocess»",
                  "transaction": "«transaction»", "adhoc_subprocess": "«ad-hoc subprocess» ~"}
TASKS = frozenset({"script_task", "service_task", "user_task", "receive_task",
                   "call_activity"})
TASK_CAPTIONS = {"script_task": "script", "service_task": "service", "user_task": "user",
                 "receive_task": "receive", "call_activity": "call"}

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
    path taken so far is drawn in green.

    A subprocess is a frame (``cluster_<id>``) around the elements inside it, an event
    subprocess's frame dashed; in each frame a small node of the subprocess's own id carries
    the track running it and its flows, which are drawn to the frame's border. Multi-instance
    activities show ``|||`` (parallel) or ``≡`` (sequential) and what they run over; a link
    throw points at its catch with a dotted arrow. The flows a person may choose at a
    decision waiting now are dashed in the decision hold's colour."""
    out = _header(f"process {view.instance}", "LR",
                  lines(f"process {process_title(view)}"))
    layout = _Layout(view)
    if layout.scopes:
        out.append("  graph [compound=true]")
    left = set(view.path)
    reached = left | set(view.entered) | {t.node for t in view.ended}
    marks = _Marks(view)
    ranks, ties = _boundary_ranks(view, layout)
    out += _scope_lines(layout, None, left, marks, ranks, "  ")
    out += ties
    choices = {flow for d in view.decisions for flow, _ in d.flows}
    for f in view.flows:
        taken = f.source in left and f.target in reached
        attrs = [("color", q(PATH_COLOUR if taken else MUTED)),
                 ("penwidth", "2.4" if taken else "1.1")]
        if f.id in choices:  # a person chooses it now: drawn as the decision hold is
            attrs = [("color", q(HOLD_LOOKS["decision"][1])), ("penwidth", "2.4"),
                     ("style", "dashed"), ("tooltip", q(f"a person may choose {f.id}"))]
        if f.label:
            attrs.insert(0, ("label", q(f.label)))
            attrs.append(("fontcolor", q(PATH_COLOUR if taken else "#495057")))
        out.append(f"  {q(f.source)} -> {q(f.target)} {_attrs(attrs + layout.clip(f))}")
    out += _links(view)
    out += layout.invisible(view)
    out.append("}")
    return "\n".join(out) + "\n"


class _Layout:
    """The frames of the process view: which nodes are scopes, and each scope's nodes (None:
    the process's own), all in definition order."""

    def __init__(self, view: ProcessState):
        self.scopes = {n.id for n in view.nodes if n.kind in SCOPE_KINDS}
        self.inside: dict[str | None, list[Any]] = {}
        for n in view.nodes:
            scope = n.within if n.within in self.scopes else None
            self.inside.setdefault(scope, []).append(n)

    def scope_of(self, n: Any) -> str | None:
        return n.within if n.within in self.scopes else None

    def clip(self, flow: Any) -> list[tuple[str, str]]:
        """A flow that leaves or enters a subprocess is drawn from or to its frame."""
        attrs = []
        if flow.source in self.scopes:
            attrs.append(("ltail", q(f"cluster_{flow.source}")))
        if flow.target in self.scopes:
            attrs.append(("lhead", q(f"cluster_{flow.target}")))
        return attrs

    def invisible(self, view: ProcessState) -> list[str]:
        """Edges that only place things: a frame's node before the starts inside it, and
        what follows a subprocess after the last elements inside it."""
        hidden = _attrs([("style", "invis")])
        sources = {f.source for f in view.flows}
        out = []
        for scope in (n.id for n in view.nodes if n.id in self.scopes):
            for n in self.inside.get(scope, []):
                if n.kind == "start" or n.kind in TRIGGERED_STARTS:
                    out.append(f"  {q(scope)} -> {q(n.id)} {hidden}")
        for f in view.flows:
            if f.source not in self.scopes:
                continue
            for n in self.inside.get(f.source, []):
                if n.id not in sources and n.attached_to is None \
                        and n.kind != "event_subprocess":
                    out.append(f"  {q(n.id)} -> {q(f.target)} {hidden}")
        return out


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


def _scope_lines(layout: _Layout, scope: str | None, left: set[str], marks: _Marks,
                 ranks: dict[str | None, list[str]], indent: str) -> list[str]:
    """The nodes of one scope in definition order, each subprocess as its frame."""
    out = []
    for n in layout.inside.get(scope, []):
        if n.id in layout.scopes:
            out += _frame(layout, n, left, marks, ranks, indent)
        else:
            out.append(indent + _process_node(n, n.id in left, marks))
    if scope is not None:
        out += [indent + line for line in ranks.get(scope, [])]
    return out


def _frame(layout: _Layout, n: Any, left: set[str], marks: _Marks,
           ranks: dict[str | None, list[str]], indent: str) -> list[str]:
    """A subprocess as a cluster: its caption, its own node, then what is inside it."""
    states = marks.token_states.get(n.id)
    if states:
        colour = STATE_COLOURS.get(states[0], ("", TOKEN_COLOUR, ""))[1]
    else:
        colour = PATH_COLOUR if n.id in left else "#495057"
    caption = n.label if n.label == n.id else f"{n.label} ({n.id})"
    style = "rounded,dashed" if n.kind == "event_subprocess" else "rounded"
    frame = _attrs([("label", q(caption)), ("style", q(style)), ("color", q(colour)),
                    ("fontcolor", q(INK)), ("penwidth", "1.4"), ("labeljust", "l"),
                    ("labelloc", "t"), ("tooltip", q(f"{n.kind} {n.id}"))])
    inner = indent + "  "
    out = [f"{indent}subgraph {q(f'cluster_{n.id}')} {{", f"{inner}graph {frame}",
           inner + _process_node(n, n.id in left, marks)]
    out += _scope_lines(layout, n.id, left, marks, ranks, inner)
    out.append(f"{indent}}}")
    return out


def _process_node(n: Any, on_path: bool, marks: _Marks) -> str:
    """One node's DOT statement: its shape, captions, and the marks of tokens and holds."""
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
        if DEHYDRATED in states:
            style.append("dashed")
    attrs, penwidth = _shape(n, extra, style, penwidth)
    attrs += [("style", q(",".join(style))), ("fillcolor", q(fill)), ("color", q(border)),
              ("penwidth", f"{penwidth:g}"), ("tooltip", q(f"{n.kind} {n.id}"))]
    return f"{q(n.id)} {_attrs(attrs)}"


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
        return [("shape", "box"), ("label", lines(caption, kind_line, n.many, *extra))
                ], penwidth
    if n.kind in SCOPE_KINDS:  # the frame carries the caption
        style.insert(0, "rounded")
        return [("shape", "box"), ("label", lines(SCOPE_CAPTIONS[n.kind], n.many, *extra)),
                ("fontsize", "10")], penwidth
    if n.kind in GATEWAY_MARKERS:
        marker = STARTING_MARKERS.get(n.detail, GATEWAY_MARKERS[n.kind])
        return [("shape", "diamond"), ("label", q(marker)),
                ("fontsize", "14"), ("width", "0.5"), ("height", "0.5"),
                ("fixedsize", "true"), ("xlabel", lines(caption, n.detail, *extra))], penwidth
    if n.attached_to is not None or n.kind in TRIGGERED_STARTS:
        boundary = n.attached_to is not None
        if not n.interrupting and "dashed" not in style:
            style.append("dashed")
        size = "0.32" if boundary else "0.42"
        if boundary:
            interrupting = "interrupting" if n.interrupting else "non-interrupting"
        else:  # a start says so only when it leaves its scope running
            interrupting = "" if n.interrupting else "non-interrupting"
        return [("shape", "doublecircle" if boundary else "circle"),
                ("label", q(EVENT_GLYPHS.get(n.kind, ""))),
                ("width", size), ("height", size), ("fixedsize", "true"),
                ("fontsize", "10"),
                ("xlabel", lines(caption, n.detail, interrupting, *extra))], penwidth
    glyph = EVENT_GLYPHS.get(n.kind, "")
    if n.kind == "start":
        shape, width = "circle", 0.42
    elif n.kind in END_KINDS:
        shape, width = ("doublecircle", 0.38) if n.terminate else ("circle", 0.42)
        penwidth = max(penwidth, 3.2)
        if n.kind == "end":
            glyph = "●" if n.terminate else END_GLYPHS.get(n.detail.split(" ", 1)[0], "")
    else:
        shape, width = "doublecircle", 0.38
    return [("shape", shape), ("label", q(glyph)), ("width", str(width)),
            ("height", str(width)), ("fixedsize", "true"),
            ("xlabel", lines(caption, n.detail if n.kind != "end" else "", *extra))], penwidth


def _boundary_ranks(view: ProcessState, layout: _Layout
                    ) -> tuple[dict[str | None, list[str]], list[str]]:
    """Boundaries sit on the same rank as their activity, tied to it by a short dotted line
    (to the frame of a subprocess, with no rank: a frame spans several). Returns the rank
    lines of each subprocess (drawn inside its frame) and the lines of the process's own
    level: its rank lines, each followed by its ties, and the ties of every other host."""
    by_host: dict[str, list[str]] = {}
    for n in view.nodes:
        if n.attached_to is not None:
            by_host.setdefault(n.attached_to, []).append(n.id)
    ranks: dict[str | None, list[str]] = {}
    out = []
    for host in (n for n in view.nodes if n.id in by_host):
        boundaries = by_host[host.id]
        clip: list[tuple[str, str]] = []
        if host.id in layout.scopes:
            clip = [("ltail", q(f"cluster_{host.id}"))]
        else:
            members = " ".join(q(b) for b in [host.id, *boundaries])
            rank = f"{{ rank=same; {members} }}"
            scope = layout.scope_of(host)
            if scope is None:
                out.append(f"  {rank}")
            else:
                ranks.setdefault(scope, []).append(rank)
        for b in boundaries:
            out.append(f"  {q(host.id)} -> {q(b)} " + _attrs([
                ("dir", "none"), ("style", "dotted"), ("color", q(MUTED)), ("minlen", "1"),
                ("weight", "8"), *clip]))
    return ranks, out


def _links(view: ProcessState) -> list[str]:
    """A dotted arrow from each link throw to the catch of its name in its scope."""
    out = []
    for throw in (n for n in view.nodes if n.kind == "link_throw"):
        for catch in view.nodes:
            if catch.kind == "link_catch" and catch.detail == throw.detail \
                    and catch.within == throw.within:
                out.append(f"  {q(throw.id)} -> {q(catch.id)} " + _attrs([
                    ("style", "dotted"), ("color", q(MUTED)), ("arrowhead", "empty"),
                    ("constraint", "false"), ("tooltip", q(throw.detail))]))
    return out


def process_legend() -> list[list[str]]:
    """What each look of the process view means, as ``[label, colour]`` pairs."""
    legend = [["path taken (nodes left)", PATH_COLOUR]]
    legend += [[f"token: track {state}", STATE_COLOURS[state][1]]
               for state in LIVE]
    legend += [[f"{HOLD_LOOKS[kind][0]} armed {kind} hold", HOLD_LOOKS[kind][1]]
               for kind in HOLD_KINDS]
    legend += [["dashed boundary: non-interrupting", MUTED],
               ["frame: subprocess (its node: the track running it)", "#495057"],
               ["dashed frame: event subprocess (dashed start: non-interrupting)", "#495057"],
               ["||| parallel · ≡ sequential multi-instance", MUTED],
               ["dotted arrow: link throw to its catch", MUTED],
               ["dashed flow: a person's choice at a decision waiting now",
                HOLD_LOOKS["decision"][1]]]
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

    out: str = graphviz.Source(dot).pipe(format="svg", encoding="utf-8")
    return out



_GRAPH_LABEL = re.compile(r'^(  graph \[.*?label=")((?:[^"\\]|\\.)*)"', re.MULTILINE)


def captioned(dot: str, caption: str) -> str:
    """``dot`` with ``caption`` as one more line of its graph label (shown literally)."""
    return _GRAPH_LABEL.sub(lambda m: f'{m.group(1)}{m.group(2)}\\n{literal(caption)}"', dot,
                            count=1)


def png(dot: str) -> bytes | None:
    """``dot`` drawn as a PNG by the ``dot`` program, or None where it is missing.

    Cairo draws it (anti-aliased, the fonts of the SVG) and gd writes it with a palette:
    a third of the bytes of cairo's own PNG writer, so a notebook keeps each view's drawing
    in tens of kilobytes."""
    if not dot or not has_dot():
        return None
    import graphviz

    image: bytes = graphviz.Source(dot).pipe(format="png", renderer="cairo",
                                             formatter="gd")
    return image
