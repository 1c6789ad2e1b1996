"""The ``Instance`` handle: reads the current state of one instance, never changes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine.records import HoldView, TrackView

if TYPE_CHECKING:
    from .api import Engine


class Instance:
    """A handle that stays valid across dehydration, wake and recovery."""

    __slots__ = ("_engine", "id")

    def __init__(self, engine: Engine, iid: str):
        self._engine = engine
        self.id = iid

    @property
    def _run(self) -> Any:
        return self._engine._core.run_of(self.id)

    @property
    def process(self) -> str | None:
        defn = self._run.defn
        return str(defn.id) if defn is not None else None

    @property
    def definition(self) -> Any:
        """The immutable process definition this instance is pinned to (None only for a
        recovered instance whose version has not been deployed again yet)."""
        return self._run.defn

    @property
    def version(self) -> int | None:
        defn = self._run.defn
        return int(defn.version) if defn is not None else None

    @property
    def state(self) -> str:
        """active | completed | terminated | failed"""
        return str(self._run.state)

    @property
    def residency(self) -> str:
        """resident | dehydrated | finished"""
        return str(self._run.residency)

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the instance data (read from the checkpoint while dehydrated)."""
        return self._engine._core.data_of(self._run)

    @property
    def tracks(self) -> list[TrackView]:
        """Every track, terminal ones included, with its lineage."""
        return self._engine._core.tracks_of(self._run)

    def holds(self) -> list[HoldView]:
        return self._engine._core.holders.views(self.id)

    def lineage(self) -> Any:
        """A live widget of this instance's lineage: every track, its parent links and how
        each came to be (fork, join, continuation, boundary fork)."""
        from .ui import lineage_view

        return lineage_view(self._engine, self.id)

    def process_view(self) -> Any:
        """A live widget of this instance's process graph: tokens, armed holds, path taken."""
        from .ui import process_view

        return process_view(self._engine, self.id)

    def checkpoint(self) -> dict[str, Any]:
        """The JSON-able checkpoint document, as the store holds it."""
        return self._engine._checkpoint(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instance) and other.id == self.id and \
            other._engine is self._engine

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        run = self._run
        pid = run.defn.id if run.defn is not None else None
        return f"Instance({self.id!r}, process={pid!r}, state={run.state!r}, " \
               f"residency={run.residency!r})"
