"""What every live widget shares: the fact subscription, coalesced previews, exact
flushes at the end of each engine command and after each notebook cell.

How updates flow:

- Each widget subscribes to the engine's facts. The subscriber is tiny: it keeps the newest
  facts (the dashboard's timeline, so no rebuild reads the whole log), feeds the facts of the
  shown instance to its path tracker, and on every ``STRIDE``-th fact pokes a
  :class:`~gobpm_nb.ui.coalesce.Coalescer`. While a command has been running for at least
  ``INTERVAL`` (50 ms), the coalescer rebuilds the traits at most once per ``INTERVAL`` of
  wall time (a preview), and a rebuild that took ``c`` seconds is followed by at least
  ``BUDGET * c`` seconds without one, so refreshing takes no more than about ``1/BUDGET`` of
  the wall time however big the engine is.
- A rewind or a replay (``Engine.rewind``) sends one ``rewound`` fact: the subscriber then
  starts its tail and path tracker again from the engine's log as it is now.
- The exact view comes from the flush at the end of every public engine command (the
  engine's ``after_each_command`` hook, in a notebook or a script): a command that showed a
  preview always ends exact; in a burst of short commands less than ``INTERVAL`` apart, the
  burst's last state waits for the next command past the interval, the cell's end (an
  IPython ``post_run_cell`` hook flushes every live widget) or ``refresh()``.

A view can also be **frozen** (:meth:`_Live.freeze`): it keeps what it drew and stops
following — no subscription, no command watch, no flush — so it stays the picture of one
moment. Every bound widget says where it stands in its header, through two synced traits:
``moment`` (``"live"``, or ``"at fact 42 · 2026-01-01 05:00"``: the fact the engine stood
at and its clock) and ``live`` (two-way: the header's "freeze here" / "follow live" button
sets it, and the widget freezes or follows). :meth:`_Live.follow` subscribes again and
shows the engine as it is now.

The engine holds each widget through its subscription until ``widget.close()``; running a
notebook cell again closes the widgets it made the last time it ran (frozen ones too).
"""

from __future__ import annotations

import contextlib
import math
import time
import weakref
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..observe.projections import PathTracker
from .coalesce import Coalescer

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..api import Engine
    from ..observe import Fact

#: Wall seconds between two rebuilds while the engine runs.
INTERVAL = 0.05
#: Facts between two looks at the wall clock by the fact subscriber.
STRIDE = 16  # a power of two
#: A rebuild that took c seconds is followed by at least BUDGET * c seconds without one.
BUDGET = 20.0

_LIVE: weakref.WeakSet[_Live] = weakref.WeakSet()
#: The notebook cell running now (IPython's ``cell_id``), None outside a notebook.
_CELL: list[str | None] = [None]


