"""Variable mappings (``Element.io``, Camunda 8's input and output mappings).

Inputs are evaluated, in order, as a track enters the element, over what it sees (each input
sees the ones before it); they become the track's ``inputs``: seen by the element alone (its
job's data, its expressions, and what runs inside it when it is a subprocess) until it is
left. Outputs are evaluated, in order, as the element completes, over what it saw and what
it returned (a job's or user task's outputs, a message's payload); only they are written to
the data, and what it returned is not merged. A source that names a missing field is an
incident at the element.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ...model import elements as el
from ...vocabulary import RUNNING
from ..runtime.run import Run
from ..runtime.tracks import PARK
from ..state.incident import Incident, clean
from ..state.records import Track, Trigger

Result = Any  # list of flows | PARK | None
Pairs = tuple[tuple[str, Any], ...]

#: Triggers that do not complete the element: a job's error, a person's activation inside
#: an ad-hoc subprocess, a called instance's error or failure (an event subprocess opening
#: inside a subprocess: ``completes``)
_NOT_DONE = ("error", "decision", "call_error", "call_failed")
#: Elements whose track ends where they are entered: outputs are written before
_ENDS = ("end", "message_end", "signal_end", "multiple_end", "compensation_end",
         "cancel_end")


def entering(enter: Callable[..., Result]) -> Callable[..., Result]:
    """An element's enter path with its mappings: inputs before, and, where it completes at
    once, outputs after (an end event's before, since its track ends there; a function's
    task writes its own over what its function returned, ``tasks.call_fn``)."""
    def entered(run: Run, tr: Track, node: el.Element) -> Result:
        io = node.io
        if io is None:
            return enter(run, tr, node)
        if io.inputs:
            tr.inputs = evaluate(run, node, io.inputs, "input", {})
        if node.kind in _ENDS and io.outputs:
            write(run, node, evaluate(run, node, io.outputs, "output", {}))
        result = enter(run, tr, node)
        if result is not PARK and tr.state == RUNNING:
            if io.outputs and node.kind not in _ENDS and getattr(node, "fn", None) is None:
                write(run, node, evaluate(run, node, io.outputs, "output", {}))
            tr.inputs = None
        return result
    return entered


def firing(fire: Callable[..., Result]) -> Callable[..., Result]:
    """An element's fire path with its outputs: a trigger that completes it has its outputs
    written and its payload left out before the element leaves."""
    def fired(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
        io = node.io
        if io is None or not completes(node, trigger):
            return fire(run, tr, node, trigger)
        if io.outputs:
            returned = clean(trigger.payload, node.id) or {}
            write(run, node, evaluate(run, node, io.outputs, "output", returned))
            left = Trigger(trigger.kind, trigger.node, trigger.wait_kind, trigger.track,
                           None, trigger.ref)
            left.steps = trigger.steps
            trigger = left
        result = fire(run, tr, node, trigger)
        if result is not PARK:
            tr.inputs = None
        return result
    return fired


def completes(node: el.Element, trigger: Trigger) -> bool:
    """Whether ``trigger`` completes ``node`` (rather than failing it or acting inside)."""
    if trigger.kind in _NOT_DONE:
        return False
    if isinstance(node, el.SubProcess) or node.kind == "adhoc_subprocess":
        return trigger.kind == "scope"
    return True


def evaluate(run: Run, node: el.Element, pairs: Pairs, kind: str,
             returned: dict[str, Any]) -> dict[str, Any]:
    """The values of ``pairs`` (target -> expression), each over what the element sees, what
    it returned and the ones before it; a Python callable answers through the tape."""
    if any(expr.python for _, expr in pairs):
        answer: dict[str, Any] = run.core.tape.call((f"{kind} mapping", node.id), _evaluate, run,
                                                    node, pairs, kind, returned)
        return answer
    return _evaluate(run, node, pairs, kind, returned)


def _evaluate(run: Run, node: el.Element, pairs: Pairs, kind: str,
              returned: dict[str, Any]) -> dict[str, Any]:
    base = {**run.seen(), **returned}
    out: dict[str, Any] = {}
    for target, expr in pairs:
        try:
            value = expr({**base, **out})
        except KeyError as exc:
            raise Incident(node.id, f"{kind} {target!r} ({expr.describe()!r}) names missing "
                                    f"field {exc}") from None
        except Exception as exc:  # a user's callable or expression failed
            raise Incident(node.id, f"{kind} {target!r} ({expr.describe()!r}) raised "
                                    f"{type(exc).__name__}") from None
        head, _, rest = target.partition(".")
        if rest:
            start = out[head] if head in out else base.get(head) if kind == "output" else None
            value = put(copy.deepcopy(start) if isinstance(start, dict) else {}, rest, value)
        out[head] = value
    copied = clean(out, node.id)
    return copied if copied is not None else {}


def put(context: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``context`` with ``value`` at the dotted ``path`` (contexts made where missing)."""
    at = context
    *steps, last = path.split(".")
    for step in steps:
        inner = at.get(step)
        at[step] = inner = inner if isinstance(inner, dict) else {}
        at = inner
    at[last] = value
    return context


def write(run: Run, node: el.Element, values: dict[str, Any]) -> None:
    """Write outputs: each field where the running track's view holds it as an input of an
    element it runs inside (Camunda's propagation to the scope that has the variable), else
    where its writes go."""
    if values:
        run.merge(values, node.id, copied=True)
