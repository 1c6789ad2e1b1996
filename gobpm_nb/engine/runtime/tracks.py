"""The coroutines of a resident instance: one per live track, and the instance loop.

A track runs one node per scheduler event: it enters the node (``enter``), parks while the
node waits, runs the node's fire path when its trigger comes (``fire``), and leaves by its
flows. A timer's firing is one event: the timer's own event runs the fire path, leaves, and
enters the node after the timer (a message, signal or task completion is delivered by an
event of its own, and the next node is entered in the event after it). The loop handles
the instance's mailbox one item per event. What each element does comes from the host's
``elements.table`` (handed in, so this module never imports it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping
from typing import Any, Protocol

from ...kernel import PASS, SUSPEND, Trap
from ...vocabulary import ACTIVE, RESIDENT, RUNNING, WAITING
from ..state.incident import Incident
from ..state.records import Track, Trigger
from .run import Run

PARK = "park"  # a behaviour's answer: the track waits for a trigger
log = logging.getLogger("gobpm_nb")


class Behaviour(Protocol):
    """What each element does: on enter, on fire, how a track leaves, the loop's items."""

    ENTER: Mapping[str, Callable[..., Any]]
    FIRE: Mapping[str, Callable[..., Any]]

    def paths(self, defn: Any) -> tuple[Mapping[str, Callable[..., Any]],
                                        Mapping[str, Callable[..., Any]]]: ...
    def leave(self, run: Run, tr: Track, flows: Any) -> bool: ...
    def handle(self, run: Run, item: tuple[Any, ...]) -> None: ...


def behaviour_of(run: Run) -> Behaviour:
    b: Behaviour = run.core.behaviour
    return b


def spawn(run: Run, tr: Track, trigger: Trigger | None = None, within: bool = False) -> None:
    """Give a ready track its coroutine; it enters its node (with ``trigger`` if one is in
    hand) in an event of its own, or ``within`` the event running now."""
    kernel = run.core.kernel
    tr.coro = track_body(run, tr, trigger)
    if within:
        kernel.adopt(tr.coro, ("track", run.id, tr.id))
        kernel.resume_within(tr.coro, None)
    else:
        kernel.spawn(tr.coro, ("track", run.id, tr.id), None)


def adopt_parked(run: Run, tr: Track) -> None:
    """A track rebuilt from a checkpoint, parked on its wait: its coroutine is born
    suspended and its first resume brings the trigger."""
    tr.coro = track_body(run, tr, None, parked=True)
    run.core.kernel.adopt(tr.coro, ("track", run.id, tr.id))


def start_loop(run: Run, asleep: bool = False) -> None:
    """Give the instance its loop. ``asleep``: born waiting for its first mailbox item (a
    hydrated instance), so that what is posted runs in the order it was posted."""
    run.loop = loop_body(run)
    if asleep:
        run.core.kernel.adopt(run.loop, ("loop", run.id, None))
        run.loop_waiting = True
    else:
        run.loop_waiting = False
        run.core.kernel.spawn(run.loop, ("loop", run.id, None), None)


def track_body(run: Run, tr: Track, trigger: Trigger | None,
               parked: bool = False) -> Generator[Trap, Any, None]:
    """One track (module docstring); born ``parked``, its first resume brings the trigger."""
    first = yield SUSPEND
    b = behaviour_of(run)
    (enter, fire), nodes, leave = b.paths(run.defn), run.defn.nodes, b.leave
    emit, move, iid = run.core.emit, run._move, run.id
    run.at = tr  # what its expressions and functions read (``Run.seen``)
    try:
        move(tr, RUNNING)
        if parked:
            trigger = woke(tr, first)
        else:
            run.entering(tr)
        node = nodes[tr.node]
        if trigger is None:
            result = enter[node.id](run, tr, node)
        else:
            result = fire[node.id](run, tr, node, trigger)
            if result is not PARK:
                tr.wait = None
        # a timer's event goes on into the node after the timer: one event per firing
        within = trigger is not None and trigger.kind == "timer"
        trigger = first = None  # hold no trigger while parked: it would outlive its use
        while True:
            while result is PARK:
                move(tr, WAITING)  # no fact: its holds say so
                if run.running == 0:
                    run.core.on_quiet(run)
                if run.residency != RESIDENT:
                    return  # the instance dehydrated at this quiet point
                got = woke(tr, (yield SUSPEND))
                run.at = tr
                move(tr, RUNNING)
                node = nodes[tr.node]
                within = got.kind == "timer"
                result = fire[node.id](run, tr, node, got)
                del got  # hold no trigger while parked: it would outlive its use
                if result is not PARK:
                    tr.wait = None
            if result is None or run.state != ACTIVE:  # ended, or its caller ended it
                return
            if len(result) == 1:  # one flow: leave without the fork machinery
                emit("node_left", iid, tr.id, tr.node, None)
                tr.node, tr.via = result[0].target, result[0].id
            elif leave(run, tr, result):
                return  # no flow at all: the track ended there (an implicit end)
            if within:
                within = False
            else:
                yield PASS
                run.at = tr
            run.entering(tr)
            node = nodes[tr.node]
            result = enter[node.id](run, tr, node)
    except Incident as exc:
        run.fail(tr, exc)
    except Exception as exc:  # not an incident by design: the instance fails, never strands
        log.exception("instance %s, track %s at %r raised", run.id, tr.id, tr.node)
        run.fail(tr, Incident(tr.node, f"{type(exc).__name__}: {exc}"))


def woke(tr: Track, trigger: Trigger) -> Trigger:
    """A parked track's trigger came: it goes on from the trigger's steps without a wait (0
    for a wait that fired; ``Run.entering``)."""
    tr.steps = trigger.steps
    return trigger


def loop_body(run: Run) -> Generator[Trap, Any, None]:
    """The instance loop: handles its mailbox one item per event, then sleeps."""
    yield SUSPEND
    handle = behaviour_of(run).handle
    while True:
        while run.mailbox:
            item = run.mailbox.popleft()
            if item[0] == "event":
                run.opening_events -= 1
            run.at = None
            try:
                handle(run, item)
            except Exception as exc:  # an incident, or anything else: the instance fails
                if not isinstance(exc, Incident):
                    log.exception("instance %s: its loop raised on %r", run.id, item[0])
                    exc = Incident(str(item[2]) if len(item) > 2 else run.id,
                                   f"{type(exc).__name__}: {exc}")
                tr = run.tracks.get(item[1]) if len(item) > 1 else None
                run.fail(tr or next(iter(run.tracks.values())), exc)
            if run.residency != RESIDENT:
                return
            if run.mailbox:
                yield PASS
            elif run.running == 0:
                run.core.on_quiet(run)  # what the item changed may have made it quiet
                if run.residency != RESIDENT:
                    return
        run.loop_waiting = True
        yield SUSPEND
