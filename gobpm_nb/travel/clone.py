"""A copy of an engine core's whole state at an event boundary, independent of the original.

Rewind snapshots and ``Engine.branch`` need an engine state they can run on without touching
the one it came from. Everything in a core is plain data (instances, tracks, waits, holders,
the deadline heap, the message buffer, counters) except the coroutines, which Python cannot
copy. Between two scheduler events each coroutine stands at one of a few known points, and
each can be made again from the plain state alone:

- a track's coroutine not started yet (state ``ready``): a new one with the trigger it was
  given (read from its frame) and the same ``parked`` flag;
- a parked track (state ``waiting``), resumed or not: a new one born parked, whose first
  resume brings the trigger (what a hydrated track gets; ``tracks.adopt_parked``);
- a track between leaving a node and entering the next (state ``running``, at its ``PASS``):
  a new one that enters its node (the same steps a fresh track takes there);
- an instance loop, at any of its points: a new loop (it reads only the mailbox).

``freeze`` copies a core into a ``Frozen`` that never runs (coroutines as ``Stand`` records);
``thaw`` copies a ``Frozen`` into a live core with new coroutines, in the kernel's registry
order, each pending resume kept at its sequence number. A frozen state can be thawed any
number of times. Process definitions and their elements are immutable and shared; the fact
log, the tape and the store are given by the caller (``shared``).
"""

from __future__ import annotations

import contextlib
import copy
import gc
import types
from collections import OrderedDict, deque
from collections.abc import Generator, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..engine.runtime.finished import Finished
from ..engine.runtime.run import Run
from ..engine.runtime.tracks import loop_body, track_body
from ..kernel import Deadline, Trap
from ..vocabulary import WAITING

if TYPE_CHECKING:
    from ..engine.core import Core

#: Records that never change once made (an ended instance's summary): shared, not copied.
SHARED: frozenset[type] = frozenset({Finished})
#: Values that are never copied (immutable, or shared on purpose: classes, modules, traps).
#: A Python function is shared too, unless the memo names its replacement.
ATOMIC: frozenset[type] = frozenset({
    str, int, float, bool, type(None), bytes, complex, datetime, timedelta, range,
    types.BuiltinFunctionType, types.BuiltinMethodType, type, types.ModuleType, Trap})


class Stand:
    """Where a coroutine stood when its core was frozen: its owner tag (``("track", instance,
    track)`` or ``("loop", instance, None)``) and, for a track not started yet, the trigger
    it was given and whether it was born parked."""

    __slots__ = ("owner", "trigger", "parked", "fresh")

    def __init__(self, owner: tuple[str, str, str | None], trigger: Any = None,
                 parked: bool = False, fresh: bool = False):
        self.owner = owner
        self.trigger = trigger
        self.parked = parked
        self.fresh = fresh


class Frozen:
    """A core's state copied at an event boundary: never run, thawed into live cores.
    ``size`` is how many objects the copy took (what thawing it costs, roughly)."""

    __slots__ = ("core", "size")

    def __init__(self, core: Core, size: int):
        self.core = core
        self.size = size


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off while a copy makes its many objects (it would scan
    the growing heap again and again; the copy makes no garbage of its own)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _dead() -> Generator[None, None, None]:
    yield


def _slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for c in cls.__mro__:
        declared = c.__dict__.get("__slots__", ())
        names.extend((declared,) if isinstance(declared, str) else declared)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))


class Copier:
    """A deep copy with a memo, fast for the engine's own kinds of object (slotted records,
    dicts, lists, tuples, deques), ``copy.deepcopy`` for anything else."""

    def __init__(self, memo: dict[int, Any], shared: frozenset[type] = frozenset()):
        self.memo = memo
        #: Kinds of record that never change once made: shared, not copied.
        self.shared = shared
        self._slots: dict[type, tuple[str, ...]] = {}
        self.dead = _dead()
        self.dead.close()  # a coroutine closed while a resume of it was queued stays closed

    def __call__(self, v: Any) -> Any:
        cls = type(v)
        if cls in ATOMIC:
            return v
        memo = self.memo
        got = memo.get(id(v), memo)
        if got is not memo:
            return got
        if cls is types.FunctionType or cls in self.shared:
            return v  # shared, unless the memo names its replacement (the fact log's emit)
        atomic = ATOMIC
        if cls is dict:
            out: Any = {}
            memo[id(v)] = out
            for k, x in v.items():
                out[k if type(k) in atomic else self(k)] = x if type(x) in atomic else self(x)
            return out
        if cls is list:
            out = []
            memo[id(v)] = out
            out.extend([x if type(x) in atomic else self(x) for x in v])
            return out
        if cls is tuple or isinstance(v, tuple):
            if _immutable(v):
                return v  # immutable all the way down: shared
            if cls is tuple:
                items = tuple(self(x) for x in v)
                return v if all(a is b for a, b in zip(items, v, strict=True)) else items
            if isinstance(v, Deadline):
                return self._entry(v, cls)
        return self._other(v, cls)

    def _entry(self, v: Deadline, cls: Any) -> Any:
        """A deadline entry (a hold, a scheduled call): the same class over copied items,
        one copy however many places name it (the heap, the kernel's set of cancelled
        entries, an instance's holds)."""
        memo, atomic = self.memo, ATOMIC
        items = [x if type(x) in atomic else self(x) for x in v]
        got = memo.get(id(v), memo)
        if got is not memo:
            return got  # made while its items were (a cycle through it: its site's holders)
        out = memo[id(v)] = cls(items)
        return out

    def _other(self, v: Any, cls: type) -> Any:
        memo = self.memo
        if cls is set:  # the kernel's cancelled entries
            entries: set[Any] = set()
            memo[id(v)] = entries
            entries.update(x if type(x) in ATOMIC else self(x) for x in v)
            return entries
        if cls is deque or cls is OrderedDict:
            out: Any = OrderedDict() if cls is OrderedDict else deque(maxlen=v.maxlen)
            memo[id(v)] = out
            if cls is OrderedDict:
                for k, x in v.items():
                    out[self(k)] = self(x)
            else:
                out.extend(self(x) for x in v)
            return out
        if cls is types.MethodType:
            return types.MethodType(v.__func__, self(v.__self__))
        if cls is types.GeneratorType:
            return self.dead  # not a live coroutine (those are in the memo): a closed one
        if isinstance(v, tuple) or cls in (set, frozenset) or not hasattr(cls, "__slots__") \
                and not hasattr(v, "__dict__"):
            return copy.deepcopy(v, memo)
        return self._object(v, cls)

    def _object(self, v: Any, cls: Any) -> Any:
        memo = self.memo
        out = cls.__new__(cls)
        memo[id(v)] = out
        names = self._slots.get(cls)
        if names is None:
            names = self._slots[cls] = _slots(cls)
        atomic, missing, put = ATOMIC, self.memo, object.__setattr__
        for name in names:
            value = getattr(v, name, missing)
            if value is not missing:
                put(out, name, value if type(value) in atomic else self(value))
        state = getattr(v, "__dict__", None)
        if state is not None:
            out.__dict__.update({k: x if type(x) in atomic else self(x)
                                 for k, x in state.items()})
        return out


