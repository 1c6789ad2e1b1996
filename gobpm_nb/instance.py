"""The ``Instance`` handle: reads the current state of one instance, never changes it.

It goes through the engine's public reading methods only, so it stays valid across
dehydration, wake and recovery, and reading never changes residency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine.records import HoldView, TrackView

if TYPE_CHECKING:
    from .api import Engine
    from .model import Definition
    from .ui import LineageView, ProcessView


class Instance:
    """A handle that stays valid across dehydration, wake and recovery."""

    __slots__ = ("_engine", "id")

    def __init__(self, engine: Engine, iid: str):
        self._engine = engine
        self.id = iid

    @property
    def process(self) -> str | None:
        return self._engine.describe_instance(self.id).process

    @property
    def definition(self) -> Definition | None:
        """The immutable process definition this instance is pinned to (None only for a
        recovered instance whose version has not been deployed again yet)."""
        return self._engine.definition_of(self.id)

    @property
    def version(self) -> int | None:
        return self._engine.describe_instance(self.id).version

    @property
    def state(self) -> str:
        """active | completed | terminated | failed"""
        return self._engine.describe_instance(self.id).state

    @property
    def parent(self) -> str | None:
        """The id of the instance whose call activity started this one, or None."""
        return self._engine.describe_instance(self.id).parent

    @property
    def residency(self) -> str:
        """resident | dehydrated | finished"""
        return self._engine.describe_instance(self.id).residency

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the instance data (read from the checkpoint while dehydrated)."""
        return self._engine.instance_data(self.id)

    @property
    def tracks(self) -> list[TrackView]:
        """Every track, terminal ones included, with its lineage."""
        return self._engine.instance_tracks(self.id)

    def holds(self) -> list[HoldView]:
        return self._engine.holders(self.id)

    def lineage(self, live: bool = False) -> LineageView:
        """A widget of this instance's lineage: every track, its parent links and how each
        came to be (fork, join, continuation, boundary fork). It shows the instance as it is
        now and stays there (its header names the fact and the time; "follow live" follows
        the engine); ``live=True``: it follows the engine from the start."""
        from .ui import lineage_view

        return lineage_view(self._engine, self.id, live)

    def process_view(self, live: bool = False) -> ProcessView:
        """A widget of this instance's process graph: tokens, armed holds, path taken; as
        it is now, frozen there like ``lineage()`` (``live=True``: following the engine)."""
        from .ui import process_view

        return process_view(self._engine, self.id, live)

    def checkpoint(self) -> dict[str, Any]:
        """The JSON-able checkpoint document, as the store holds it."""
        return self._engine.checkpoint(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instance) and other.id == self.id and \
            other._engine is self._engine

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        v = self._engine.describe_instance(self.id)
        return f"Instance({self.id!r}, process={v.process!r}, state={v.state!r}, " \
               f"residency={v.residency!r})"
