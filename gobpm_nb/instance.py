"""The ``Instance`` handle: reads the current state of one instance, never changes it.

It goes through the engine's public reading methods only (``Reader``), so it stays valid
across dehydration, wake and recovery, and reading never changes residency.

The widgets a handle or the engine opens (``Instance.lineage``, ``Engine.dashboard``) live
in ``gobpm_nb.ui``, a layer above both: they are found through ``views()``, which the
package root registers (``register_views``; ``gobpm_nb.ui`` is imported on first use), the
way ``model.interchange`` finds the BPMN codec. The imports point one way, from the views
to the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .engine.state.records import HoldView, InstanceView, TrackView
from .errors import EngineError

if TYPE_CHECKING:
    from .model import Definition


class Reader(Protocol):
    """What a handle reads of its engine (``api.Engine``'s public reading methods)."""

    def describe_instance(self, iid: str) -> InstanceView: ...
    def definition_of(self, iid: str) -> Definition | None: ...
    def instance_data(self, iid: str) -> dict[str, Any]: ...
    def instance_tracks(self, iid: str) -> list[TrackView]: ...
    def holders(self, instance: str | None = None) -> list[HoldView]: ...
    def checkpoint(self, iid: str) -> dict[str, Any]: ...


class Views(Protocol):
    """The widgets the engine and its handles open (``gobpm_nb.ui``'s functions)."""

    def dashboard(self, engine: Any) -> Any: ...
    def lineage_view(self, engine: Any, instance: str, live: bool = False) -> Any: ...
    def process_view(self, engine: Any, instance: str, live: bool = False) -> Any: ...


_VIEWS: list[Callable[[], Views]] = []


def register_views(load: Callable[[], Views]) -> None:
    """Make ``load()`` what gives the views (a later registration replaces it)."""
    _VIEWS[:] = [load]


def views() -> Views:
    """The registered views; EngineError when none are (the package root registers them)."""
    if not _VIEWS:
        raise EngineError("no views are registered (import gobpm_nb first)")
    return _VIEWS[0]()


class Instance:
    """A handle that stays valid across dehydration, wake and recovery."""

    __slots__ = ("_engine", "id")

    def __init__(self, engine: Reader, iid: str):
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

    def lineage(self, live: bool = False) -> Any:
        """A widget of this instance's lineage: every track, its parent links and how each
        came to be (fork, join, continuation, boundary fork). It shows the instance as it is
        now and stays there (its header names the fact and the time; "follow live" follows
        the engine); ``live=True``: it follows the engine from the start. A
        ``gobpm_nb.ui.LineageView``."""
        return views().lineage_view(self._engine, self.id, live)

    def process_view(self, live: bool = False) -> Any:
        """A widget of this instance's process graph: tokens, armed holds, path taken; as
        it is now, frozen there like ``lineage()`` (``live=True``: following the engine). A
        ``gobpm_nb.ui.ProcessView``."""
        return views().process_view(self._engine, self.id, live)

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
