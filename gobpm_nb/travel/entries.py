"""The history's entries, kept compactly: a command costs about a hundred bytes.

Each recorded command keeps one byte for its name, five 8-byte numbers (the facts it began
and ended at, the clock at both ends, the scheduler events it ran) and its arguments,
*packed*, in one of three forms:

- JSON text ``[args, kwargs]`` when JSON holds every value exactly (``as_text``, checked in
  C: no Python call per value) — the common case; a process among them is written as the
  number of its frozen builder in a table (one per process definition), and the text has a
  third item, where those were: ``[args, kwargs, places]``;
- an int: a command given only a process (``start(p)``, ``deploy(p)``), its builder's number;
- a tuple ``(args, kwargs)`` of copied values, where JSON cannot hold them exactly (a
  ``timedelta``, a ``datetime``, a tuple).

The rare flags (a command that raised, one cut short by a rewind) are kept apart. ``Entry``
is the readable form.
"""

from __future__ import annotations

import copy
import json
import marshal
from array import array
from typing import Any

from ..model import Definition, Process

NAMES = ("deploy", "start", "step", "run", "advance", "publish_message", "broadcast_signal",
         "complete_task", "fetch_jobs", "complete_job", "fail_job", "start_many", "decide",
         "start_on_conditions", "activate")
NUMBER = {name: n for n, name in enumerate(NAMES)}
WIDTH = 5  # numbers per entry: first, last, before, after, events (-1: none)
#: A command's arguments as kept: JSON text, a builder's number, or copied values.
Packed = str | int | tuple[tuple[Any, ...], dict[str, Any] | None]
#: What a command given no argument keeps (``step()``, ``run()``).
NO_ARGUMENTS = "[[],{}]"
#: Why a value is not JSON as it stands: not an exact built-in type (marshal), no JSON
#: value (json), an integer too long for text, nested too deep.
NOT_TEXT = (ValueError, TypeError, RecursionError)
encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
decode = json.JSONDecoder().decode
#: Refuses every value that is not of an exact built-in type (a subclass, a Process...).
exact_types = marshal.dumps


def as_text(args: tuple[Any, ...], kwargs: dict[str, Any],
            places: list[int | str] | None = None) -> str | None:
    """``[args, kwargs]`` (and ``places``) as JSON text when it reads back exactly as given,
    else None. Every step runs in C: ``marshal`` refuses any type that is not exactly a
    built-in one, JSON any value it has no text for (a NaN, a set), and reading the text back
    tells a tuple (read back as a list) or a key that is not a string. ``History.begin``
    does the same inline (the common case costs no call)."""
    try:
        exact_types((args, kwargs))
        text = encode((args, kwargs) if places is None else (args, kwargs, places))
        same = decode(text)[:2] == [list(args), kwargs]
    except NOT_TEXT:
        return None
    return text if same else None


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


