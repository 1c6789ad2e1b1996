"""Dehydration and wake (ADR-007): release an idle instance, rebuild it from its checkpoint.

Release happens only when every live track is parked on a wait that is eligible (its node's
``dehydratable(ctx)`` says yes) and holdable (every armed wait of the track, boundaries and
gateway arms included, has an engine holder). On a trigger the holder hydrates the instance
from the store; a node's trigger then travels with a continuation fork, a boundary's does not.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .records import TERMINAL, Task, Track, TrackView
from .run import Released, Run

if TYPE_CHECKING:
    from .core import Core

log = logging.getLogger("gobpm_nb")

HELD = frozenset({"timer", "message", "signal", "task"})


class WaitContext:
    """What a wait node may consult when asked whether it is dehydratable."""

    __slots__ = ("remaining", "min_dehydrate_wait")

    def __init__(self, remaining: timedelta | None, min_dehydrate_wait: timedelta):
        self.remaining = remaining
        self.min_dehydrate_wait = min_dehydrate_wait


def unheld(tr: Track) -> str | None:
    """The armed wait of a parked track that no engine holder can keep, if there is one."""
    wait = tr.wait or {}
    kind = wait.get("kind")
    if kind == "ebg":
        for arm in wait["arms"]:
            if arm["kind"] not in HELD:
                return f"{arm['kind']} arm {arm['node']!r} of {tr.node!r}"
    elif kind not in HELD:
        return f"{kind} wait at {tr.node!r}"
    for bid, arm in tr.bounds.items():
        if arm["kind"] not in HELD:
            return f"{arm['kind']} boundary {bid!r} on {tr.node!r}"
    return None


def eligible(core: Core, defn: Any, tr: Track) -> bool:
    """The element's permission: its ``dehydratable(ctx)`` capability, if it has one,
    consulted with how long the track's own timer was when armed."""
    ask = getattr(defn.nodes[tr.node], "dehydratable", None)
    if ask is None:
        return False
    remaining = timedelta(microseconds=tr.remaining) if tr.remaining is not None else None
    return bool(ask(WaitContext(remaining, core.min_wait)))


def releasable(core: Core, run: Run, warn: bool = False) -> bool:
    """Invariant 2: every live track parked on an eligible, holdable wait; nothing in flight."""
    if run.running or run.mailbox or run.residency != "resident":
        return False
    parked = 0
    for tr in run.tracks.values():
        if tr.state in TERMINAL or (tr.wait or {}).get("kind") == "join":
            continue
        if tr.state != "waiting" or (tr.wait or {}).get("fired"):
            return False
        if not eligible(core, run.defn, tr):
            return False
        missing = unheld(tr)
        if missing is not None:
            if warn:
                warn_once(run, missing)
            return False
        parked += 1
    return parked > 0


def warn_once(run: Run, what: str) -> None:
    if run.warned is None:
        run.warned = set()
    if what not in run.warned:
        run.warned.add(what)
        log.warning("instance %s stays resident: the %s is eligible to dehydrate but has no "
                    "engine holder", run.id, what)


def release(core: Core, run: Run) -> None:
    """Release every coroutine of a quiet instance; its checkpoint is already stored. The
    instance's record shrinks to a ``Released``: id, history and holders."""
    history = [t.view() for t in run.tracks.values() if t.state in TERMINAL]
    for tr in list(run.tracks.values()):
        if tr.state == "waiting" and (tr.wait or {}).get("kind") != "join":
            if tr.coro is not None:
                core.kernel.close(tr.coro)
            tr.coro = None
            run.set_state(tr, "dehydrated")
    if run.loop is not None and run.loop is not core.current:
        core.kernel.close(run.loop)
    run.loop = None
    run.residency = "dehydrated"  # the loop sees this and ends
    core.runs[run.id] = Released(run.id, run.defn, history, tuple(run.holds))
    holds = run.holds
    run.emit("dehydrated", None, None, {
        "wait_kinds": sorted({h.kind for h in holds}), "waits": len(holds), "coroutines": 0})


