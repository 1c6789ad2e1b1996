"""A dehydrated instance's record: what stays in memory while its checkpoint is in the store,
and no coroutine (Invariant 1, docs/architecture.md).

Most dehydrated instances are alike: one hold, no ended track, nothing inside a subprocess, no
caller. Their record is one slot — the hold — and everything else is read from it or from
its class: its id is its hold's instance, its definition sits on a class made once per
deployed version (``compact``; the residency keeps one per version it dehydrated). The others
(ended tracks to show, subprocess scopes, a caller, or a record being rebuilt by recovery)
keep each field in a slot of their own.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ...vocabulary import ACTIVE, DEHYDRATED

if TYPE_CHECKING:
    from ...model import Definition
    from .holders import Hold


class Dehydrated:
    """A dehydrated instance's whole footprint in memory: who it is, the history of its ended
    tracks, and its engine holders. Everything else lives in its checkpoint in the store."""

    __slots__ = ("_holds",)
    _holds: Any
    residency = DEHYDRATED
    state = ACTIVE
    stored = True
    #: Its version (a compact record's is on its class; a ``Recorded`` keeps its own).
    defn: Definition | None = None
    #: The views of its ended tracks (kept by ``WithHistory``; most have none).
    history: list[Any] | None = None
    #: Each live track inside a subprocess -> the track running it (kept by ``Scoped``): what
    #: an interrupting trigger beats while the instance is away.
    scopes: dict[str, str] | None = None
    #: A called instance's caller (kept by ``Scoped``).
    parent: tuple[str, str] | None = None

    #: Its holds as kept, read in C: the lone hold itself (the common case), or a tuple.
    kept: Any = property(attrgetter("_holds"))

    @property
    def id(self) -> str:
        """Its instance id: its hold's (a compact record keeps exactly one)."""
        held = self._holds
        instance: str = (held[0] if type(held) is tuple else held).instance
        return instance

    @staticmethod
    def of(iid: str, defn: Definition | None, history: list[Any] | None,
           holds: tuple[Hold, ...], scopes: dict[str, str] | None = None,
           parent: tuple[str, str] | None = None,
           like: type[Dehydrated] | None = None) -> Dehydrated:
        """The record of a dehydrated instance; one with ended tracks keeps their views, one
        with tracks inside subprocesses the map of them, a called one its caller; one with a
        single hold and none of those is an instance of ``like``, the compact class of its
        version, when one is given."""
        if scopes or parent:
            scoped = Scoped(iid, defn, holds)
            scoped.history = history or None
            scoped.scopes = scopes or None
            scoped.parent = parent
            return scoped
        if history:
            rec = WithHistory(iid, defn, holds)
            rec.history = history
            return rec
        if like is not None and like.defn is defn and len(holds) == 1 \
                and holds[0].instance == iid:
            one = like()
            one._holds = holds[0]
            return one
        return Recorded(iid, defn, holds)

    @property
    def holds(self) -> tuple[Hold, ...]:
        """Its holders, in the order armed (one is kept bare: the common case, and cheaper)."""
        held = self._holds
        return held if type(held) is tuple else (held,)

    @holds.setter
    def holds(self, holds: tuple[Hold, ...]) -> None:
        self._holds = holds[0] if len(holds) == 1 else holds


class Recorded(Dehydrated):
    """A dehydrated instance that keeps its id and definition itself (recovery rebuilds
    records this way, and any instance unlike the common one)."""

    __slots__ = ("id", "defn")  # slots where the base reads from its hold and class

    def __init__(self, iid: str, defn: Definition | None, holds: tuple[Hold, ...]):
        self.id = iid  # type: ignore[misc]  # a slot here, the base's property elsewhere
        self.defn = defn
        self.holds = holds


class WithHistory(Recorded):
    """A dehydrated instance that has ended tracks: their views stay with it."""

    __slots__ = ("history",)


class Scoped(WithHistory):
    """A dehydrated instance with tracks inside subprocesses (which scope each is in), or
    called by another (its caller)."""

    __slots__ = ("scopes", "parent")


def compact(defn: Definition) -> type[Dehydrated]:
    """A class for the one-slot records of ``defn``'s dehydrated instances."""
    return type(f"Dehydrated_{defn.id}_{defn.version}", (Dehydrated,),
                {"__slots__": (), "defn": defn, "__module__": __name__})
