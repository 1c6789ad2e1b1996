"""Rewind, replay and branch: the engine's state at another point of its history.

The state is rebuilt *aside*, by replaying the command history (``history``) from the nearest
snapshot onto a new core with a new fact log, checked against what was recorded (each
command's fact count, clock and outcome, and every replayed fact the log still keeps), and
only then swapped into the engine (``rewind``, ``replay``) or handed out as a new engine
(``branch``). An error anywhere before the swap leaves the engine exactly as it was.

Where a rewind stops: ``rewind(to)`` goes to the first event boundary at which fact ``to``
has been emitted, i.e. right after the scheduler event (or the part of a command outside
events) that emitted it: the facts of that event are kept, nothing after it runs. A rewind
point inside ``step``/``run``/``advance`` leaves that command *interrupted*: its later
events and its final clock move are the first thing ``Engine.replay`` runs. A time goes to
the last fact at or before it.
"""

from __future__ import annotations

import bisect
import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

from ..errors import EngineError, GobpmError, StoreError, shown
from ..kernel import to_datetime, to_us
from ..observe import FactLog
from ..persist import MemoryStore
from ..persist.stores import Contents
from ..when import instant
from . import snapshots
from .entries import Entry
from .history import Command, History
from .snapshots import Pacer, Place, Snapshot, restore, tape_of, taped
from .state import EngineState
from .tape import Diverged

Raw = tuple[Any, ...]


@runtime_checkable
class Replaceable(Protocol):
    """A store whose contents a rewind can put back (``MemoryStore``)."""

    def replace(self, contents: Contents) -> None: ...


#: The engine facade (``api.Engine``, above this layer: known here only as what ``Wrap``
#: makes).
E = TypeVar("E")
#: What makes an engine of a state (``Engine``'s own maker, passed by the engine).
Wrap = Callable[[EngineState], E]


class Rewound(NamedTuple):
    """What ``Engine.rewind`` or ``Engine.replay`` did. The engine stands right after fact
    ``seq`` (at virtual time ``at``); ``dropped`` facts left the end of the log and
    ``added`` came back; ``commands`` commands of the history are complete, ``pending`` are
    left for ``Engine.replay`` (the interrupted one, if any, counts once)."""

    seq: int
    at: datetime
    dropped: int
    added: int
    commands: int
    pending: int
    interrupted: str | None


