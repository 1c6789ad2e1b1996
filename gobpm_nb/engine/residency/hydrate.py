"""Hydration: a dehydrated instance's live state rebuilt from its checkpoint (a wake, a
terminated child, restart recovery)."""

from __future__ import annotations

import copy
from typing import Protocol

from ...vocabulary import ROOT, WAITING
from ..durability.checkpoint import Image
from ..runtime.finished import Finished
from ..runtime.run import Run, RunHost
from ..runtime.tracks import adopt_parked, spawn, start_loop
from ..state.dehydrated import Dehydrated
from ..state.records import Track
from ..state.waits import JoinWait


class Host(RunHost, Protocol):
    """What hydration needs of the engine (the ``Core``): a run's host, and its records."""

    runs: dict[str, Run | Dehydrated | Finished]  # instance id -> its record


def restore(core: Host, rec: Dehydrated, image: Image,
            woken: set[str] | frozenset[str] = frozenset(),
            ready: list[tuple[Run, Track]] | None = None, check: bool = True) -> Run:
    """Hydrate: rebuild a dehydrated instance's live state from its checkpoint. Every
    parked track but the ``woken`` gets a coroutine born parked (trigger absent) and keeps
    its id; the holders kept their waits, so nothing registers again. A track the
    checkpoint caught before it parked enters its node again: at once, or, given
    ``ready``, when its caller spawns what it put there. ``check``: its conditional waits
    are checked in the loop's first turn (restart recovery: the checkpoint may precede a
    check); a wake does not ask (the instance dehydrated at a quiet point, every condition
    checked on the data it still has: a resident instance would not check again either)."""
    assert rec.defn is not None, "a wake loads the definition before it restores"
    run = Run(core, rec.id, rec.defn, image.data)
    run.holds = list(rec.holds)
    run.stored = rec.stored
    run.parent, run.generation = image.parent, image.generation
    if image.compensable:
        run.compensable = copy.deepcopy(image.compensable)
    core.runs[rec.id] = run
    run.seq = dict(image.seq)
    run.joins = {g: {f: list(ts) for f, ts in fl.items()} for g, fl in image.joins.items()}
    if image.resets:
        run.resets = {g: list(fl) for g, fl in image.resets.items()}
    run.state = image.state
    for view in rec.history or ():
        run.tracks[view.id] = Track(view.id, view.node, view.parents, view.origin,
                                    state=view.state)
    for tr in image.tracks:
        run.tracks[tr.id] = tr
    run.tracks = dict(sorted(run.tracks.items(), key=lambda kv: int(kv[0][1:])))
    start_loop(run, asleep=True)
    conditions = 0
    if image.events is not None:  # the process's event subprocess starts, still held
        run.root = Track(ROOT, ROOT, (), "start", state=WAITING)
        run.root.boundaries = dict(image.events)
    for tr in image.tracks:
        for w in (tr.wait, *tr.boundaries.values()):
            if w is not None:
                w.local(core, run.id, tr.id)
                conditions += w.conditions()
        if tr.id in woken or isinstance(tr.wait, JoinWait):
            continue
        if tr.wait is None:  # caught before it parked: it enters its node again
            run.revive(tr)
            if ready is None:
                spawn(run, tr)
            else:
                ready.append((run, tr))
        else:
            adopt_parked(run, tr)
            run.set_state(tr, "waiting")
    run.reindex()
    if image.events is None and run.defn.event_starts.get(ROOT):  # its first checkpoint,
        core.behaviour.open_root(run, image.tracks[0])  # before its start opened it
    first = image.tracks[0] if len(image.tracks) == 1 else None
    if first is not None and first.via is not None and first.wait is None:  # as of its
        core.behaviour.open_arms(run, first)  # start: a parallel gateway's arms, armed again
    if conditions and check:
        run.post(("data",))
    return run
