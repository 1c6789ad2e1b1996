"""``EngineState``: what an ``Engine`` is made of, in one typed object.

An ``Engine`` is a facade over one ``EngineState``: the core (kernel, instances, holders,
the durability journal, the tape), the fact log, the command history, the store, the
watchers told after each command and a few counters. Its one constructor is used by
``Engine()``, ``Engine.recover`` and the engines a rewind, a replay or a branch rebuilds
aside (``rewind``); time travel reads and swaps engines through it, never through the
facade's attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .history import History

if TYPE_CHECKING:
    from ..engine.core import Core
    from ..engine.durability.journal import Store
    from ..observe import FactLog


class EngineState:
    """One engine's parts. ``core`` and ``facts`` are replaced together when a rewind or a
    replay swaps a rebuilt state in; the rest stays."""

    __slots__ = ("core", "facts", "history", "store", "keep_facts", "watchers", "ran",
                 "branched_at")

    def __init__(self, core: Core, facts: FactLog, store: Store, keep_facts: int | None, *,
                 replaying: bool = False):
        self.core = core
        self.facts = facts
        #: The store as it was given (the core reaches it through the tape: ``core.store``).
        self.store = store
        #: How many of the newest facts ``facts`` keeps (None: every one).
        self.keep_facts = keep_facts
        #: The command history (rewind, replay, branch); an engine rebuilt aside by a
        #: replay (``replaying``) records nothing.
        self.history = History(replaying)
        #: Called at the end of every public command (``Engine.after_each_command``).
        self.watchers: list[Callable[[], object]] = []
        #: Scheduler events run by commands, in all.
        self.ran = 0
        #: On a branch (``Engine.branch``), the fact of the original engine it starts at.
        self.branched_at: int | None = None


__all__ = ["EngineState"]
