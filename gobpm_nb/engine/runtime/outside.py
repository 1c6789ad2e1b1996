"""``Outside``: how the engine calls what is outside it.

Every user callable (a script or service task's ``fn``, a condition, a correlation key, a
multi-instance collection that is a Python callable) goes through ``core.tape.call`` with
its site, (what called, node). The facade hands each core its tape
(``Core(tape=..., store=...)``: a ``travel.tape.Tape``, which records the outcome or serves
it to a replay, and the store wrapped in it); the engine never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Outside(Protocol):
    """What the engine calls user callables through (a tape, to the engine)."""

    def call(self, site: tuple[str, str], fn: Callable[..., Any], *args: Any) -> Any: ...


__all__ = ["Outside"]
