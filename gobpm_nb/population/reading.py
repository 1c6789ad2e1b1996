"""Reading a scenario's fields: each reader takes the value and the path of the field it
came from, and refuses a bad one with a ScenarioError naming that path."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

from ..api import json_copy
from ..errors import EngineError, ScenarioError
from ..errors import shown as bounded
from ..kernel import to_us
from ..when import fixed_span, instant

ONE_US = timedelta(microseconds=1)


def mapping(value: Any, path: str) -> Mapping[str, Any]:
    """A mapping with text keys."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ScenarioError(path, f"expected a mapping of names, got {shown(value)}")
    return value


def one_of(value: Any, path: str, kinds: tuple[str, ...]) -> tuple[str, Any]:
    """A mapping of exactly one key, one of ``kinds``: that key and its value."""
    found = mapping(value, path)
    if len(found) != 1 or next(iter(found)) not in kinds:
        raise ScenarioError(path, f"give exactly one of {', '.join(kinds)}; got "
                                  f"{', '.join(map(repr, found)) or 'nothing'}")
    kind = next(iter(found))
    return kind, found[kind]


def only(value: Mapping[str, Any], path: str, allowed: tuple[str, ...]) -> None:
    """No key outside ``allowed``."""
    for key in value:
        if key not in allowed:
            raise ScenarioError(f"{path}.{key}" if path else key,
                                f"unknown field (expected one of {', '.join(allowed)})")


def need(value: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in value:
        raise ScenarioError(f"{path}.{key}", "missing")
    return value[key]


def number(value: Any, path: str, low: float | None = None,
           high: float | None = None) -> float:
    """A finite number, at least ``low`` and at most ``high`` when given."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise ScenarioError(path, f"{shown(value)} is not a finite number")
    if low is not None and value < low:
        raise ScenarioError(path, f"{value!r} is below {low:g}")
    if high is not None and value > high:
        raise ScenarioError(path, f"{value!r} is above {high:g}")
    return float(value)


def count(value: Any, path: str, low: int = 0, high: int | None = None) -> int:
    """A whole number, at least ``low`` and (when given) at most ``high``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ScenarioError(path, f"{shown(value)} is not a whole number of at least {low}")
    if high is not None and value > high:
        raise ScenarioError(path, f"{shown(value)} is above {high:,}")
    return value


def duration(value: Any, path: str) -> int:
    """An ISO 8601 duration of a fixed length (or a timedelta), in microseconds, >= 0."""
    try:
        length = fixed_span(value, f"{path}:")
    except EngineError as exc:
        raise ScenarioError(path, str(exc).removeprefix(f"{path}: ")) from None
    return length // ONE_US


def moment(value: Any, path: str) -> int:
    """An ISO 8601 date-time (naive: UTC) or datetime, in microseconds since the epoch."""
    try:
        return to_us(instant(value, f"{path}:"))
    except EngineError as exc:
        raise ScenarioError(path, str(exc).removeprefix(f"{path}: ")) from None


def day(value: Any, path: str) -> date:
    """An ISO 8601 date (``2026-12-25``)."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ScenarioError(path, f"{shown(value)} is not an ISO 8601 date") from None


def json_value(value: Any, path: str) -> Any:
    """A copy of a value the engine will be handed (start data, a payload): JSON as it
    stands (the engine's own ``json_copy``, which ``api`` hands on: this layer may not
    import the engine), or refused here rather than at the run's first start."""
    try:
        return json_copy(value, path)
    except ValueError as exc:
        raise ScenarioError(path, str(exc).removeprefix(f"{path} ")) from None


def text(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(path, f"{shown(value)} is not a non-empty string")
    return value


def shown(value: Any) -> str:
    """A value as an error message shows it (``errors.shown``, cut to 60 characters)."""
    out = bounded(value)
    return out if len(out) <= 60 else out[:57] + "..."
