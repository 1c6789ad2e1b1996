"""The inclusive gateway: split by every condition that holds, join by the BPMN 2.0.2 rule.

The join fires when some incoming flow has a token and no live token of its scope could
still reach an incoming flow that has none: a token can reach an incoming flow when its
node is in the definition's ``reach`` of that flow (paths within the scope, not through the
gateway, along flows, from an activity to its boundaries and from a link throw to its
catch). A token on an incoming flow counts as arrived only once its track has entered the
gateway and parked there; until then (it left its node and enters the gateway in an event
of its own) it is still upstream, and the join waits for it. A token inside
a subprocess counts through the track running the subprocess. Arrivals park like a parallel
join's; waiting joins are settled when a track arrives and at every quiet point, in the
order of the definition's nodes.
"""

from __future__ import annotations

from ...model import elements as el
from ...vocabulary import TERMINAL, WAITING
from ..runtime.compute import outgoing
from ..runtime.run import BUSY, Run
from ..runtime.tracks import spawn
from ..state.records import Track, Trigger, join_key, join_parts
from ..state.waits import JoinWait

Result = object


def split(run: Run, node: el.InclusiveGateway) -> Result:
    """Every flow whose condition holds (an unconditional flow always does); the default
    flow only when no other holds (``compute.outgoing``, as out of an activity)."""
    return outgoing(run, node, "no condition holds and there is no default flow")


def enter(run: Run, tr: Track, node: el.InclusiveGateway) -> Result:
    if len(run.defn.incoming[node.id]) <= 1:
        return split(run, node)
    key = join_key(node.id, tr.scope)
    run.joins.setdefault(key, {}).setdefault(tr.via or "", []).append(tr.id)
    tr.wait = JoinWait(node.id)
    tr.coro = None
    run.set_state(tr, WAITING, {"state": WAITING, "join": True})
    if not settle(run, key) and run.running == 0:
        run.core.on_quiet(run)
    return None


def fire(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    assert isinstance(node, el.InclusiveGateway)
    return split(run, node)


def ready(run: Run, key: str) -> bool:
    """Whether the join ``key`` may fire: a token has arrived, and no other live token of
    its scope can still reach it — neither from a node upstream of an incoming flow that has
    no token parked, nor on its way along an incoming flow, not yet parked (module
    docstring)."""
    arrived = run.joins.get(key)
    if not arrived or not any(arrived.values()):
        return False
    node, scope = join_parts(key)
    reach = run.defn.reach[node]
    blocked = set().union(*(nodes for f, nodes in reach.items() if not arrived.get(f)))
    for t in run.tracks.values():
        if t.scope != scope or t.state in TERMINAL:
            continue
        if t.node in blocked:
            return False
        if t.node == node and t.state in BUSY and t.via in reach:
            return False  # on its way in: it enters the gateway in its next event
    return True


def settle(run: Run, key: str) -> bool:
    """Fire the join ``key`` if it may: one track from each flow that has one merges into a
    new track that leaves the gateway. True when it fired."""
    if not ready(run, key):
        return False
    node, scope = join_parts(key)
    arrived = run.joins[key]
    merged = tuple(arrived[f.id].pop(0) for f in run.defn.incoming[node] if arrived.get(f.id))
    if not any(arrived.values()):
        del run.joins[key]
    for tid in merged:
        other = run.tracks[tid]
        other.wait = None
        run.set_state(other, "merged")
    child = run.new_track(node, merged, "join", scope=scope)
    spawn(run, child, Trigger("join", node, "node", child.id))
    return True


def settle_all(run: Run) -> bool:
    """At a quiet point: settle every waiting inclusive join, in the definition's order.
    True when one fired (the instance is not quiet any more)."""
    order = {n: i for i, n in enumerate(run.defn.reach)}
    fired = False
    for key in sorted((k for k in run.joins if join_parts(k)[0] in order),
                      key=lambda k: (order[join_parts(k)[0]], k)):
        fired = settle(run, key) or fired
    return fired
