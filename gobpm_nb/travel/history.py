"""The command journal behind ``Engine.rewind``, ``Engine.replay`` and ``Engine.branch``.

Every public command that changed the engine is an ``Entry``: its name and arguments (copied
when it began), the fact sequence number it began and ended at, the virtual clock at both
ends and, for ``step``/``run``/``advance``, how many scheduler events it ran. What user
callables answered and which store calls failed are on the core's tape (``travel/tape``).
Together they let a replay rebuild the engine at any point of its history:

- a command that runs no scheduler event (``deploy``, ``start``, a trigger, ``fetch_jobs``…)
  is replayed by calling it again with its recorded arguments;
- ``step``/``run``/``advance`` is replayed as its recorded number of scheduler events (the
  kernel's one next-event rule picks the same events), then the clock move it ended with;
- user callables are served their recorded outcomes; nothing outside the engine runs again.

The journal's *position* is ``(done, into)``: ``done`` entries complete, plus ``into`` events
of the next one when a rewind stopped inside it. Entries past the position are the history a
rewind went back over: ``Engine.replay`` and a rewind forward run them again; the first
command called after a rewind discards them (an undo stack), a command interrupted by the
rewind point being kept as the events it had run.

**Snapshots** (``Snapshot``) are copies of the engine state at event boundaries
(``travel/clone``): the journal's start, then as ``Pacer`` says (at least ``SNAPSHOT_FACTS``
facts apart, the copy a small share of the work), taken at the end of a command and while a
replay runs, so that a rewind replays from the nearest one.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any, NamedTuple

from ..engine.core import Core
from ..observe import FactLog
from ..persist import MemoryStore
from .clone import Frozen, freeze, thaw
from .entries import Entries
from .tape import Tape

#: Commands replayed as scheduler events (the others are called again).
EVENT_COMMANDS = frozenset({"step", "run", "advance"})
#: At least this many facts between two snapshots…
SNAPSHOT_FACTS = 1_000
#: …and at least this many times as much work (wall time running commands, or replaying)
#: as the last snapshot took to copy: copying stays under 1/SNAPSHOT_COST of the work, and a
#: rewind replays about SNAPSHOT_COST copies' worth of work at most.
SNAPSHOT_COST = 8
#: Snapshots kept at most; past it every other one goes (the journal's start stays).
MAX_SNAPSHOTS = 64
#: No snapshot of an engine bigger than this (instances + live coroutines + holds): a copy
#: would cost as much memory as the engine; its rewinds replay from an earlier snapshot.
SNAPSHOT_MAX_SIZE = 50_000
#: The snapshots kept add up to at most this size (past it, every other one goes).
SNAPSHOT_BUDGET = 200_000
#: A recovered engine whose store holds more instances keeps no copy of it: its journal
#: has no start (a copy of a big durable store would double the memory the engine needs).
START_MAX_INSTANCES = 10_000

#: A size below which a copy costs about the same whatever the size (the pacer's guess of
#: what the next copy costs scales with the growth above it).
SMALL = 50

Place = tuple[int, int]  # (entries complete, events run of the next one)
log = logging.getLogger("gobpm_nb")


def _emit_mark(*args: Any) -> None:
    """What a frozen core emits with: nothing runs on a frozen core (thaw replaces it)."""
    raise RuntimeError("a frozen engine state does not run")


def _emit_all_mark(*args: Any) -> None:
    """The same, for the fact log's many-facts emitter."""
    raise RuntimeError("a frozen engine state does not run")


_TAPE_MARK = Tape()  # what a frozen core's tape is; thaw replaces it


class Command(NamedTuple):
    """A command of the journal as ``Engine.history()`` shows it: its name and arguments,
    the fact count when it began and ended, the clock when it began, and whether it is
    behind the engine's position (False: a rewind went back over it, or into it)."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    first: int
    last: int
    at: datetime
    done: bool


class Snapshot:
    """The engine state at a place of the journal: a frozen core, the fact count and clock
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


