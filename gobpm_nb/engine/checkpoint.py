"""Capturing an instance's checkpoint: only what re-entering nodes cannot re-derive.

Identity, process id and version, data, id counters, the live tracks (position, state,
lineage, what each waits for with recorded deadlines, correlation keys, task and job ids, the
armed boundaries with their recorded deadlines) and the open joins.
"""

from __future__ import annotations

import copy
from typing import Any

from .records import TERMINAL, Track
from .run import Run


def track_doc(tr: Track, holds: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """A live track's entry. ``holds`` maps (node, wait kind) to the order its holder was
    armed in, which recovery keeps so that subscriptions stay in order across a restart."""
    seq = holds or {}
    wait = None
    if tr.wait is not None:
        wait = {k: v for k, v in tr.wait.items() if k != "fired"}
        if "arms" in wait:
            wait["arms"] = [dict(a, hold=seq.get((a["node"], "node")))
                            for a in wait["arms"] if a["kind"] != "conditional"] + \
                           [dict(a) for a in wait["arms"] if a["kind"] == "conditional"]
        elif wait["kind"] in ("timer", "message", "signal", "task"):
            wait["hold"] = seq.get((tr.node, "node"))
    bounds = {}
    for b, arm in sorted(tr.bounds.items()):
        bounds[b] = dict(arm)
        if arm["kind"] != "conditional":
            bounds[b]["hold"] = seq.get((b, "boundary"))
    return {"id": tr.id, "node": tr.node, "state": tr.state, "parents": list(tr.parents),
            "origin": tr.origin, "via": tr.via, "wait": wait, "boundaries": bounds}


def capture(run: Run, now: int) -> dict[str, Any]:
    """The checkpoint document of a resident instance, deadlines in virtual microseconds."""
    return {
        "schema": 1,
        "instance": run.id,
        "process": {"id": run.defn.id, "version": run.defn.version,
                    "signature": run.defn.signature},
        "at": now,
        "state": run.state,
        "data": copy.deepcopy(run.data),
        "seq": dict(run.seq),
        "tracks": [track_doc(t, {(h.node, h.wait_kind): h.seq
                                 for h in run.core.holders.of_track(run.id, t.id)})
                   for t in run.tracks.values() if t.state not in TERMINAL],
        "joins": {g: {f: list(ts) for f, ts in flows.items()}
                  for g, flows in run.joins.items()},
    }
