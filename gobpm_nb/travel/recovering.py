"""An engine's state recovered from a store (``Engine.recover``): the options checked, the
seed and clock the store recorded taken back, the processes deployed, every instance
recovered, and the command history started there."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from ..engine.durability.damage import reading
from ..engine.durability.journal import Store
from ..errors import EngineError, GobpmError
from ..kernel import to_datetime
from ..model import Process
from ..persist.stores import check_store, read_store
from .history import settle
from .opening import DEFAULT_START, DEFAULTS, Options, open_state, with_stored_seed
from .state import EngineState


def recovered(store: Store, processes: Iterable[Process], options: Options) -> EngineState:
    """The state ``Engine.recover`` opens on ``store`` (its docstring says what holds). If
    it cannot, the store is closed before the error is raised: it was handed over for this
    recovery alone, and an SQLite file must be free to open again once repaired (the
    engine's half-built state would hold its lock until the collector ran)."""
    check_store(store)
    try:
        return _recovered(store, processes, options)
    except BaseException:
        close = getattr(store, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # its own failure is not the one to report
                close()
        raise


def _recovered(store: Store, processes: Iterable[Process], options: Options) -> EngineState:
    if isinstance(processes, Process) or not isinstance(processes, (list, tuple)) or \
            not all(isinstance(p, Process) for p in processes):
        raise EngineError(f"processes must be a list of Process, got {processes!r}")
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise EngineError(f"recover() takes no option {', '.join(map(repr, unknown))}: "
                          "the clock resumes where the store recorded it")
    _, meta = read_store(store)
    options = with_stored_seed(meta, options)
    with reading("clock"):
        start = to_datetime(int(meta["clock"])) if "clock" in meta else DEFAULT_START
    state = open_state(store, start, options)
    core = state.core
    core.load_registry(meta)
    core.journal.load(meta)
    for p in processes:
        core.deploy(p)
    try:
        core.recover()
    except GobpmError:
        raise
    except Exception as exc:  # the store failed while it was read
        raise EngineError(f"recovery from {store!r} failed: the store raised "
                          f"{type(exc).__name__}: {exc}") from None
    settle(state)
    state.history.start(state)  # the command history starts here
    return state
