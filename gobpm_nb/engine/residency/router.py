"""Residency (docs/semantics.md): how a trigger reaches an instance, resident or not.

- **One router.** ``route`` decides what every holder's trigger does: a start event's makes
  an instance; one for an ended instance is withdrawn; one for a resident instance goes to
  its track (``apply``); one for a dehydrated instance wakes it.
- **Trigger → hydrate → fork.** A holder's trigger reaches a dehydrated instance here: it is
  rebuilt from its checkpoint; a node's trigger continues as a *continuation fork* (a new
  track, parent the dehydrated track, re-entering the wait node with the trigger), a
  boundary's trigger forks at the boundary over the guarded track, as it would resident.
- **First trigger wins, even if its wake fails.** What the trigger beats (sibling arms, the
  track's other holds, a cancelled task) is withdrawn at once, as it would be resident; its own
  hold stays *waking* until the wake succeeds. Later triggers for the same instance queue
  behind it, in order. One retry chain per instance, every ``wake_retry_backoff``.
- **Restart recovery** (``recovery``) is hydration whose trigger is "the engine started":
  every stored instance comes back trigger absent, each hold at its recorded deadline, key and
  arming order; instances that cannot be held come back resident.

When an instance dehydrates is ``dehydration``'s.
"""

from __future__ import annotations

import logging
from typing import Protocol

from ...errors import CheckpointError, EngineError
from ...model import Definition
from ...model import elements as el
from ...vocabulary import BOUNDARY, FINISHED, NODE, RESIDENT
from ..durability.checkpoint import Image, check_against, read
from ..durability.journal import Codec, Journal, Store
from ..elements import multiple
from ..runtime.compute import timer_wait
from ..runtime.run import Run
from ..runtime.tracks import spawn
from ..state.dehydrated import Dehydrated
from ..state.holders import DEPLOYED, Hold
from ..state.incident import Incident
from ..state.records import Track, Trigger, encloses
from ..state.waits import MessageWait, MultipleWait, SignalWait, TimerWait
from . import hydrate
from .dehydration import Dehydration
from .hydrate import restore
from .scopes import in_place, inside
from .starts import Starts

log = logging.getLogger("gobpm_nb")


class Host(hydrate.Host, Protocol):
    """What the router, wakes and restart recovery need of the engine (the ``Core``): what
    hydration needs (a run's host and the instance records), the store, the checkpoint codec
    and the journal (checkpoints read), the deployed versions, the armed start events (a
    start event's trigger makes an instance) and the quiet points (recovery asks which
    instances may stay dehydrated)."""

    store: Store
    codec: Codec
    journal: Journal
    starts: Starts
    dehydration: Dehydration

    def definition(self, pid: str, version: int) -> Definition | None: ...


