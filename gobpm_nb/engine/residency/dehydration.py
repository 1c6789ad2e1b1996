"""Dehydration (docs/semantics.md): when a resident instance gives up its coroutines.

When every track of a resident instance is parked, its loop takes a quiet point: with a
durable store the checkpoint is written; if every live track is parked on a wait that is
*eligible* (its node's ``dehydratable(ctx)`` says yes) and *held* (every armed wait of the
track, boundaries and gateway arms included, has an engine holder), the instance dehydrates:
its coroutines end and only a ``Dehydrated`` record stays. Not while a trigger accepted for it
still waits to be handed over (``Residency``).
"""

from __future__ import annotations

import logging
from collections.abc import Container, MutableMapping
from datetime import timedelta

from ...kernel import Kernel
from ...model import Definition
from ...vocabulary import DEHYDRATED, RESIDENT, TERMINAL, WAITING
from ..durability.checkpoint import capture
from ..durability.journal import Journal, Store
from ..elements import table as behaviour
from ..runtime.finished import Finished
from ..runtime.run import Run
from ..state.dehydrated import Dehydrated, compact
from ..state.records import Track, TrackView
from ..state.waits import JoinWait, TimerWait, track_holdable

log = logging.getLogger("gobpm_nb")


class WaitContext:
    """What a wait node may consult when asked whether it is dehydratable."""

    __slots__ = ("remaining", "min_dehydrate_wait")

    def __init__(self, remaining: timedelta | None, min_dehydrate_wait: timedelta):
        self.remaining = remaining
        self.min_dehydrate_wait = min_dehydrate_wait