class Build(Generic[E]):
    """An engine being rebuilt aside from a snapshot by replaying the history: its state
    (``state``) and the engine on it (``engine``), which the replay calls commands on."""

    def __init__(self, state: EngineState, snap: Snapshot, keep: int | None, wrap: Wrap[E]):
        self.history = state.history
        self.entries = self.history.entries
        log = FactLog(keep)
        log.echo = False  # a replay's facts are not logged again
        tape = tape_of(state.core).reading(*snap.tape)
        core = restore(snap, log, tape)
        self.state = EngineState(core, log, taped(core).inner, state.keep_facts,
                                 replaying=True)
        self.engine = wrap(self.state)
        self.start = snap.seq
        self.place: Place = snap.place
        self.snaps: list[Snapshot] = []
        self.pacer = Pacer(snap)  # snapshots on the way, so later rewinds replay less
        self.known = [s.seq for s in self.history.snapshots]  # in place order: sorted
        self.began = time.perf_counter()

    def forward(self, until_seq: int | None = None, until: Place | None = None) -> None:
        """Replay to the first boundary with ``until_seq`` facts, or to place ``until``, or
        to the end of the history."""
        entries, log = self.entries, self.state.facts
        kernel = self.state.core.kernel
        i, e = self.place
        while i < len(entries):
            if (until_seq is not None and log.seq >= until_seq) or \
                    (until is not None and (i, e) >= until):
                break
            entry = entries[i]
            if entry.events is None:
                self.call(i, entry)
                i, e = i + 1, 0
            elif e < entry.events:
                if kernel.step() is None:
                    raise Diverged(f"command {i + 1} ({entry.name}) ran out of events after "
                                   f"{e} of {entry.events}")
                e += 1
            else:
                self.close(i, entry)
                i, e = i + 1, 0
            self.place = (i, e)
            if log.seq - self.pacer.seq >= snapshots.SNAPSHOT_FACTS:
                self.snapshot()
        if i < len(entries) and not entries[i].settled and e == entries[i].events:
            self.place = (i + 1, 0)  # a cut-short command's end does nothing

    def call(self, n: int, entry: Entry) -> None:
        """Replay a command that runs no scheduler event: call it again."""
        method = getattr(self.engine, entry.name)
        try:
            method(*entry.args, **(entry.kwargs or {}))
        except GobpmError as exc:
            if entry.raised != type(exc).__name__:
                raise Diverged(f"command {n + 1} ({entry.name}) raised {type(exc).__name__} "
                               "in the replay") from None
        else:
            if entry.raised is not None:
                raise Diverged(f"command {n + 1} ({entry.name}) did not raise in the replay")
        self.check(n, entry)

    def close(self, n: int, entry: Entry) -> None:
        """The end of ``step``/``run``/``advance``: the kernel's last look for an event (a
        ``run`` ends when it finds none; it drops cancelled entries on top of the heap), its
        clock move, then what every command ends with (the store records)."""
        kernel = self.state.core.kernel
        if entry.settled and (entry.name != "step" or not entry.events):
            kernel.next_at()  # its last look for an event dropped the cancelled ones on top
        if entry.after > kernel.now:
            kernel.jump(entry.after)
        if entry.settled:
            with contextlib.suppress(StoreError):  # as it did in the run: the tape says so
                self.state.core.journal.settle()
        self.check(n, entry)

    def check(self, n: int, entry: Entry) -> None:
        got = (self.state.facts.seq, self.state.core.kernel.now)
        if got != (entry.last, entry.after):
            raise Diverged(f"command {n + 1} ({entry.name}) ended at fact {got[0]} where "
                           f"the run ended at fact {entry.last}")

    def snapshot(self) -> None:
        """Take a snapshot here if one is due (a snapshot the history has on the way
        counts as taken)."""
        pacer, seq, core = self.pacer, self.state.facts.seq, self.state.core
        now = time.perf_counter()
        pacer.work, self.began = pacer.work + now - self.began, now
        k = bisect.bisect_right(self.known, seq) - 1
        if k >= 0 and self.known[k] > pacer.seq:
            pacer.passed(self.history.snapshots[k])
        elif pacer.work >= pacer.threshold and pacer.due(seq, core):
            snap = pacer.take(core, seq, self.place)
            if snap is not None:
                self.snaps.append(snap)
            self.began = time.perf_counter()

    def verify(self, known: tuple[int, list[Raw]]) -> None:
        """Every replayed fact the log still keeps must equal the recorded one."""
        first, facts = known
        for raw in self.state.facts.raw():
            k = raw[0] - first
            if 0 <= k < len(facts) and facts[k] != raw:
                raise Diverged(f"fact {raw[0]} differs from the recorded one")


def commands(state: EngineState) -> list[Command]:
    """``Engine.history``: the history's commands as views."""
    history = state.history
    entries = history.entries
    return [Command(e.name, e.args, dict(e.kwargs or {}), e.first, e.last,
                    to_datetime(e.before), n < history.done)
            for n, e in ((n, entries[n]) for n in range(len(entries)))]


# -- targets --------------------------------------------------------------------------------
def known(state: EngineState) -> tuple[int, list[Raw]]:
    """The facts still at hand, contiguous: the kept log, then those a rewind dropped."""
    facts = state.facts.raw()
    redo = state.history.redo
    if redo and (not facts or redo[0][0] == facts[-1][0] + 1):
        facts = facts + redo
    return (facts[0][0] if facts else state.facts.seq + 1), facts


def span_of(state: EngineState) -> tuple[int, int, int]:
    """``Engine.history_span``: where the history starts, the position, where it ends."""
    history = state.history
    position = state.facts.seq
    if not history.kept or not len(history.entries):
        return position, position, position
    return history.entries[0].first, position, end_of(state)


def end_of(state: EngineState) -> int:
    """The last fact of the whole history (past the position after a rewind)."""
    return max(state.facts.seq, state.history.entries.last())


