"""Multi-instance activities (Camunda 8's model), and standard loops.

The track that enters a multi-instance task or subprocess becomes its *body*: it parks on a
``ManyWait``, arms the activity's boundaries, and starts inner instances — all at once, or one
after another when sequential. An inner instance is a track at the same node inside the body's
scope, with its own locals (its item as ``element``, and ``loopCounter``); it runs the
activity as a plain one would, and where a plain one would leave, it ends and reports to the
body. Each inner instance's wait is held on its own. When every inner instance has ended, or
the completion condition holds after one has, the body leaves by the activity's flows with
the output collection (item order) written to the data; inner instances still running are
cancelled. Stopping the body stops every inner instance.

A standard loop runs the same way as a sequential multi-instance activity whose count is not
known ahead: the body parks on a ``ManyWait`` (its ``total``: the runs begun so far) and each
run is an inner instance of origin ``loop`` whose ``loopCounter`` is its number. Before the
first run (``test_before``) and after each run, the loop goes on while its condition holds
(``loopCounter`` there: the runs done) and ``maximum`` runs are not done; a ``loop_ended``
fact says how many runs there were and why it stopped (``condition`` or ``maximum``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model import elements as el
from ...vocabulary import NODE, TERMINAL
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK, spawn
from ..state.incident import Incident
from ..state.records import Track, Trigger
from ..state.waits import ManyWait
from .boundaries import arm_boundaries
from .compensation import lift

Result = Any


def inner(run: Run, tr: Track) -> bool:
    """Whether ``tr`` is an inner instance (its scope is a body at its own node)."""
    if tr.locals is None or tr.scope is None:
        return False
    body = run.tracks.get(tr.scope)
    return body is not None and body.node == tr.node


def evaluate(run: Run, node: el.Element, what: str, expr: Any,
             extra: dict[str, Any] | None = None, owner: str = "multi-instance") -> Any:
    """An expression of ``owner`` (a multi-instance activity's, an ad-hoc subprocess's)
    over what the running track sees (plus ``extra``); an error is the node's incident."""
    data = run.seen()
    if extra:
        data = {**data, **extra}
    what = f"{owner} {what}"
    if expr.python:  # a Python callable answers through the tape
        key = "adhoc" if owner == "ad-hoc" else "many"
        return run.core.tape.call((key, node.id), _evaluate, node, what, expr, data)
    return _evaluate(node, what, expr, data)


def _evaluate(node: el.Element, what: str, expr: Any, data: dict[str, Any]) -> Any:
    try:
        return expr(data)
    except KeyError as exc:
        raise Incident(node.id, f"{what} {expr.describe()!r} names missing "
                                f"field {exc}") from None
    except Exception as exc:
        raise Incident(node.id, f"{what} {expr.describe()!r} raised "
                                f"{type(exc).__name__}") from None


def enter_body(run: Run, tr: Track, node: el.Element) -> Result:
    """The track becomes the body: its inner instances are counted and started."""
    if node.loop is not None:
        return enter_loop(run, tr, node)
    many = node.many
    assert many is not None
    if many.collection is not None:
        items = evaluate(run, node, "collection", many.collection)
        if not isinstance(items, list):
            raise Incident(node.id, f"multi-instance collection {many.collection.describe()!r} "
                                    f"is a {type(items).__name__}, not a list")
    else:
        count = evaluate(run, node, "cardinality", many.cardinality)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise Incident(node.id, f"multi-instance cardinality {count!r} is not a count")
        items = [None] * count
    outputs = [None] * len(items) if many.output_collection is not None else None
    if not items:
        return finish(run, tr, node, outputs)
    tr.wait = w = ManyWait(node.id, len(items), list(items) if many.sequential else None,
                           outputs)
    arm_boundaries(run, tr, node)
    for i in range(1 if many.sequential else len(items)):
        begin(run, tr, node, w, items[i])
    return PARK


def begin(run: Run, body: Track, node: el.Element, w: ManyWait, item: Any) -> None:
    """Start the next inner instance, with its item."""
    many = node.many
    assert many is not None
    w.started += 1
    child = run.new_track(node.id, (body.id,), "many", scope=body.id)
    child.locals = {"loopCounter": w.started}
    if many.element is not None:
        child.locals[many.element] = item
    spawn(run, child)


