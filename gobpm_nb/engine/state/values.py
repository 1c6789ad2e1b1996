"""Instance data, payloads and outputs: JSON values only, copied, never silently changed."""

from __future__ import annotations

import math
import sys
from typing import Any

from ...errors import EngineError

#: How deep instance data may nest (a copy of it must never exhaust the interpreter's stack).
MAX_DEPTH = 100
#: Integers shorter than this many bits have fewer digits (632) than any limit Python can
#: set on converting integers to and from text (640 at the least).
SHORT_BITS = 2100


class Opaque:
    """Stands in for a value that is not JSON (a message throw's key, ``elements.events``): it
    reads (``repr``) as the original did, and whatever refused the original refuses it the
    same way; a tape keeps it where it could not keep the value."""

    __slots__ = ("text",)

    def __init__(self, value: Any):
        self.text = repr(value)

    def __repr__(self) -> str:
        return self.text


def digits_limit() -> int:
    """The most digits an integer in JSON text may have: the interpreter's limit on int/str
    conversion (``sys.set_int_max_str_digits``), never above the default 4,300, so that any
    Python reads a checkpoint back."""
    default: int = sys.int_info.default_max_str_digits
    return min(sys.get_int_max_str_digits() or default, default)


def int_fits(value: int) -> bool:
    """Whether JSON text holds the integer ``value`` (see ``digits_limit``)."""
    return value.bit_length() < SHORT_BITS or abs(value) < 10 ** digits_limit()


def json_copy(value: Any, where: str, depth: int = 0) -> Any:
    """A deep copy of ``value`` if it is JSON as it stands: dicts with string keys, lists,
    strings, finite numbers (integers of at most ``digits_limit()`` digits), booleans and
    None, nested at most ``MAX_DEPTH`` levels. Anything JSON would change on the way (a
    tuple, a non-string key, NaN) or cannot hold is refused: ValueError naming the path."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if not int_fits(value):
            raise ValueError(f"{where} is an integer of more than {digits_limit()} digits, "
                             "which JSON text cannot hold")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}, which JSON cannot hold")
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where} has the key {k!r}, which is not a string")
            out[k] = json_copy(v, f"{where}.{k}", depth + 1)
        return out
    if isinstance(value, list):
        return [json_copy(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    raise ValueError(f"{where} is a {type(value).__name__}, not a JSON value")


def json_dict(value: Any, what: str) -> dict[str, Any]:
    """A copy of ``value`` if it is a dict of JSON values ({} for None); EngineError naming
    ``what`` and the bad value if not."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EngineError(f"{what} must be a dict of JSON values, got {type(value).__name__}")
    try:
        copied: dict[str, Any] = json_copy(value, what)
    except ValueError as exc:
        raise EngineError(f"{what} is not JSON: {exc}") from None
    except RecursionError:
        raise EngineError(f"{what} is not JSON: it is nested too deeply") from None
    return copied


def too_big(value: Any, limit: int, depth: int | None = MAX_DEPTH) -> str | None:
    """Whether ``value`` holds more than ``limit`` values (each container, key and item, a
    shared one counted where it is used, as a copy would expand it): ``"count"``; or nests
    containers more than ``depth`` deep (None: any depth): ``"depth"``; else None. Counts
    level by level, without recursion, and stops at the limit: a list shared a billion
    times costs ``limit`` steps."""
    level: list[Any] = [value]
    seen = nested = 0
    while level:
        below: list[Any] = []
        for v in level:
            seen += 1
            if isinstance(v, dict):
                seen += len(v)
                below.extend(v.values())
            elif isinstance(v, (list, tuple)):
                below.extend(v)
            else:
                continue
            if depth is not None and nested >= depth:
                return "depth"
            if seen + len(below) > limit:
                return "count"
        level, nested = below, nested + 1
    return None
