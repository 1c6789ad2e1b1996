"""Snapshots of the engine state, and when to take the next one.

A ``Snapshot`` is a copy of the engine core at an event boundary (``clone``): the history's
start, then as ``Pacer`` says (at least ``SNAPSHOT_FACTS`` facts apart, the copy a small
share of the work), taken at the end of a command and while a replay runs, so that a rewind
replays from the nearest one.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..observe import FactLog
from ..persist import MemoryStore
from .clone import Frozen, freeze, thaw
from .tape import Tape, TapedStore

if TYPE_CHECKING:
    from ..engine.core import Core
    from ..engine.durability.journal import Store

#: At least this many facts between two snapshots…
SNAPSHOT_FACTS = 1_000
#: …and at least this many times as much work (wall time running commands, or replaying)
#: as the last snapshot took to copy: copying stays under 1/SNAPSHOT_COST of the work, and a
#: rewind replays about SNAPSHOT_COST copies' worth of work at most.
SNAPSHOT_COST = 8
#: Snapshots kept at most; past it every other one goes (the history's start stays).
MAX_SNAPSHOTS = 64
#: No snapshot of an engine bigger than this (instances + live coroutines + holds): a copy
#: would cost as much memory as the engine; its rewinds replay from an earlier snapshot.
SNAPSHOT_MAX_SIZE = 50_000
#: The snapshots kept add up to at most this size (past it, every other one goes).
SNAPSHOT_BUDGET = 200_000
#: A size below which a copy costs about the same whatever the size (the pacer's guess of
#: what the next copy costs scales with the growth above it).
SMALL = 50

Place = tuple[int, int]  # (entries complete, events run of the next one)


def _emit_mark(*args: Any) -> None:
    """What a frozen core emits with: nothing runs on a frozen core (thaw replaces it)."""
    raise RuntimeError("a frozen engine state does not run")


def _emit_all_mark(*args: Any) -> None:
    """The same, for the fact log's many-facts emitter."""
    raise RuntimeError("a frozen engine state does not run")


_TAPE_MARK = Tape()  # what a frozen core's tape is; thaw replaces it


class Snapshot:
    """The engine state at a place of the history: a frozen core, the fact count and clock
    there, the tape's position, and how long the copy took."""

    __slots__ = ("place", "seq", "clock", "frozen", "tape", "cost", "size")

    def __init__(self, place: Place, seq: int, clock: int, frozen: Frozen,
                 tape: tuple[int, int, int], cost: float, size: int):
        self.place = place
        self.seq = seq
        self.clock = clock
        self.frozen = frozen
        self.tape = tape
        self.cost = cost  # seconds it took to take
        self.size = size  # how big the engine was (``size_of``)

    def at_start(self) -> Snapshot:
        """The same state as the first place of a new history (a branch's start)."""
        return Snapshot((0, 0), self.seq, self.clock, self.frozen, self.tape, self.cost,
                        self.size)


def taped(core: Core) -> TapedStore:
    """The core's store as the engine sees it: every call counted on the tape."""
    store = core.store
    assert isinstance(store, TapedStore), "a core's store is always taped"
    return store


def tape_of(core: Core) -> Tape:
    """The core's tape as time travel reads it (the engine knows it as an ``Outside``)."""
    tape = core.tape
    assert isinstance(tape, Tape), "a core's tape is always a Tape (the facade's)"
    return tape


def memory_copy(store: Store) -> MemoryStore:
    """A memory store holding what ``store`` holds (checkpoints, meta, accepted triggers)."""
    out = MemoryStore()
    if isinstance(store, MemoryStore):
        out.replace(store.contents())
    else:
        out.replace(({i: store.get(i) for i in store.ids()}, store.meta(), store.journal()))
    return out


def take(core: Core, seq: int, place: Place) -> Snapshot:
    """A snapshot of ``core`` (between two events) at ``place``, with ``seq`` facts."""
    began = time.perf_counter()
    inner = taped(core).inner
    tape = tape_of(core)
    shared = {id(tape): _TAPE_MARK, id(core.emit): _emit_mark,
              id(core.emit_all): _emit_all_mark, id(inner): memory_copy(inner)}
    frozen = freeze(core, shared)
    return Snapshot(place, seq, core.kernel.now, frozen, tape.position(),
                    time.perf_counter() - began, size_of(core))


def restore(snap: Snapshot, log: FactLog, tape: Tape) -> Core:
    """A live core from a snapshot, emitting into ``log`` and reading ``tape``."""
    core = thaw(snap.frozen, {id(_TAPE_MARK): tape, id(_emit_mark): log.emit,
                              id(_emit_all_mark): log.emit_all})
    log.clock = core.kernel
    log.seq = snap.seq
    return core


def size_of(core: Core) -> int:
    """How big an engine is, for the snapshot cap: instances, live coroutines, holds."""
    return len(core.runs) + len(core.kernel.live) + sum(core.holders.counts.values())


class Pacer:
    """When the next snapshot is due: ``SNAPSHOT_FACTS`` facts and ``SNAPSHOT_COST`` times
    the last copy's time of work after the last snapshot, of an engine no bigger than
    ``SNAPSHOT_MAX_SIZE``. Where snapshots are taken changes no fact and no state a rewind
    gives (the wall time read here decides only how far a rewind replays)."""

    __slots__ = ("seq", "cost", "size", "work", "skipped", "threshold", "ready_at")

    def __init__(self, snap: Snapshot):
        self.skipped = -1  # the fact count at which one was skipped (too big an engine)
        self.passed(snap)

    def due(self, seq: int, core: Core) -> bool:
        """Whether to take one now; the next copy's cost is guessed from the last one's,
        scaled by how much the engine grew since."""
        if seq < self.ready_at:
            return False
        guess = self.cost * max(1.0, (size_of(core) + SMALL) / (self.size + SMALL))
        self.threshold = SNAPSHOT_COST * guess
        return self.work >= self.threshold

    def take(self, core: Core, seq: int, place: Place) -> Snapshot | None:
        """A snapshot here, or None when the engine is too big (then not again before
        ``SNAPSHOT_FACTS`` more facts)."""
        if size_of(core) > SNAPSHOT_MAX_SIZE:
            self.skipped = seq
            self.ready_at = seq + SNAPSHOT_FACTS
            return None
        snap = take(core, seq, place)
        self.passed(snap)
        return snap

    def passed(self, snap: Snapshot) -> None:
        """A snapshot is at hand here (taken, or found)."""
        self.seq = snap.seq  # the fact count at the last snapshot
        self.cost = snap.cost  # what it took to copy, in seconds
        self.size = snap.size  # how big the engine was then
        self.work = 0.0  # seconds of work since
        self.threshold = SNAPSHOT_COST * self.cost  # no look before this much work…
        #: …nor before this fact count (read by every command's end: no call before it)
        self.ready_at = max(self.seq, self.skipped) + SNAPSHOT_FACTS


__all__ = ["MAX_SNAPSHOTS", "SNAPSHOT_BUDGET", "SNAPSHOT_COST", "SNAPSHOT_FACTS",
           "SNAPSHOT_MAX_SIZE", "Pacer", "Place", "Snapshot", "memory_copy", "restore",
           "size_of", "take", "taped"]
