"""What the running track of an instance reads and where its writes go: the instance data,
under the locals of each multi-instance inner instance it runs in and the inputs of the
elements it runs inside (``Run`` has these)."""

from __future__ import annotations

import copy
from typing import Any

from ...model import Definition
from ..state.records import Track


class Reading:
    """The data views of a ``Run`` (a base: it adds no state of its own)."""

    __slots__ = ()
    data: dict[str, Any] | None
    at: Track | None  # the track running now
    tracks: dict[str, Track]
    defn: Definition

    def data_copy(self) -> dict[str, Any]:
        """A copy of the instance data."""
        return copy.deepcopy(self.data) if self.data is not None else {}

    def seen_copy(self) -> dict[str, Any]:
        """A copy of what the running track sees (``seen``): what a script is given."""
        return copy.deepcopy(self.seen())

    def seen(self) -> dict[str, Any]:
        """The data the running track reads: the instance data, with the locals of each
        multi-instance inner instance it runs in and the inputs of each element it occupies
        or runs inside (``Track.inputs``) over it (innermost last)."""
        data = self.data if self.data is not None else {}
        tr = self.at
        if tr is None or (tr.scope is None and tr.locals is None and tr.inputs is None):
            return data
        return seen_by(data, self.tracks, tr)

    def written(self) -> dict[str, Any]:
        """Where the running track's writes go: the locals of the innermost inner instance
        whose outputs are collected, else the instance data."""
        tr = self.at
        while tr is not None and tr.scope is not None:
            if tr.locals is not None:
                many = self.defn.nodes[tr.node].many
                if many is not None and many.output_collection is not None:
                    return tr.locals
            tr = self.tracks.get(tr.scope)
        assert self.data is not None
        return self.data

    def scoped(self) -> list[dict[str, Any]]:
        """The inputs of the elements the running track runs inside (innermost first): a
        field written there is written in the nearest that has it (Camunda's propagation)."""
        tr = self.at
        found = []
        while tr is not None and tr.scope is not None:
            tr = self.tracks.get(tr.scope)
            if tr is not None and tr.inputs is not None:
                found.append(tr.inputs)
        return found


def seen_by(data: dict[str, Any], tracks: dict[str, Track], tr: Track) -> dict[str, Any]:
    """What track ``tr`` of an instance whose data is ``data`` and whose tracks are ``tracks``
    sees (``Reading.seen``): ``data`` itself when nothing is layered over it."""
    layers = []
    at: Track | None = tr
    while at is not None:
        if at.inputs is not None:  # an element's inputs see its inner instance's locals
            layers.append(at.inputs)
        if at.locals is not None:
            layers.append(at.locals)
        at = tracks.get(at.scope) if at.scope is not None else None
    if not layers:
        return data
    view = dict(data)
    for layer in reversed(layers):
        view.update(layer)
    return view
