"""The journal's entries, kept compactly: a command costs about a hundred bytes.

Each recorded command keeps one byte for its name, five 8-byte numbers (the facts it began
and ended at, the clock at both ends, the scheduler events it ran) and its arguments as
compact JSON text, a process given as its number in a table of frozen builders (one per
process definition; a command given only a process keeps just that number). Arguments
JSON cannot hold exactly (a ``timedelta``, a ``datetime``) are kept as copied Python values.
The rare flags (a command that raised, one cut short by a rewind) are kept apart. ``Entry``
is the readable form.
"""

from __future__ import annotations

import copy
import json
import math
from array import array
from typing import Any

from ..engine.values import MAX_DEPTH, int_fits
from ..model import Process

NAMES = ("deploy", "start", "step", "run", "advance", "publish_message", "broadcast_signal",
         "complete_task", "fetch_jobs", "complete_job", "fail_job", "start_many")
NUMBER = {name: n for n, name in enumerate(NAMES)}
WIDTH = 5  # numbers per entry: first, last, before, after, events (-1: none)
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class Entry:
    """One recorded command. ``events`` is None for a command replayed by calling it again;
    ``raised`` names the error of a command that raised after it had changed the engine;
    ``settled`` is False for a command cut short by a rewind (its end never ran)."""

    __slots__ = ("name", "args", "kwargs", "events", "first", "last", "before", "after",
                 "raised", "settled")

    def __init__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None,
                 first: int, before: int):
        self.name = name
        self.args = args
        self.kwargs = kwargs
        self.events: int | None = None
        self.first = first
        self.last = first
        self.before = before
        self.after = before
        self.raised: str | None = None
        self.settled = True

    def cut_at(self, events: int, last: int, after: int) -> Entry:
        """This command as far as it ran when a rewind stopped inside it."""
        out = Entry(self.name, self.args, self.kwargs, self.first, self.before)
        out.events, out.last, out.after, out.settled = events, last, after, False
        return out


def exact(value: Any, depth: int = 0) -> bool:
    """Whether JSON text holds ``value`` exactly (str keys, lists, finite numbers...). Past
    ``MAX_DEPTH`` levels it says no (the value is kept as a copy; the command refuses it)
    instead of recursing as deep as a hostile argument goes."""
    kind = type(value)
    if kind in (str, bool) or value is None:
        return True
    if kind is int:
        return int_fits(value)
    if kind is float:
        return math.isfinite(value)
    if depth >= MAX_DEPTH:
        return False
    if kind is list:
        return all(exact(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and exact(v, depth + 1) for k, v in value.items())
    return False


def _copied(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable: the command refuses it anyway, or it is immutable
        return value


class Entries:
    """The entries of one journal, in order (index them like a list)."""

    def __init__(self, procs: list[Process] | None = None,
                 known: dict[int, tuple[Any, int]] | None = None):
        self._names = array("B")
        self._nums = array("q")
        self._args: list[Any] = []
        self._odd: dict[int, tuple[str | None, bool]] = {}
        #: Frozen builders, one per process definition commands were given, shared by
        #: the journals of an engine and its branches; id(definition) -> (it, number).
        self._procs = procs if procs is not None else []
        self._known = known if known is not None else {}

    def __len__(self) -> int:
        return len(self._names)

    def frozen(self, process: Process) -> Any:
        """The frozen builder of ``process`` as it is now (a builder changed later does not
        change the record; a replay does not build its definition again)."""
        try:
            defn = process.definition()
        except Exception:  # an invalid process: the command refuses it
            return process
        kept = self._known.get(id(defn))
        if kept is None:
            frozen = Process.of(defn)
            frozen._cache = defn  # the graph it holds: no second build, no new signature
            self._procs.append(frozen)
            kept = self._known[id(defn)] = (defn, len(self._procs) - 1)
        return self._procs[kept[1]]

    def pack(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
        """A command's arguments as kept: JSON text (a process as its frozen builder's
        number), or copied values where JSON cannot hold them exactly."""
        if len(args) == 1 and not kwargs and type(args[0]) is Process:  # start(p), deploy(p)
            try:  # a known graph, the common case: its number without ``frozen``
                kept = self._known.get(id(args[0].definition()))
            except Exception:  # an invalid process: as below
                kept = None
            if kept is None:
                kept = self._known.get(id(self.frozen(args[0])._cache))
            if kept is not None:
                return kept[1]  # an int: the frozen builder's number

        def one(v: Any) -> Any:
            if isinstance(v, Process):
                kept = self._known.get(id(self.frozen(v)._cache))
                return [1, kept[1]] if kept is not None else None
            return [0, v] if exact(v) else None
        coded = [one(a) for a in args]
        named = {k: one(v) for k, v in (kwargs or {}).items()}
        if None in coded or None in named.values():
            return (tuple(v if isinstance(v, Process) else _copied(v) for v in args),
                    {k: _copied(v) for k, v in (kwargs or {}).items()} or None)
        return _encode([coded, named] if named else coded)

    def _unpack(self, packed: Any) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
        if type(packed) is int:
            return (self._procs[packed],), None
        if type(packed) is tuple:
            return packed[0], packed[1]
        data = json.loads(packed)
        coded, named = (data[0], data[1]) if len(data) == 2 and type(data[1]) is dict \
            else (data, {})

        def one(c: list[Any]) -> Any:
            return self._procs[c[1]] if c[0] == 1 else c[1]
        return tuple(one(c) for c in coded), ({k: one(c) for k, c in named.items()} or None)

    def append(self, e: Entry) -> None:
        self.add(e.name, self.pack(e.args, e.kwargs), e.first, e.last, e.before, e.after,
                 -1 if e.events is None else e.events, e.raised, e.settled)

    def add(self, name: str, packed: Any, first: int, last: int, before: int, after: int,
            events: int, raised: str | None = None, settled: bool = True) -> None:
        """Add an entry, its arguments as ``pack`` gave them (``events``: -1 for none)."""
        self._names.append(NUMBER[name])
        self._nums.extend((first, last, before, after, events))
        self._args.append(packed)
        if raised is not None or not settled:
            self._odd[len(self._names) - 1] = (raised, settled)

    def __getitem__(self, i: int) -> Entry:
        if i < 0:
            i += len(self._names)
        if not 0 <= i < len(self._names):
            raise IndexError(i)
        first, last, before, after, events = self._nums[i * WIDTH:(i + 1) * WIDTH]
        args, kwargs = self._unpack(self._args[i])
        e = Entry(NAMES[self._names[i]], args, kwargs, first, before)
        e.last, e.after, e.events = last, after, (None if events < 0 else events)
        e.raised, e.settled = self._odd.get(i, (None, True))
        return e

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` entries."""
        del self._names[n:]
        del self._nums[n * WIDTH:]
        del self._args[n:]
        for k in [k for k in self._odd if k >= n]:
            del self._odd[k]

    def head(self, n: int) -> Entries:
        """A journal of the first ``n`` entries (the process table is shared)."""
        out = Entries(self._procs, self._known)
        out._names = self._names[:n]
        out._nums = self._nums[:n * WIDTH]
        out._args = self._args[:n]
        out._odd = {k: v for k, v in self._odd.items() if k < n}
        return out

    def befores(self) -> list[int]:
        """The clock at which each command began."""
        return list(self._nums[2::WIDTH])

    def last(self) -> int:
        """The fact count at the end of the last entry (0 when there is none)."""
        return self._nums[-WIDTH + 1] if self._names else 0


__all__ = ["NAMES", "Entries", "Entry", "exact"]
