"""What each element does when a track enters it (ENTER) and when its trigger fires (FIRE).

A behaviour returns the flows to leave by, ``PARK`` to wait for a trigger, or None when the
track ends there. FIRE is the wait node's fire path: it runs once per trigger, whether the
trigger reached a parked track or arrived with a continuation fork after a wake. Boundaries
live in ``boundaries``; the waits a behaviour arms are the classes of ``waits``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ...model import elements as el
from ...model.definition import Definition
from ..runtime.run import Run
from ..runtime.tracks import spawn
from ..state.records import Track
from . import (
    adhoc,
    call_activities,
    compensation,
    complex,
    events,
    gateways,
    inclusive,
    mapping,
    multi_instance,
    multiple,
    subprocesses,
    tasks,
)
from .boundaries import check_conditions, fire_boundary_event

#: Elements that take no variable mappings
MAPPED_NOT = {"exclusive_gateway", "inclusive_gateway", "parallel_gateway", "complex_gateway",
              "event_gateway"}

Result = Any  # list of flows | PARK | None


# -- leaving --------------------------------------------------------------------------------
def leave(run: Run, tr: Track, flows: list[el.Flow]) -> bool:
    """Leave the track's node: the track takes the first flow, a child forks for each other.
    With no flow at all (a node without outgoing flows) the track ends there, as at a plain
    end event (BPMN's implicit end): True."""
    run.core.emit("node_left", run.id, tr.id, tr.node, None)
    if not flows:
        run.end_track(tr, "completed")
        return True
    if len(flows) > 1:
        for f in flows[1:]:
            child = run.new_track(f.target, (tr.id,), "fork", f.id, scope=tr.scope)
            spawn(run, child)
    first = flows[0]
    tr.node = first.target
    tr.via = first.id
    return False


def handle(run: Run, item: tuple[Any, ...]) -> None:
    """The loop's dispatch, by verb."""
    verb = item[0]
    if verb == "boundary":
        fire_boundary_event(run, item[1], item[2], item[3])
    elif verb == "event":
        subprocesses.open_event(run, item[1], item[2], item[3])
    elif verb == "data":
        check_conditions(run, subprocesses.open_event)


ENTER: dict[str, Callable[..., Result]] = {
    "start": events.enter_start,
    "end": subprocesses.enter_end,
    "message_end": subprocesses.enter_end,
    "signal_end": subprocesses.enter_end,
    "multiple_end": subprocesses.enter_end,
    "none_throw": events.enter_start,
    "subprocess": subprocesses.enter_subprocess,
    "transaction": subprocesses.enter_subprocess,
    "adhoc_subprocess": adhoc.enter,
    "compensation_throw": compensation.enter_throw,
    "compensation_end": compensation.enter_throw,
    "cancel_end": compensation.enter_cancel_end,
    "escalation_throw": subprocesses.enter_escalation_throw,
    "multiple_throw": subprocesses.enter_multiple_throw,
    "link_throw": subprocesses.enter_link_throw,
    "link_catch": events.enter_start,
    "inclusive_gateway": inclusive.enter,
    "complex_gateway": complex.enter,
    "script_task": tasks.call_fn,
    "service_task": tasks.enter_service,
    "user_task": tasks.enter_user_task,
    "receive_task": events.enter_message,
    "timer_catch": events.enter_timer,
    "message_catch": events.enter_message,
    "signal_catch": events.enter_signal,
    "conditional_catch": events.enter_conditional,
    "message_throw": events.enter_message_throw,
    "signal_throw": events.enter_signal_throw,
    "exclusive_gateway": gateways.enter_exclusive,
    "parallel_gateway": gateways.enter_parallel,
    "event_gateway": gateways.enter_event_gateway,
    "multiple_catch": multiple.enter,
    "multiple_boundary": events.enter_boundary,
}
for _kind in ("timer_boundary", "message_boundary", "signal_boundary", "error_boundary",
              "conditional_boundary", "escalation_boundary", "cancel_boundary"):
    ENTER[_kind] = events.enter_boundary

FIRE: dict[str, Callable[..., Result]] = {
    "exclusive_gateway": gateways.fire_decision,
    "timer_catch": events.fire_pass,
    "message_catch": events.fire_pass,
    "signal_catch": events.fire_pass,
    "receive_task": tasks.finish_activity(events.fire_pass),
    "conditional_catch": events.fire_conditional,
    "user_task": tasks.finish_activity(tasks.fire_task),
    "service_task": tasks.finish_activity(tasks.fire_job),
    "parallel_gateway": gateways.fire_join,
    "inclusive_gateway": inclusive.fire,
    "complex_gateway": complex.fire,
    "event_gateway": gateways.fire_gateway,
    "subprocess": subprocesses.fire_scope,
    "transaction": subprocesses.fire_scope,
    "adhoc_subprocess": adhoc.fire,
    "compensation_throw": compensation.fire_throw,
    "compensation_end": compensation.fire_throw,
    "event_subprocess": subprocesses.fire_scope,
    "multiple_catch": multiple.fire,
    "multiple_boundary": events.fire_pass,
    "multiple_start": events.fire_pass,
}
for _kind in ("timer_boundary", "message_boundary", "signal_boundary", "error_boundary",
              "conditional_boundary", "escalation_boundary", "message_start", "timer_start",
              "signal_start", "error_start", "escalation_start", "cancel_boundary",
              "compensation_start", "conditional_start"):
    FIRE[_kind] = events.fire_pass

ENTER["call_activity"] = call_activities.enter_call
FIRE["call_activity"] = tasks.finish_activity(call_activities.fire_call)
# an inclusive gateway may be a decision (a person or a rule chooses its flows)
ENTER["inclusive_gateway"] = gateways.enter_inclusive
FIRE["inclusive_gateway"] = gateways.fire_inclusive
for _kind in ("message_start", "timer_start", "signal_start",
              "conditional_start", "multiple_start"):  # starting an instance
    ENTER[_kind] = events.enter_start

#: The paths with no layer at all: what an element without mappings that neither repeats nor
#: is compensable runs (``paths``).
BARE_ENTER = dict(ENTER)
BARE_FIRE = dict(FIRE)
for _kind in sorted(set(ENTER) - MAPPED_NOT):  # variable mappings, innermost
    ENTER[_kind] = mapping.entering(ENTER[_kind])
for _kind in sorted(set(FIRE) - MAPPED_NOT):
    FIRE[_kind] = mapping.firing(FIRE[_kind])
#: The paths with mappings but without the multi-instance and compensation layers: what an
#: activity with mappings that neither repeats nor is compensable runs.
PLAIN_ENTER = dict(ENTER)
PLAIN_FIRE = dict(FIRE)
for _kind in ("user_task", "service_task", "script_task", "receive_task", "subprocess",
              "transaction", "call_activity", "adhoc_subprocess"):
    # multi-instance or a loop: a body over its runs
    # completed, a compensable activity leaves its record (``compensation``)
    PLAIN_FIRE[_kind] = FIRE.get(_kind, events.fire_pass)
    BARE_FIRE[_kind] = BARE_FIRE.get(_kind, events.fire_pass)
    ENTER[_kind] = compensation.recording(ENTER[_kind])
    FIRE[_kind] = compensation.recording(PLAIN_FIRE[_kind])
    ENTER[_kind] = multi_instance.entering(ENTER[_kind])
    # a script task fires as a body
    FIRE[_kind] = multi_instance.firing(FIRE[_kind])

Paths = tuple[dict[str, Callable[..., Result]], dict[str, Callable[..., Result]]]
#: id(definition) -> (a weak reference to it, its ``paths``); an entry leaves with its
#: definition.
_paths: dict[int, tuple[weakref.ref[Definition], Paths]] = {}


def paths(defn: Definition) -> Paths:
    """ENTER and FIRE by element id for ``defn``, chosen once per definition: an activity
    that repeats or is compensable gets the layered path, an element with mappings the
    mapped one, every other element its bare one (the layers would only pass its calls
    through)."""
    key = id(defn)
    known = _paths.get(key)
    if known is not None and known[0]() is defn:
        return known[1]
    enter: dict[str, Callable[..., Result]] = {}
    fire: dict[str, Callable[..., Result]] = {}
    for node in defn.nodes.values():
        layered = node.repeats or node.id in defn.compensable
        by_enter, by_fire = (ENTER, FIRE) if layered else (PLAIN_ENTER, PLAIN_FIRE) \
            if node.io is not None else (BARE_ENTER, BARE_FIRE)
        if node.kind in by_enter:
            enter[node.id] = by_enter[node.kind]
        if node.kind in by_fire:
            fire[node.id] = by_fire[node.kind]
    found = (enter, fire)
    _paths[key] = (weakref.ref(defn, lambda _: _paths.pop(key, None)), found)
    return found

settle_joins = complex.settle_all
adhoc_ended = adhoc.ended
open_root = subprocesses.open_root
open_arms = gateways.open_arms
