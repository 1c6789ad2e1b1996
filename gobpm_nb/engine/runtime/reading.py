"""What the running track of an instance reads and where its writes go: the instance data,
under the locals of each multi-instance inner instance it runs in (``Run`` has these)."""

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
        multi-instance inner instance it runs in over it (innermost last)."""
        data = self.data if self.data is not None else {}
        tr = self.at
        if tr is None or (tr.scope is None and tr.locals is None):
            return data
        layers = []
        while tr is not None:
            if tr.locals is not None:
                layers.append(tr.locals)
            tr = self.tracks.get(tr.scope) if tr.scope is not None else None
        if not layers:
            return data
        view = dict(data)
        for layer in reversed(layers):
            view.update(layer)
        return view

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
