"""Rate-limit widget updates: a run of 100k events must not become 100k comm messages.

This is the only place (with the rest of ``gobpm_nb.ui``) that reads the wall clock; the
engine never does.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Coalescer:
    """Call ``push`` at most once per ``interval`` of wall time, never losing the last change.

    ``poke()`` says "the state changed": it pushes at once if the previous push is at least
    ``interval`` old, and otherwise only remembers that a change is pending. ``flush()`` pushes
    a pending change now (call it when a burst ends, e.g. after ``run()``), so the widget
    always ends up showing the final state. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        push: Callable[[], None],
        interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not callable(push):
            raise TypeError(f"Coalescer push must be callable, got {push!r}")
        if interval < 0:
            raise ValueError(f"Coalescer interval must be >= 0 seconds, got {interval!r}")
        self._push = push
        self._interval = float(interval)
        self._clock = clock
        self._last: float | None = None
        self._pending = False

    @property
    def interval(self) -> float:
        """Minimum wall time, in seconds, between two pushes made by ``poke``."""
        return self._interval

    @property
    def pending(self) -> bool:
        """True while a change has been poked but not yet pushed."""
        return self._pending

    def poke(self) -> None:
        """Note a change; push now if the last push is at least one interval old."""
        now = self._clock()
        self._pending = True
        if self._last is None or now - self._last >= self._interval:
            self._do_push(now)

    def flush(self) -> None:
        """Push now if a change is pending; do nothing otherwise."""
        if self._pending:
            self._do_push(self._clock())

    def _do_push(self, now: float) -> None:
        self._last = now
        self._push()
        # Cleared only after a successful push: if push raises, flush() retries it.
        self._pending = False
