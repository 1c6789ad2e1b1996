"""An ended instance's record (``Finished``): no coroutine, hold, mailbox or join."""

from __future__ import annotations

import copy
import json
import sys
from typing import TYPE_CHECKING, Any

from ...vocabulary import FINISHED
from ..state.holders import Hold
from ..state.recent import Recent
from ..state.records import TrackView

if TYPE_CHECKING:
    from .run import Run

#: The text of each path taken lately (a path is a few dozen bytes).
_PATHS = Recent(lambda tracks: sys.intern(json.dumps(tracks, separators=(",", ":"))), 1024)


def tracks_text(tracks: tuple[tuple[Any, ...], ...]) -> str:
    """The JSON text of an ended instance's tracks, the same text object for the same
    tracks (most instances of a process take one of a few paths; encoding is the cost)."""
    text: str = _PATHS[tracks]
    return text


class Finished:
    """An ended instance, summarized: who it is, how it ended, its final data and the last
    view of each of its tracks. No coroutine, hold, mailbox or join stays with it."""

    __slots__ = ("id", "defn", "state", "data", "_tracks", "parent")
    residency = FINISHED
    stored = False
    holds: tuple[Hold, ...] = ()

    def __init__(self, run: Run):
        self.id = run.id
        self.defn = run.defn
        self.parent = run.parent
        self.state = run.state
        self.data = run.data or None
        #: Its tracks as one JSON text: a few dozen bytes where views would cost hundreds,
        #: and one text shared by every instance that took the same path.
        self._tracks = tracks_text(tuple([(t.id, t.node, t.state, t.parents, t.origin)
                                          for t in run.tracks.values()]))

    def data_copy(self) -> dict[str, Any]:
        return copy.deepcopy(self.data) if self.data is not None else {}

    def tracks(self) -> list[TrackView]:
        """The last view of each of its tracks, in the order they were made."""
        return [TrackView(i, n, s, tuple(p), o) for i, n, s, p, o in json.loads(self._tracks)]
