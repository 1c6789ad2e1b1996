"""Messages and signals: correlation, the time-to-live buffer, broadcasts.

A message goes to the first held subscription (in arming order) whose name and correlation
value match, is buffered for its ``ttl``, or is dropped. A message id already correlated
(within the journal's window) is dropped as a duplicate. A buffered message taken by an
instance stays in the *recorded* buffer until that instance's next checkpoint, so a crash in
between gives it back.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import EngineError, ModelError, shown
from ...kernel import Kernel, to_datetime, to_us
from ...model.timers import add, is_negative, parse_duration
from ..state.holders import DEPLOYED, Holders, correlation
from ..state.records import Trigger
from ..state.values import json_dict

if TYPE_CHECKING:
    from ..durability.journal import Journal
    from .starts import Starts


class Hub:
    """The message buffer and the message and signal entry points, with what they use of the
    engine handed in: the kernel (time-to-live deadlines), the facts' emitter, the holders
    (subscriptions), the journal (triggers recorded, message ids seen), the armed start
    events (a message or signal that starts an instance) and the router (``deliver``)."""

    def __init__(self, kernel: Kernel, emit: Callable[..., Any], holders: Holders,
                 journal: Journal, starts: Starts, deliver: Callable[..., object]) -> None:
        self.kernel, self.emit, self.holders = kernel, emit, holders
        self.journal, self.starts, self.deliver = journal, starts, deliver
        self.buffer: dict[tuple[str, str], deque[list[Any]]] = {}
        #: Buffered messages taken by instances not checkpointed since: instance -> rows.
        self.taken: dict[str, list[list[Any]]] = {}
        self._rows: str | None = "[]"  # buffer_rows() as last computed; None: changed since

    def publish_message(self, name: str, key: Any = None, payload: dict[str, Any] | None = None,
                        message_id: str | None = None, ttl: Any = None, generation: int = 0
                        ) -> str | None:
        """Deliver to the first matching subscription; buffer it for ``ttl``; or drop it.
        ``generation``: of an instance a message start creates from it (an instance's
        throw: its generation + 1; ``Starts.fire``)."""
        self.starts.generation = generation
        try:
            return self._publish(name, key, payload, message_id, ttl)
        finally:
            self.starts.generation = 0

    def _publish(self, name: str, key: Any, payload: dict[str, Any] | None,
                 message_id: str | None, ttl: Any) -> str | None:
        if not isinstance(name, str) or not name:
            raise EngineError(f"message name {shown(name)} must be a non-empty string")
        if message_id is not None and (not isinstance(message_id, str) or not message_id):
            raise EngineError(f"message_id {shown(message_id)} must be None or a non-empty "
                              "string")
        values = json_dict(payload, f"payload of message {name!r}")
        try:
            ckey = correlation(key)
        except (TypeError, ValueError, RecursionError):
            raise EngineError(f"message {name!r}: key {shown(key)} is not a JSON value"
                              ) from None
        expiry = self._expiry(ttl)
        journal = self.journal
        if message_id is not None and message_id in journal.seen:
            self.emit("message_dropped", None, None, None,
                      {"message": name, "reason": "duplicate message id"})
            return None
        bucket = self.holders.messages.get((name, ckey))  # the first subscription armed
        hold = next(iter(bucket.values())) if bucket else None
        if hold is None:  # nobody waits for it: a message start event creates an instance
            start = self.starts.message(name)
            if start is not None:
                return self._start_by(name, values, start, message_id, key)
        if hold is None and expiry is None:
            self.emit("message_dropped", None, None, None, {"message": name,
                                                            "reason": "no subscriber"})
            return None
        if message_id is not None:
            journal.see(message_id)
        try:
            if hold is None:
                assert expiry is not None
                entry = self.buffer_message(name, ckey, expiry, values, message_id)
                try:
                    journal.record([], force=True)
                except EngineError:
                    self._unbuffer(name, ckey, entry)
                    raise
                self.emit("message_buffered", None, None, None, {"message": name})
                return None
            trigger = Trigger("message", hold.node, hold.wait_kind, hold.track, values)
            journal.record([(hold.instance, trigger)])
        except EngineError:
            if message_id is not None:
                journal.forget(message_id)
            raise
        self.emit("message_correlated", hold.instance, hold.track, hold.node,
                  {"message": name, "fields": len(values)})
        self.deliver(hold, trigger)
        return str(hold.instance)

    def _start_by(self, name: str, values: dict[str, Any], start: Any,
                  message_id: str | None, key: Any) -> str | None:
        """A message start event takes the message: a new instance, its data the payload
        (and, at a parallel event-based gateway, its key: ``Starts.fire``)."""
        if message_id is not None:
            self.journal.see(message_id)
        try:
            iid = self.starts.fire(start, Trigger("message", start.node, "start", start.track,
                                                  values), key)
        except EngineError:
            if message_id is not None:
                self.journal.forget(message_id)
            raise
        self.emit("message_correlated", iid, None, start.node,
                  {"message": name, "fields": len(values), "started": True})
        return str(iid) if iid is not None else None

    def _expiry(self, ttl: Any) -> int | None:
        if ttl is None:
            return None
        try:
            span = parse_duration(ttl, "ttl")
        except ModelError as exc:
            raise EngineError(str(exc)) from None
        if is_negative(span):
            raise EngineError(f"ttl {ttl!r} is negative")
        now: int = self.kernel.now
        try:
            return to_us(add(to_datetime(now), span))
        except (OverflowError, ValueError):
            raise EngineError(f"ttl {ttl!r} is out of the calendar's range") from None

    def buffer_message(self, name: str, ckey: str, expiry: int, values: dict[str, Any],
                       message_id: str | None) -> list[Any]:
        entry: list[Any] = [expiry, values, None, message_id]
        kernel = self.kernel
        entry[2] = kernel.call_at(expiry, self._expire, (name, ckey, entry), "expiry")
        self.buffer.setdefault((name, ckey), deque()).append(entry)
        self._rows = None
        return entry

    def _unbuffer(self, name: str, ckey: str, entry: list[Any]) -> bool:
        queue = self.buffer.get((name, ckey))
        if queue is None or not any(e is entry for e in queue):
            return False
        queue.remove(entry)
        entry[2].cancel()
        if not queue:
            del self.buffer[(name, ckey)]
        self._rows = None
        return True

    def buffer_rows(self) -> str:
        """The buffer as recorded: what waits, and what instances took since their last
        checkpoint (computed again only after a change)."""
        if self._rows is None:
            rows = [[name, ckey, e[0], e[1], e[3]]
                    for (name, ckey), queue in self.buffer.items() for e in queue]
            for taken in self.taken.values():
                rows.extend(taken)
            self._rows = json.dumps(rows)
        return self._rows

    def covered(self, iid: str) -> None:
        """An instance's checkpoint (or its end) now covers the buffered messages it took."""
        if self.taken.pop(iid, None) is not None:
            self._rows = None

    def _expire(self, item: tuple[str, str, list[Any]]) -> None:
        name, ckey, entry = item
        if self._unbuffer(name, ckey, entry):
            self.emit("message_dropped", None, None, None,
                      {"message": name, "reason": "ttl expired"})

    def take_buffered(self, name: str, ckey: str, iid: str, stored: bool
                      ) -> dict[str, Any] | None:
        """A buffered message waiting for this subscription, taken out of the buffer (kept
        in the recorded buffer until instance ``iid``'s next checkpoint, if it has one)."""
        queue = self.buffer.get((name, ckey))
        if not queue:
            return None
        expiry, values, deadline, message_id = queue.popleft()
        deadline.cancel()
        if not queue:
            del self.buffer[(name, ckey)]
        if stored:
            self.taken.setdefault(iid, []).append([name, ckey, expiry, values, message_id])
        self._rows = None
        return dict(values)

    def broadcast_signal(self, name: str, payload: dict[str, Any] | None = None,
                         generation: int = 0) -> int:
        """Deliver a signal to every held subscription; returns how many there were.
        ``generation`` as for ``publish_message``: a broadcast that would start an instance
        past the limit is refused before anything is delivered."""
        self.starts.generation = generation
        try:
            return self._broadcast(name, payload)
        finally:
            self.starts.generation = 0

    def _broadcast(self, name: str, payload: dict[str, Any] | None) -> int:
        if not isinstance(name, str) or not name:
            raise EngineError(f"signal name {name!r} must be a non-empty string")
        values = json_dict(payload, f"payload of signal {name!r}") or None
        holds = self.holders.signal_holds(name)
        if any(h.instance == DEPLOYED for h in holds):  # all or none: refused before any
            self.starts.refuse_beyond(name)
        triggers = [(h, Trigger("signal", h.node, h.wait_kind, h.track, values))
                    for h in holds]
        self.journal.record([(h.instance, t) for h, t in triggers if h.instance])
        self.emit("signal_broadcast", None, None, None, {"signal": name,
                                                         "receivers": len(holds)})
        for hold, trigger in triggers:
            if hold.alive and hold not in self.holders.waking:
                self.deliver(hold, trigger)
        return len(holds)
