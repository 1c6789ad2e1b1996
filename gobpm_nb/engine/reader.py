"""Reading a checkpoint document back: every field checked, every problem named.

A ``Reader`` belongs to one instance; ``fail`` makes the CheckpointError that names the
instance, the field (as a path such as ``tracks[0].wait.deadline``) and what is wrong.
"""

from __future__ import annotations

from typing import Any

from ..errors import CheckpointError, ModelError
from ..kernel import to_us
from ..model.timers import parse_date


class Reader:
    """Checks one document's fields, converting ISO times to virtual microseconds."""

    def __init__(self, instance: str):
        self.instance = instance

    def fail(self, where: str, why: str) -> CheckpointError:
        return CheckpointError(self.instance, where, why)

    def get(self, obj: Any, name: str, kind: str, where: str) -> Any:
        """Field ``name`` of ``obj`` (at path ``where``), checked to be of ``kind``."""
        path = f"{where}.{name}" if where else name
        if not isinstance(obj, dict) or name not in obj:
            raise self.fail(path, "is missing")
        return self.value(obj[name], kind, path)

    def value(self, v: Any, kind: str, path: str) -> Any:
        ok = {
            "str": isinstance(v, str),
            "int": isinstance(v, int) and not isinstance(v, bool),
            "bool": isinstance(v, bool),
            "dict": isinstance(v, dict),
            "list": isinstance(v, list),
            "optint": v is None or (isinstance(v, int) and not isinstance(v, bool)),
            "optstr": v is None or isinstance(v, str),
            "time": isinstance(v, str),
        }[kind]
        if not ok:
            raise self.fail(path, f"expected {kind}, found {type(v).__name__}")
        if kind == "time":
            try:
                return to_us(parse_date(v))
            except ModelError:
                raise self.fail(path, f"{v!r} is not an ISO 8601 time") from None
        return v
