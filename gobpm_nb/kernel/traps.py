"""The only values a coroutine run by the kernel may yield.

A kernel coroutine is a generator: it suspends with ``yield SUSPEND`` or ``yield PASS``, and
``coro.send`` hands the trap to the kernel, which decides what happens next. The value the
kernel resumes it with is the value of the ``yield``. A plain ``yield`` costs no Python call,
where an ``await`` of a Python-level awaitable costs three and an exception, twice per timer
firing. Nothing else ever gives control back to the scheduler.
"""

from __future__ import annotations


class Trap:
    """A suspension point. ``name`` is shown in reprs only."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<trap {self.name}>"


#: Park until someone resumes this coroutine with a value (``Kernel.resume``).
SUSPEND = Trap("suspend")
#: Let other events run, then continue: the kernel puts the coroutine back on the ready queue.
PASS = Trap("pass")