class Dehydration:
    """Quiet points, the eligibility of waits, and dehydration, for one engine: handed the
    kernel (the clock, the coroutines it ends), the store (whether it is durable), the journal
    (checkpoints written) and the engine's instance records (a released one's replaced)."""

    def __init__(self, kernel: Kernel, store: Store, journal: Journal,
                 runs: MutableMapping[str, Run | Dehydrated | Finished], *, dehydrate: bool,
                 min_wait: int, waiting: Container[str], handing: Container[str]):
        self.kernel, self.store, self.journal, self.runs = kernel, store, journal, runs
        self.dehydrate = dehydrate
        self.min_wait = timedelta(microseconds=min_wait)
        #: Instances with accepted triggers not handed over yet, and instances being handed
        #: the triggers they were woken with (``Residency``): no quiet point for them.
        self._waiting, self._handing = waiting, handing
        #: Each element's answer, per deployed version and node, where the answer can only
        #: be one (elements are frozen; a timer of a fixed duration is always that long as
        #: armed): the quiet-point test asks a dict, not the element.
        self._eligible: dict[tuple[str, int], dict[str, bool]] = {}
        self._last: tuple[Definition | None, dict[str, bool]] = (None, {})  # the newest asked
        #: The compact record class of each version with an instance dehydrated so far
        #: (``compact``).
        self._compact: dict[tuple[str, int], type[Dehydrated]] = {}

    def on_quiet(self, run: Run) -> None:
        """Every track of the instance is parked and its mailbox is empty: a quiet point. It
        is a state, not an event: the checkpoint is written and the instance dehydrates
        within the event that made it quiet, so dehydration and a durable store add no
        scheduler event (``step()`` sequences and interleavings are the same with dehydration
        on or off, on any store). With items in the mailbox, the loop calls this again when
        it has handled them."""
        if run.residency != RESIDENT or run.running or run.mailbox or (
                (self._handing or self._waiting) and (
                    run.id in self._handing or run.id in self._waiting)):
            return
        if (run.joins or run.resets) and behaviour.settle_joins(run):
            return  # an inclusive or complex join fired: a track runs again
        free = self.dehydrate and self.can_dehydrate(run, True) and not self.due(run)
        if not free and (not self.store.durable or run.has_unfired()):
            return
        doc = capture(run, self.kernel.now)
        if free:
            for t in doc["tracks"]:
                if t["state"] == "waiting" and (t["wait"] or {}).get("kind") != "join":
                    t["state"] = DEHYDRATED
        if not self.journal.put(run.id, doc):
            return  # the store failed: it stays resident (a checkpoint_failed fact says so)
        run.stored = True
        if free:
            self.dehydrate_instance(run)

    def memo(self, defn: Definition) -> dict[str, bool]:
        """The remembered answers of one deployed version's elements."""
        last, memo = self._last
        if defn is last:
            return memo
        key = (defn.id, defn.version)
        if key not in self._eligible:
            self._eligible[key] = {}
        memo = self._eligible[key]
        self._last = (defn, memo)
        return memo

    def compact(self, defn: Definition) -> type[Dehydrated]:
        """The compact record class of a version's dehydrated instances (made once)."""
        key = (defn.id, defn.version)
        cls = self._compact.get(key)
        if cls is None or cls.defn is not defn:
            cls = self._compact[key] = compact(defn)
        return cls

    def eligible(self, defn: Definition, tr: Track) -> bool:
        """The element's permission: its ``dehydratable(ctx)`` capability, if it has one,
        consulted with how long the track's own timer was when it was armed."""
        memo = self.memo(defn)
        known = memo.get(tr.node)
        if known is not None:
            return known
        us = tr.wait.remaining() if tr.wait is not None else None
        ask = getattr(defn.nodes[tr.node], "dehydratable", None)
        remaining = timedelta(microseconds=us) if us is not None else None
        answer = ask is not None and bool(ask(WaitContext(remaining, self.min_wait)))
        if us is None or type(defn.timers.get(tr.node)) is timedelta:
            memo[tr.node] = answer  # the same question every time: remember the answer
        return answer

    def can_dehydrate(self, run: Run, warn: bool = False) -> bool:
        """Invariant 2 (docs/architecture.md): every live track parked on an eligible, holdable
        wait, nothing in flight (``on_quiet`` has checked: resident, idle, mailbox empty)."""
        parked = 0
        last, memo = self._last
        if run.defn is not last:
            memo = self.memo(run.defn)
        for tr in run.live.values():
            w = tr.wait
            if isinstance(w, JoinWait):
                continue
            if tr.state != WAITING or w is None or w.fired:
                return False
            ok = memo.get(tr.node)
            if not (ok if ok is not None else self.eligible(run.defn, tr)):
                return False
            if type(w) is TimerWait and not tr.boundaries:
                parked += 1  # held, nothing over it: ``track_holdable`` would say so
                continue
            missing = track_holdable(tr)
            if missing is not None:
                if warn:
                    warn_once(run, missing)
                return False
            parked += 1
        root = run.root
        if root is not None and root.boundaries:
            for sid, w in root.boundaries.items():
                if not w.holdable:
                    if warn:
                        warn_once(run, f"{w.kind} start {sid!r} of an event subprocess")
                    return False
        return parked > 0

    def due(self, run: Run) -> bool:
        """Whether one of the instance's own timers is due at this instant (armed earlier, its
        turn not come yet within it): dehydrated now, it would be woken again at once, and a
        wake that fails would move that timer's track later than a resident one's."""
        now = self.kernel.now
        for hold in run.holds:
            if hold.at <= now and hold.kind == "timer":
                return True
        return False

    def dehydrate_instance(self, run: Run) -> None:
        """End every coroutine of a quiet instance; its checkpoint is already stored. The
        instance's record shrinks to a ``Dehydrated``: id, history and holders. The coroutine
        running now (the track that just parked, or the loop) is not closed here: it sees
        the instance dehydrated and returns."""
        kernel = self.kernel
        current = kernel.current
        history: list[TrackView] = []
        scopes: dict[str, str] = {}
        # one pass: the views of the ended tracks, the scopes of the live ones, and each
        # parked track dehydrated (a state no pass before it reads)
        for tr in list(run.tracks.values()):
            state = tr.state
            if state in TERMINAL:
                history.append(tr.view())
                continue
            if tr.scope is not None:
                scopes[tr.id] = tr.scope
            if state == "waiting" and not isinstance(tr.wait, JoinWait):
                if tr.coro is not None and tr.coro is not current:
                    kernel.close(tr.coro)
                tr.coro = None
                run.set_state(tr, DEHYDRATED)
        if run.loop is not None and run.loop is not current:
            kernel.close(run.loop)
        run.loop = None
        run.residency = DEHYDRATED  # the loop sees this and ends
        holds = run.holds
        self.runs[run.id] = Dehydrated.of(run.id, run.defn, history, tuple(holds), scopes,
                                          run.parent, self.compact(run.defn))
        kinds = [holds[0].site.kind] if len(holds) == 1 else sorted({h.kind for h in holds})
        run.core.emit("dehydrated", run.id, None, None,
                       {"wait_kinds": kinds, "waits": len(holds), "coroutines": 0})


def warn_once(run: Run, what: str) -> None:
    if run.warned is None:
        run.warned = set()
    if what not in run.warned:
        run.warned.add(what)
        log.warning("instance %s stays resident: the %s is eligible to dehydrate but has no "
                    "engine holder", run.id, what)