def restore(core: Core, rec: Released, doc: dict[str, Any],
            woken: str | None = None) -> Run:
    """Hydrate: rebuild a released instance's live state from its checkpoint. Every parked
    track but ``woken`` gets a coroutine born parked (trigger absent) and keeps its id; the
    holders kept their waits, so nothing registers again."""
    from .run import track_body

    assert rec.defn is not None, "a wake loads the definition before it restores"
    run = Run(core, rec.id, rec.defn, doc["data"])
    run.holds = list(rec.holds)
    run.stored = rec.stored
    core.runs[rec.id] = run
    run.seq = dict(doc["seq"])
    run.joins = {g: {f: list(ts) for f, ts in fl.items()} for g, fl in doc["joins"].items()}
    run.state = doc["state"]
    for view in rec.history or ():
        run.tracks[view.id] = Track(view.id, view.node, view.parents, view.origin,
                                    state=view.state)
    restored = [track_from(core, t) for t in doc["tracks"]]
    for tr in restored:
        run.tracks[tr.id] = tr
    run.tracks = dict(sorted(run.tracks.items(), key=lambda kv: int(kv[0][1:])))
    run.start_loop()
    for tr in restored:
        rearm_local(core, run, tr)
        if tr.id == woken or (tr.wait or {}).get("kind") == "join":
            continue
        tr.coro = track_body(run, tr, None, parked=True)
        core.kernel.adopt(tr.coro, (run.id, tr.id))
        run.set_state(tr, "waiting")
    return run


def track_from(core: Core, t: dict[str, Any]) -> Track:
    """A track record rebuilt from its checkpoint entry."""
    tr = Track(sys.intern(t["id"]), t["node"], tuple(t["parents"]), t["origin"], t["via"],
               t["state"])
    tr.wait = t["wait"]
    tr.bounds = {b: dict(a) for b, a in t["boundaries"].items()}
    if tr.wait is not None and tr.wait["kind"] == "timer":
        tr.remaining = tr.wait["deadline"] - core.kernel.now
    return tr


def holds_of(core: Core, iid: str, tr: Track, defn: Any) -> list[tuple[int, Callable[[], Any]]]:
    """Restart recovery: what re-registers each holder of a parked track, trigger absent, at
    its recorded deadline and key, keyed by the order it was first armed (so subscriptions
    keep their order across a restart). A user task goes back to the inbox with its id."""
    holders = core.holders
    todo: list[tuple[int, Callable[[], Any]]] = []

    def later(record: dict[str, Any], make: Callable[[], Any]) -> None:
        todo.append((record.get("hold") or 0, make))

    wait = tr.wait or {}
    kind = wait.get("kind")
    if kind == "timer":
        later(wait, lambda: holders.hold_timer(iid, tr.id, tr.node, wait["deadline"]))
    elif kind in ("message", "signal"):
        later(wait, lambda: holders.hold_subscription(iid, tr.id, tr.node, kind, wait["name"],
                                                      wait.get("key")))
    elif kind == "task":
        node = defn.nodes.get(tr.node) if defn is not None else None
        task = Task(wait["task"], iid, tr.id, tr.node, node.label if node else tr.node,
                    getattr(node, "assignee", None), wait["created"])

        def inbox_again() -> Any:
            core.inbox[task.id] = task  # the inbox keeps its order too
            return holders.hold_task(iid, tr.id, tr.node, task.id)
        later(wait, inbox_again)
    elif kind == "ebg":
        for arm in wait["arms"]:
            later(arm, arm_maker(core, iid, tr, arm, arm["node"], "node"))
    for bid, arm in tr.bounds.items():
        if arm["kind"] != "conditional":
            later(arm, arm_maker(core, iid, tr, arm, bid, "boundary"))
    return todo


def arm_maker(core: Core, iid: str, tr: Track, arm: dict[str, Any], node: str,
              wait_kind: str) -> Callable[[], Any]:
    holders = core.holders
    if arm["kind"] == "timer":
        return lambda: holders.hold_timer(iid, tr.id, node, arm["deadline"], wait_kind,
                                          arm.get("cycles"))
    return lambda: holders.hold_subscription(iid, tr.id, node, arm["kind"], arm["name"],
                                             arm.get("key"), wait_kind)


def rearm_local(core: Core, run: Run, tr: Track) -> None:
    """Waits no holder keeps, which only a resident instance has: conditions and worker jobs."""
    from .records import Job

    wait = tr.wait or {}
    conditions = sum(1 for a in wait.get("arms", ()) if a["kind"] == "conditional")
    conditions += sum(1 for a in tr.bounds.values() if a["kind"] == "conditional")
    conditions += wait.get("kind") == "conditional"
    if conditions:
        run.conditionals += conditions
        run.post(("data",))
    if wait.get("kind") == "job" and wait["job"] not in core.jobs:
        node = run.defn.nodes[tr.node]
        core.jobs[wait["job"]] = Job(wait["job"], getattr(node, "topic", "") or "", run.id,
                                     tr.id, tr.node)


def views_of_dehydrated(rec: Released, doc: dict[str, Any]) -> list[TrackView]:
    """A released instance's tracks: history from memory, parked ones from its checkpoint."""
    views = list(rec.history or ())
    views += [TrackView(t["id"], t["node"], t["state"], tuple(t["parents"]), t["origin"])
              for t in doc["tracks"]]
    return sorted(views, key=lambda v: int(v.id[1:]))
