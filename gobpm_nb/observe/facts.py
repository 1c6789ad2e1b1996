"""Facts: typed records of what the engine did, kept in a bounded log and echoed to logging.

Details carry names and counts, never payload values (Invariant 12, docs/architecture.md).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable
from datetime import datetime
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from ..kernel.clock import iso, to_datetime

log = logging.getLogger("gobpm_nb")
NO_DETAILS: Any = MappingProxyType({})
#: A fact as the log keeps it: (seq, t, kind, instance, track, node, details), details being
#: names and counts (or None)
Raw: TypeAlias = tuple[int, int, str, str | None, str | None, str | None,
                       dict[str, Any] | None]


class Fact(Raw):
    """One thing the engine did: ``(seq, at, kind, instance, track, node, details)``.

    A fact is the raw tuple the log keeps, seen through named fields, so handing one to a
    subscriber or a reader costs one C-level call."""

    __slots__ = ()

    if TYPE_CHECKING:  # what the fields are; at run time each is a C-level item getter
        @property
        def seq(self) -> int: ...
        @property
        def t(self) -> int: ...
        @property
        def kind(self) -> str: ...
        @property
        def instance(self) -> str | None: ...
        @property
        def track(self) -> str | None: ...
        @property
        def node(self) -> str | None: ...
    else:
        seq, t, kind = property(itemgetter(0)), property(itemgetter(1)), property(itemgetter(2))
        instance, track = property(itemgetter(3)), property(itemgetter(4))
        node = property(itemgetter(5))

    @property
    def details(self) -> Any:
        """Names and counts: a copy, so that no reader can change the log; an empty mapping
        when there are none."""
        details = self[6]
        if details is None:
            return NO_DETAILS
        return {k: list(v) if type(v) is list else v for k, v in details.items()}

    @property
    def at(self) -> datetime:
        """When it happened, in virtual time."""
        return to_datetime(self[1])

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": iso(self.t), "kind": self.kind, "instance": self.instance,
                "track": self.track, "node": self.node, "details": dict(self.details)}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fact) and self.as_dict() == other.as_dict()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self.seq, self.kind))

    def __repr__(self) -> str:
        where = "/".join(x for x in (self.instance, self.track, self.node) if x)
        return f"Fact({self.seq}, {iso(self.t)}, {self.kind}, {where}, {dict(self.details)})"


class FactLog:
    """Keeps the newest ``keep`` facts (None: all) and calls every subscriber with each one."""

    def __init__(self, keep: int | None = 100_000, clock: Any = None):
        if keep is not None and keep < 0:
            raise ValueError(f"keep_facts must be None or >= 0, got {keep!r}")
        #: raw (seq, t, kind, instance, track, node, details) tuples: cheap to keep; Fact
        #: objects are made when someone reads them or subscribes
        self._facts: deque[Raw] = deque(maxlen=keep)
        self._subscribers: list[Callable[[Fact], Any]] = []
        #: kind -> the sinks handed the raw tuple of every fact of that kind (``tap``)
        self._taps: dict[str, list[Callable[[Raw], Any]]] = {}
        self.seq = 0
        self.clock = clock  # anything with ``now`` in virtual microseconds
        #: Whether each fact is echoed to the ``gobpm_nb`` logger at DEBUG: read from the
        #: logger's level as each command begins (``travel.history.command``), not asked
        #: again for every fact.
        self.echo = log.isEnabledFor(logging.DEBUG)
        #: emit(kind, instance, track, node, details=None): record a fact at the clock's
        #: current time and hand it to every subscriber (a closure: the hot path's one call).
        self.emit: Callable[..., None] = self._emitter()
        #: emit_all(instance, track, rows): record facts of one track, given as (kind, node,
        #: details) rows, in order, at the clock's current time (a hot path's many facts in
        #: one call).
        self.emit_all: Callable[..., None] = self._all_emitter()

    def _emitter(self) -> Callable[..., None]:
        facts, append, subscribers, taps, publish = \
            self, self._facts.append, self._subscribers, self._taps, self._publish

        def emit(kind: str, instance: str | None, track: str | None, node: str | None,
                 details: dict[str, Any] | None = None) -> None:
            facts.seq = seq = facts.seq + 1
            raw = (seq, facts.clock.now, kind, instance, track, node, details)
            append(raw)
            if taps and kind in taps:
                for sink in taps[kind]:
                    sink(raw)
            if subscribers or facts.echo:
                publish(raw)
        return emit

    def _all_emitter(self) -> Callable[..., None]:
        facts, append, subscribers, taps, emit = \
            self, self._facts.append, self._subscribers, self._taps, self.emit

        def emit_all(instance: str, track: str | None,
                     rows: tuple[tuple[str, str | None, Any], ...]) -> None:
            if subscribers or taps or facts.echo:
                for kind, node, details in rows:
                    emit(kind, instance, track, node, details)
                return
            seq, now = facts.seq, facts.clock.now
            for kind, node, details in rows:
                seq += 1
                append((seq, now, kind, instance, track, node, details))
            facts.seq = seq
        return emit_all

    def _publish(self, raw: Raw) -> None:
        """Hand a fact just recorded to every subscriber, and echo it at DEBUG if asked."""
        if self._subscribers:
            fact = Fact(raw)
            for fn in tuple(self._subscribers):
                try:
                    fn(fact)
                except Exception:
                    log.exception("fact subscriber %r raised; it is detached", fn)
                    self.unsubscribe(fn)
        if self.echo:
            log.debug("%s", Fact(raw))

    def subscribe(self, fn: Callable[[Fact], Any]) -> Callable[[], None]:
        self._subscribers.append(fn)
        return lambda: self.unsubscribe(fn)

    def tap(self, kinds: frozenset[str], sink: Callable[[Raw], Any]) -> None:
        """Package-internal: hand ``sink`` the raw tuple of every fact of ``kinds`` from now
        on, before the subscribers see it (a reader of a few kinds among many, such as a
        population run, pays nothing for the others). The sink must not raise."""
        for kind in sorted(kinds):
            self._taps.setdefault(kind, []).append(sink)

    def unsubscribe(self, fn: Callable[[Fact], Any]) -> None:
        if fn in self._subscribers:
            self._subscribers.remove(fn)

    def snapshot(self) -> list[Fact]:
        return [Fact(raw) for raw in self._facts]

    def raw(self) -> list[Raw]:
        """The kept facts as the raw tuples the log holds (a rewind keeps reusing them)."""
        return list(self._facts)

    def adopt(self, earlier: list[Raw], old: FactLog | None = None) -> None:
        """Keep ``earlier`` facts before this log's own (a rewind's or a branch's log starts
        where a replay began); with ``old``, stand in for it: its subscribers move here and
        the unsubscribe callables it handed out keep working."""
        kept = earlier + list(self._facts)
        self._facts.clear()
        self._facts.extend(kept)
        if old is not None:
            self._subscribers.extend(old._subscribers)
            old._subscribers = self._subscribers
            for kind, sinks in old._taps.items():
                self._taps.setdefault(kind, []).extend(sinks)
            old._taps = self._taps
            self.echo = old.echo

    def announce(self, kind: str, details: dict[str, Any]) -> None:
        """Hand every subscriber a notice (a ``rewound`` fact) that the log does not keep and
        that takes no number: its ``seq`` is the last fact's."""
        self._publish((self.seq, self.clock.now, kind, None, None, None, details))
