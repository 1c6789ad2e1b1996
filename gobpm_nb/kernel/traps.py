"""The only awaitables a coroutine run by the kernel may await.

A coroutine suspends by awaiting one of these two objects; ``coro.send`` hands the trap to the
kernel, which decides what happens next. Nothing else ever yields back to the scheduler.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any


class Trap:
    """A suspension point. ``name`` is shown in reprs only."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __await__(self) -> Generator[Trap, Any, Any]:
        return (yield self)

    def __repr__(self) -> str:
        return f"<trap {self.name}>"


#: Park until someone resumes this coroutine with a value (``Kernel.resume``).
SUSPEND = Trap("suspend")
#: Let other events run, then continue: the kernel puts the coroutine back on the ready queue.
PASS = Trap("pass")