def resolve(state: EngineState, to: object, wrap: Wrap[object]) -> int:
    """A rewind point as a fact count; EngineError naming what is wrong with it."""
    history = state.history
    if not history.kept:
        raise EngineError("an engine on a durable store (the store is its history), or made "
                          "with keep_history=False, keeps no command history: it can only "
                          "branch where it stands, with branch()")
    if not history.started:
        raise EngineError("this engine's command history has no start (it was recovered "
                          "from a store too big to copy, or one that could not be read): it "
                          "can only branch where it stands, with branch()")
    base = history.snapshots[0]
    if isinstance(to, bool) or not isinstance(to, (int, str, datetime)):
        raise EngineError(f"rewind needs a fact sequence number, a datetime or ISO text, got "
                          f"{to!r}")
    if isinstance(to, int):
        end = end_of(state)
        if to < 0:
            raise EngineError(f"fact {to} is negative; facts are numbered from 1 (0: the start)")
        if to > end:
            raise EngineError(f"fact {to} is beyond the log: the history ends at fact {end}")
        if 0 < to < base.seq:
            raise EngineError(f"fact {to} came before the history starts (after fact "
                              f"{base.seq}: the engine was recovered, or branched, there)")
        return max(to, base.seq)
    at = to_us(instant(to, "rewind point"))
    if at < base.clock:
        raise EngineError(f"{to!r} is before the start of the history "
                          f"({to_datetime(base.clock).isoformat()})")
    return at_time(state, at, wrap)


def at_time(state: EngineState, at: int, wrap: Wrap[object]) -> int:
    """The last fact at or before virtual time ``at``."""
    history = state.history
    entries = history.entries
    j = bisect.bisect_right(entries.befores(), at) - 1
    if j < 0:
        return history.snapshots[0].seq
    entry = entries[j]
    if entry.after <= at or entry.last == entry.first:
        return entry.last
    first, facts = known(state)
    if first <= entry.first + 1 and first + len(facts) > entry.last:
        times = [f[1] for f in facts[entry.first + 1 - first:entry.last + 1 - first]]
    else:  # the facts of that command are not at hand: replay it to read their times
        with aside_errors():
            probe = Build(state, history.nearest(place=(j, 0)), None, wrap)
            probe.forward(until=(j + 1, 0))
        times = [f[1] for f in probe.state.facts.raw() if f[0] > entry.first]
    return entry.first + bisect.bisect_right(times, at)


# -- building -------------------------------------------------------------------------------
def build(state: EngineState, wrap: Wrap[E], seq: int | None = None,
          place: Place | None = None) -> Build[E]:
    """The engine at a fact count (or a place of the history), rebuilt aside and checked."""
    history = state.history
    keep = state.keep_facts
    first, facts = known(state)
    if seq is not None:
        target = seq
    else:  # the end of the last command to replay
        assert place is not None
        target = history.entries[place[0] - 1].last
    # the facts the log will keep must come from the ones at hand or from the replay
    need = target - keep + 1 if keep is not None else 1
    before = first + len(facts) - 1 if first <= need else need - 1
    snap = history.nearest(seq=seq, place=place, before=before)
    with aside_errors():
        b = Build(state, snap, keep, wrap)
        b.forward(until_seq=seq, until=place)
        b.verify((first, facts))
    return b


@contextlib.contextmanager
def aside_errors() -> Iterator[None]:
    """What goes wrong while a state is rebuilt aside is an EngineError: the engine itself
    was not touched."""
    try:
        yield
    except Diverged as exc:
        raise EngineError(f"the engine cannot go to that point: replaying its history did "
                          f"not give what was recorded ({exc}); nothing changed") from None
    except GobpmError:
        raise
    except Exception as exc:
        raise EngineError(f"the engine cannot go to that point: its replay raised "
                          f"{type(exc).__name__}: {exc}; nothing changed") from exc


def earlier(state: EngineState, b: Build[Any]) -> list[Raw]:
    """The facts to keep before those the replay emitted (the kept window up to its end)."""
    keep = state.keep_facts
    log = b.state.facts
    if keep is not None and len(log.raw()) >= keep:
        return []
    need = log.seq - keep + 1 if keep is not None else 1
    first, facts = known(state)
    return [f for f in facts[max(0, need - first):max(0, b.start + 1 - first)]]


def rewind(state: EngineState, to: object, wrap: Wrap[object]) -> Rewound:
    """``Engine.rewind``: see the module's docstring and the README."""
    if state.store.durable:
        raise EngineError("rewind would rewrite the history a durable store has recorded "
                          "(what a restart recovers); use branch() for a what-if, on a "
                          "memory store")
    if not isinstance(state.store, Replaceable):
        raise EngineError(f"rewind needs a MemoryStore (it puts back what the store held); "
                          f"{state.store!r} cannot be put back; use branch()")
    _between(state, "rewind")
    return move(state, build(state, wrap, seq=resolve(state, to, wrap)))


