"""A person's interrupt while events run (Jupyter's "interrupt the kernel", Ctrl-C): it
stops the run between two events, never inside one.

Python raises KeyboardInterrupt wherever the main thread is when SIGINT comes: inside a
track's coroutine it ends that coroutine half way through its node, and the instance is left
waiting on a wait nothing can deliver to any more. While ``step``, ``run`` or ``advance``
runs events, the SIGINT handler (Python's own, or one set to it, as Jupyter does) is
replaced by one that asks the kernel to stop at the next event boundary
(``Kernel.interrupt``); the KeyboardInterrupt is raised there, the engine as after the
events already run, and the command is recorded as interrupted. Elsewhere (another thread,
another handler) nothing changes.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, Protocol

from ..kernel import Kernel


class _Core(Protocol):
    @property
    def kernel(self) -> Kernel: ...


class Running(Protocol):
    """What a block that runs events counts them on (``EngineState``, named by shape: the
    state's module imports the history, which imports this one)."""

    ran: int

    @property
    def core(self) -> _Core: ...

#: What a command that runs no events goes through instead
NOTHING = nullcontext()


@contextmanager
def between_events(state: Running) -> Iterator[None]:
    """Defer SIGINT to the next event boundary while the block runs events; one that came
    after the last event is raised as the block ends. An interrupted block's events count
    (``EngineState.ran``: what a rewind replays), the kernel keeping them as it raises."""
    kernel = state.core.kernel
    kernel.take_cut_short()

    def asked(signum: int, frame: Any) -> None:
        kernel.interrupt()

    ours = threading.current_thread() is threading.main_thread()
    try:
        ours = ours and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if ours:
            signal.signal(signal.SIGINT, asked)
    except (ValueError, OSError, AttributeError):  # a platform without signals (a
        ours = False  # browser's Python): the interrupt as it comes
    try:
        yield
    except KeyboardInterrupt:
        state.ran += kernel.take_cut_short()
        raise
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            if kernel.take_interrupt():
                raise KeyboardInterrupt
