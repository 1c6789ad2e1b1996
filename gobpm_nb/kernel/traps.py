"""The only awaitables a coroutine run by the kernel may await.

A coroutine suspends by awaiting one of these two objects; ``coro.send`` hands the trap to the
kernel, which decides what happens next. Nothing else ever yields back to the scheduler.

A trap is its own iterator, so an ``await`` allocates nothing: its first step yields the trap,
and the next ``send`` finishes the await with the value sent. The kernel therefore never
resumes with a bare None (that would ask the trap for its first step again); it sends
``RESUMED`` instead, which the await turns back into None.
"""

from __future__ import annotations

from typing import Any

RESUMED = object()


class Trap:
    """A suspension point. ``name`` is shown in reprs only."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __await__(self) -> Trap:
        return self

    def __iter__(self) -> Trap:
        return self

    def __next__(self) -> Trap:
        return self

    def send(self, value: Any) -> Any:
        raise StopIteration(None if value is RESUMED else value)

    def throw(self, *exc: Any) -> Any:
        raise exc[1] if len(exc) > 1 and exc[1] is not None else exc[0]

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<trap {self.name}>"


#: Park until someone resumes this coroutine with a value (``Kernel.resume``).
SUSPEND = Trap("suspend")
#: Let other events run, then continue: the kernel puts the coroutine back on the ready queue.
PASS = Trap("pass")
