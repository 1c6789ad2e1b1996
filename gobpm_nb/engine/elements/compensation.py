"""Compensation and transactions (BPMN 2.0, 10.7; docs/semantics.md, Compensation).

An activity with a compensation handler, once it has *completed*, leaves a record in the
scope it completed in (``Run.compensable``, by the track running that scope; ``ROOT`` for the
process): its id and a copy of the data it saw as it completed. A subprocess around such
activities leaves one record holding the records of its inside; the runs of a
multi-instance activity or a loop leave one each, in the scope around it. Records that a
scope made go with it when it is stopped.

A compensation throw (or end) takes its scope's records (all, or those of its ``ref``), the
latest first, and parks on a ``CompensateWait``: each record's handler runs in a track
inside it (origin ``compensation``, its locals the record's data), one after another, as
the tracks of a subprocess run inside the track that runs it; when the last has ended, the
throw goes on. A subprocess's record runs its compensation event subprocess if it has one,
else its own handler, else its inner records (the latest first). A cancel end event makes
the track running its transaction do the same with the transaction's records, after every
other track inside is withdrawn, and then leave by the cancel boundary.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ...model import elements as el
from ...vocabulary import ROOT, TERMINAL
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK, spawn
from ..state.records import Track, Trigger
from ..state.waits import CompensateWait, ManyWait
from .boundaries import fork_boundary

Result = Any  # list of flows | PARK | None
Record = dict[str, Any]


# -- records ------------------------------------------------------------------------------
def recording(fn: Callable[..., Result]) -> Callable[..., Result]:
    """An activity's enter or fire path: where it leaves (completed), a compensable
    activity leaves its record."""
    def done(run: Run, tr: Track, node: el.Element, *trigger: Trigger) -> Result:
        result = fn(run, tr, node, *trigger)
        if result is not PARK and result is not None and node.id in run.defn.compensable \
                and tr.state not in TERMINAL:
            record(run, tr, node)
        return result
    return done


def record(run: Run, tr: Track, node: el.Element) -> None:
    """``tr`` has completed ``node``: its record goes into its scope's list (a subprocess's
    holds what completed inside it; one with nothing to compensate leaves none)."""
    rec: Record = {"node": node.id, "data": copy.deepcopy(run.seen())}
    if isinstance(node, el.SubProcess):
        inner = run.compensable.pop(tr.id, None)
        if inner:
            rec["inner"] = inner
        elif node.id not in run.defn.compensation and \
                node.id not in run.defn.compensation_events:
            return
    run.compensable.setdefault(tr.scope or ROOT, []).append(rec)


def lift(run: Run, body: Track) -> None:
    """A multi-instance activity or a loop is done: the records of its runs go into the
    scope around it, in the order they completed."""
    runs = run.compensable.pop(body.id, None)
    if runs:
        run.compensable.setdefault(body.scope or ROOT, []).extend(runs)


def take(run: Run, scope: str, ref: str | None) -> list[Record]:
    """The records a throw in ``scope`` compensates (those of ``ref``; None: all), the
    latest first; they are compensated once, so they leave the scope's list."""
    records = run.compensable.get(scope)
    if not records:
        return []
    taken = [r for r in records if ref is None or r["node"] == ref]
    kept = [r for r in records if ref is not None and r["node"] != ref]
    if kept:
        run.compensable[scope] = kept
    else:
        del run.compensable[scope]
    return taken[::-1]


# -- throws -------------------------------------------------------------------------------
def enter_throw(run: Run, tr: Track, node: el.CompensationThrow | el.CompensationEnd
                ) -> Result:
    """A compensation throw or end: the handlers run one at a time, then it goes on. One
    that does not wait (``no_wait``) hands them to a new track at the throw (origin
    ``compensation``), which runs them as the throw would and then ends, and goes on at
    once."""
    queue = take(run, tr.scope or ROOT, node.ref)
    if node.no_wait and queue:
        host = run.new_track(node.id, (tr.id,), "compensation", scope=tr.scope)
        host.wait = CompensateWait(node.id, queue)
        spawn(run, host, Trigger("compensation", node.id, "node", host.id))
        return done(run, tr, node)
    tr.wait = w = CompensateWait(node.id, queue)
    if next_handler(run, tr, w):
        return PARK
    return thrown(run, tr, node)