class _Live:
    """What every bound widget shares: the subscription, coalescing and flushing.

    The subscriber keeps a short tail of the newest facts (the dashboard's timeline; its
    last fact tells whether anything happened since the last rebuild) and feeds the facts of
    one instance to a :class:`PathTracker` (the process views' path taken), so a rebuild
    never has to read the whole fact log.
    """

    _engine: Engine
    _tail: deque[Fact]
    _tracker: PathTracker | None
    _synced: tuple[int, datetime] | None
    _quiet_until: float
    _last_sync: float
    _coalescer: Coalescer
    _unsubscribe: Callable[[], None] | None
    _unwatch: Callable[[], None] | None
    _closed: bool
    _cell: str | None
    moment: str  # synced traits of the widget class this is mixed into
    live: bool

    if TYPE_CHECKING:  # what the widget class this is mixed into has (traitlets)
        def observe(self, handler: Callable[[Any], None], names: str) -> None: ...

        def hold_sync(self) -> AbstractContextManager[None]: ...

        def close(self) -> None: ...

    def _bind(self, engine: Engine, tail: int = 1, tracked: str | None = None,
              live: bool = True) -> None:
        """Follow ``engine`` (``tail``: the newest facts to keep; ``tracked``: the instance
        whose path to track); ``live=False``: show it as it is now and stay there."""
        self._engine = engine
        self._cell = _current_cell()  # running that cell again closes this widget
        log = engine.facts if tail > 1 or tracked else ()
        if tail > 1 and log and engine.stats()["facts"] > len(log):
            tail = min(tail, len(log))  # the log is full: it keeps no more than this
        self._tail = deque(log[-tail:] if log else (), maxlen=tail)
        self._tracker = PathTracker(tracked, log) if tracked else None
        self._synced = None
        self._quiet_until = 0.0
        self._coalescer = Coalescer(self._pushed, interval=INTERVAL)
        self._unsubscribe = None
        self._unwatch = None
        self._closed = False
        self._watch()
        self._burst: float | None = None
        self._previewed = False
        _LIVE.add(self)
        _install_cell_hook()
        self.refresh()
        self._last_sync = -math.inf  # the first command after this always shows its end
        self.observe(self._on_live, names="live")
        if live:
            self._frozen_at(None)
        else:
            self.freeze()

    def _watch(self) -> None:
        """Follow the engine: its facts and the end of each of its commands."""
        self._subscribe()
        if self._unwatch is None:
            self._unwatch = self._engine.after_each_command(self._command_ended)

    def _unwatch_all(self) -> None:
        """Stop following the engine (nothing of this widget runs per fact or command)."""
        unsubscribe, self._unsubscribe = getattr(self, "_unsubscribe", None), None
        if unsubscribe is not None:
            unsubscribe()
        unwatch, self._unwatch = getattr(self, "_unwatch", None), None
        if unwatch is not None:
            unwatch()

    @property
    def following(self) -> bool:
        """True while this widget follows the engine (False: frozen, or closed)."""
        return self._unsubscribe is not None

    def freeze(self) -> None:
        """Show the engine as it is now and stay there: stop following it."""
        if self._closed:
            return
        if self.following:
            self.flush()
            self._unwatch_all()
        self._frozen_at(self._moment_of_engine())

    def follow(self) -> None:
        """Follow the engine again from where it stands now (what it missed while frozen
        is read from its log)."""
        if self._closed or self.following:
            return
        self._watch()
        self._rebase()
        self.refresh()
        self._frozen_at(None)

    def _moment_of_engine(self) -> str:
        """Where the engine stands: ``at fact 42 · 2026-01-01 05:00``."""
        position = self._engine.history_span()[1]
        return f"at fact {position} · {self._engine.now:%Y-%m-%d %H:%M}"

    def _frozen_at(self, moment: str | None) -> None:
        """Say where this widget stands in its header (None: it follows the engine)."""
        with self.hold_sync():
            self.moment = "live" if moment is None else moment
            self.live = moment is None

    def _on_live(self, change: Any) -> None:
        """The header's button (or ``widget.live = ...``): follow or freeze."""
        if change["new"] and not self.following:
            self.follow()
        elif not change["new"] and self.following:
            self.freeze()

    def _subscribe(self) -> None:
        """(Re)subscribe with a subscriber made for what this widget tracks now. It runs for
        every fact the engine emits, so it does as little as possible: keep the fact, feed
        the tracked instance's path, and poke the coalescer every ``STRIDE`` facts."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._closed:
            return
        append = self._tail.append
        poke = self._coalescer.poke
        stride = STRIDE - 1
        rebase = self._rebase
        if self._tracker is None:

            def on_fact(fact: Fact) -> None:
                if fact.kind == "rewound":
                    return rebase()
                append(fact)
                if not fact.seq & stride:
                    poke()

        else:
            iid = self._tracker.instance
            feed = self._tracker.feed

            def on_fact(fact: Fact) -> None:
                if fact.kind == "rewound":
                    return rebase()
                append(fact)
                if fact.instance == iid:
                    feed(fact)
                if not fact.seq & stride:
                    poke()

        self._unsubscribe = self._engine.subscribe(on_fact)

    def _rebase(self) -> None:
        """The engine was rewound (a ``rewound`` fact; its log changed under the widget):
        the tail and the path tracker start again from the log as it is now."""
        log = self._engine.facts
        self._tail.clear()
        self._tail.extend(log[-(self._tail.maxlen or 1):])
        if self._tracker is not None:
            self._tracker = PathTracker(self._tracker.instance, log)
            if self.following:
                self._subscribe()

    def _track(self, iid: str) -> PathTracker:
        """The path tracker of ``iid``, started from the log when ``iid`` is new to it."""
        if self._tracker is None or self._tracker.instance != iid:
            self._tracker = PathTracker(iid, self._engine.facts)
            if self.following:
                self._subscribe()
        return self._tracker

    # -- refreshing -----------------------------------------------------------------------
    def _key(self) -> tuple[int, datetime]:
        return (self._tail[-1].seq if self._tail else 0), self._engine.now

    def _pushed(self) -> None:
        """The coalescer's push: a preview rebuild, once the command running now has run for
        an interval (a short command only ever shows its exact end), unless the budget says
        wait."""
        now = time.monotonic()
        if self._burst is None:
            self._burst = now
        if now - self._burst >= INTERVAL and now - self._last_sync >= INTERVAL and \
                now >= self._quiet_until:
            self._previewed = True
            self._sync(final=False)

    def _sync(self, final: bool) -> None:
        if self._closed:
            return
        t0 = time.monotonic()
        key = self._key()
        try:
            self._update()
            self._synced = key
        except Exception as exc:  # never into the engine's fact stream or the comm
            if final:  # mid-event reads may fail harmlessly; the final flush reports
                self._failed(exc)
        finally:
            self._last_sync = time.monotonic()
            self._quiet_until = t0 + BUDGET * (self._last_sync - t0)

    def refresh(self) -> None:
        """Rebuild every trait from the engine now (exact: call it at a quiet point); a
        frozen widget keeps its moment (``follow()`` first)."""
        if self.following:
            self._sync(final=True)

    def flush(self) -> None:
        """Rebuild now if the engine changed since the last rebuild (facts or clock)."""
        if self.following and self._key() != self._synced:
            self._sync(final=True)

    def _command_ended(self) -> None:
        """An engine command ended: show its exact state, unless commands come faster than
        one per ``INTERVAL`` (a burst); then the burst's last state shows at the next command
        past the interval, after the cell, or on ``refresh()``. A command that showed a
        preview always ends exact."""
        previewed, self._previewed, self._burst = self._previewed, False, None
        if previewed or time.monotonic() - self._last_sync >= INTERVAL:
            self.flush()

    def _detach(self) -> None:
        self._closed = True
        self._unwatch_all()  # (nothing to undo when __init__ failed early)
        _LIVE.discard(self)

    def _update(self) -> None:
        raise NotImplementedError

    def _failed(self, exc: Exception) -> None:
        raise NotImplementedError


def flush_all() -> None:
    """Bring every live widget up to date (what runs after each notebook cell)."""
    for widget in list(_LIVE):
        with contextlib.suppress(Exception):
            widget.flush()


def _after_cell(result: Any = None) -> None:
    flush_all()


def _current_cell() -> str | None:
    """The id of the cell running now: as the ``pre_run_cell`` hook saw it, or (the first
    widget, made before the hook was installed) as the notebook's request names it."""
    if _CELL[0] is not None:
        return _CELL[0]
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets brings IPython
        return None
    header = getattr(get_ipython(), "parent_header", None) or {}
    cell = header.get("metadata", {}).get("cellId") if isinstance(header, dict) else None
    return cell if isinstance(cell, str) else None


def _before_cell(info: Any = None) -> None:
    """A cell is about to run: the live widgets it made when it last ran are closed (their
    output is being replaced, and nothing else would ever stop them following the engine)."""
    cell = getattr(info, "cell_id", None)
    _CELL[0] = cell
    if cell is None:
        return
    for widget in list(_LIVE):
        if getattr(widget, "_cell", None) == cell:
            with contextlib.suppress(Exception):
                widget.close()


def _install_cell_hook() -> None:
    """Register :func:`flush_all` after every cell, once, when running under IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets brings IPython
        return
    shell = get_ipython()
    if shell is None:
        return
    for event, hook in (("pre_run_cell", _before_cell), ("post_run_cell", _after_cell)):
        if hook not in shell.events.callbacks.get(event, []):
            shell.events.register(event, hook)
