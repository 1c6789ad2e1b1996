"""The dashboard's timeline: a slider over the fact numbers of the engine's history.

Dragging it sends ``{"kind": "rewind", "to": N}`` (``Engine.rewind(N)``), "reset" sends
``{"kind": "replay"}`` (``Engine.replay()``: back to the newest point) and "branch here"
sends ``{"kind": "branch"}`` (``Engine.branch()``: a second dashboard, on the branch, in the
``branch`` trait, which the front end draws below this one). Only the public engine API is
called; what it refuses (a durable store refuses a rewind) goes to the ``error`` trait and
changes nothing. The views follow a rewind through the ``rewound`` fact
(:mod:`gobpm_nb.ui.live`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..observe.fact_pages import when
from .widgets import Command

if TYPE_CHECKING:
    from ..api import Engine
    from ..travel.rewind import Rewound

#: The ``timeline`` trait of an engine whose history cannot be moved along.
NO_HISTORY = "this engine keeps no command history (a durable store: its store is its " \
             "history); branch here still works"


def timeline_state(engine: Engine) -> dict[str, Any]:
    """``{start, end, position, at, pending, movable, note}``: the fact numbers the command
    history covers (``start``..``end``), the one the engine stands at, its clock, how many facts
    after it ``replay()`` would run again, whether a rewind can move the engine."""
    start, position, end = engine.history_span()  # cheap: no command, no fact is copied
    durable = bool(getattr(engine.store, "durable", False))
    if durable or (start, end) == (position, position) and not engine.history():
        return {"start": position, "end": position, "position": position,
                "at": when(engine.now) or "", "pending": 0, "movable": False,
                "note": NO_HISTORY if durable else ""}
    return {"start": start, "end": end, "position": position, "at": when(engine.now) or "",
            "pending": end - position, "movable": True, "note": ""}


def rewound_line(done: Rewound, end: int) -> str:
    """The last-step line after a rewind or a replay."""
    at = when(done.at) or ""
    after = end - done.seq
    if after <= 0:
        return f"At the newest point: fact {done.seq} at {at}"
    cut = f" (in the middle of {done.interrupted})" if done.interrupted else ""
    return f"Rewound to fact {done.seq} at {at}{cut}: {after} facts after it can be replayed"


class TimelineCommands:
    """The dashboard's rewind, replay and branch commands (mixed into ``Dashboard``)."""

    _engine: Engine
    last_step: str
    branch: TimelineCommands | None

    if TYPE_CHECKING:  # the dashboard class this is mixed into
        def close(self) -> None: ...

    def _rewind(self, command: Command) -> None:
        to = command.get("to")
        if isinstance(to, bool) or not isinstance(to, int):
            raise ValueError(f"rewind needs a fact sequence number, got {to!r}")
        done = self._engine.rewind(to)
        self.last_step = rewound_line(done, timeline_state(self._engine)["end"])

    def _replay(self, _command: Command) -> None:
        done = self._engine.replay()
        self.last_step = rewound_line(done, timeline_state(self._engine)["end"])

    def _branch(self, _command: Command) -> None:
        engine = self._engine
        where = engine.history_span()[1]
        # the same kind of dashboard (a class made of an engine), on the branch
        dashboard = cast("Callable[[Engine], TimelineCommands]", type(self))
        other = dashboard(engine.branch())
        old, self.branch = self.branch, other
        if old is not None:
            old.close()
        self.last_step = f"Branched at fact {where} ({when(engine.now) or ''}): the branch's " \
                         "dashboard is below; this engine is untouched"


__all__ = ["NO_HISTORY", "TimelineCommands", "rewound_line", "timeline_state"]
