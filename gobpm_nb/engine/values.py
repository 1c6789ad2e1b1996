"""Instance data, payloads and outputs: JSON values only, copied, never silently changed."""

from __future__ import annotations

import math
from typing import Any

from ..errors import EngineError

#: How deep instance data may nest (a copy of it must never exhaust the interpreter's stack).
MAX_DEPTH = 100


def json_copy(value: Any, where: str, depth: int = 0) -> Any:
    """A deep copy of ``value`` if it is JSON as it stands: dicts with string keys, lists,
    strings, finite numbers, booleans and None, nested at most ``MAX_DEPTH`` levels. Anything
    JSON would change on the way (a tuple, a non-string key, NaN) is refused: ValueError
    naming the path."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, (str, int)):
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
