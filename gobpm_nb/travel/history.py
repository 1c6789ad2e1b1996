"""The command history behind ``Engine.rewind``, ``Engine.replay`` and ``Engine.branch``.

Every public command goes through ``command``, the command envelope: the history records it,
then the store records the clock and counters and the watchers are told. Every public
command that changed the engine is an ``Entry``: its name and arguments (kept as they were
when it began), the fact sequence number it began and ended at, the virtual clock at both
ends and, for ``step``/``run``/``advance``, how many scheduler events it ran. What user
callables answered and which store calls failed are on the core's tape (``tape``). Together
they let a replay rebuild the engine at any point of its history:

- a command that runs no scheduler event (``deploy``, ``start``, a trigger, ``fetch_jobs``…)
  is replayed by calling it again with its recorded arguments;
- ``step``/``run``/``advance`` is replayed as its recorded number of scheduler events (the
  kernel's one next-event rule picks the same events), then the clock move it ended with;
- user callables are served their recorded outcomes; nothing outside the engine runs again.

The history's *position* is ``(done, into)``: ``done`` entries complete, plus ``into``
events of the next one when a rewind stopped inside it. Entries past the position are what
a rewind went back over: ``Engine.replay`` and a rewind forward run them again; the first
command called after a rewind discards them (an undo stack), a command interrupted by the
rewind point being kept as the events it had run. **Snapshots** (``snapshots``) of the
engine state let a rewind replay from the nearest one.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Concatenate, NamedTuple, ParamSpec, Protocol, TypeVar

from ..engine.state.values import too_big
from ..errors import EngineError, StoreError
from ..persist import MemoryStore
from . import snapshots
from .entries import NO_ARGUMENTS, NOT_TEXT, NUMBER, Entries, Packed, decode, encode, exact_types
from .interrupts import NOTHING, between_events
from .snapshots import MAX_SNAPSHOTS, SNAPSHOT_BUDGET, Pacer, Place, Snapshot, tape_of
from .tape import Site, Tape

if TYPE_CHECKING:
    from .state import EngineState

#: Commands replayed as scheduler events (the others are called again).
EVENT_COMMANDS = frozenset({"step", "run", "advance"})
#: A recovered engine whose store holds more instances keeps no copy of it: its history
#: has no start (a copy of a big durable store would double the memory the engine needs).
START_MAX_INSTANCES = 10_000
#: The most values a command's arguments may hold (data, payloads and outputs included),
#: checked before anything else: a list shared a billion times would take minutes and
#: gigabytes to copy, record or show (nesting is each value's own check: ``json_copy``)
MAX_VALUES = 1_000_000

log = logging.getLogger("gobpm_nb")
_clock = time.perf_counter
#: Whether facts are echoed to the logger (asked once per command, not once per fact).
_debugging = functools.partial(log.isEnabledFor, logging.DEBUG)

#: What a command changes, as ``mark`` reads it: facts, clock, numbers, versions, events,
#: the tape (the fact count and the clock come first, the tape's position seventh).
Mark = tuple[int, int, int, int, int, int, int, int]
#: A command being recorded: its name, its arguments as kept, the engine's ``mark`` when it
#: began, what puts back a history it discarded, the tape's failures and the wall clock then.
Pending = tuple[str, Packed, Mark, "Undo | None", int, float]
#: What ``History.discard`` took away: entries, position, snapshots, facts, tape records.
Undo = tuple[Entries, int, int, list[Snapshot], list[tuple[Any, ...]],
             list[tuple[Site, bool, Any]], list[tuple[int, BaseException]]]


class Stateful(Protocol):
    """What the command envelope wraps: an object holding an engine state (``Engine``)."""

    _state: EngineState


S = TypeVar("S", bound=Stateful)
P = ParamSpec("P")
R = TypeVar("R")


def command(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """A public command: the history records it (rewind, replay, branch) and it ends,
    whether it returned or raised, with ``History.end``: the store records the clock and
    counters, the command is recorded, the watchers are told. The envelope costs three calls
    in the package besides the command's own (``begin``, ``end`` and the durability
    journal's ``settle``), and bears the command's name: a traceback says which command."""
    name = fn.__name__
    events = name in EVENT_COMMANDS  # a person's interrupt stops them between two events

    def envelope(eng: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        state = eng._state
        history = state.history
        if not history.replaying:
            state.facts.echo = _debugging()
            if (args or kwargs) and too_big((args, kwargs), MAX_VALUES, None):
                raise EngineError(f"{name}: its arguments hold more than {MAX_VALUES:,} "
                                  "values (a value shared in several places counted in "
                                  "each); nothing was done")
        pending = history.begin(state, name, args, kwargs)
        try:
            with between_events(state) if events else NOTHING:
                result = fn(eng, *args, **kwargs)
        except BaseException as exc:  # record what can be; the command's own error wins
            history.end(state, pending, exc)
            raise
        refused = history.end(state, pending, None)
        if refused is not None:
            raise refused
        return result

    envelope.__code__ = envelope.__code__.replace(co_name=name, co_qualname=f"command.{name}")
    functools.update_wrapper(envelope, fn)  # its name, docstring and signature
    return envelope


def settle(state: EngineState) -> None:
    """What every command ends with, outside one (``Engine.recover``): the store records the
    clock and counters (StoreError if it cannot), the watchers are told."""
    refused = state.history.end(state, None, None)
    if refused is not None:
        raise refused


def tell(watchers: list[Callable[[], object]]) -> None:
    """Call every watcher (a watcher that raises is logged and removed)."""
    for fn in tuple(watchers):
        try:
            fn()
        except Exception:
            log.exception("command watcher %r raised; it is removed", fn)
            if fn in watchers:
                watchers.remove(fn)


def mark(state: EngineState) -> Mark:
    """What a command that changed the engine changes (``History.begin`` reads it inline)."""
    core = state.core
    kernel, tape = core.kernel, tape_of(core)
    return (state.facts.seq, kernel.now, kernel.seq, core.next_instance, len(core.deployed),
            state.ran, tape.at, tape.calls)


class Command(NamedTuple):
    """A command of the history as ``Engine.history()`` shows it: its name and arguments,
    the fact count when it began and ended, the clock when it began, and whether it is
    behind the engine's position (False: a rewind went back over it, or into it)."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    first: int
    last: int
    at: datetime
    done: bool


