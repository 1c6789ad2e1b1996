"""``Driving``: the commands a population run gives its own engine at every virtual instant
(``population.driver``), without the command envelope (``history.command``).

The envelope records a command in the history, has a durable store record the clock and
counters, and tells the watchers. On an engine that keeps no history
(``Engine(keep_history=False)``), on a store that is not durable, it does nothing else than
tell the watchers: a population run makes such an engine for itself and gives it four
commands per case or more. Any other engine is refused. Each command here is the public
one's body, then the watchers are told (a dashboard opened on the run's engine): the same
checks, the same facts, the same state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine.state.values import json_dict
from ..errors import EngineError
from ..model import Process
from .history import _debugging, tell

if TYPE_CHECKING:
    from ..kernel import Kernel
    from ..observe import Raw
    from .state import EngineState


class Driving:
    """A population run's handle on its own engine (module docstring)."""

    __slots__ = ("state", "core", "kernel")

    def __init__(self, state: EngineState):
        history = state.history
        if history.kept or history.replaying or state.store.durable:
            raise EngineError("a population run's driving needs an engine that keeps no "
                              "history, on a store that is not durable")
        self.state = state
        self.core = state.core
        #: The engine's scheduler: when its next event falls due, moving its clock.
        self.kernel: Kernel = state.core.kernel
        state.facts.echo = _debugging()  # as a command begins: once, for the run

    def run_to(self, at: int) -> None:
        """``Engine.run(until=at)`` for ``at`` in virtual microseconds, not before the
        clock: every event due by then runs, and the clock stands there."""
        kernel, state = self.kernel, self.state
        state.ran += kernel.run(at)
        kernel.jump(at)
        if state.watchers:
            tell(state.watchers)

    def starter(self, process: Process) -> Callable[[dict[str, Any] | None], str]:
        """``lambda data: Engine.start(process, data).id``, the process deployed (or its
        version found) once, not at every start."""
        core = self.core
        if not isinstance(process, Process):
            raise EngineError(f"start needs a Process, got {type(process).__name__}")
        defn = core.startable(process.definition())
        launch, at, watchers = core.launch, defn.start, self.state.watchers

        def start(data: dict[str, Any] | None) -> str:
            try:
                return launch(defn, json_dict(data, "start data"), None, at)
            finally:
                if watchers:
                    tell(watchers)
        return start

    def complete_task(self, task_id: str) -> None:
        """``Engine.complete_task(task_id)``."""
        try:
            self.core.complete_task(task_id, None)
        finally:
            if self.state.watchers:
                tell(self.state.watchers)

    def complete_job(self, job_id: str) -> None:
        """``Engine.complete_job(job_id)``."""
        try:
            self.core.complete_job(job_id, None)
        finally:
            if self.state.watchers:
                tell(self.state.watchers)

    def tap(self, kinds: frozenset[str], sink: Callable[[Raw], Any]) -> None:
        """Hand ``sink`` the raw tuple of every fact of ``kinds`` from now on
        (``FactLog.tap``)."""
        self.state.facts.tap(kinds, sink)


__all__ = ["Driving"]