def fire_throw(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The handler running inside the throw has ended: the next one runs, or, all done, the
    throw goes on (a transaction leaves by its cancel boundary)."""
    w = tr.wait
    assert isinstance(w, CompensateWait)
    if w.current is not None:
        run.emit("compensated", tr.id, w.current, {"by": node.id})
    w.fired = False
    if next_handler(run, tr, w):
        return PARK
    return thrown(run, tr, node)


def thrown(run: Run, tr: Track, node: el.Element) -> Result:
    """Every handler is done."""
    tr.wait = None
    if isinstance(node, el.Transaction):
        guarded = body_of(run, tr) or tr
        for b in run.defn.boundaries.get(node.id, ()):
            if isinstance(b, el.CancelBoundary):
                fork_boundary(run, guarded, b, None)
                return None
    if getattr(node, "no_wait", None):  # the track that ran them for a throw gone on
        run.end_track(tr, "completed")
        return None
    return done(run, tr, node)


def done(run: Run, tr: Track, node: el.Element) -> Result:
    """A throw goes on by its flows; an end event ends its track."""
    if isinstance(node, el.EndEvent):
        run.emit("node_left", tr.id, node.id, None)
        run.end_track(tr, "completed")
        return None
    return outgoing(run, node)


def body_of(run: Run, tr: Track) -> Track | None:
    """The body of the multi-instance activity ``tr`` is an inner instance of, or None: a
    cancelled inner instance of a transaction fires the cancel boundary the body armed."""
    if tr.locals is None or tr.scope is None:
        return None
    body = run.tracks.get(tr.scope)
    if body is None or body.node != tr.node or not isinstance(body.wait, ManyWait):
        return None
    return body


def next_handler(run: Run, host: Track, w: CompensateWait) -> bool:
    """Start the handler of the next record in a track inside ``host``; a subprocess
    without a handler of its own puts its inner records first. False: none is left."""
    defn = run.defn
    while w.queue:
        rec = w.queue.pop(0)
        activity = rec["node"]
        handler = defn.compensation_events.get(activity) or defn.compensation.get(activity)
        if handler is None:
            w.queue[0:0] = rec.get("inner", [])[::-1]
            continue
        w.current = activity
        child = run.new_track(handler, (host.id,), "compensation", scope=host.id)
        child.locals = rec["data"]
        run.emit("compensation_started", host.id, activity, {"handler": handler,
                                                               "track": child.id})
        if handler in defn.compensation_events.values():
            if rec.get("inner"):
                run.compensable[child.id] = rec["inner"]
            start = defn.inner_start[handler]
            spawn(run, child, Trigger("compensation", start, "node", host.id))
        else:
            spawn(run, child)
        return True
    w.current = None
    return False


# -- transactions -------------------------------------------------------------------------
def enter_cancel_end(run: Run, tr: Track, node: el.CancelEnd) -> Result:
    """A cancel end: every other track in the transaction is withdrawn, its guards go, and
    the track running it compensates what completed inside, then leaves by the cancel
    boundary (``fire_throw``, once this track has ended)."""
    host = run.tracks[tr.scope or ""]
    run.emit("node_left", tr.id, node.id, None)
    others = [t for t in run.members(host.id) if t is not tr]
    run.stop_all(others, "withdrawn", "withdrawn")
    run.disarm(host)
    queue = run.compensable.pop(host.id, [])[::-1]
    run.emit("transaction_cancelled", host.id, host.node,
             {"withdrawn": len(others), "activities": len(queue)})
    host.wait = CompensateWait(host.node, queue)
    run.end_track(tr, "completed")  # the last track inside: the host goes on
    return None
