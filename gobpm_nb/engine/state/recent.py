"""A small bounded memo for answers that many asks repeat."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any


class Recent(dict[Hashable, Any]):
    """``fn``'s answers for the keys asked lately, at most ``size`` of them (all forgotten at
    once when full): for answers that cost more than a lookup and that many asks repeat — the
    text of an instant, the path most instances take. ``fn`` raising keeps nothing."""

    __slots__ = ("fn", "size")

    def __init__(self, fn: Callable[[Any], Any], size: int):
        super().__init__()
        self.fn, self.size = fn, size

    def __missing__(self, key: Hashable) -> Any:
        value = self.fn(key)
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value
