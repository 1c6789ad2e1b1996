"""The lineage view as DOT: one node per track, one edge per parent link, and the instances
across a call activity (split out of ``dot``, whose helpers and looks it shares)."""

from __future__ import annotations

from ..observe.projections import ROOT_ORIGINS, Lineage
from ..vocabulary import DEHYDRATED, FINISHED, RESIDENT, TRACK_STATES
from .dot import (
    EDGE_STYLES,
    INK,
    MUTED,
    RESIDENCY_LOOKS,
    STATE_COLOURS,
    _attrs,
    _header,
    lines,
    q,
)


def lineage_title(view: Lineage) -> str:
    process = f"{view.process} v{view.version}" if view.process else "?"
    return f"{view.instance} · {process} · {view.state} · {view.residency}"


def lineage_dot(view: Lineage) -> str:
    """The lineage as DOT: one node per track ("t3 / node / state"), one edge per parent
    link labelled by the child's origin (fork, join, continuation, boundary fork, scope — the
    first track inside a subprocess —, event subprocess, multi-instance); dehydrated tracks and
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
        dashed = t.state == DEHYDRATED or view.residency == DEHYDRATED
        shape_style = "rounded,filled,dashed" if dashed else "rounded,filled"
        width = "2.2" if t.standing else "1.2"
        began = ROOT_ORIGINS.get(t.origin, "") if not t.parents else ""
        label = lines(t.id, t.label if t.label == t.node else f"{t.label} ({t.node})", t.state,
                      began)
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
    out.extend(_call_links(view))
    out.append("}")
    return "\n".join(out) + "\n"


def _call_links(view: Lineage) -> list[str]:
    """The instances across a call activity: the caller above the first track, each child
    beside the track that waits for it."""
    out: list[str] = []
    look = [("shape", "note"), ("style", q("dashed")), ("color", q(MUTED)),
            ("fontcolor", q(MUTED))]
    if view.caller is not None and view.tracks:
        out.append(f"  {q('caller')} " + _attrs([("label", q(f"called by {view.caller}"))]
                                                   + look))
        out.append(f"  {q('caller')} -> {q(view.tracks[0].id)} " + _attrs([
            ("style", "dashed"), ("color", q(MUTED)), ("label", q("call"))]))
    for track, child in view.calls:
        name = f"child {child}"
        out.append(f"  {q(name)} " + _attrs([("label", q(f"calls {child}"))] + look))
        out.append(f"  {q(track)} -> {q(name)} " + _attrs([
            ("style", "dashed"), ("color", q(MUTED)), ("label", q("waits for"))]))
    return out


def lineage_legend() -> list[list[str]]:
    """What each look of the lineage means, as ``[label, colour]`` pairs."""
    legend = [[f"track {state}", STATE_COLOURS[state][1]] for state in TRACK_STATES]
    legend[TRACK_STATES.index(DEHYDRATED)][0] = "track dehydrated (dashed)"
    legend += [
        ["edge fork (parallel gateway)", EDGE_STYLES["fork"][0]],
        ["edge join (merged parents)", EDGE_STYLES["join"][0]],
        ["edge continuation (wake, dashed)", EDGE_STYLES["continuation"][0]],
        ["edge boundary fork (bold)", EDGE_STYLES["boundary"][0]],
        ["edge scope (first track inside a subprocess)", EDGE_STYLES["scope"][0]],
        ["edge event subprocess (dashed)", EDGE_STYLES["event"][0]],
        ["edge multi-instance (inner instance, dotted)", EDGE_STYLES["many"][0]],
        ["edge loop run (standard loop, dashed)", EDGE_STYLES["loop"][0]],
        ["frame: resident instance", RESIDENCY_LOOKS[RESIDENT][0]],
        ["frame: dehydrated instance (dashed)", RESIDENCY_LOOKS[DEHYDRATED][0]],
        ["frame: finished instance", RESIDENCY_LOOKS[FINISHED][0]],
    ]
    return legend


# -- process view -------------------------------------------------------------------------
