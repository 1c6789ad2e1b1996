"""``Engine``: the public facade over one ``EngineState`` (``travel.state``): the core, its
store, its fact log, its command history and its watchers.

Every public command (``deploy``, ``start``, ``start_many``, ``start_on_conditions``,
``step``, ``run``, ``advance``, ``publish_message``, ``broadcast_signal``, ``complete_task``,
``decide``, ``activate``, ``fetch_jobs``, ``complete_job``, ``fail_job``) goes through the
command envelope (``travel.history.command``) and ends the same way, whether it returned or
raised: the store records the clock and counters (durable stores), the history records the
command, and every watcher added with ``after_each_command`` is called, so live widgets
show the exact state the command left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Unpack

from . import reads
from .engine.durability.journal import Store
from .engine.runtime.finished import Finished
from .engine.runtime.run import Run
from .engine.state.dehydrated import Dehydrated
from .engine.state.records import (
    AdHocView,
    DecisionView,
    EventView,
    HoldView,
    InstanceView,
    JobView,
    TaskView,
    TrackView,
)
from .engine.state.values import json_copy as json_copy  # for population.reading
from .engine.state.values import too_big as too_big  # for population.scenario
from .errors import EngineError, GobpmError
from .instance import Instance, views
from .kernel import to_datetime, to_us
from .model import Definition, Process
from .model.timers import add
from .observe import Fact
from .persist import MemoryStore
from .persist.stores import check_store, read_store
from .travel.driving import Driving
from .travel.history import Command, command, tell
from .travel.opening import DEFAULT_START, Options, open_state
from .travel.recovering import recovered
from .travel.rewind import Rewound, span_of
from .travel.rewind import branch as branch_at
from .travel.rewind import commands as commands_of
from .travel.rewind import replay as replay_history
from .travel.rewind import rewind as rewind_to
from .travel.state import EngineState
from .vocabulary import RESIDENCIES
from .when import instant, span


class Engine:
    """A deterministic BPMN engine on a virtual clock. Nothing runs until step/run/advance."""

    _state: EngineState  # everything it is made of (``travel.state``)

    def __init__(self, store: Store | None = None, start: str | datetime = DEFAULT_START, *,
                 min_dehydrate_wait: str | timedelta = "PT1H",
                 wake_retry_backoff: str | timedelta = "PT15S", dehydrate: bool = True,
                 keep_facts: int | None = 100_000, max_steps_without_wait: int = 10_000,
                 max_call_depth: int = 100, seed: int = 0, keep_history: bool = True):
        store = store if store is not None else MemoryStore()
        check_store(store)
        ids, meta = read_store(store)
        if ids or meta:
            raise EngineError("the store already holds an engine's instances or versions; use "
                              "Engine.recover(store, processes=[...]) to continue them")
        self._state = open_state(store, start, {
            "min_dehydrate_wait": min_dehydrate_wait, "wake_retry_backoff": wake_retry_backoff,
            "dehydrate": dehydrate, "keep_facts": keep_facts,
            "max_steps_without_wait": max_steps_without_wait, "max_call_depth": max_call_depth,
            "seed": seed, "keep_history": keep_history})
        self._state.history.start(self._state)

    @classmethod
    def _on(cls, state: EngineState) -> Engine:
        """An engine on ``state`` (a recovered one, or one a rewind or a branch rebuilt)."""
        eng = cls.__new__(cls)
        eng._state = state
        return eng

    @classmethod
    def recover(cls, store: Store, processes: Iterable[Process] = (),
                **options: Unpack[Options]) -> Engine:
        """Restart recovery from a store, in a fresh engine. The clock resumes where the
        store recorded it at the end of the last command; each waiting track keeps its id
        and re-arms at its recorded deadline (an overdue timer fires once); tasks keep their
        ids; triggers accepted but not yet checkpointed are delivered once. An instance
        started and not run yet comes back ready and runs when the next command runs.
        Instances whose process version is not among ``processes`` stay dehydrated until it
        is deployed. A damaged engine record of the store is a StoreError naming it; when
        recovery raises, ``store`` is closed (an SQLite file is free to open again)."""
        return cls._on(recovered(store, processes, options))

    @property
    def store(self) -> Store:
        """The store the engine was given (a branch's: its memory copy)."""
        return self._state.store

    @property
    def branched_at(self) -> int | None:
        """On a branch (``branch()``), the fact of the original engine it starts at."""
        return self._state.branched_at

    # -- commands end here ----------------------------------------------------------------
    def after_each_command(self, fn: Callable[[], object]) -> Callable[[], None]:
        """Call ``fn()`` at the end of every public command (after the store recorded it);
        returns the callable that stops it. A watcher that raises is logged and removed."""
        watchers = self._state.watchers
        watchers.append(fn)
        return lambda: watchers.remove(fn) if fn in watchers else None

    # -- clock and running ----------------------------------------------------------------
    @property
    def now(self) -> datetime:
        """The virtual clock, a timezone-aware datetime."""
        return to_datetime(self._state.core.kernel.now)

    @property
    def next_due(self) -> datetime | None:
        """When the earliest scheduled deadline (a timer, a wake retry) falls due; None when
        none is scheduled. Work ready now is not a deadline: it runs at the clock's time.
        A driver that feeds the engine from outside runs it up to the earlier of this and
        its own next instant (``Scenario.run`` does)."""
        at = self._state.core.kernel.next_at()
        return to_datetime(at) if at is not None else None

    @command
    def step(self) -> EventView | None:
        """Run one scheduler event (moving the clock to the next deadline if nothing is
        ready now) and return what it was: its kind, and the instance, track and node it
        ran at (where the track stood when the event began); None when nothing is
        scheduled at all."""
        where: list[str | None] = [None]
        self._state.core.journal.group()

        def before(kind: str, subject: Any) -> None:  # a track's or loop's owner tag here
            if kind in ("track", "loop"):
                rec = self._state.core.runs.get(subject[1])
                tracks = rec.tracks if isinstance(rec, Run) else {}
                where[0] = tracks[subject[2]].node if subject[2] in tracks else None

        event = self._state.core.kernel.step(before)
        if event is None:
            return None
        self._state.ran += 1
        at, kind, subject = event
        when = to_datetime(at)
        if kind in ("track", "loop"):
            return EventView(when, kind, subject[1], subject[2], where[0])
        if kind == "timer":
            return EventView(when, kind, subject.instance, subject.track, subject.node)
        if kind == "retry":
            return EventView(when, kind, subject, None, None)
        if kind == "wake":  # the trigger handed over: (hold, trigger)
            hold = subject[0]
            return EventView(when, kind, hold.instance, hold.track, hold.node)
        return EventView(when, kind, None, None, None)

    @command
    def run(self, until: str | datetime | None = None) -> int:
        """Run until nothing is scheduled, or up to virtual time ``until`` (the clock then
        stands at ``until``). Returns the number of events run. Without ``until``, raises
        EngineError when an unbounded cycle timer is armed, or when only retries of failing
        wakes are left (they would go on for ever)."""
        core = self._state.core
        core.journal.group()
        if until is None:
            endless = core.unbounded_cycles()
            if endless:
                h = endless[0]
                raise EngineError(f"run() would never end: the unbounded cycle timer {h.node!r} "
                                  f"of instance {h.instance!r} is armed; give run(until=...)")
            return self._run_out()
        return self._run_until(until)

    def _run_until(self, until: str | datetime) -> int:
        """Run every event due up to ``until``, then stand the clock there."""
        kernel = self._state.core.kernel
        limit = to_us(instant(until, "until"))
        if limit < kernel.now:
            raise EngineError(f"run(until={until!r}) is before the clock ({self.now.isoformat()}"
                              "); the clock never moves backwards")
        count = kernel.run(limit)
        self._state.ran += count
        kernel.jump(limit)
        return count

    def _run_out(self) -> int:
        """Run until nothing is scheduled. When only retries of failing wakes are left, give
        them one more round each time; a round in which none of them succeeds raises."""
        state = self._state
        kernel, residency = state.core.kernel, state.core.residency
        began = state.ran  # counted as they run: the history needs them even if this raises
        state.ran += kernel.run(idle="retry")
        while residency.pending and kernel.only("retry"):
            stuck = residency.waking()
            state.ran += kernel.run(until=kernel.next_at())
            if residency.waking() == stuck and kernel.only("retry"):
                raise EngineError(f"run() would never end: the wakes of {', '.join(stuck)} "
                                  "keep failing (see the wake_failed facts); give "
                                  "run(until=...)")
            state.ran += kernel.run(idle="retry")
        return state.ran - began

    @command
    def advance(self, duration: str | timedelta) -> int:
        """Move virtual time forward by an ISO 8601 duration or timedelta, running every
        event that falls due on the way."""
        length = span(duration, "duration")
        try:
            until = add(self.now, length)
        except (OverflowError, ValueError):
            raise EngineError(f"duration {duration!r} from {self.now.isoformat()} is out of "
                              "the calendar's range") from None
        self._state.core.journal.group()
        return self._run_until(until)

    # -- instances ------------------------------------------------------------------------
    @command
    def deploy(self, process: Process) -> int:
        """Deploy a process (``start`` does this too); return its version."""
        if not isinstance(process, Process):
            raise EngineError(f"deploy needs a Process, got {type(process).__name__}")
        process.validate()
        return self._state.core.deploy(process).version

    @command
    def start(self, process: Process, data: dict[str, Any] | None = None,
              key: str | None = None) -> Instance:
        """Schedule a new instance; ``key`` gives its id (default i1, i2…). Nothing runs
        until step/run/advance; on a durable store the instance is recorded before this
        returns."""
        return Instance(self, self._state.core.start(process, data, key))

    def start_many(self, process: Process, data: Iterable[dict[str, Any] | None]
                   ) -> list[Instance]:
        """Schedule one new instance per item of ``data`` (its start data, or None), all or
        none: every item is checked before any instance exists, and on a durable store their
        first checkpoints are one transaction, written before this returns (a thousand
        instances cost one commit). Ids as ``start`` gives them, in order."""
        ok = not isinstance(data, (str, bytes, dict)) and isinstance(data, Iterable)
        items = list(data) if ok else data  # read once, for the history; refused inside
        self._state.history.label = ("start_many", (process, items))  # recorded so
        return self._start_many(process, items)

    @command
    def _start_many(self, process: Process, items: object) -> list[Instance]:
        if not isinstance(items, list):
            raise EngineError(f"start_many needs a list of start data, got {type(items).__name__}")
        return [Instance(self, iid) for iid in self._state.core.start_many(process, items)]

    @command
    def start_on_conditions(self, data: dict[str, Any] | None = None,
                            process: Process | str | None = None) -> list[str]:
        """Start one instance of each deployed process (its newest version; only
        ``process``, a Process or a deployed process id, when given) whose conditional start
        event holds on ``data``, with ``data`` as its data; returns the new instance ids in
        the order of the processes' ids (none holds: []). A condition that cannot be
        evaluated on ``data`` counts as false (a ``start_condition_failed`` fact says why).
        Recorded like ``start``; on a durable store the instances are recorded before this
        returns, all or none."""
        return self._state.core.start_on_conditions(data, process)

    def instance(self, iid: str) -> Instance:
        self._record(iid)
        return Instance(self, iid)

    def instances(self) -> list[Instance]:
        return [Instance(self, i) for i in self._state.core.runs]

    def describe_instance(self, iid: str) -> InstanceView:
        """An instance's id, process, version, state and residency, and the instance that
        called it (reading never wakes it)."""
        rec = self._record(iid)
        defn = rec.defn
        parent = getattr(rec, "parent", None)
        return InstanceView(rec.id, defn.id if defn is not None else None,
                            defn.version if defn is not None else None, rec.state,
                            rec.residency, parent[0] if parent else None)

    def definition_of(self, iid: str) -> Definition | None:
        """The definition an instance is pinned to (None for a recovered instance whose
        version is not deployed yet)."""
        return self._record(iid).defn

    def instance_data(self, iid: str) -> dict[str, Any]:
        """A copy of an instance's data (read from its checkpoint while dehydrated)."""
        return reads.data(self._state, iid)

    def instance_tracks(self, iid: str) -> list[TrackView]:
        """Every track of an instance, terminal ones included, with its lineage."""
        return reads.tracks(self._state, iid)

    def checkpoint(self, iid: str) -> dict[str, Any]:
        """An instance's JSON-able checkpoint document, as the store holds (or would hold) it."""
        return reads.checkpoint(self._state, iid)

    # -- triggers -------------------------------------------------------------------------
    @command
    def publish_message(self, name: str, key: Any = None, payload: dict[str, Any] | None = None,
                        message_id: str | None = None, ttl: str | timedelta | None = None
                        ) -> str | None:
        """Correlate a message by name and key; returns the instance it reached, if any.
        On a durable store, a message that returned an instance (or was buffered) has been
        recorded and survives a crash."""
        return self._state.core.hub.publish_message(name, key, payload, message_id, ttl)

    @command
    def broadcast_signal(self, name: str, payload: dict[str, Any] | None = None) -> int:
        """Deliver a signal to every waiting subscriber; returns how many there were."""
        return self._state.core.hub.broadcast_signal(name, payload)

    def tasks(self, instance: str | None = None) -> list[TaskView]:
        """The open user tasks (or one instance's: an unknown instance is an EngineError)."""
        if instance is not None:
            self._record(instance)
        return self._state.core.tasks(instance)

    def task_data(self, task_id: str) -> dict[str, Any]:
        """A copy of what an open user task sees, for whoever completes it: the instance
        data under the task's inputs, the inputs of the subprocesses around it and, in a
        multi-instance, its inner instance's element variable (read from the checkpoint
        while the instance is dehydrated: reading never wakes it)."""
        return reads.task_data(self._state, task_id)

    @command
    def complete_task(self, task_id: str, outputs: dict[str, Any] | None = None) -> None:
        self._state.core.complete_task(task_id, outputs)

    def decisions(self, instance: str | None = None) -> list[DecisionView]:
        """The decisions waiting for a person (design-review mode), or one instance's."""
        return self._state.core.decisions(instance)

    @command
    def decide(self, instance: str, flow: str | list[str], track: str | None = None) -> None:
        """Choose the flow a track waiting at a decision takes: ``flow`` by its id or by the
        id of the node it leads to; at an inclusive gateway's decision (``several`` in its
        ``DecisionView``) one flow or a list of one or more, each taken. ``track`` only when
        two decisions of the instance could take it. Journalled, rewindable and durable like
        every command; an unknown instance, no decision waiting, a flow that is not one of
        its own, a list at an exclusive gateway's decision, an empty list or a flow given
        twice is an EngineError that changes nothing."""
        self._state.core.decide(instance, flow, track)

    def adhocs(self, instance: str | None = None) -> list[AdHocView]:
        """The ad-hoc subprocesses waiting for a person's activation (or one instance's)."""
        return self._state.core.adhocs(instance)

    @command
    def activate(self, instance: str, adhoc: str, element: str, track: str | None = None) -> None:
        """Activate ``element`` of ad-hoc subprocess ``adhoc`` of ``instance`` (a person's
        choice): it runs in a new track inside the subprocess; ``track`` only when several
        tracks run it. Journalled, rewindable and durable like every command; an unknown
        instance or subprocess, one that waits for no activation now or an element that is
        not one of its activatable ones is an EngineError that changes nothing."""
        self._state.core.activate(instance, adhoc, element, track)

    @command
    def fetch_jobs(self, topic: str, worker: str = "worker", max_jobs: int | None = None
                   ) -> list[JobView]:
        return self._state.core.fetch_jobs(topic, worker, max_jobs)

    @command
    def complete_job(self, job_id: str, outputs: dict[str, Any] | None = None) -> None:
        self._state.core.complete_job(job_id, outputs)

    @command
    def fail_job(self, job_id: str, error: str) -> None:
        self._state.core.fail_job(job_id, error)

    # -- observing ------------------------------------------------------------------------
    def holders(self, instance: str | None = None) -> list[HoldView]:
        """Every engine holder (or one instance's), in the order armed. A hold whose trigger
        came while its instance's wake is pending reads ``state="waking"``."""
        if instance is not None:
            self._record(instance)
        return self._state.core.holders.views(instance)

    @property
    def facts(self) -> list[Fact]:
        return self._state.facts.snapshot()

    @property
    def keep_facts(self) -> int | None:
        """How many of the newest facts ``facts`` keeps (None: every one), as given to the
        engine; ``stats()["facts"]`` counts every fact emitted."""
        return self._state.keep_facts

    def subscribe(self, fn: Callable[[Fact], object]) -> Callable[[], None]:
        """Call ``fn`` with every fact from now on; returns the unsubscribe callable."""
        return self._state.facts.subscribe(fn)

    def stats(self) -> dict[str, Any]:
        core = self._state.core
        residency = dict.fromkeys(RESIDENCIES, 0)
        for rec in core.runs.values():
            residency[rec.residency] += 1
        return {"instances": residency, "coroutines": len(core.kernel.live),
                "holds": dict(core.holders.counts), "tasks": len(core.inbox),
                "jobs": len(core.jobs), "facts": self._state.facts.seq,
                "pending_events": core.kernel.pending()}

    # -- history --------------------------------------------------------------------------
    def rewind(self, to: int | str | datetime) -> Rewound:
        """Go back (or forward, over what an earlier rewind went back over) to the state
        right after fact ``to``: a fact sequence number, a virtual time (datetime or ISO
        text: the last fact at or before it) or 0 for the start. Facts after it leave
        ``facts``; subscribers get one ``rewound`` fact. EngineError, nothing changed, for
        a point outside the history or on a durable store. See README, Rewind and branch."""
        done = rewind_to(self._state, to, self._on)
        tell(self._state.watchers)
        return done

    def replay(self, commands: int | None = None) -> Rewound:
        """Run again, with the outcomes recorded the first time, the commands the last
        rewind went back over (``commands``: only that many; an interrupted one counts
        once): the facts are the same, byte for byte."""
        done = replay_history(self._state, commands, self._on)
        tell(self._state.watchers)
        return done

    def branch(self, at: int | str | datetime | None = None) -> Engine:
        """An independent engine on a memory store, at the current state or at rewind
        point ``at``, for a what-if; this engine is untouched."""
        return branch_at(self._state, at, self._on)

    def history_span(self) -> tuple[int, int, int]:
        """``(first, position, last)``: the fact the history starts after, the one the
        engine stands at, and the last one the history reaches (past the position after a
        rewind); all equal on an engine that keeps no history. Reads no command (cheap)."""
        return span_of(self._state)

    def history(self) -> list[Command]:
        """The command history: every command that changed the engine, in order, with the facts it
        began and ended at; ``done`` is False past the point a rewind went back to."""
        return commands_of(self._state)

    def _record(self, iid: str) -> Run | Dehydrated | Finished:
        return reads.record(self._state, iid)

    def dashboard(self) -> Any:
        """A live dashboard widget (a ``gobpm_nb.ui.Dashboard``): step/run/advance/play
        controls, publish and complete forms, counters, the holder table, the fact timeline
        and the selected instance's lineage and process views. Its controls call only this
        public API."""
        return views().dashboard(self)

    def __repr__(self) -> str:
        s = self.stats()
        return f"Engine(now={self.now.isoformat()}, instances={s['instances']}, " \
               f"coroutines={s['coroutines']})"


def driving(eng: Engine) -> Driving:
    """Package-internal: a population run's handle on its own engine (``travel.driving``)."""
    return Driving(eng._state)


__all__ = ["Engine", "GobpmError"]