def memory_copy(store: Any) -> MemoryStore:
    """A memory store holding what ``store`` holds (checkpoints, meta, journal)."""
    out = MemoryStore()
    if isinstance(store, MemoryStore):
        out.replace(store.contents())
    else:
        out.replace(({i: store.get(i) for i in store.ids()}, store.meta(), store.journal()))
    return out


def take(core: Core, seq: int, place: Place) -> Snapshot:
    """A snapshot of ``core`` (between two events) at ``place``, with ``seq`` facts."""
    began = time.perf_counter()
    taped = core.store
    shared = {id(core.tape): _TAPE_MARK, id(core.emit): _emit_mark,
              id(core.emit_all): _emit_all_mark,
              id(getattr(taped, "inner", taped)): memory_copy(getattr(taped, "inner", taped))}
    frozen = freeze(core, shared)
    return Snapshot(place, seq, core.kernel.now, frozen, core.tape.position(),
                    time.perf_counter() - began, size_of(core))


class Pacer:
    """When the next snapshot is due: ``SNAPSHOT_FACTS`` facts and ``SNAPSHOT_COST`` times
    the last copy's time of work after the last snapshot, of an engine no bigger than
    ``SNAPSHOT_MAX_SIZE``. Where snapshots are taken changes no fact and no state a rewind
    gives (the wall time read here decides only how far a rewind replays)."""

    __slots__ = ("seq", "cost", "size", "work", "skipped", "threshold")

    def __init__(self, snap: Snapshot):
        self.seq = snap.seq  # the fact count at the last snapshot
        self.cost = snap.cost  # what it took to copy, in seconds
        self.size = snap.size  # how big the engine was then
        self.work = 0.0  # seconds of work since
        self.skipped = -1  # the fact count at which one was skipped (too big an engine)
        self.threshold = SNAPSHOT_COST * self.cost  # no look before this much work

    def due(self, seq: int, core: Core) -> bool:
        """Whether to take one now; the next copy's cost is guessed from the last one's,
        scaled by how much the engine grew since."""
        if seq - max(self.seq, self.skipped) < SNAPSHOT_FACTS:
            return False
        guess = self.cost * max(1.0, (size_of(core) + SMALL) / (self.size + SMALL))
        self.threshold = SNAPSHOT_COST * guess
        return self.work >= self.threshold

    def take(self, core: Core, seq: int, place: Place) -> Snapshot | None:
        """A snapshot here, or None when the engine is too big (then not again before
        ``SNAPSHOT_FACTS`` more facts)."""
        if size_of(core) > SNAPSHOT_MAX_SIZE:
            self.skipped = seq
            return None
        snap = take(core, seq, place)
        self.passed(snap)
        return snap

    def passed(self, snap: Snapshot) -> None:
        """A snapshot is at hand here (taken, or found)."""
        self.seq, self.cost, self.size, self.work = snap.seq, snap.cost, snap.size, 0.0
        self.threshold = SNAPSHOT_COST * self.cost


def restore(snap: Snapshot, log: FactLog, tape: Tape) -> Core:
    """A live core from a snapshot, emitting into ``log`` and reading ``tape``."""
    core = thaw(snap.frozen, {id(_TAPE_MARK): tape, id(_emit_mark): log.emit,
                                 id(_emit_all_mark): log.emit_all})
    log.clock = core.kernel
    log.seq = snap.seq
    return core


class Pending:
    """A command being recorded: its name, its arguments as kept, what the engine looked
    like when it began (``_mark``: its fact count and clock first), and what it takes to
    undo a discard."""

    __slots__ = ("name", "packed", "mark", "ran", "undo", "began", "failed")

    def __init__(self, name: str, packed: Any, mark: tuple[Any, ...], ran: int, undo: Any,
                 failed: int):
        self.name = name
        self.failed = failed  # the tape's store failures when it began
        self.packed = packed
        self.mark = mark
        self.ran = ran
        self.undo = undo
        self.began = time.perf_counter()


