"""What the engine's readers say about one instance or one open user task, whether the
instance is resident, dehydrated (read from its checkpoint in the store: reading never wakes
it) or finished. ``Engine.instance_data``, ``instance_tracks``, ``checkpoint`` and
``task_data`` are these; each returns a copy, so what a caller changes changes nothing."""

from __future__ import annotations

import copy
from typing import Any

from .engine.durability.checkpoint import Image, capture
from .engine.durability.checkpoint import read as read_checkpoint
from .engine.durability.checkpoint import views as track_views
from .engine.runtime.finished import Finished
from .engine.runtime.reading import seen_by
from .engine.runtime.run import Run
from .engine.state.dehydrated import Dehydrated
from .engine.state.records import TrackView, no_task
from .errors import EngineError, shown
from .persist import codec
from .travel.state import EngineState


def record(state: EngineState, iid: str) -> Run | Dehydrated | Finished:
    """An instance's record (EngineError for an unknown one, saying so after a rewind)."""
    try:
        return state.core.run_of(iid)
    except EngineError:
        if not state.history.rewound:
            raise
    raise EngineError(f"unknown instance {shown(iid)} at this point of the history (the "
                      f"engine was rewound to fact {state.facts.seq}): it did not exist yet"
                      ) from None


def data(state: EngineState, iid: str) -> dict[str, Any]:
    rec = record(state, iid)
    if isinstance(rec, (Run, Finished)):
        return rec.data_copy()
    return dict(stored(state, iid).data)


def tracks(state: EngineState, iid: str) -> list[TrackView]:
    rec = record(state, iid)
    if isinstance(rec, Run):
        return [t.view() for t in rec.tracks.values()]
    if isinstance(rec, Finished):
        return rec.tracks()
    return track_views(rec.history, stored(state, iid))


def checkpoint(state: EngineState, iid: str) -> dict[str, Any]:
    rec = record(state, iid)
    if isinstance(rec, Finished):
        raise EngineError(f"instance {iid!r} has {rec.state}: its checkpoint has left the "
                          "store")
    if isinstance(rec, Run):
        if rec.defn is None:
            raise EngineError(f"instance {iid!r} was not recovered; it has no checkpoint")
        return capture(rec, state.core.kernel.now)
    return codec.decode(_read(state, iid), iid)


def task_data(state: EngineState, task_id: str) -> dict[str, Any]:
    """What an open user task's track sees, as a copy: the instance data under the locals of
    each multi-instance inner instance the task runs in (its element variable) and the
    inputs of the task and of each subprocess around it. A task completed, cancelled or
    never made is an EngineError naming it."""
    core = state.core
    task = core.inbox.get(task_id) if isinstance(task_id, str) else None
    if task is None:
        raise no_task(core.closed_tasks, task_id)
    rec = record(state, task.instance)
    if isinstance(rec, Run):
        data, by_id = rec.data if rec.data is not None else {}, rec.tracks
    else:  # its instance is away: its checkpoint holds the task's track
        image = stored(state, task.instance)
        data, by_id = image.data, {t.id: t for t in image.tracks}
    tr = by_id.get(task.track)
    if tr is None:
        raise EngineError(f"task {shown(task_id)}: its track {task.track!r} is not in "
                          f"instance {task.instance!r}")
    return copy.deepcopy(seen_by(data, by_id, tr))


def stored(state: EngineState, iid: str) -> Image:
    return read_checkpoint(codec.decode(_read(state, iid), iid), iid)


def _read(state: EngineState, iid: str) -> bytes:
    try:
        raw: bytes = state.core.journal.read(iid)
    except Exception as exc:  # the store's own failure, named for the reader
        raise EngineError(f"checkpoint of instance {iid!r} cannot be read from the "
                          f"store ({type(exc).__name__})") from exc
    return raw