def _copied(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable: the command refuses it anyway, or it is immutable
        return value


class Entries:
    """The entries of one history, in order (index them like a list). Its columns: ``names``
    (a byte each), ``nums`` (``WIDTH`` numbers each), ``args`` (packed) and ``odd`` (the
    rare flags by index); ``History.end`` appends to them inline, the hot path of every
    command, and everything else goes through ``add``."""

    def __init__(self, procs: list[Process] | None = None,
                 known: dict[int, tuple[Definition, int]] | None = None):
        self.names = array("B")
        self.nums = array("q")
        self.args: list[Packed] = []
        self.odd: dict[int, tuple[str | None, bool]] = {}
        #: Frozen builders, one per process definition commands were given, shared by
        #: the histories of an engine and its branches; id(definition) -> (it, number).
        self._procs = procs if procs is not None else []
        self._known = known if known is not None else {}

    def __len__(self) -> int:
        return len(self.names)

    def number(self, process: Process) -> int | None:
        """The number of the frozen builder of ``process`` as it is now (a builder changed
        later does not change the record; a replay does not build its definition again);
        None for an invalid process (the command refuses it)."""
        try:
            defn = process.definition()
        except Exception:  # an invalid process: the command refuses it
            return None
        kept = self._known.get(id(defn))
        if kept is None:
            frozen = Process.of(defn)
            frozen._cache = defn  # the graph it holds: no second build, no new signature
            self._procs.append(frozen)
            kept = self._known[id(defn)] = (defn, len(self._procs) - 1)
        return kept[1]

    def pack(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Packed:
        """A command's arguments as kept (see the module's docstring)."""
        kwargs = kwargs or {}
        if len(args) == 1 and not kwargs and type(args[0]) is Process:  # start(p), deploy(p)
            n = self.number(args[0])
            if n is not None:
                return n
        places: list[int | str] = [i for i, v in enumerate(args) if isinstance(v, Process)]
        places += [k for k, v in kwargs.items() if isinstance(v, Process)]
        text = None
        if not places:
            text = as_text(args, kwargs)
        else:
            numbers = {id(v): self.number(v) for v in (*args, *kwargs.values())
                       if isinstance(v, Process)}
            if None not in numbers.values():
                text = as_text(tuple(numbers.get(id(v), v) for v in args),
                               {k: numbers.get(id(v), v) for k, v in kwargs.items()}, places)
        if text is not None:
            return text
        return (tuple(v if isinstance(v, Process) else _copied(v) for v in args),
                {k: v if isinstance(v, Process) else _copied(v) for k, v in kwargs.items()}
                or None)

    def _unpack(self, packed: Packed) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
        if isinstance(packed, int):
            return (self._procs[packed],), None
        if isinstance(packed, tuple):
            return packed
        data = decode(packed)
        args, kwargs = data[0], data[1]
        for at in data[2] if len(data) == 3 else ():
            if type(at) is int:
                args[at] = self._procs[args[at]]
            else:
                kwargs[at] = self._procs[kwargs[at]]
        return tuple(args), kwargs or None

    def append(self, e: Entry) -> None:
        self.add(e.name, self.pack(e.args, e.kwargs), e.first, e.last, e.before, e.after,
                 -1 if e.events is None else e.events, e.raised, e.settled)

    def add(self, name: str, packed: Packed, first: int, last: int, before: int, after: int,
            events: int, raised: str | None = None, settled: bool = True) -> None:
        """Add an entry, its arguments as ``pack`` gave them (``events``: -1 for none)."""
        self.names.append(NUMBER[name])
        self.nums.extend((first, last, before, after, events))
        self.args.append(packed)
        if raised is not None or not settled:
            self.odd[len(self.names) - 1] = (raised, settled)

    def __getitem__(self, i: int) -> Entry:
        if i < 0:
            i += len(self.names)
        if not 0 <= i < len(self.names):
            raise IndexError(i)
        first, last, before, after, events = self.nums[i * WIDTH:(i + 1) * WIDTH]
        args, kwargs = self._unpack(self.args[i])
        e = Entry(NAMES[self.names[i]], args, kwargs, first, before)
        e.last, e.after, e.events = last, after, (None if events < 0 else events)
        e.raised, e.settled = self.odd.get(i, (None, True))
        return e

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` entries."""
        del self.names[n:]
        del self.nums[n * WIDTH:]
        del self.args[n:]
        for k in [k for k in self.odd if k >= n]:
            del self.odd[k]

    def head(self, n: int) -> Entries:
        """A history of the first ``n`` entries (the process table is shared)."""
        out = Entries(self._procs, self._known)
        out.names = self.names[:n]
        out.nums = self.nums[:n * WIDTH]
        out.args = self.args[:n]
        out.odd = {k: v for k, v in self.odd.items() if k < n}
        return out

    def befores(self) -> list[int]:
        """The clock at which each command began."""
        return list(self.nums[2::WIDTH])

    def last(self) -> int:
        """The fact count at the end of the last entry (0 when there is none)."""
        return self.nums[-WIDTH + 1] if self.names else 0


__all__ = ["NAMES", "NO_ARGUMENTS", "NUMBER", "WIDTH", "Entries", "Entry", "Packed",
           "as_text"]
