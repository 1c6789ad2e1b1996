"""Events: start, intermediate catch and throw (timer, message, signal, conditional), and
the boundary events' pass-through when a boundary fork enters them.

A behaviour returns the flows to leave by, ``PARK`` to wait for a trigger, or None when the
track ends there (``table``).
"""

from __future__ import annotations

from typing import Any

from ...errors import GobpmError
from ...model import elements as el
from ..runtime.compute import check, key_of, outgoing, timer_wait
from ..runtime.run import Run
from ..runtime.tracks import PARK
from ..state.incident import Incident
from ..state.records import Track, Trigger
from ..state.values import Opaque, json_copy
from ..state.waits import (
    ConditionalWait,
    MessageWait,
    SignalWait,
)
from .boundaries import arm_boundaries

Result = Any  # list of flows | PARK | None


def enter_start(run: Run, tr: Track, node: el.Element) -> Result:
    """A start event, a link catch, a none throw: the track passes."""
    return outgoing(run, node)


def fire_pass(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    """Fire path of a catch event: bind the payload, then leave."""
    if trigger.payload:
        run.merge(trigger.payload, node.id)
    plain = run.defn.plain.get(node.id)  # flows without conditions: the common case
    return plain if plain is not None else outgoing(run, node)


def enter_timer(run: Run, tr: Track, node: el.TimerCatch) -> Result:
    tr.wait = w = timer_wait(run, node.id)
    run.core.holders.hold_timer(run.id, tr.id, node.id, w.deadline)  # w.hold(), one call less
    return PARK


def enter_message(run: Run, tr: Track, node: Any) -> Result:
    key = key_of(run, node)
    buffered = run.core.hub.take_buffered(node.message, key, run.id, run.stored)
    if buffered is not None:
        run.emit("message_correlated", tr.id, node.id,
                 {"message": node.message, "fields": len(buffered), "buffered": True})
        return fire_pass(run, tr, node, Trigger("message", node.id, "node", tr.id, buffered))
    tr.wait = w = MessageWait(node.id, node.message, key)
    w.hold(run.core.holders, run.id, tr.id)
    arm_boundaries(run, tr, node)
    return PARK


def enter_signal(run: Run, tr: Track, node: el.SignalCatch) -> Result:
    tr.wait = w = SignalWait(node.id, node.signal)
    w.hold(run.core.holders, run.id, tr.id)
    return PARK


def enter_conditional(run: Run, tr: Track, node: el.ConditionalCatch) -> Result:
    if check(run, node.id, node.condition):
        return outgoing(run, node)
    tr.wait = ConditionalWait(node.id, order=run.core.kernel.next_seq())
    return PARK


def fire_conditional(run: Run, tr: Track, node: el.Element, trigger: Trigger) -> Result:
    return outgoing(run, node)


def enter_message_throw(run: Run, tr: Track, node: el.MessageThrow) -> Result:
    publish(run, node)
    return outgoing(run, node)


def publish(run: Run, node: el.MessageThrow | el.MessageEnd) -> None:
    """Publish a message throw's (or message end's) message, with its key and payload; a
    publish the hub refuses is an incident at the node."""
    key = None
    if node.key is not None:  # a Python callable's key goes through the tape
        key = run.core.tape.call(("key", node.id), throw_key, run, node) if node.key.python \
            else throw_key(run, node)
    try:
        run.core.hub.publish_message(node.message, key=key, payload=pick(run, node),
                                     generation=run.generation + 1)
    except GobpmError as exc:
        raise Incident(node.id, str(exc)) from None


def throw_key(run: Run, node: el.MessageThrow | el.MessageEnd) -> Any:
    """The key a message throw publishes with (a copy; a value that is not JSON is kept as
    an ``Opaque`` that the publish refuses as it would the value)."""
    assert node.key is not None
    try:
        key = node.key(run.seen())
    except KeyError as exc:  # worded as a wait's key that names a missing field
        raise Incident(node.id, f"correlation key {node.key.describe()!r} names missing "
                                f"field {exc}") from None
    except Exception as exc:  # a user's key failed: an incident, never an escape
        raise Incident(node.id, f"correlation key {node.key.describe()!r} raised "
                                f"{type(exc).__name__}: {exc}") from None
    try:
        return json_copy(key, "key")
    except (TypeError, ValueError, RecursionError):
        return Opaque(key)


def enter_signal_throw(run: Run, tr: Track, node: el.SignalThrow) -> Result:
    broadcast(run, node)
    return outgoing(run, node)


def broadcast(run: Run, node: el.SignalThrow | el.SignalEnd) -> None:
    """Broadcast a signal throw's (or signal end's) signal, with its payload; a broadcast
    the hub refuses is an incident at the node."""
    payload = pick(run, node) or None
    try:
        run.core.hub.broadcast_signal(node.signal, payload=payload,
                                      generation=run.generation + 1)
    except GobpmError as exc:
        raise Incident(node.id, str(exc)) from None


def pick(run: Run, node: Any) -> dict[str, Any]:
    data = run.seen()
    missing = [f for f in node.payload if f not in data]
    if missing:
        raise Incident(node.id, f"payload field {missing[0]!r} is not in the data")
    return {f: data[f] for f in node.payload}


def enter_boundary(run: Run, tr: Track, node: el.Element) -> Result:
    return outgoing(run, node)
