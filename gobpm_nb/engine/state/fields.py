"""Reading a checkpoint document back: every field checked, every problem named.

A ``Reader`` belongs to one instance; ``fail`` makes the CheckpointError that names the
instance, the field (as a path such as ``tracks[0].wait.deadline``) and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ...errors import CheckpointError, ModelError
from ...kernel import to_us
from ...model.timers import parse_date
from .recent import Recent


class Reader:
    """Checks one document's fields, converting ISO times to virtual microseconds."""

    def __init__(self, instance: str):
        self.instance = instance

    def fail(self, where: str, why: str) -> CheckpointError:
        return CheckpointError(self.instance, where, why)

    def get(self, obj: Any, name: str, kind: str, where: str) -> Any:
        """Field ``name`` of ``obj`` (at path ``where``), checked to be of ``kind`` (the path
        is spelled out only for an error: a wake reads some thirty fields)."""
        if not isinstance(obj, dict) or name not in obj:
            raise self.fail(f"{where}.{name}" if where else name, "is missing")
        v = obj[name]
        if not CHECKS[kind](v):
            path = f"{where}.{name}" if where else name
            if kind in ("track", "opttrack") and isinstance(v, str):
                raise self.fail(path, f"{v!r} is not a track id (t1, t2, ...)")
            raise self.fail(path, f"expected {kind}, found {type(v).__name__}")
        if kind == "time":
            return self.time(v, f"{where}.{name}" if where else name)
        return v

    def fields(self, obj: Any, where: str, spec: Spec) -> list[Any]:
        """Fields ``spec`` of ``obj`` (``(name, kind)`` pairs), each checked as ``get``
        checks it, in one call: a value of its kind's exact type is taken here, anything
        else (a missing field, a wrong type, a subclass) goes through ``get``, which names
        the problem or takes it the same way."""
        if type(obj) is not dict:
            return [self.get(obj, name, kind, where) for name, kind in spec]
        out = []
        for name, kind in spec:
            v = obj.get(name, MISSING)
            exact = EXACT.get(kind)
            if exact is None or type(v) not in exact:
                if kind == "track" and type(v) is str and TRACK_ID.fullmatch(v):
                    out.append(v)
                    continue
                v = self.get(obj, name, kind, where)
            elif kind == "time":
                try:
                    v = _US[v]
                except ModelError:
                    v = self.get(obj, name, kind, where)  # raises, naming the field
                if not FIRST_US <= v <= LAST_US:
                    v = self.get(obj, name, kind, where)  # raises, naming the field
            out.append(v)
        return out

    def tracks(self, ids: Any, path: str) -> list[str]:
        """A list of track ids at ``path``."""
        if not isinstance(ids, list):
            raise self.fail(path, f"expected list, found {type(ids).__name__}")
        for i, v in enumerate(ids):
            if not _track(v):
                raise self.fail(f"{path}[{i}]", f"{v!r} is not a track id (t1, t2, ...)")
        return ids

    def time(self, v: str, path: str) -> int:
        """An ISO 8601 time as virtual microseconds (the engine writes them as
        ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``; any other ISO form is read too), within the
        calendar's range (years 1 to 9999, UTC)."""
        try:
            us: int = _US[v]
        except ModelError:
            raise self.fail(path, f"{v!r} is not an ISO 8601 time") from None
        if not FIRST_US <= us <= LAST_US:
            raise self.fail(path, f"{v!r} is outside the calendar's range")
        return us


def _time_us(v: str) -> int:
    try:
        at = datetime.fromisoformat(v)
    except ValueError:
        at = parse_date(v)  # ModelError when it is no ISO 8601 time at all
    return to_us(at)


#: The times read lately, by their text: instances woken together were mostly checkpointed
#: at one instant for one deadline.
_US = Recent(_time_us, 64)


#: The calendar's range in virtual microseconds: what a time read back can be written as.
FIRST_US = to_us(datetime.min.replace(tzinfo=UTC))
LAST_US = to_us(datetime.max.replace(tzinfo=UTC))
#: A track id as the engine makes them: ``t`` and a number from 1 (of at most 18 digits).
TRACK_ID = re.compile(r"t[1-9][0-9]{0,17}")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _track(v: Any) -> bool:
    return isinstance(v, str) and TRACK_ID.fullmatch(v) is not None


#: What ``Reader.fields`` finds for a field that is not there (no kind's exact type).
MISSING = object()
#: Fields to read together: (name, kind) pairs, written once where they are read.
Spec = tuple[tuple[str, str], ...]
#: By kind, the exact types a value is taken as in ``Reader.fields`` without a call (bool
#: is not int there, as in ``_int``; the kinds of track ids go through their pattern).
EXACT: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "bool": (bool,), "dict": (dict,), "list": (list,),
    "optint": (int, type(None)), "optstr": (str, type(None)), "optlist": (list, type(None)),
    "time": (str,),
}

CHECKS: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "int": _int,
    "bool": lambda v: isinstance(v, bool),
    "dict": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "optint": lambda v: v is None or _int(v),
    "optstr": lambda v: v is None or isinstance(v, str),
    "optlist": lambda v: v is None or isinstance(v, list),
    "time": lambda v: isinstance(v, str),
    "track": _track,
    "opttrack": lambda v: v is None or _track(v),
}