class Residency:
    """The router, wakes, wake retries and hydration for one engine."""

    def __init__(self, core: Host, *, backoff: int):
        self.core = core
        self.backoff = backoff
        #: Triggers accepted for dehydrated instances whose wake is pending, in order.
        self.pending: dict[str, list[tuple[Hold, Trigger]]] = {}
        #: Instances being handed the triggers they were woken with (no quiet point yet).
        self._handing: set[str] = set()
        #: Instances whose wake failed: one retry chain hands over all their triggers.
        self.retrying: set[str] = set()
        #: Instances with a ``wake`` event due that is their loop's next turn.
        self.loop_due: set[str] = set()
        #: The holds of each track of a dehydrated instance with triggers waiting
        #: (``track_holds``), while it is dehydrated.
        self.by_track: dict[str, dict[str, list[Hold]]] = {}
        self.posted: dict[str, list[Hold]] = {}  # loop triggers posted early (``post_early``)

    # -- triggers: the one router ------------------------------------------------------
    def route(self, hold: Hold, trigger: Trigger | None = None) -> str:
        """What a holder's trigger does, decided here and nowhere else; returns which:
        ``started`` (a start event's: a new instance), ``withdrawn`` (its instance has
        ended), ``applied`` (to the resident instance's track), ``woken`` (a timer's, in its
        own event: the dehydrated instance is hydrated and forks at once) or ``queued``
        (accepted now and handed over in a ``wake`` event of its own, where a resident
        track's resumption would run; or behind a failed wake, retried).
        A timer's heap entry comes with its hold alone: the deadline is the trigger."""
        core = self.core
        if hold.instance == DEPLOYED:
            core.starts.fire(hold, trigger)
            return "started"
        site = hold.site
        if trigger is None:
            trigger = Trigger("timer", site.node, site.wait_kind, site.track)
        iid = hold.instance
        rec = core.runs.get(iid)
        if rec is None or rec.residency == FINISHED:
            core.holders.release(hold, "withdrawn")
            return "withdrawn"
        if site.kind == "timer":
            core.emit("timer_fired", iid, site.track, site.node, site.fired_details)
        if trigger.kind == "timer" and iid not in self.retrying:
            # in its own event, before the triggers whose wake events are still to come, as
            # a resident track's timer goes before the resumptions those triggers scheduled
            if rec.residency == RESIDENT:
                self.apply(rec, hold, trigger)  # type: ignore[arg-type]  # resident: a Run
                return "applied"
            return self.wake(rec, hold, trigger)  # type: ignore[arg-type]  # dehydrated
        if rec.residency == RESIDENT and iid not in self.pending:
            self.apply(rec, hold, trigger)  # type: ignore[arg-type]  # resident: a Run
            return "applied"
        self.accept(rec, hold)  # type: ignore[arg-type]  # not finished
        self.defer(rec, hold, trigger)  # type: ignore[arg-type]  # not finished
        return "queued"

    def defer(self, rec: Run | Dehydrated, hold: Hold, trigger: Trigger) -> None:
        """Queue an accepted trigger to be handed over in a ``wake`` event where a resident
        instance would run it: a node's trigger in an event of its own (the resumption of
        its track); what goes to the instance's loop in the loop's next turn, an event only
        if the loop sleeps and none is due yet (a dehydrated instance's loop sleeps)."""
        iid = hold.instance
        self.pending.setdefault(iid, []).append((hold, trigger))
        if iid in self.retrying:  # a retry chain hands everything over
            return
        if hold.site.wait_kind != NODE:
            if iid in self.loop_due or (isinstance(rec, Run) and not (
                    rec.loop_waiting and rec.loop is not None)):
                return  # the loop's turn due already takes it
            self.loop_due.add(iid)
        self.core.kernel.call_soon(self.hand, (hold, trigger), "wake")

    def apply(self, run: Run, hold: Hold, trigger: Trigger, within: bool = False) -> None:
        """Deliver to a resident instance. The first trigger wins: the holds it beats are
        withdrawn at once, so nothing else can fire for that wait. A node's trigger resumes
        its track in an event of its own, or (``within``, and always a timer's, delivered in
        its own event) within the event running now."""
        core = self.core
        if hold.site.wait_kind == NODE:
            tr = run.tracks.get(hold.track)
            if within and (tr is None or tr.coro is None or not hold.alive):
                # handed over late, after what an earlier trigger ran withdrew the wait this
                # one came for (a completion condition, an interrupting boundary): dropped,
                # as a cancelled resident track drops the resumption it had been given (a
                # trigger routed now finds its hold alive: no check on that path)
                core.holders.release(hold, "withdrawn")
                return
            assert tr is not None
            run.fired(tr, hold)
            if tr.wait is not None:
                tr.wait.fired = True
            if hold.task is not None:
                core.close_task(hold.task, "completed")
                trigger.ref = hold.task
            assert tr.coro is not None
            if within or trigger.kind == "timer":
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
            if tr.wait is not None and tr.wait.kind in ("scope", "many", "adhoc"):
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
        if isinstance(w, MultipleWait):
            multiple.rearm(run, tr, w, fired)
            return
        if w is None or holders.holds_boundary(run.id, tr.id, fired.node):
            return
        if isinstance(w, TimerWait):
            if w.cycles in (None, 0):
                return
            try:  # a cycle given by an expression is evaluated again (as when first armed)
                w = timer_wait(run, fired.node, w.cycles, fired.at)
            except Incident as exc:
                run.fail(tr, exc)
                return
            tr.boundaries[fired.node] = w
        elif not isinstance(w, (MessageWait, SignalWait)):
            return
        w.hold(holders, run.id, tr.id, BOUNDARY)

    def apply_within(self, run: Run, triggers: list[tuple[Hold, Trigger]]) -> None:
        """Deliver to a resident instance within the event running now: a node's trigger
        resumes its track here; what goes to the instance's sleeping loop (every trigger
        for it queued so far) is posted, and its first item handled here."""
        hold, trigger = triggers[0]
        if hold.site.wait_kind == NODE:
            self.apply(run, hold, trigger, within=True)
            return
        posted = self.posted.pop(run.id, None)
        asleep = (run.loop_waiting or posted is not None) and run.loop is not None
        run.loop_waiting = False  # what ``apply`` posts does not schedule the loop
        for hold, trigger in triggers:
            if posted is None or not any(hold is h for h in posted):
                self.apply(run, hold, trigger)
        if asleep:
            if run.mailbox and run.loop is not None:
                self.core.kernel.resume_within(run.loop, None)
            else:
                run.loop_waiting = True

    def wake(self, rec: Dehydrated, hold: Hold, trigger: Trigger) -> str:
        """A timer's trigger for a dehydrated instance, in the timer's own event: hydrate it
        and fork (``woken``). If that fails, the trigger is accepted now and queued."""
        try:
            image = self.load(rec)
        except Exception as exc:  # store, codec or registry: the hold stays, we retry
            self.accept(rec, hold)  # first, before the triggers queued already
            self.pending.setdefault(rec.id, []).insert(0, (hold, trigger))
            self.failed(rec.id, hold, exc)
            return "queued"
        self.by_track.pop(rec.id, None)
        self.hydrate(rec, image, [(hold, trigger)])
        return "woken"

    def hand(self, entry: tuple[Hold, Trigger]) -> None:
        """A ``wake`` event: hand one accepted trigger to its instance, hydrating it first if
        it is dehydrated. What it wakes runs within this event, as a resident track's
        resumption runs in its own, so the events and their order are the same whether the
        instance was resident or dehydrated. Triggers are handed over in the order they
        came, each in its event; a failed wake hands them all over when a retry succeeds."""
        hold = entry[0]
        iid = hold.instance
        queue = self.pending.get(iid)
        at = None if not queue or iid in self.retrying else \
            next((n for n, (h, _) in enumerate(queue) if h is hold), None)
        if at is None:
            return  # handed over already (a retry), or its instance ended
        rec = self.core.runs.get(iid)
        if not isinstance(rec, (Run, Dehydrated)) or rec.residency == FINISHED:
            self.forget(iid)
            return
        image = None
        if isinstance(rec, Dehydrated):
            try:
                image = self.load(rec)
            except Exception as exc:  # the store, codec or registry: retried, all in order
                self.failed(iid, hold, exc)
                return
        triggers = self.take(iid, at)
        if image is not None:
            assert isinstance(rec, Dehydrated)
            self.by_track.pop(iid, None)
            self.hydrate(rec, image, triggers, within=True)
            return
        assert isinstance(rec, Run)
        self.apply_within(rec, triggers)
        if iid not in self.pending and rec.residency == RESIDENT and not rec.running:
            self.core.on_quiet(rec)  # the quiet points it skipped while triggers waited

    def take(self, iid: str, i: int) -> list[tuple[Hold, Trigger]]:
        """Take trigger ``i`` out of its instance's queue: a node's alone; one for the loop
        with every other one for the loop queued so far (its turn takes them all)."""
        queue = self.pending[iid]
        if queue[i][0].site.wait_kind == NODE:
            taken = [queue.pop(i)]
        else:
            self.loop_due.discard(iid)
            taken = [e for e in queue[i:] if e[0].site.wait_kind != NODE]
            queue[i:] = [e for e in queue[i:] if e[0].site.wait_kind == NODE]
        if not queue:
            del self.pending[iid]
        return taken

    def accept(self, rec: Run | Dehydrated, hold: Hold) -> None:
        """Decide now what a trigger beats, exactly as a resident instance would: a node's
        trigger withdraws the track's other holds and completes its task; an interrupting
        boundary's cancels the guarded track's holds and task. The trigger's own hold stays,
        waking, until the wake has succeeded."""
        holders = self.core.holders
        holders.accept(hold)
        if hold.wait_kind == NODE and in_place(rec.defn, hold.node):
            return  # one arm of a parallel multiple catch, an activation: the rest wait on
        beaten: set[str] | None = {hold.track}
        if hold.wait_kind == BOUNDARY:
            defn = rec.defn
            node = defn.nodes.get(hold.node) if defn is not None else None
            if not getattr(node, "interrupting", True):
                if hold.kind in ("message", "signal"):  # it listens again at once
                    again = holders.hold_subscription(rec.id, hold.track, hold.node,
                                                      hold.kind, hold.name or "",
                                                      hold.correlation, BOUNDARY)
                    index = self.by_track.get(rec.id)
                    if index is not None:
                        index.setdefault(hold.track, []).append(again)
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
            others = self.track_holds(rec, hold)
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
                if other.child is not None:  # as withdrawing a call's wait does, at once
                    self.core.end_child(other.child, reason)
        if hold.task is not None:
            self.core.close_task(hold.task, "completed")

    def track_holds(self, rec: Run | Dehydrated, hold: Hold) -> list[Hold]:
        """The holds of ``hold``'s track, ``hold`` staying the only one listed for it: for a
        dehydrated instance from an index made once per wake (a trigger for each of its
        many inner instances would otherwise each look through every hold it has)."""
        if isinstance(rec, Run):
            return self.core.holders.of_track(rec.id, hold.track)
        if rec.kept is hold:  # its lone hold: nothing else to look through
            return [hold]
        index = self.by_track.get(rec.id)
        if index is None:
            index = self.by_track[rec.id] = {}
            for h in rec.holds:
                index.setdefault(h.track, []).append(h)
        found = index.get(hold.track, [])
        index[hold.track] = [hold]
        return found

    def failed(self, iid: str, hold: Hold, exc: Exception) -> None:
        """A wake failed: one retry chain for the instance hands over all its triggers."""
        self.retrying.add(iid)
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
            self.forget(iid)
            return
        try:
            image = self.load(rec)
        except Exception as exc:
            self.failed(iid, queue[0][0], exc)
            return
        self.forget(iid)
        self.hydrate(rec, image, queue)

    def forget(self, iid: str) -> None:
        """Nothing is queued for the instance any more (handed over, or it ended)."""
        for index in (self.pending, self.posted, self.by_track):
            index.pop(iid, None)
        self.retrying.discard(iid)
        self.loop_due.discard(iid)

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

    def hydrate(self, rec: Dehydrated, image: Image, triggers: list[tuple[Hold, Trigger]],
                within: bool = False) -> None:
        """Rebuild a dehydrated instance and hand it its triggers, in the order they came
        (``within``: the first one's work runs within the event running now)."""
        hold = triggers[0][0]
        # one arm of a parallel multiple catch, an ad-hoc subprocess's activation: its
        # track is rebuilt parked and resumed in place, as a resident one is
        resumed = in_place(rec.defn, hold.node)
        node_wake = hold.wait_kind == NODE and not resumed
        self.core.emit("hydrated", rec.id, hold.track, hold.node, {
            "trigger": hold.kind, "track": hold.track,
            "outcome": "continuation" if node_wake else "resumed" if resumed
            else "boundary"})
        run = restore(self.core, rec, image, {hold.track} if node_wake else frozenset(),
                      check=False)
        # No quiet point until every trigger it was woken with is handed over: the first
        # one's continuation may park everything at once (a timer's runs within this event),
        # while the others are accepted already and must still reach their tracks.
        if len(triggers) > 1:
            self._handing.add(run.id)
        try:
            for n, (h, trigger) in enumerate(triggers):
                if n == 0 and node_wake:
                    self.post_early(run, h.track)
                    self.continuation(run, h, trigger, within or trigger.kind == "timer")
                elif n == 0 and within:
                    self.apply_within(run, triggers)
                    break
                else:  # the instance is resident now: later triggers reach it as they would
                    self.apply(run, h, trigger)
        finally:
            self._handing.discard(run.id)
        if len(triggers) > 1 and run.residency == RESIDENT and not run.running:
            self.core.on_quiet(run)

    def post_early(self, run: Run, woken: str) -> None:
        """A node's trigger woke track ``woken`` while triggers for the loop accepted before
        wait for their ``wake`` event: into the mailbox now, before the continuation writes
        there, as on a resident instance when accepted (unless one interrupts a scope around
        ``woken``); the loop's turn stays their wake event (``apply_within``)."""
        early = [e for e in self.pending.get(run.id) or () if e[0].site.wait_kind != NODE]
        if not early or any(getattr(run.defn.nodes.get(h.node), "interrupting", True)
                            and encloses(run.tracks, h.track, woken) for h, _ in early):
            return
        run.loop_waiting = False  # its turn is due: what is posted does not schedule it
        for hold, trigger in early:
            self.apply(run, hold, trigger)
        self.posted[run.id] = [hold for hold, _ in early]

    def continuation(self, run: Run, hold: Hold, trigger: Trigger, within: bool) -> None:
        """The continuation fork: a new track re-entering the wait node with the trigger;
        ``within``: it runs within the event running now (a timer's fires its wait at once,
        resident or woken: the same order either way)."""
        core = self.core
        tr = run.tracks[hold.track]
        run.fired(tr, hold)
        if hold.task is not None:
            core.close_task(hold.task, "completed")
            trigger.ref = hold.task
        child = run.new_track(tr.node, (tr.id,), "continuation", scope=tr.scope)
        child.locals = tr.locals  # an inner instance's continuation is that inner instance
        child.inputs = tr.inputs  # and the element's inputs are still its own
        child.steps = trigger.steps  # a wait fired: 0 (``Run.entering``)
        spawn(run, child, trigger, within=within)

    def waking(self) -> list[str]:
        """Instances whose wake is pending, in the order their first trigger came."""
        return list(self.pending)


__all__ = ["Residency", "el"]