class History:
    """The journal of one engine: entries, its position, snapshots, facts rewound over."""

    def __init__(self) -> None:
        self.entries = Entries()
        self.done = 0
        self.into = 0
        self.snapshots: list[Snapshot] = []
        #: Set on an engine that replays (a rewind's or a branch's): nothing is recorded.
        self.replaying = False
        self.depth = 0  # commands nested in the one being recorded (advance runs run)
        self.label: tuple[str, tuple[Any, ...]] | None = None  # advance names its run
        #: Raw facts after the position that the last rewind dropped from the log (kept for
        #: a rewind forward or a replay), or [] once a new command discarded them.
        self.redo: list[tuple[Any, ...]] = []
        self.rewound = False  # whether a rewind ever moved this engine
        self.live = False  # whether snapshots are taken as commands end (a memory store)
        self.kept = True  # whether commands are recorded at all (not on a durable store)
        self.pacer: Pacer | None = None  # when the next live snapshot is due

    @property
    def started(self) -> bool:
        """Whether the journal has its start (a snapshot at its first place)."""
        return bool(self.snapshots) and self.snapshots[0].place == (0, 0)

    @property
    def place(self) -> Place:
        return self.done, self.into

    def start(self, core: Core, seq: int, store: Any) -> None:
        """The journal begins here (a new engine, or one just recovered). Snapshots are
        taken as commands end only on a memory store (copying it is cheap and reads nothing
        that could fail). The first snapshot copies the store: a store that cannot be read,
        or one holding more than ``START_MAX_INSTANCES`` instances (a big recovered one),
        leaves the journal without a start: the engine then branches at its current state
        only."""
        self.entries, self.done, self.into, self.redo = Entries(), 0, 0, []
        self.live = isinstance(store, MemoryStore)
        self.snapshots, self.pacer = [], None
        #: A durable store is the engine's history: no journal, no tape (their memory would
        #: grow with every command of a long run); it branches where it stands only.
        self.kept = core.tape.keeping = not store.durable
        if not self.kept:
            return
        try:
            if self.live or len(store.ids()) <= START_MAX_INSTANCES:
                self.snapshots = [take(core, seq, (0, 0))]
                self.pacer = Pacer(self.snapshots[0])
        except Exception as exc:  # the store failed while it was read
            log.warning("the command journal has no start (the store raised %s): rewind "
                        "and branch(at=...) are not available", type(exc).__name__)

    def future(self) -> int:
        """Commands past the position (an interrupted one counts once)."""
        return len(self.entries) - self.done

    # -- recording ------------------------------------------------------------------------
    def begin(self, eng: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> Pending | None:
        """A public command begins (None: nested in another, or a replay's)."""
        if self.replaying or not self.kept:
            return None
        if self.depth:
            self.depth += 1
            self.label = None  # a nested advance names nothing: its outer command is recorded
            return None
        self.depth = 1
        if self.label is not None:
            name, args, kwargs = self.label[0], self.label[1], {}
            self.label = None
        core = eng._core
        undo = self.discard(core, eng._log.seq) if self.done < len(self.entries) else None
        mark = _mark(eng)
        return Pending(name, self.entries.pack(args, kwargs), mark, eng._ran, undo,
                       core.tape.failed)

    def end(self, eng: Any, pending: Pending | None, failed: BaseException | None) -> None:
        """The command ended (``failed``: what it raised). A command that raised having
        changed nothing was refused: it is not recorded, and a history it discarded is
        back."""
        if pending is None:
            if self.depth:
                self.depth -= 1
            return
        self.depth = 0
        if failed is not None and _mark(eng) == pending.mark:
            if pending.undo is not None:
                self.restore_discarded(eng._core, pending.undo)
            return
        core = eng._core
        tape = core.tape
        if tape.at != pending.mark[6] or tape.failed != pending.failed:
            tape.untrace(pending.mark[6], pending.failed)
        name, mark, seq = pending.name, pending.mark, eng._log.seq
        self.entries.add(name, pending.packed, mark[0], seq, mark[1], core.kernel.now,
                         eng._ran - pending.ran if name in EVENT_COMMANDS else -1,
                         None if failed is None else type(failed).__name__)
        self.done += 1
        pacer = self.pacer
        if pacer is not None and self.live:
            pacer.work += time.perf_counter() - pending.began
            if pacer.work >= pacer.threshold and pacer.due(seq, core):
                try:
                    snap = pacer.take(core, seq, (self.done, 0))
                except Exception:  # never break a command for a snapshot; rewinds go on
                    log.exception("snapshot at fact %s not taken", seq)
                    self.pacer = None
                    return
                if snap is not None:
                    self.add([snap])

    def discard(self, core: Core, seq: int) -> tuple[Any, ...]:
        """Drop the history past the position (a new command after a rewind); returns what
        puts it back if the command is refused."""
        tape = core.tape
        entries = self.entries
        undo = (entries.head(len(entries)), self.done, self.into, list(self.snapshots),
                self.redo, tape.outcomes[tape.at:], tape.failures[tape.failed:])
        here = self.place
        self.snapshots = [s for s in self.snapshots if s.place <= here]
        cut = entries[self.done].cut_at(self.into, seq, core.kernel.now) if self.into else None
        entries.truncate(self.done)
        if cut is not None:
            entries.append(cut)
            self.done, self.into = self.done + 1, 0
        self.redo = []
        tape.cut()
        return undo

    def restore_discarded(self, core: Core, undo: tuple[Any, ...]) -> None:
        self.entries, self.done, self.into, self.snapshots, self.redo = undo[:5]
        core.tape.outcomes.extend(undo[5])
        core.tape.failures.extend(undo[6])

    # -- snapshots ------------------------------------------------------------------------
    def add(self, snaps: list[Snapshot]) -> None:
        """Keep new snapshots (in place order), thinning out when there are too many."""
        known = {s.place for s in self.snapshots}
        self.snapshots.extend(s for s in snaps if s.place not in known)
        self.snapshots.sort(key=lambda s: s.place)
        while len(self.snapshots) > 2 and (len(self.snapshots) > MAX_SNAPSHOTS or sum(
                s.size for s in self.snapshots) > SNAPSHOT_BUDGET):
            self.snapshots = self.snapshots[:1] + self.snapshots[2::2]

    def nearest(self, seq: int | None = None, place: Place | None = None,
                before: int | None = None) -> Snapshot:
        """The latest snapshot before fact ``seq`` (or at or before ``place``) whose fact
        count is at most ``before`` (so the facts after it can come from the replay)."""
        best = self.snapshots[0]
        for s in self.snapshots:
            if seq is not None and s.seq >= seq and s.place != (0, 0):
                continue
            if place is not None and s.place > place:
                continue
            if before is not None and s.seq > before and s.place != (0, 0):
                continue
            if s.place >= best.place:
                best = s
        return best


def size_of(core: Core) -> int:
    """How big an engine is, for the snapshot cap: instances, live coroutines, holds."""
    return len(core.runs) + len(core.kernel.live) + sum(core.holders.counts.values())


def _mark(eng: Any) -> tuple[Any, ...]:
    """What a command that changed the engine changes: facts, clock, numbers, versions,
    scheduler events, the tape (the fact count and the clock come first)."""
    core = eng._core
    kernel, tape = core.kernel, core.tape
    return (eng._log.seq, kernel.now, kernel.seq, core.next_instance, len(core.deployed),
            eng._ran, tape.at, tape.calls)


__all__ = ["EVENT_COMMANDS", "Command", "History", "Pacer", "Pending", "Snapshot",
           "memory_copy", "restore", "take"]