def complete(run: Run, tr: Track, node: el.Element) -> None:
    """An inner instance is done where a plain activity would leave: its output is kept,
    and the body goes on when all are done or the completion condition holds."""
    body = run.tracks[tr.scope or ""]
    w = body.wait
    assert isinstance(w, ManyWait) and tr.locals is not None
    if node.loop is not None:
        next_run(run, tr, node, body, w)
        return
    many = node.many
    assert many is not None
    index = tr.locals["loopCounter"] - 1
    if w.outputs is not None and many.output_element is not None:
        w.outputs[index] = evaluate(run, node, "output element", many.output_element)
    w.done += 1
    run.emit("node_left", tr.id, node.id, None)
    run.set_state(tr, "completed")
    tr.coro = None
    active = w.started - w.done  # an inner instance ends by completing, or all at once
    counts = {"numberOfInstances": w.total, "numberOfCompletedInstances": w.done,
              "numberOfActiveInstances": active, "nrOfInstances": w.total,
              "nrOfCompletedInstances": w.done, "nrOfActiveInstances": active}
    done = w.done == w.total or (many.completion is not None and bool(
        evaluate(run, node, "completion condition", many.completion, counts)))
    if not done:
        if many.sequential and w.items is not None:
            begin(run, body, node, w, w.items[w.started])
        elif run.running == 0:  # the others all wait: a quiet point
            run.core.on_quiet(run)
        return
    run.stop_all(run.members(body.id), "cancelled", "cancelled")
    resume_body(run, body, node, w, tr.steps)


def resume_body(run: Run, body: Track, node: el.Element, w: ManyWait, steps: int) -> None:
    """The inner instances are done: the body goes on from the last one's ``steps``."""
    w.fired = True
    assert body.coro is not None
    trigger = Trigger("many", node.id, NODE, body.id)
    trigger.steps = steps
    run.core.kernel.resume(body.coro, trigger)


def finish(run: Run, tr: Track, node: el.Element, outputs: list[Any] | None) -> Result:
    """The body leaves: the output collection goes into the data."""
    many = node.many
    run.disarm(tr)
    lift(run, tr)
    if outputs is not None and many is not None and many.output_collection is not None:
        run.merge({many.output_collection: outputs}, node.id)
    return outgoing(run, node)


# -- standard loops -----------------------------------------------------------------------
def enter_loop(run: Run, tr: Track, node: el.Element) -> Result:
    """The track becomes a loop's body and begins its first run, unless the loop tested
    before it does not hold (then it leaves at once, having run zero times)."""
    stop = stopping(run, node, 0)
    if stop is not None:
        run.emit("loop_ended", tr.id, node.id, {"iterations": 0, "reason": stop})
        return finish(run, tr, node, None)
    tr.wait = w = ManyWait(node.id, 0)
    arm_boundaries(run, tr, node)
    begin_run(run, tr, node, w, tr.steps)
    return PARK


def stopping(run: Run, node: el.Element, done: int) -> str | None:
    """Why the loop stops after ``done`` runs (``maximum``, ``condition``), or None: it
    runs again. Its condition is not tested before the first run unless ``test_before``."""
    loop = node.loop
    assert loop is not None
    if loop.maximum is not None and done >= loop.maximum:
        return "maximum"
    if loop.condition is None or (done == 0 and not loop.test_before):
        return None
    holds = evaluate(run, node, "condition", loop.condition, {"loopCounter": done})
    return None if holds else "condition"


def begin_run(run: Run, body: Track, node: el.Element, w: ManyWait, steps: int) -> None:
    """The next run, numbered by ``loopCounter``; it goes on from ``steps`` (the last run's:
    a loop with no wait in its runs is a loop to the step bound)."""
    w.started += 1
    w.total = w.started
    child = run.new_track(node.id, (body.id,), "loop", scope=body.id)
    child.locals = {"loopCounter": w.started}
    child.steps = steps
    spawn(run, child)


def next_run(run: Run, tr: Track, node: el.Element, body: Track, w: ManyWait) -> None:
    """A run is done where a plain activity would leave: the loop runs again, or its body
    goes on."""
    w.done += 1
    run.emit("node_left", tr.id, node.id, None)
    run.set_state(tr, "completed")
    tr.coro = None
    stop = stopping(run, node, w.done)
    if stop is None:
        begin_run(run, body, node, w, tr.steps)
        return
    run.emit("loop_ended", body.id, node.id, {"iterations": w.done, "reason": stop})
    resume_body(run, body, node, w, tr.steps)


def entering(enter: Callable[..., Result]) -> Callable[..., Result]:
    """An activity's enter path, multi-instance aware: a track entering a multi-instance
    activity becomes its body; an inner instance runs the plain path, and where that leaves,
    it completes instead."""
    def entered(run: Run, tr: Track, node: el.Element) -> Result:
        if not node.repeats:
            return enter(run, tr, node)
        if not inner(run, tr):
            return enter_body(run, tr, node)
        return completed(run, tr, node, enter(run, tr, node))
    return entered


def firing(fire: Callable[..., Result]) -> Callable[..., Result]:
    """An activity's fire path, multi-instance aware: the body's own trigger (its inner
    instances are done) leaves the activity; an inner instance completes where it would
    leave."""
    def fired(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
        if not node.repeats:
            return fire(run, tr, node, trigger)
        if trigger.kind == "many":
            w = tr.wait
            assert isinstance(w, ManyWait)
            return finish(run, tr, node, w.outputs)
        return completed(run, tr, node, fire(run, tr, node, trigger))
    return fired


def completed(run: Run, tr: Track, node: el.Element, result: Result) -> Result:
    if result is PARK or result is None or tr.state in TERMINAL:
        return result
    complete(run, tr, node)
    return None
