"""The engine's state drawn on a BPMN diagram: what the browser puts on each shape.

:func:`process_marks` turns a :class:`~gobpm_nb.observe.projections.ProcessState` into plain
data the front end (``widgets/src/bpmn.js``) draws with bpmn-js overlays and markers, element
by element, without deciding anything itself:

- ``elements``: one entry per node that has something to show, in definition order:
  ``classes`` (markers on the shape: ``gobpm-left`` path taken, ``gobpm-token`` a track
  stands here, ``gobpm-dehydrated`` every track here is dehydrated, ``gobpm-held`` an armed
  hold, ``gobpm-fork`` a boundary fork or continuation began here), ``badges`` (token counts
  coloured by track state, hold badges with their deadline, correlation or task id, fork
  badges) and ``tip`` (the hover text: every track and hold there). Ids are the engine's
  node ids, which the drawn XML keeps inside subprocesses too (drawn expanded): a track inside
  a subprocess is marked on its inner element, the track running a subprocess on the
  subprocess's shape, and a hold armed on the process's own scope (track ``""``: the start of
  an event subprocess) on that start event, said to be the process's;
- ``flows``: the XML ids of the flows taken (both ends reached, the source left);
- ``choices``: the flows a person may choose now, one per flow of each decision waiting
  (``Engine.decisions``): ``{flow`` (its XML id), ``decide: {instance, track, flow}`` (the
  ``decide`` command a click sends: the flow by its id in the definition), ``several``
  (an inclusive gateway's decision: a click toggles the flow in the dashboard's decisions
  row instead), ``label``, ``tip}``; drawn dashed in the decision colour, clickable in a
  dashboard;
- ``status``, ``residency``: the instance line above the diagram (a dehydrated instance
  is drawn dashed and says so);
- ``colours``: the few colours the markers use, so the palette lives here only.

Deterministic: definition, track and armed order throughout. Everything is text; the front
end writes it with ``textContent``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..observe.projections import PROCESS_SCOPE, ProcessState
from ..vocabulary import BOUNDARY, DEHYDRATED, HOLD_KINDS, LIVE, TRACK_STATES
from .dot import (
    EDGE_STYLES,
    HOLD_LOOKS,
    MUTED,
    PATH_COLOUR,
    PATH_FILL,
    RESIDENCY_LOOKS,
    STATE_COLOURS,
    TOKEN_COLOUR,
    TRIGGERED_STARTS,
)

#: Glyph of a badge where a track began as a boundary fork or a continuation.
FORK_GLYPHS = {"boundary": "↳", "continuation": "↻"}
#: What the fork glyphs say, for tips.
FORK_WORDS = {"boundary": "boundary fork", "continuation": "continuation (woke from the store)"}


def _hold_badge(kind: str, track: str, wait_kind: str, deadline: str | None,
                keys: tuple[str, ...], node_kind: str) -> dict[str, Any]:
    """The badge of one armed hold. A hold armed on the process's own scope (track ``""``,
    the start of one of its event subprocesses) is the process's, not a track's."""
    glyph, colour = HOLD_LOOKS.get(kind, ("•", MUTED))
    if kind == "timer":
        what = f"due {deadline}" if deadline else "timer"
        text = deadline or "timer"
    elif kind == "message":
        what = "message " + " · ".join(keys) if keys else "message"
        text = " · ".join(keys) or "message"
    else:
        what = f"{kind} {', '.join(keys)}" if keys else kind
        text = ", ".join(keys) or kind
    if node_kind in TRIGGERED_STARTS:
        where = "this start of its event subprocess"
    else:
        where = "its boundary" if wait_kind == BOUNDARY else "this node"
    holder = track or f"the {PROCESS_SCOPE}"
    return {"kind": "hold", "hold": kind, "text": f"{glyph} {text}", "colour": colour,
            "tip": f"{glyph} armed {kind} hold of {holder} on {where}: {what}"}


def _token_badges(tokens: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One badge per track state here (in the engine's state order), with its count."""
    badges = []
    for state in TRACK_STATES:
        tracks = [track for track, s in tokens if s == state]
        if not tracks:
            continue
        fill, line, ink = STATE_COLOURS[state]
        badges.append({"kind": "token", "state": state, "text": str(len(tracks)),
                       "colour": line, "fill": fill, "ink": ink,
                       "dashed": state == DEHYDRATED,
                       "tip": f"{', '.join(tracks)} {state}"})
    return badges


