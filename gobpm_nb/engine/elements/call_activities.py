"""Call activities: a child instance of a deployed process, with a link to its caller.

Entering a call activity starts the child (the newest deployed version of the called process,
or the pinned one) with the named input fields, and parks the calling track on a
``CallWait`` held by the child's id. Parent and child are instances of their own: each
dehydrates and is woken on its own. When the child ends, its caller's hold is the trigger: the
output fields are merged and the call activity is left; an error the child did not catch
reaches the call activity (its error boundary, the scopes around it, else an incident); a
child that failed fails its caller's track. Stopping the calling track (an interrupting
boundary, the end of the caller) terminates the child.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ...errors import EngineError
from ...model import elements as el
from ...vocabulary import NODE
from ..runtime.compute import outgoing
from ..runtime.run import Run
from ..runtime.tracks import PARK
from ..state.holders import Hold
from ..state.incident import Incident
from ..state.records import Track, Trigger
from ..state.waits import CallWait
from .boundaries import arm_boundaries
from .subprocesses import throw

Result = Any


def enter_call(run: Run, tr: Track, node: el.CallActivity) -> Result:
    core = run.core
    defn = core.callable(node.process, node.version)
    pinned = f" version {node.version}" if node.version is not None else ""
    if defn is None:
        raise Incident(node.id, f"calls process {node.process!r}{pinned}, which is not "
                                "deployed")
    if not defn.start:
        raise Incident(node.id, f"process {node.process!r} has no plain start event to call")
    check_depth(run, node)
    data = run.seen()
    if node.inputs is None:
        values = copy.deepcopy(data)
    else:
        missing = [f for f in node.inputs if f not in data]
        if missing:
            raise Incident(node.id, f"input field {missing[0]!r} is not in the data")
        values = {f: copy.deepcopy(data[f]) for f in node.inputs}
    try:
        child = core.launch(defn, values, None, defn.start, "call", (run.id, tr.id))
    except EngineError as exc:
        raise Incident(node.id, f"could not start process {node.process!r}: {exc}") from None
    started = core.runs[child]
    if not isinstance(started, Run):  # it failed as it started (an event subprocess's start
        raise Incident(node.id, f"called instance {child} failed")  # could not be armed)
    for first in started.tracks.values():
        first.steps = tr.steps  # the child's start goes on from the caller's steps
    tr.wait = w = CallWait(node.id, child)
    w.hold(core.holders, run.id, tr.id)
    arm_boundaries(run, tr, node)
    return PARK


def check_depth(run: Run, node: el.CallActivity) -> None:
    """A call that would nest deeper than the engine's ``max_call_depth`` is an incident
    naming the chain of processes, from the first caller to the one it would call."""
    core = run.core
    limit = core.max_call_depth
    chain = [run.defn.id]
    rec: Any = run
    while rec.parent is not None and len(chain) <= limit:
        rec = core.runs.get(rec.parent[0])
        if rec is None:
            break
        chain.append(rec.defn.id if rec.defn is not None else rec.id)
    if len(chain) <= limit:
        return
    chain = [*reversed(chain), node.process]
    raise Incident(node.id, f"calls {node.process!r} deeper than {limit} calls "
                            f"(max_call_depth): {shorten(chain)}",
                   details={"chain": chain, "limit": limit})


def shorten(chain: list[str]) -> str:
    """A chain of process ids as text, a run of one id said once with its count."""
    runs: list[list[Any]] = []
    for pid in chain:
        if runs and runs[-1][0] == pid:
            runs[-1][1] += 1
        else:
            runs.append([pid, 1])
    return " -> ".join(repr(p) if n == 1 else f"{p!r} x{n}" for p, n in runs)


def fire_call(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """The child ended: its outputs come back, or its error is thrown here."""
    if trigger.kind == "call_error":
        return throw(run, tr, node, str((trigger.payload or {}).get("error")))
    if trigger.kind == "call_failed":
        raise Incident(node.id, f"called instance {trigger.ref} failed")
    if trigger.payload:
        run.merge(trigger.payload, node.id)
    return outgoing(run, node)


def returned(child: Run, record: Callable[[list[tuple[str, Trigger]]], None],
             deliver: Callable[[Hold, Trigger], object]) -> bool:
    """A child instance ended: hand its caller the trigger (recorded first with ``record``,
    the journal's, so a crash cannot lose it; then to ``deliver``, the router). False when
    the record failed: the child's checkpoint stays, and a restarted engine runs it to its
    end again."""
    core = child.core
    hold = core.holders.calls.get(child.id)
    if hold is None:
        return True  # its caller is gone (it was cancelled, or the child was terminated)
    defn = core.runs[hold.instance].defn
    node = defn.nodes[hold.node] if defn is not None else None
    thrown = child.thrown
    if thrown is not None:
        trigger = Trigger("call_error", hold.node, NODE, hold.track, {"error": thrown},
                          child.id)
    elif child.state == "failed":
        trigger = Trigger("call_failed", hold.node, NODE, hold.track, None, child.id)
    else:
        outputs = getattr(node, "outputs", None)
        data = child.data or {}
        values = copy.deepcopy(data if outputs is None else
                               {f: data[f] for f in outputs if f in data})
        trigger = Trigger("call", hold.node, NODE, hold.track, values, child.id)
    trigger.steps = child.steps  # the caller goes on from the steps the child ended with
    try:
        record([(hold.instance, trigger)])
    except EngineError:
        return False
    deliver(hold, trigger)
    return True
