"""Tasks: script and service tasks (a function called through the tape, or a job for a
worker), user tasks (the task inbox), and what every activity does when its trigger fires
(its boundaries disarmed first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model import elements as el
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK
from ..state.incident import Incident, clean
from ..state.records import Job, Task, Track, Trigger
from ..state.waits import (
    JobWait,
    TaskWait,
)
from . import mapping, subprocesses
from .boundaries import arm_boundaries
from .events import fire_pass

Result = Any  # list of flows | PARK | None


def call_fn(run: Run, tr: Track, node: Any) -> Result:
    """Run a script or inline service: a copy of the data in, a dict merged back. What the
    function gave (or the error code it raised) goes on the tape: a replay is served it and
    never calls the function again."""
    code, values = run.core.tape.call(("fn", node.id), outcome_of, run, node)
    if code is not None:
        return subprocesses.throw(run, tr, node, code)
    if node.io is not None and node.io.outputs:  # only the outputs are written
        mapping.write(run, node, mapping.evaluate(run, node, node.io.outputs, "output",
                                                  values or {}))
    else:
        run.merge(values, node.id, copied=True)  # ``outcome_of`` made the copy
    return outgoing(run, node)


def outcome_of(run: Run, node: Any) -> tuple[Any, dict[str, Any] | None]:
    """Call a script or inline service: (the error code it raised, None), or (None, what to
    merge); what cannot be merged is an incident."""
    try:
        result = node.fn(run.seen_copy())
    except Exception as exc:
        return getattr(exc, "code", None) or type(exc).__name__, None
    return None, clean(result, node.id)


def enter_service(run: Run, tr: Track, node: el.ServiceTask) -> Result:
    if node.fn is not None:
        return call_fn(run, tr, node)
    job = new_job(run, tr, node)
    run.core.jobs[job.id] = job
    tr.wait = JobWait(node.id, job.id, job.topic)
    run.emit("job_created", tr.id, node.id, {"job": job.id, "topic": job.topic})
    arm_boundaries(run, tr, node)
    return PARK


def new_job(run: Run, tr: Track, node: el.ServiceTask) -> Job:
    topic = node.topic or "" if node.topic_from is None else topic_of(run, node)
    run.seq["job"] += 1
    return Job(f"{run.id}:{node.id}:{run.seq['job']}", topic, run.id, tr.id, node.id)


def topic_of(run: Run, node: el.ServiceTask) -> str:
    """The topic ``topic_from`` gives as the job is created: a non-empty string, else an
    incident (a Python callable answers through the tape)."""
    expr = node.topic_from
    assert expr is not None
    if expr.python:
        value = run.core.tape.call(("topic", node.id), _topic, run, node, expr)
    else:
        value = _topic(run, node, expr)
    if not isinstance(value, str) or not value:
        raise Incident(node.id, f"job type {expr.describe()!r} gave {type(value).__name__} "
                                f"{value!r}, not a topic (a non-empty string)")
    return value


def _topic(run: Run, node: el.ServiceTask, expr: Any) -> Any:
    try:
        return expr(run.seen())
    except KeyError as exc:
        raise Incident(node.id, f"job type {expr.describe()!r} names missing field "
                                f"{exc}") from None


def new_task(run: Run, tr: Track, node: el.UserTask) -> Task:
    run.seq["task"] += 1
    tid = f"{run.id}:{node.id}:{run.seq['task']}"
    return Task(tid, run.id, tr.id, node.id, node.label, node.assignee, run.core.kernel.now)


def fire_job(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    if trigger.kind == "error":
        return subprocesses.throw(run, tr, node, str((trigger.payload or {}).get("error")))
    run.emit("job_completed", tr.id, node.id, {"job": trigger.ref,
                                               "outputs": sorted(trigger.payload or {})})
    return fire_pass(run, tr, node, trigger)


def enter_user_task(run: Run, tr: Track, node: el.UserTask) -> Result:
    task = new_task(run, tr, node)
    run.core.inbox[task.id] = task
    tr.wait = w = TaskWait(node.id, task.id, task.created)
    run.emit("task_created", tr.id, node.id, {"task": task.id})
    w.hold(run.core.holders, run.id, tr.id)
    arm_boundaries(run, tr, node)
    return PARK


def fire_task(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    run.emit("task_completed", tr.id, node.id, {"task": trigger.ref,
                                                "outputs": sorted(trigger.payload or {})})
    return fire_pass(run, tr, node, trigger)


def finish_activity(fire: Callable[..., Result]) -> Callable[..., Result]:
    """The activity is done: its boundaries are disarmed before it fires."""
    def fired(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
        run.disarm(tr)
        return fire(run, tr, node, trigger)
    return fired