def replay(state: EngineState, commands: object, wrap: Wrap[object]) -> Rewound:
    """``Engine.replay``: run again what the last rewind went back over."""
    if commands is not None and (isinstance(commands, bool) or not isinstance(commands, int)
                                 or commands < 0):
        raise EngineError(f"commands must be None or a count >= 0, got {shown(commands)}")
    _between(state, "replay")
    history = state.history
    left = history.future()
    if left == 0 or commands == 0:
        return _summary(state, state.facts.seq)
    target = history.done + min(left, commands if commands is not None else left)
    return move(state, build(state, wrap, place=(target, 0)))


def move(state: EngineState, b: Build[Any]) -> Rewound:
    """Swap the rebuilt state in; subscribers get one ``rewound`` fact."""
    history = state.history
    was = state.facts.seq
    first, facts = known(state)
    log = b.state.facts
    kept = earlier(state, b)
    redo = [f for f in facts if f[0] > log.seq] if first <= log.seq + 1 else []
    core = b.state.core
    store = taped(core)
    store.tape.serving = False
    rebuilt = store.inner
    assert isinstance(rebuilt, MemoryStore), "a state is rebuilt on a memory copy"
    assert isinstance(state.store, Replaceable), "checked by rewind"
    state.store.replace(rebuilt.contents())
    store.inner = state.store
    log.adopt(kept, old=state.facts)
    state.core, state.facts = core, log
    history.done, history.into = b.place
    history.redo = redo
    history.rewound = True
    history.add(b.snaps)
    details = {"to": log.seq, "dropped": max(0, was - log.seq), "added": max(0, log.seq - was)}
    log.announce("rewound", details)
    return _summary(state, was)


def _summary(state: EngineState, was: int) -> Rewound:
    history = state.history
    seq = state.facts.seq
    interrupted = history.entries[history.done].name if history.into else None
    return Rewound(seq, to_datetime(state.core.kernel.now), max(0, was - seq),
                   max(0, seq - was), history.done, history.future(), interrupted)


def branch(state: EngineState, at: object, wrap: Wrap[E]) -> E:
    """``Engine.branch``: an independent engine on a memory store, at the current state or
    at a rewind point; the engine it came from is untouched."""
    _between(state, "branch")
    history = state.history
    where = state.facts.seq if at is None else resolve(state, at, wrap)
    snap: Snapshot | None = None
    if at is None:
        try:
            snap = snapshots.take(state.core, state.facts.seq, history.place)
        except Exception as exc:  # a store that is not a memory store was read
            raise EngineError(f"cannot branch: the store failed while it was read "
                              f"({type(exc).__name__}); nothing changed") from None
        if history.started:
            history.add([snap])  # a snapshot of the engine where it stands: keep it too
        with aside_errors():
            b = Build(state, snap, state.keep_facts, wrap)
    else:
        b = build(state, wrap, seq=where)
        history.add(b.snaps)
    out = b.state
    out.branched_at = where
    core = out.core
    store = taped(core)
    core.tape = store.tape = store.tape.copy()
    store.durable = False
    out.facts.adopt(earlier(state, b))
    out.history = _branch_history(history, b, snap)
    return b.engine


def _branch_history(history: History, b: Build[Any], snap: Snapshot | None) -> History:
    """A branch's history: its engine's up to the branch point (or, when that one has no
    start, a history starting at the branch point)."""
    out = History()
    out.live = True
    if not history.started:
        assert snap is not None
        out.snapshots = [snap.at_start()]
        out.pacer = Pacer(out.snapshots[0])
        return out
    done, into = b.place
    out.entries = history.entries.head(done)
    if into:
        log, kernel = b.state.facts, b.state.core.kernel
        out.entries.append(history.entries[done].cut_at(into, log.seq, kernel.now))
    out.done = len(out.entries)
    out.snapshots = [s for s in history.snapshots if s.place <= b.place] + \
        [s for s in b.snaps if s.place <= b.place]
    out.snapshots.sort(key=lambda s: s.place)
    out.pacer = Pacer(out.snapshots[-1])
    return out


def _between(state: EngineState, what: str) -> None:
    if state.core.kernel.current is not None or state.history.depth:
        raise EngineError(f"{what} cannot run while a command runs (call it between "
                          "commands, not from a fact subscriber or a user callable)")


__all__ = ["Build", "Rewound", "Wrap", "branch", "commands", "replay", "resolve", "rewind",
           "span_of"]