def _immutable(v: tuple[Any, ...]) -> bool:
    """Whether a tuple holds only values never copied, or tuples of them (a track view)."""
    for x in v:
        kind = type(x)
        if kind not in ATOMIC and not (isinstance(x, tuple) and _immutable(x)):
            return False
    return True


def _memo(core: Core, shared: dict[int, Any]) -> dict[int, Any]:
    memo = dict(shared)
    for defn in core.deployed.values():
        memo[id(defn)] = defn
    for rec in core.runs.values():
        if rec.defn is not None:
            memo[id(rec.defn)] = rec.defn
    memo[id(core.codec)] = core.codec
    return memo


def freeze(core: Core, shared: dict[int, Any]) -> Frozen:
    """A copy of ``core`` that never runs. It must be between two scheduler events."""
    if core.kernel.current is not None:
        raise RuntimeError("a core can be copied only between two scheduler events")
    memo = _memo(core, shared)
    stands: list[tuple[Stand, Any]] = []
    coro: Any
    for coro, owner in core.kernel.live.items():
        stand = Stand(owner)
        if owner[0] == "track":
            rec = core.runs.get(owner[1])
            tr = rec.tracks.get(owner[2]) if isinstance(rec, Run) else None
            if tr is not None and tr.state == "ready":  # not started: it keeps its trigger
                frame = coro.gi_frame
                local = frame.f_locals if frame is not None else {}
                stand.fresh, stand.parked = True, bool(local.get("parked", False))
                stands.append((stand, local.get("trigger")))
        memo[id(coro)] = stand
    copier = Copier(memo, SHARED)
    given = len(memo)
    with _no_gc():
        out = copier(core)
        for stand, trigger in stands:
            stand.trigger = copier(trigger)
    return Frozen(out, len(memo) - given)


def thaw(frozen: Frozen, shared: dict[int, Any]) -> Core:
    """A live core from a frozen one: every coroutine made again where it stood."""
    src = frozen.core
    memo = _memo(src, shared)
    copier = Copier(memo, SHARED)
    with _no_gc():
        core: Core = copier(src)
    kernel = core.kernel
    stood: dict[Stand, Any] = {}
    live: Any = kernel.live
    kernel.live = {}
    for stand in live:
        stood[stand] = _again(core, stand)

    def swap(x: Any) -> Any:
        return stood.get(x, copier.dead) if type(x) is Stand else x

    # the ready queue's entries name the coroutine they resume: the new one, same place
    kernel._ready = deque(tuple(swap(x) for x in entry) for entry in kernel._ready)
    for rec in core.runs.values():
        if isinstance(rec, Run):
            rec.loop = swap(rec.loop)
            for tr in rec.tracks.values():
                tr.coro = swap(tr.coro)
    return core


def _again(core: Core, stand: Stand) -> Any:
    """A new coroutine for one that stood at ``stand``, registered with the kernel."""
    kind, iid, tid = stand.owner
    run = core.runs[iid]
    assert isinstance(run, Run)
    if kind == "loop":
        coro = loop_body(run)
    else:
        tr = run.tracks[str(tid)]
        if stand.fresh:
            coro = track_body(run, tr, stand.trigger, stand.parked)
        else:  # parked (resumed or not), or between two nodes: as a fresh track enters
            coro = track_body(run, tr, None, parked=tr.state == WAITING)
    core.kernel.adopt(coro, stand.owner)
    return coro


__all__ = ["Copier", "Frozen", "Stand", "freeze", "thaw"]
