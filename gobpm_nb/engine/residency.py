"""Residency (docs/semantics.md): when an instance dehydrates, and how a trigger wakes it.

- **Quiet point → dehydrate.** When every track of a resident instance is parked, its loop
  takes a quiet point: with a durable store the checkpoint is written; if every live track is
  parked on a wait that is *eligible* (its node's ``dehydratable(ctx)`` says yes) and *held*
  (every armed wait of the track, boundaries and gateway arms included, has an engine
  holder), the instance dehydrates: its coroutines end and only a ``Dehydrated`` record stays.
- **Trigger → hydrate → fork.** A holder's trigger reaches a dehydrated instance here: it is
  rebuilt from its checkpoint; a node's trigger continues as a *continuation fork* (a new
  track, parent the dehydrated track, re-entering the wait node with the trigger), a
  boundary's trigger forks at the boundary over the guarded track, as it would resident.
- **First trigger wins, even if its wake fails.** What the trigger beats (sibling arms, the
  track's other holds, a cancelled task) is withdrawn at once, as it would be resident; its own
  hold stays *waking* until the wake succeeds. Later triggers for the same instance queue
  behind it, in order. One retry chain per instance, every ``wake_retry_backoff``.
- **Restart recovery** (``recover``) is hydration whose trigger is "the engine started":
  every stored instance comes back trigger absent, each hold at its recorded deadline, key and
  arming order; instances that cannot be held come back resident.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from ..errors import CheckpointError, EngineError
from ..model import Definition
from ..model import elements as el
from ..vocabulary import BOUNDARY, DEHYDRATED, NODE, RESIDENT, ROOT, TERMINAL, WAITING
from .checkpoint import Image, capture, check_against, read
from .compute import timer_wait
from .dehydrated import Dehydrated, compact
from .holders import Hold
from .records import Track, TrackView, Trigger
from .run import Run
from .tracks import adopt_parked, spawn, start_loop
from .waits import JoinWait, MessageWait, SignalWait, TimerWait, track_holdable

if TYPE_CHECKING:
    from .core import Core

log = logging.getLogger("gobpm_nb")


class WaitContext:
    """What a wait node may consult when asked whether it is dehydratable."""

    __slots__ = ("remaining", "min_dehydrate_wait")

    def __init__(self, remaining: timedelta | None, min_dehydrate_wait: timedelta):
        self.remaining = remaining
        self.min_dehydrate_wait = min_dehydrate_wait


class Residency:
    """Dehydration, wake, wake retries and restart recovery for one engine."""

    def __init__(self, core: Core, *, dehydrate: bool, min_wait: int, backoff: int):
        self.core = core
        self.dehydrate = dehydrate
        self.min_wait = timedelta(microseconds=min_wait)
        self.backoff = backoff
        #: Triggers accepted for dehydrated instances whose wake is pending, in order.
        self.pending: dict[str, list[tuple[Hold, Trigger]]] = {}
        #: Each element's answer, per deployed version and node, where the answer can only
        #: be one (elements are frozen; a timer of a fixed duration is always that long as
        #: armed): the quiet-point test asks a dict, not the element.
        self._eligible: dict[tuple[str, int], dict[str, bool]] = {}
        self._last: tuple[Definition | None, dict[str, bool]] = (None, {})  # the newest asked
        #: The compact record class of each version released so far (``released``).
        self._compact: dict[tuple[str, int], type[Dehydrated]] = {}
        #: Instances being handed the triggers they were woken with (no quiet point yet).
        self._handing: set[str] = set()

    # -- quiet point and dehydration ------------------------------------------------------
    def on_quiet(self, run: Run) -> None:
        """Every track of the instance is parked and its mailbox is empty: a quiet point. It
        is a state, not an event: the checkpoint is written and the instance dehydrates
        within the event that made it quiet, so dehydration and a durable store add no
        scheduler event (``step()`` sequences and interleavings are the same with dehydration
        on or off, on any store). With items in the mailbox, the loop calls this again when
        it has handled them."""
        if run.residency != RESIDENT or run.running or run.mailbox or (
                self._handing and run.id in self._handing):
            return
        if run.joins and self.core.behaviour.settle_joins(run):
            return  # an inclusive join fired: a track runs again
        free = self.dehydrate and self.releasable(run, True) and not self.due(run)
        if not free and (not self.core.store.durable or run.has_unfired()):
            return
        doc = capture(run, self.core.kernel.now)
        if free:
            for t in doc["tracks"]:
                if t["state"] == WAITING and (t["wait"] or {}).get("kind") != "join":
                    t["state"] = DEHYDRATED
        if not self.core.journal.put(run.id, doc):
            return  # the store failed: it stays resident (a checkpoint_failed fact says so)
        run.stored = True
        if free:
            self.release(run)

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
        """The compact record class of a version's released instances (made once)."""
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

    def releasable(self, run: Run, warn: bool = False) -> bool:
        """Invariant 2: every live track parked on an eligible, held wait; nothing in flight
        (``on_quiet`` has checked that the instance is resident, idle and its mailbox empty)."""
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
        turn not come yet within it): released now, it would be woken again at once, and a
        wake that fails would move that timer's track later than a resident one's."""
        now = self.core.kernel.now
        for hold in run.holds:
            if hold.at <= now and hold.kind == "timer":
                return True
        return False

    def release(self, run: Run) -> None:
        """End every coroutine of a quiet instance; its checkpoint is already stored. The
        instance's record shrinks to a ``Dehydrated``: id, history and holders. The coroutine
        running now (the track that just parked, or the loop) is not closed here: it sees
        the instance dehydrated and returns."""
        kernel = self.core.kernel
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
            if state == WAITING and not isinstance(tr.wait, JoinWait):
                if tr.coro is not None and tr.coro is not current:
                    kernel.close(tr.coro)
                tr.coro = None
                run.set_state(tr, DEHYDRATED)
        if run.loop is not None and run.loop is not current:
            kernel.close(run.loop)
        run.loop = None
        run.residency = DEHYDRATED  # the loop sees this and ends
        holds = run.holds
        self.core.runs[run.id] = Dehydrated.of(run.id, run.defn, history, tuple(holds),
                                             scopes, run.parent, self.compact(run.defn))
        kinds = [holds[0].site.kind] if len(holds) == 1 else sorted({h.kind for h in holds})
        run.core.emit("dehydrated", run.id, None, None,
                       {"wait_kinds": kinds, "waits": len(holds), "coroutines": 0})

    # -- triggers -------------------------------------------------------------------------
    def deliver(self, rec: Run | Dehydrated, hold: Hold, trigger: Trigger) -> None:
        """A holder's trigger for a live instance: to its track if resident, else a wake."""
        if rec.residency == DEHYDRATED or (self.pending and rec.id in self.pending):
            self.wake(rec, hold, trigger)
        else:
            assert isinstance(rec, Run)
            self.apply(rec, hold, trigger)

    def apply(self, run: Run, hold: Hold, trigger: Trigger) -> None:
        """Deliver to a resident instance. The first trigger wins: the holds it beats are
        withdrawn at once, so nothing else can fire for that wait."""
        core = self.core
        if hold.site.wait_kind == NODE:
            tr = run.tracks[hold.track]
            run.fired(tr, hold)
            if tr.wait is not None:
                tr.wait.fired = True
            if hold.task is not None:
                core.close_task(hold.task, "completed")
                trigger.ref = hold.task
            assert tr.coro is not None
            if trigger.kind == "timer":  # only ever delivered inside its own kernel event
                core.kernel.resume_within(tr.coro, trigger)
            else:
                core.kernel.resume(tr.coro, trigger)
            return
        tr = run.track(hold.track)
        boundary = run.defn.nodes[hold.node]
        if isinstance(boundary, el.TriggeredStart):  # an event subprocess's start
            if boundary.interrupting:  # what it beats goes at once: the scope's other starts
                starts = run.defn.event_starts.get(tr.node, ())
                for other in core.holders.of_track(run.id, tr.id):
                    if other.node in starts:
                        core.holders.release(other, "fired" if other is hold else "cancelled")
                run.withdraw_inside(tr.id)
            else:
                core.holders.release(hold, "fired")
                self.rearm(run, tr, hold)
            run.post(("event", tr.id, hold.node, trigger))
            return
        if getattr(boundary, "interrupting", True):
            run.withdraw(tr, "cancelled", firing=hold)
            if tr.wait is not None and tr.wait.kind in ("scope", "many"):
                run.withdraw_inside(tr.id)
        else:
            core.holders.release(hold, "fired")
            self.rearm(run, tr, hold)
        run.post(("boundary", tr.id, hold.node, trigger))

    def rearm(self, run: Run, tr: Track, fired: Hold) -> None:
        """A non-interrupting boundary listens again from the moment its trigger is
        accepted (a second message at the same instant is not lost): a message or signal
        subscribes again; a cycle timer arms its next deadline one interval after the one
        that fired. Nothing is armed if a hold for it is there already (taken while waking)."""
        w = tr.boundaries.get(fired.node)
        holders = self.core.holders
        if w is None or holders.holds_boundary(run.id, tr.id, fired.node):
            return
        if isinstance(w, TimerWait):
            if w.cycles in (None, 0):
                return
            tr.boundaries[fired.node] = w = timer_wait(run, fired.node, w.cycles, fired.at)
        elif not isinstance(w, (MessageWait, SignalWait)):
            return
        w.hold(holders, run.id, tr.id, BOUNDARY)

    def wake(self, rec: Run | Dehydrated, hold: Hold, trigger: Trigger) -> None:
        """A trigger for a dehydrated instance: hydrate it and fork. If a wake is already
        pending, or this one fails, the trigger is accepted now and queued."""
        queue = self.pending.get(rec.id)
        if queue is not None:
            self.accept(rec, hold)
            queue.append((hold, trigger))
            return
        try:
            image = self.load(rec)
        except Exception as exc:  # store, codec or registry: the hold stays, we retry
            self.accept(rec, hold)
            self.pending[rec.id] = [(hold, trigger)]
            self.failed(rec.id, hold, exc)
            return
        assert isinstance(rec, Dehydrated)
        self.hydrate(rec, image, [(hold, trigger)])

    def accept(self, rec: Run | Dehydrated, hold: Hold) -> None:
        """Decide now what a trigger beats, exactly as a resident instance would: a node's
        trigger withdraws the track's other holds and completes its task; an interrupting
        boundary's cancels the guarded track's holds and task. The trigger's own hold stays,
        waking, until the wake has succeeded."""
        holders = self.core.holders
        holders.accept(hold)
        beaten: set[str] | None = {hold.track}
        if hold.wait_kind == BOUNDARY:
            defn = rec.defn
            node = defn.nodes.get(hold.node) if defn is not None else None
            if not getattr(node, "interrupting", True):
                if hold.kind in ("message", "signal"):  # it listens again at once
                    holders.hold_subscription(rec.id, hold.track, hold.node, hold.kind,
                                              hold.name or "", hold.correlation, BOUNDARY)
                return
            reason = "cancelled"
            # everything inside the scope it interrupts goes too; an event subprocess's
            # start beats the scope's other starts, not the subprocess's own boundaries
            beaten = inside(getattr(rec, "scopes", None), hold.track)
            if beaten is not None and not isinstance(node, el.TriggeredStart):
                beaten.add(hold.track)
        else:
            reason = "withdrawn"
        if beaten == {hold.track}:
            others = holders.of_track(rec.id, hold.track)
        else:
            others = [h for h in holders.of_instance(rec.id)
                      if beaten is None or h.track in beaten or (
                          h.track == hold.track and isinstance(
                              rec.defn.nodes.get(h.node) if rec.defn else None,
                              el.TriggeredStart))]
        for other in others:
            if other is not hold and other not in holders.waking:
                holders.release(other, reason)
                if other.task is not None:
                    self.core.close_task(other.task, reason)
        if hold.task is not None:
            self.core.close_task(hold.task, "completed")

    def failed(self, iid: str, hold: Hold, exc: Exception) -> None:
        details = {"trigger": hold.kind, "cause": type(exc).__name__}
        if isinstance(exc, CheckpointError):
            details["field"] = exc.field
        self.core.emit("wake_failed", iid, hold.track, hold.node, details)
        kernel = self.core.kernel
        kernel.call_at(kernel.now + self.backoff, self.retry, iid, "retry")

    def retry(self, iid: str) -> None:
        """A failed wake's retry: one chain per instance, all its pending triggers in order."""
        queue = self.pending.get(iid)
        rec = self.core.runs.get(iid)
        if not queue or not isinstance(rec, Dehydrated):
            self.pending.pop(iid, None)
            return
        try:
            image = self.load(rec)
        except Exception as exc:
            self.failed(iid, queue[0][0], exc)
            return
        del self.pending[iid]
        self.hydrate(rec, image, queue)

    def load(self, rec: Run | Dehydrated) -> Image:
        """Read and check a dehydrated instance's checkpoint; raise what went wrong."""
        core = self.core
        image = read(core.codec.decode(core.journal.read(rec.id), rec.id), rec.id)
        proc = image.process
        defn = core.definition(proc["id"], proc["version"])
        if defn is None or defn.signature != proc["signature"]:
            raise EngineError(f"process {proc['id']!r} version {proc['version']} is not "
                              "registered with this engine")
        check_against(image, defn, rec.holds)
        if rec.defn is not defn:  # a recovered record learns its version (a compact one knows)
            rec.defn = defn
        return image

    def hydrate(self, rec: Dehydrated, image: Image, triggers: list[tuple[Hold, Trigger]]) -> None:
        """Rebuild a dehydrated instance and hand it its triggers, in the order they came."""
        hold = triggers[0][0]
        node_wake = hold.wait_kind == NODE
        self.core.emit("hydrated", rec.id, hold.track, hold.node, {
            "trigger": hold.kind, "track": hold.track,
            "outcome": "continuation" if node_wake else "boundary"})
        run = self.restore(rec, image, {hold.track} if node_wake else frozenset())
        # No quiet point until every trigger it was woken with is handed over: the first
        # one's continuation may park everything at once (a timer's runs within this event),
        # while the others are accepted already and must still reach their tracks.
        if len(triggers) > 1:
            self._handing.add(run.id)
        try:
            for n, (h, trigger) in enumerate(triggers):
                if n == 0 and node_wake:
                    self.continuation(run, h, trigger)
                else:  # the instance is resident now: later triggers reach it as they would
                    self.apply(run, h, trigger)
        finally:
            self._handing.discard(run.id)
        if len(triggers) > 1 and run.residency == RESIDENT and not run.running:
            self.on_quiet(run)

    def continuation(self, run: Run, hold: Hold, trigger: Trigger) -> None:
        """The continuation fork: a new track re-entering the wait node with the trigger."""
        core = self.core
        tr = run.tracks[hold.track]
        run.fired(tr, hold)
        if hold.task is not None:
            core.close_task(hold.task, "completed")
            trigger.ref = hold.task
        child = run.new_track(tr.node, (tr.id,), "continuation", scope=tr.scope)
        child.locals = tr.locals  # an inner instance's continuation is that inner instance
        child.steps = trigger.steps  # a wait fired: 0 (``Run.entering``)
        # a timer's event fires its wait at once, resident or woken: the same order either way
        spawn(run, child, trigger, within=trigger.kind == "timer")

    def restore(self, rec: Dehydrated, image: Image, woken: set[str] | frozenset[str] = frozenset(),
                ready: list[tuple[Run, Track]] | None = None) -> Run:
        """Hydrate: rebuild a dehydrated instance's live state from its checkpoint. Every
        parked track but the ``woken`` gets a coroutine born parked (trigger absent) and keeps
        its id; the holders kept their waits, so nothing registers again. A track the
        checkpoint caught before it parked enters its node again: at once, or, given
        ``ready``, when its caller spawns what it put there."""
        core = self.core
        assert rec.defn is not None, "a wake loads the definition before it restores"
        run = Run(core, rec.id, rec.defn, image.data)
        run.holds = list(rec.holds)
        run.stored = rec.stored
        run.parent = image.parent
        core.runs[rec.id] = run
        run.seq = dict(image.seq)
        run.joins = {g: {f: list(ts) for f, ts in fl.items()} for g, fl in image.joins.items()}
        run.state = image.state
        for view in rec.history or ():
            run.tracks[view.id] = Track(view.id, view.node, view.parents, view.origin,
                                        state=view.state)
        for tr in image.tracks:
            run.tracks[tr.id] = tr
        run.tracks = dict(sorted(run.tracks.items(), key=lambda kv: int(kv[0][1:])))
        start_loop(run, asleep=True)
        conditions = 0
        if image.events is not None:  # the process's event subprocess starts, still held
            run.root = Track(ROOT, ROOT, (), "start", state=WAITING)
            run.root.boundaries = dict(image.events)
        for tr in image.tracks:
            for w in (tr.wait, *tr.boundaries.values()):
                if w is not None:
                    w.local(core, run.id, tr.id)
                    conditions += w.conditions()
            if tr.id in woken or isinstance(tr.wait, JoinWait):
                continue
            if tr.wait is None:  # caught before it parked: it enters its node again
                run.revive(tr)
                if ready is None:
                    spawn(run, tr)
                else:
                    ready.append((run, tr))
            else:
                adopt_parked(run, tr)
                run.set_state(tr, WAITING)
        run.reindex()
        if image.events is None and run.defn.event_starts.get(ROOT):  # its first checkpoint,
            core.behaviour.open_root(run, image.tracks[0])  # before its start opened it
        if conditions:
            run.post(("data",))
        return run

    def waking(self) -> list[str]:
        """Instances whose wake is pending, in the order their first trigger came."""
        return list(self.pending)


def inside(scopes: dict[str, str] | None, host: str) -> set[str] | None:
    """The tracks inside the scope run by ``host`` (``ROOT``: every track: None), from a
    dehydrated instance's map of track to scope."""
    if host == ROOT:
        return None
    found: set[str] = set()
    for tid in scopes or {}:
        up: str | None = tid
        while up is not None and up != host:
            up = scopes.get(up) if scopes else None
        if up == host:
            found.add(tid)
    return found


def warn_once(run: Run, what: str) -> None:
    if run.warned is None:
        run.warned = set()
    if what not in run.warned:
        run.warned.add(what)
        log.warning("instance %s stays resident: the %s is eligible to dehydrate but has no "
                    "engine holder", run.id, what)


__all__ = ["Residency", "WaitContext", "el"]