def _entry(node: Any, tokens: list[tuple[str, str]], holds: list[Any], forks: list[Any],
           left: bool) -> dict[str, Any]:
    classes = []
    if left:
        classes.append("gobpm-left")
    if tokens:
        classes.append("gobpm-token")
        if all(state == DEHYDRATED for _, state in tokens):
            classes.append("gobpm-dehydrated")
    if holds:
        classes.append("gobpm-held")
    if forks:
        classes.append("gobpm-fork")
    badges = _token_badges(tokens)
    badges += [_hold_badge(h.kind, h.track, h.wait_kind, h.deadline, h.keys, node.kind)
               for h in holds]
    colour = EDGE_STYLES["boundary"][0]
    badges += [{"kind": "fork", "origin": f.origin,
                "text": f"{FORK_GLYPHS.get(f.origin, '↳')} {f.track}", "colour": colour,
                "tip": f"{f.track}: {FORK_WORDS.get(f.origin, f.origin)} of "
                       f"{', '.join(f.parents) or 'no track'}"} for f in forks]
    caption = node.label if node.label == node.id else f"{node.label} ({node.id})"
    tip = [f"{caption} · {node.kind}"]
    tip += [f"● {track} {state}" for track, state in tokens]
    tip += [b["tip"] for b in badges if b["kind"] != "token"]
    return {"id": node.id, "classes": classes, "badges": badges, "tip": "\n".join(tip)}


def process_marks(view: ProcessState, flows: Mapping[str, str],
                  names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What to draw on the diagram of ``view``'s process; ``flows`` maps each flow id of the
    definition to its id in the drawn XML (:attr:`gobpm_nb.bpmn.drawing.Drawing.flows`),
    ``names`` to the name its file gives it (``Drawing.names``)."""
    left = set(view.path)
    reached = left | set(view.entered) | {t.node for t in view.ended}
    tokens: dict[str, list[tuple[str, str]]] = {}
    for t in view.tokens:
        tokens.setdefault(t.node, []).append((t.track, t.state))
    holds: dict[str, list[Any]] = {}
    for h in view.holds:
        holds.setdefault(h.node, []).append(h)
    forks: dict[str, list[Any]] = {}
    for f in view.forks:
        forks.setdefault(f.node, []).append(f)
    elements = [_entry(n, tokens.get(n.id, []), holds.get(n.id, []), forks.get(n.id, []),
                       n.id in left)
                for n in view.nodes
                if n.id in left or n.id in tokens or n.id in holds or n.id in forks]
    taken = [flows[f.id] for f in view.flows
             if f.id in flows and f.source in left and f.target in reached]
    words = RESIDENCY_LOOKS.get(view.residency, ("", "", "", view.residency))[3]
    process = f"{view.process} v{view.version}" if view.process else "?"
    return {"status": f"{process} · {view.instance} · {view.state} — {words}",
            "instance": view.instance, "residency": view.residency,
            "elements": elements, "flows": taken, "choices": choices(view, flows, names),
            "colours": colours()}


def choices(view: ProcessState, flows: Mapping[str, str],
            names: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The flows a person may choose at the decisions ``view``'s instance waits at, drawn
    ones only, in the engine's order (see the module's ``choices``)."""
    labels = {n.id: n.label for n in view.nodes}
    out = []
    for d in view.decisions:
        gateway = labels.get(d.gateway, d.gateway)
        for flow, target in d.flows:
            if flow not in flows:
                continue
            label = (names or {}).get(flow) or f"→ {labels.get(target, target)}"
            out.append({"flow": flows[flow], "label": label,
                        "decide": {"instance": d.instance, "track": d.track, "flow": flow},
                        "several": bool(d.several),
                        "tip": f"? {gateway} ({d.track}): take {label} (flow {flow})"})
    return out


def colours() -> dict[str, str]:
    """The colours of the shape markers (the badges carry their own)."""
    return {"path": PATH_COLOUR, "path-fill": PATH_FILL, "token": TOKEN_COLOUR,
            "held": HOLD_LOOKS["timer"][1], "fork": EDGE_STYLES["boundary"][0],
            "decision": HOLD_LOOKS["decision"][1],
            DEHYDRATED: RESIDENCY_LOOKS[DEHYDRATED][0]}


def bpmn_legend() -> list[list[str]]:
    """What each mark on the BPMN diagram means, as ``[label, colour]`` pairs."""
    legend = [["path taken (nodes left, flows taken)", PATH_COLOUR]]
    legend += [[f"tracks {state} here (count)", STATE_COLOURS[state][1]]
               for state in LIVE if state != DEHYDRATED]
    legend += [["tracks dehydrated here (count, dashed)", STATE_COLOURS[DEHYDRATED][1]],
               ["outline: a track stands here", TOKEN_COLOUR],
               ["outline: an armed hold here", HOLD_LOOKS["timer"][1]]]
    hints = {"timer": "deadline", "message": "name · correlation", "signal": "name",
             "task": "task id", "call": "child instance", "decision": "a person chooses"}
    legend += [[f"{HOLD_LOOKS[kind][0]} armed {kind} hold ({hints[kind]})", HOLD_LOOKS[kind][1]]
               for kind in HOLD_KINDS]
    legend += [["dashed flow: a person's choice at a decision (click it on a dashboard)",
                HOLD_LOOKS["decision"][1]]]
    legend += [[f"{FORK_GLYPHS['boundary']} boundary fork · {FORK_GLYPHS['continuation']} "
                "continuation (new track)", EDGE_STYLES["boundary"][0]],
               ["dehydrated instance (dashed frame)", RESIDENCY_LOOKS[DEHYDRATED][0]]]
    return legend