class History:
    """The history of one engine: entries, its position, snapshots, facts rewound over."""

    def __init__(self, replaying: bool = False) -> None:
        self.entries = Entries()
        self.done = 0
        self.into = 0
        self.snapshots: list[Snapshot] = []
        #: Set on an engine that replays (a rewind's or a branch's): nothing is recorded.
        self.replaying = replaying
        self.depth = 0  # commands nested in the one being recorded (advance runs run)
        self.label: tuple[str, tuple[Any, ...]] | None = None  # start_many names its part
        #: Raw facts after the position that the last rewind dropped from the log (kept for
        #: a rewind forward or a replay), or [] once a new command discarded them.
        self.redo: list[tuple[Any, ...]] = []
        self.rewound = False  # whether a rewind ever moved this engine
        self.live = False  # whether snapshots are taken as commands end (a memory store)
        self.kept = True  # whether commands are recorded at all (not on a durable store)
        #: Whether the engine was asked to keep a history (``Engine(keep_history=False)``:
        #: no entries, no tape, no snapshots; a long population run needs none)
        self.wanted = True
        self.pacer: Pacer | None = None  # when the next live snapshot is due

    @property
    def started(self) -> bool:
        """Whether the history has its start (a snapshot at its first place)."""
        return bool(self.snapshots) and self.snapshots[0].place == (0, 0)

    @property
    def place(self) -> Place:
        return self.done, self.into

    def start(self, state: EngineState) -> None:
        """The history begins here (a new engine, or one just recovered). Snapshots are
        taken as commands end only on a memory store (copying it is cheap and reads nothing
        that could fail). The first snapshot copies the store: a store that cannot be read,
        or one holding more than ``START_MAX_INSTANCES`` instances (a big recovered one),
        leaves the history without a start: the engine then branches at its current state
        only."""
        store, core = state.store, state.core
        self.entries, self.done, self.into, self.redo = Entries(), 0, 0, []
        self.live = isinstance(store, MemoryStore)
        self.snapshots, self.pacer = [], None
        #: A durable store is the engine's history: no entries, no tape (their memory would
        #: grow with every command of a long run); it branches where it stands only.
        self.kept = tape_of(core).keeping = self.wanted and not store.durable
        if not self.kept:
            return
        try:
            if self.live or len(store.ids()) <= START_MAX_INSTANCES:
                self.snapshots = [snapshots.take(core, state.facts.seq, (0, 0))]
                self.pacer = Pacer(self.snapshots[0])
        except Exception as exc:  # the store failed while it was read
            log.warning("the command history has no start (the store raised %s): rewind "
                        "and branch(at=...) are not available", type(exc).__name__)

    def future(self) -> int:
        """Commands past the position (an interrupted one counts once)."""
        return len(self.entries) - self.done

    # -- recording ------------------------------------------------------------------------
    def begin(self, state: EngineState, name: str, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Pending | None:
        """A public command begins (None: nested in another, a replay's, or none is kept).
        Its arguments are kept as JSON text when that holds them exactly (``as_text``,
        inline: all in C), else as ``Entries.pack`` gives them."""
        if self.replaying or not self.kept:
            return None
        if self.depth:
            self.depth += 1
            self.label = None  # a nested command names nothing: its outer one is recorded
            return None
        self.depth = 1
        if self.label is not None:
            (name, args), kwargs, self.label = self.label, {}, None
        undo = self.discard(state) if self.done < len(self.entries.names) else None
        core = state.core
        kernel, tape = core.kernel, core.tape
        assert isinstance(tape, Tape), "a core's tape is always a Tape"  # tape_of, inline
        began: Mark = (state.facts.seq, kernel.now, kernel.seq, core.next_instance,
                       len(core.deployed), state.ran, tape.at, tape.calls)  # = mark(state)
        packed: Packed = NO_ARGUMENTS
        if args or kwargs:
            try:  # as_text(args, kwargs)
                exact_types((args, kwargs))
                text = encode((args, kwargs))
                same = decode(text) == [list(args), kwargs]
            except NOT_TEXT:
                same = False
            packed = text if same else self.entries.pack(args, kwargs)
        return name, packed, began, undo, tape.failed, _clock()

    def end(self, state: EngineState, pending: Pending | None, failed: BaseException | None
            ) -> StoreError | None:
        """The end of a command (``failed``: what it raised): the store records the clock
        and counters, the command is recorded, then the watchers are told. Returns the
        store's refusal (the command raises it, unless it is raising already). A command
        that raised having changed nothing was refused: it is not recorded, and a history
        it discarded is back."""
        core = state.core
        refused: StoreError | None = None
        try:
            core.journal.settle()
        except StoreError as exc:
            refused = exc
            if failed is None:
                failed = exc
        if pending is None:
            if self.depth:
                self.depth -= 1
        elif failed is not None and mark(state) == pending[2]:
            self.depth = 0
            if pending[3] is not None:
                self.restore_discarded(state, pending[3])
        else:
            self.depth = 0
            name, packed, began, _, tape_failed, wall = pending
            kernel, tape, seq = core.kernel, core.tape, state.facts.seq
            assert isinstance(tape, Tape), "a core's tape is always a Tape"  # tape_of, inline
            if tape.at != began[6] or tape.failed != tape_failed:
                tape.untrace(began[6], tape_failed)
            entries = self.entries  # Entries.add, inline
            entries.names.append(NUMBER[name])
            entries.nums.extend((began[0], seq, began[1], kernel.now,
                                 state.ran - began[5] if name in EVENT_COMMANDS else -1))
            entries.args.append(packed)
            if failed is not None:
                entries.odd[len(entries.names) - 1] = (type(failed).__name__, True)
            self.done += 1
            pacer = self.pacer
            if pacer is not None and self.live:
                pacer.work += _clock() - wall
                if seq >= pacer.ready_at and pacer.work >= pacer.threshold:
                    self.snapshot(state, pacer, seq)
        if state.watchers:
            tell(state.watchers)
        return refused

    def snapshot(self, state: EngineState, pacer: Pacer, seq: int) -> None:
        """Take a snapshot at the end of a command if one is due (never breaking the
        command: a failed copy stops the live snapshots; rewinds go on)."""
        try:
            snap = pacer.take(state.core, seq, (self.done, 0)) \
                if pacer.due(seq, state.core) else None
        except Exception:
            log.exception("snapshot at fact %s not taken", seq)
            self.pacer = None
            return
        if snap is not None:
            self.add([snap])

    def discard(self, state: EngineState) -> Undo:
        """Drop the history past the position (a new command after a rewind); returns what
        puts it back if the command is refused."""
        core = state.core
        tape = tape_of(core)
        entries = self.entries
        undo: Undo = (entries.head(len(entries)), self.done, self.into, list(self.snapshots),
                      self.redo, tape.outcomes[tape.at:], tape.failures[tape.failed:])
        here = self.place
        self.snapshots = [s for s in self.snapshots if s.place <= here]
        cut = entries[self.done].cut_at(self.into, state.facts.seq, core.kernel.now) \
            if self.into else None
        entries.truncate(self.done)
        if cut is not None:
            entries.append(cut)
            self.done, self.into = self.done + 1, 0
        self.redo = []
        tape.cut()
        return undo

    def restore_discarded(self, state: EngineState, undo: Undo) -> None:
        self.entries, self.done, self.into, self.snapshots, self.redo = undo[:5]
        tape = tape_of(state.core)
        tape.outcomes.extend(undo[5])
        tape.failures.extend(undo[6])

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


__all__ = ["EVENT_COMMANDS", "Command", "History", "Pending", "command", "mark", "settle",
           "tell"]
