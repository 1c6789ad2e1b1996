"""Start events that create instances: a message, timer, signal or conditional start in the
process itself.

``deploy`` arms the start events of the newest version of a process as holds that belong to
no instance (``DEPLOYED``; the hold's track names the process): a timer start's deadline in
the one deadline heap, a message start and a signal start in their indexes. Deploying a newer
version withdraws the older one's start holds and arms its own. A trigger starts a new
instance at that start event with the trigger's payload as its data: a published message
that no waiting instance takes, each broadcast of a signal, each deadline of a timer (a
cycle arms its next one). A timer start's next deadline is kept in the store's meta, so a
restarted engine keeps it (one that has fired for good does not fire again). A conditional
start arms nothing: ``on_conditions`` evaluates it on the data ``Engine.start_on_conditions``
is given.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from ...errors import EngineError
from ...kernel import Kernel, iso
from ...model import Definition
from ...model import elements as el
from ...model.multiple import MultipleStart
from ..durability.journal import Journal, Store
from ..runtime.compute import deadline_of
from ..runtime.outside import Outside
from ..state.fields import Reader
from ..state.holders import DEPLOYED, Hold, Holders
from ..state.records import Trigger

START = "start"  # the wait kind of a start event's hold
#: The trigger kinds whose new instance starts resident when the store refuses its first
#: checkpoint: nobody could give the trigger again (a call's child, a timer's, a signal's).
TRIGGERED = frozenset(("call", "timer", "signal"))


class Starts:
    """The armed start events of every deployed process (one version each: the newest), with
    what they use of the engine handed in: the kernel (deadlines), the facts' emitter, the
    holders (start holds), the store and the journal (each timer start's next deadline, kept
    in the store's meta), the deployed versions (``definition``), how an instance is made
    (``launch``: the core's) and how long a chain of self-starts may grow (``limit``)."""

    def __init__(self, kernel: Kernel, emit: Callable[..., Any], holders: Holders, store: Store,
                 journal: Journal, *, limit: int,
                 definition: Callable[[str, int], Definition | None],
                 launch: Callable[..., str]):
        self.kernel, self.emit, self.holders = kernel, emit, holders
        self.store, self.journal = store, journal
        self.definition, self.launch = definition, launch
        #: The generation of an instance a trigger creates now: 0, or while an instance
        #: throws, its generation + 1 (``Hub.publish_message``, ``Hub.broadcast_signal``).
        #: Above ``limit`` (the engine's max_call_depth) the throw is refused: a process
        #: that starts itself without end.
        self.generation, self.limit = 0, limit
        #: process id -> the version whose start events are armed
        self.armed: dict[str, int] = {}

    def arm(self, defn: Definition) -> None:
        """Arm the start events of ``defn``, the newest version of its process, in place of
        an older version's."""
        if not defn.instance_starts or self.armed.get(defn.id, 0) >= defn.version:
            return
        holders = self.holders
        for hold in holders.of_track(DEPLOYED, defn.id):
            holders.release(hold, "withdrawn")
        self.armed[defn.id] = defn.version
        recorded = self.store.meta()
        for sid in defn.instance_starts:
            if isinstance(defn.nodes[sid], el.EventGateway):  # each arm, as a start event
                for f in defn.outgoing[sid]:
                    self._arm_one(defn, f.target, recorded)
            else:
                self._arm_one(defn, sid, recorded)

    def _arm_one(self, defn: Definition, sid: str, recorded: dict[str, str]) -> None:
        """Arm start event ``sid`` (or an arm of a gateway that creates instances)."""
        start, holders = defn.nodes[sid], self.holders
        if isinstance(start, (el.TimerStart, el.TimerCatch)):
            at, left = self.first_deadline(defn, sid, recorded)
            if at is not None:
                holders.hold_timer(DEPLOYED, defn.id, sid, at, START, left)
        elif isinstance(start, (el.MessageStart, el.MessageCatch, el.ReceiveTask)):
            holders.hold_subscription(DEPLOYED, defn.id, sid, "message", start.message,
                                      None, START)
        elif isinstance(start, (el.SignalStart, el.SignalCatch)):
            holders.hold_subscription(DEPLOYED, defn.id, sid, "signal", start.signal,
                                      None, START)
        elif isinstance(start, MultipleStart):  # any one of its definitions starts one
            for d in start.events:
                if d.kind == "timer":
                    at, left = self.first_deadline(defn, sid, recorded)
                    if at is not None:
                        holders.hold_timer(DEPLOYED, defn.id, sid, at, START, left)
                else:
                    holders.hold_subscription(DEPLOYED, defn.id, sid, d.kind,
                                              d.message if d.kind == "message" else d.signal,
                                              None, START)

    def first_deadline(self, defn: Definition, sid: str, recorded: dict[str, str]
                       ) -> tuple[int | None, int | None]:
        """The deadline a timer start waits for: the one the store recorded for this version
        (None: it fired for good), else one armed now."""
        text = recorded.get(_key(defn, sid))
        if text is not None:
            try:
                doc = json.loads(text)
                r = Reader(f"{defn.id} start {sid}")
                at = None if doc["at"] is None else r.time(doc["at"], "at")
                return at, doc["left"]
            except Exception:  # an unreadable record: armed again as when first deployed
                pass
        at, left = self.deadline(defn, sid)
        return at, left

    def deadline(self, defn: Definition, sid: str, cycles: int | None = None,
                 after: int | None = None) -> tuple[int | None, int | None]:
        holder = _Timing(self, defn)
        try:
            at, left = deadline_of(holder, sid, cycles, after)  # type: ignore[arg-type]
        except Exception:  # out of the calendar: it never fires
            return None, None
        self._record(defn, sid, at, left)
        return at, left

    def _record(self, defn: Definition, sid: str, at: int | None, left: int | None) -> None:
        try:
            self.journal.set_meta({_key(defn, sid): json.dumps(
                {"at": iso(at) if at is not None else None, "left": left})})
        except Exception:  # the store failed: after a restart it is armed as if new
            pass

    def message(self, name: str) -> Hold | None:
        """The first armed message start for ``name``."""
        for hold in self.holders.deployed.holds:
            if hold.kind == "message" and hold.name == name:
                return hold
        return None

    def fire(self, hold: Hold, trigger: Trigger | None, key: Any = None) -> str | None:
        """A start event's trigger: a new instance of the armed version, its data the
        payload. A timer's next deadline (a cycle) is armed first. A message published with
        ``key`` that creates an instance at a parallel event-based gateway initializes the
        instance's correlation value with it: the arm's key field, unless the payload gives
        it, holds the key."""
        holders = self.holders
        pid = hold.track
        defn = self.definition(pid, self.armed.get(pid, 0))
        if defn is None:
            return None
        self.refuse_beyond(hold.name or pid)
        payload = trigger.payload if trigger is not None else None
        if hold.kind == "timer":
            holders.release(hold, "fired")
            self.emit("timer_fired", None, None, hold.node, hold.site.fired_details)
            left = hold.cycles
            at: int | None = None
            if left not in (None, 0):
                at, left = self.deadline(defn, hold.node, left, hold.at)
                if at is not None:
                    holders.hold_timer(DEPLOYED, pid, hold.node, at, START, left)
            else:
                self._record(defn, hold.node, None, None)
        begin, via = entry(defn, hold.node)
        data = dict(payload or {})
        gate, catch = defn.nodes[begin], defn.nodes[hold.node]
        if key is not None and isinstance(gate, el.EventGateway) and gate.parallel and \
                isinstance(catch, (el.MessageCatch, el.ReceiveTask)) and catch.key is not None \
                and catch.key.field is not None:
            data.setdefault(catch.key.field, key)
        # a message's instance is refused with the store (the publisher hears it and
        # publishes again); a timer's or a signal's starts resident all the same
        return self.launch(defn, data, None, begin, hold.kind, via=via,
                           generation=self.generation)

    def refuse_beyond(self, name: str) -> None:
        """An EngineError when an instance created now would be of a generation above the
        limit: each instance of the chain was started by the throw of the one before."""
        if self.generation > self.limit:
            raise EngineError(
                f"{name!r} would start an instance of generation {self.generation}: a chain "
                f"of instances each started by the throw of the one before is longer than "
                f"max_call_depth ({self.limit}); the process starts itself without end")

    def on_conditions(self, defns: list[Definition], data: dict[str, Any], tape: Outside
                      ) -> list[tuple[Definition, str]]:
        """Of each version, the first conditional start whose condition holds on ``data``
        (none: the version is left out); a Python condition answers through ``tape``. A
        condition that cannot be evaluated on it (a missing name, an error) counts as false,
        said by a ``start_condition_failed`` fact naming the process, the start and the
        kind of error, never a value."""
        chosen = []
        for defn in defns:
            for sid in conditional_starts(defn):
                start = defn.nodes[sid]
                assert isinstance(start, el.ConditionalStart) and start.condition is not None
                cond = start.condition
                holds, cause, field = tape.call(("start_condition", sid), _holds, cond,
                                                     data) if cond.python else \
                    _holds(cond, data)
                if cause is not None:
                    details = {"process": defn.id, "cause": cause}
                    if field is not None:
                        details["field"] = field
                    self.emit("start_condition_failed", None, None, sid, details)
                if holds:
                    chosen.append((defn, sid))
                    break
        return chosen


def _holds(cond: Any, data: dict[str, Any]) -> tuple[bool, str | None, str | None]:
    """Whether a condition holds on ``data`` (a copy is given), and what kept it from being
    evaluated: the error's type name, and the missing name of a KeyError."""
    try:
        return bool(cond(copy.deepcopy(data))), None, None
    except KeyError as exc:
        name = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
        return False, "KeyError", name
    except Exception as exc:  # a user's callable or expression failed
        return False, type(exc).__name__, None


def conditional_starts(defn: Definition) -> list[str]:
    """The process's own conditional start events, in the definition's order."""
    return [sid for sid in defn.instance_starts
            if isinstance(defn.nodes[sid], el.ConditionalStart)]


class _Timing:
    """What ``deadline_of`` reads of an instance, for a start event that has none yet: its
    version, and the kernel as ``core.kernel`` (the start events' own)."""

    def __init__(self, starts: Starts, defn: Definition):
        self.core = starts
        self.defn = defn


def entry(defn: Definition, sid: str) -> tuple[str, str | None]:
    """Where an instance that start event ``sid`` creates begins, and by which flow its first
    track leaves: the start event itself (None), or, for an arm of a gateway that creates
    instances, the gateway and the flow to that arm."""
    if isinstance(defn.nodes[sid], el.StartEvent):
        return sid, None
    (flow,) = defn.incoming[sid]
    return flow.source, flow.id


def _key(defn: Definition, sid: str) -> str:
    return f"start:{defn.id}:{defn.version}:{sid}"


__all__ = ["START", "TRIGGERED", "Starts", "conditional_starts"]


def how_it_starts(defn: Definition) -> str:
    """What starts instances of ``defn`` when it has no plain start event, one call per start
    event: ``eng.publish_message('invoice-received', payload={...})`` for a message start,
    ``eng.broadcast_signal(...)`` for a signal start, the clock for a timer start,
    ``eng.start_on_conditions({...})`` for a conditional start."""
    ways = []
    for sid in defn.instance_starts:
        node = defn.nodes[sid]
        if isinstance(node, el.EventGateway):
            kind = "parallel" if node.parallel else "exclusive"
            arms = ", ".join(repr(f.target) for f in defn.outgoing[sid])
            ways.append(f"{kind} event-based gateway {sid!r}: the first event of its arms "
                        f"({arms}) creates one")
        elif isinstance(node, el.MessageStart):
            ways.append(f"message start {sid!r}: eng.publish_message({node.message!r}, "
                        "payload={...})")
        elif isinstance(node, el.SignalStart):
            ways.append(f"signal start {sid!r}: eng.broadcast_signal({node.signal!r}, "
                        "payload={...})")
        elif isinstance(node, el.ConditionalStart) and node.condition is not None:
            ways.append(f"conditional start {sid!r} ({node.condition.describe()}): "
                        "eng.start_on_conditions({...}) starts one when it holds on the data")
        elif isinstance(node, MultipleStart):
            ways.append(f"start {sid!r}: any one of its {len(node.events)} event "
                        "definitions creates one")
        elif isinstance(node, el.TimerStart) and node.timer is not None:
            ways.append(f"timer start {sid!r} ({node.timer.kind} {node.timer.text}): it "
                        "starts one when the clock gets there (eng.advance or eng.run)")
        else:
            ways.append(f"start event {sid!r} ({node.kind})")
    return "; ".join(ways)
