"""Ad-hoc subprocesses (BPMN ``adHocSubProcess``, Camunda 8's choices; docs/semantics.md).

A track that enters one *runs* it, as a subprocess's does: it parks on an ``AdHocWait``,
arms the subprocess's boundaries, and activates the elements its collection names (each
in a new track inside, origin ``scope``, at that element). Its inner elements with no
incoming flow are the activatable ones; an activated element runs and its flows inside go
on as usual. While one may be activated, the track holds a person's choice (a ``decision``
hold at the subprocess): ``Engine.activate`` is its trigger, and the track, resumed in
place (never a continuation fork: the tracks inside name it), activates the element and
waits again.

Each time a track inside ends (``ended``, from ``Run.close_scope``) its completion condition
is checked, if it has one and the track completed (not while a person's activation is on its
way: the tracks it starts end later, and the check comes then): when it holds, what still runs is
cancelled (``cancel_remaining``) or waited for, and no element is activated any more. With
nothing left inside, a sequential one starts its next queued element; else, with no
completion condition (or one that held), the subprocess completes and its track leaves
(Camunda 8: it completes after the last active element); with a completion condition that
does not hold yet, it stays, waiting for a person's activation.
"""

from __future__ import annotations

from typing import Any

from ...model.adhoc import AdHocSubProcess
from ...vocabulary import NODE
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK, spawn
from ..state.adhoc_wait import AdHocWait
from ..state.incident import Incident
from ..state.records import Track, Trigger
from .boundaries import arm_boundaries
from .multi_instance import evaluate as evaluate_expression
from .subprocesses import arm_events

Result = Any  # list of flows | PARK | None


def evaluate(run: Run, node: AdHocSubProcess, what: str, expr: Any) -> Any:
    """The collection or the completion condition over what the running track sees."""
    return evaluate_expression(run, node, what, expr, owner="ad-hoc")


def enter(run: Run, tr: Track, node: AdHocSubProcess) -> Result:
    """The track runs the subprocess: the collection's elements are activated (a
    sequential one queues all but the first); the person's choice is held while one may be
    activated. An empty or absent collection activates nothing: it waits for a person."""
    ids: list[str] = []
    if node.collection is not None:
        ids = evaluate(run, node, "collection", node.collection)
        allowed = run.defn.activatable[node.id]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise Incident(node.id, f"ad-hoc collection {node.collection.describe()!r} is "
                                    f"a {type(ids).__name__}, not a list of element ids")
        wrong = [i for i in ids if i not in allowed]
        if wrong:
            raise Incident(node.id, f"ad-hoc collection names {wrong[0]!r}, not an "
                                    f"activatable element of {node.id!r} (those: "
                                    f"{', '.join(allowed)})")
    tr.wait = w = AdHocWait(node.id)
    arm_boundaries(run, tr, node)
    arm_events(run, tr, node.id)
    if node.sequential and ids:
        w.queue = ids[1:]
        ids = ids[:1]
    for i in ids:
        activate(run, tr, node, w, i, "collection")
    w.hold(run.core.holders, run.id, tr.id)
    return PARK


def activate(run: Run, tr: Track, node: AdHocSubProcess, w: AdHocWait, element: str,
             by: str) -> None:
    """A new track inside the subprocess enters ``element``."""
    w.started += 1
    if node.sequential:
        w.busy = True
    run.emit("adhoc_activated", tr.id, node.id, {"element": element, "by": by})
    child = run.new_track(element, (tr.id,), "scope", scope=tr.id)
    spawn(run, child)


def fire(run: Run, tr: Track, node: AdHocSubProcess, trigger: Trigger) -> Result:
    """A ``scope`` trigger: the subprocess is complete, its track leaves. A ``decision``
    trigger: a person activated the element it names (``ref``); the track waits again."""
    w = tr.wait
    assert isinstance(w, AdHocWait)
    if trigger.kind == "scope":
        run.disarm(tr)
        return outgoing(run, node)
    element = trigger.ref or ""
    if element not in run.defn.activatable[node.id] or not w.open:
        raise Incident(node.id, f"activation of {element!r} is not one the subprocess "
                                "can take now")
    w.fired = False
    activate(run, tr, node, w, element, "person")
    w.hold(run.core.holders, run.id, tr.id)
    return PARK


def ended(run: Run, host: Track, last: Track) -> bool:
    """A track inside the ad-hoc subprocess ``host`` runs has ended (``last``); True when
    that completes the subprocess (its track is resumed to leave it)."""
    w = host.wait
    node = run.defn.nodes[host.node]
    assert isinstance(w, AdHocWait) and isinstance(node, AdHocSubProcess)
    completed = last.state == "completed"
    w.done += completed
    if on_its_way(run, host):  # the tracks it starts end later, and check then
        return False
    live = host.id in run.inside
    if completed and not w.closing and node.completion is not None and \
            bool(evaluate(run, node, "completion condition", node.completion)):
        run.emit("adhoc_condition_held", host.id, node.id,
                 {"running": len(run.members(host.id)), "cancel": node.cancel_remaining})
        w.queue = []
        w.closing = True
        let_go(run, host)
        if node.cancel_remaining and live:
            run.stop_all(run.members(host.id), "cancelled", "cancelled")
            live = False
    if live:
        return False
    if w.queue and not w.closing:  # a sequential one: its next queued element
        activate(run, host, node, w, w.queue.pop(0), "collection")
        return False
    if w.closing or node.completion is None:
        let_go(run, host)
        w.fired = True
        assert host.coro is not None
        trigger = Trigger("scope", host.node, NODE, host.id)
        trigger.steps = last.steps
        run.core.kernel.resume(host.coro, trigger)
        return True
    if w.busy:  # a sequential one is free: a person may activate the next element
        w.busy = False
        w.hold(run.core.holders, run.id, host.id)
    return False


def on_its_way(run: Run, host: Track) -> bool:
    """Whether a person's activation was accepted and has not run yet: delivered (its wait
    fired), or accepted while the instance was dehydrated and waiting to be handed over."""
    w = host.wait
    if w is not None and w.fired:
        return True
    waking = run.core.holders.waking
    return bool(waking) and any(h in waking and h.site.track == host.id and
                                h.site.kind == "decision" for h in run.holds)


def let_go(run: Run, host: Track) -> None:
    """Release the person's choice held at the subprocess (no more activations)."""
    holders = run.core.holders
    hold = holders.decisions.get((run.id, host.id))
    if hold is not None:
        holders.release(hold, "withdrawn")


__all__ = ["activate", "ended", "enter", "fire"]
