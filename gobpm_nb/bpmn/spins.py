"""A warning at import for a loop that can spin: a gateway flow always taken when it is taken
at all (the default flow; an exclusive gateway's first flow without a condition; an inclusive
gateway's every flow without one) that leads back to the gateway through nodes none of which
waits. An instance that takes it loops at one virtual instant until the engine stops it
(``Engine(max_steps_without_wait=...)``, an incident naming the loop).

Nodes that do not wait: script tasks (a plain ``<task>`` reads as one), service tasks with a
Python function, exclusive gateways, parallel and inclusive splits (one incoming flow), throw
events and link events. Anything else (a user task, a timer, a subprocess, a join...) is
taken to wait, so a loop through it is not noted.
"""

from __future__ import annotations

from collections import deque

from ..errors import ModelError
from ..model import Definition
from ..model import elements as el
from .context import Context
from .xmllib import etree

_PASSING = frozenset({"script_task", "exclusive_gateway", "message_throw", "signal_throw",
                      "escalation_throw", "link_throw", "link_catch", "none_throw",
                      "multiple_throw"})
_SPLITS = frozenset({"parallel_gateway", "inclusive_gateway"})


def note_spins(ctx: Context, proc: etree._Element) -> None:
    """A warning on each gateway of the process just read (when it validates) whose always
    taken flow closes a loop with no wait, naming the flow and the loop's nodes."""
    assert ctx.process is not None
    try:
        defn = ctx.process.definition()
    except ModelError:
        return  # it cannot run: its errors are noted already
    for g in defn.nodes.values():
        if not isinstance(g, (el.ExclusiveGateway, el.InclusiveGateway)):
            continue
        for flow, which in _always(defn, g):
            loop = _back(defn, flow.target, g.id)
            if loop is not None:
                through = ", ".join(map(repr, loop[1:]))
                ctx.warning(ctx.by_id.get(g.id, proc),
                            f"{g.kind.replace('_', ' ')} {g.id!r}: its {which} flow "
                            f"{flow.id!r} leads back to it through {through} and nothing "
                            "on the way waits: an instance that takes it loops at one "
                            "virtual instant until the engine stops it with an incident "
                            "(max_steps_without_wait)")


def _always(defn: Definition, g: el.ExclusiveGateway | el.InclusiveGateway
            ) -> list[tuple[el.Flow, str]]:
    """The gateway's flows taken whenever it leaves by them: its default, and the first (an
    inclusive gateway: every) flow without a condition."""
    out = []
    first = True
    for f in defn.outgoing[g.id]:
        if g.default is not None and f.target == g.default:
            out.append((f, "default"))
        elif f.condition is None and (first or isinstance(g, el.InclusiveGateway)):
            out.append((f, "unconditioned"))
            first = False
    return out


def _passes(defn: Definition, node: el.Element) -> bool:
    if node.kind in _PASSING:
        return True
    if isinstance(node, el.ServiceTask):
        return node.topic is None and node.topic_from is None
    return node.kind in _SPLITS and len(defn.incoming[node.id]) <= 1


def _back(defn: Definition, start: str, goal: str) -> list[str] | None:
    """The shortest path from ``start`` to ``goal`` through nodes that do not wait, as
    ``[goal, start, ...]``; None when there is none."""
    if start == goal:
        return [goal]
    before: dict[str, str | None] = {start: None}
    todo = deque([start])
    while todo:
        here = todo.popleft()
        if not _passes(defn, defn.nodes[here]):
            continue
        after = [f.target for f in defn.outgoing[here]]
        if here in defn.links:
            after.append(defn.links[here])
        for nxt in after:
            if nxt == goal:
                path = [here]
                while (back := before[path[-1]]) is not None:
                    path.append(back)
                return [goal, *reversed(path)]
            if nxt not in before:
                before[nxt] = here
                todo.append(nxt)
    return None
