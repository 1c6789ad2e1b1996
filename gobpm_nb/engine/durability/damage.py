"""Reading back the engine's own records beside the checkpoints (counters, clock, seed,
the message window and buffer, deployed versions) at restart recovery: a damaged one stops
the recovery with a StoreError naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...errors import StoreError


@contextmanager
def reading(key: str) -> Iterator[None]:
    """Read the store's record ``key`` (restart recovery): what a damaged one raises (not
    JSON, nested past the stack, the wrong shape or type) is a StoreError naming it, and
    nothing is recovered."""
    try:
        yield
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            OverflowError) as exc:
        raise StoreError(f"the store's record {key!r} is damaged ({type(exc).__name__}: "
                         f"{str(exc)[:80]}); nothing was recovered") from None


def registry(meta: Mapping[str, str]) -> dict[str, Any]:
    """The deployed versions the store recorded: process id -> the signatures of its
    versions, in order."""
    out = {}
    for key, value in meta.items():
        if key.startswith("process:"):
            with reading(key):
                out[key.split(":", 1)[1]] = json.loads(value)
    return out
