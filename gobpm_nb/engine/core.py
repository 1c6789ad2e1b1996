"""The engine core: ids, the registry of versions and instances, the task inbox, the job
queue, and the entry points of triggers. Messages and signals live in ``hub``; when an
instance dehydrates and how a trigger wakes it lives in ``residency``; what is recorded for
a restart lives in ``journal``.

Public calls check everything first and raise a typed error before changing anything.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from ..errors import EngineError, shown
from ..kernel import Kernel, to_datetime
from ..model import Definition, Process
from ..vocabulary import ACTIVE, FINISHED
from . import fast
from .durability.checkpoint import capture
from .durability.damage import read_journal, registry
from .durability.journal import Codec, Journal, Store
from .elements import call_activities
from .elements import table as behaviour
from .residency import activation
from .residency.dehydration import Dehydration
from .residency.hub import Hub
from .residency.hydrate import restore
from .residency.plans import TimerPlans
from .residency.recovery import recover
from .residency.router import Residency
from .residency.starts import TRIGGERED, Starts, conditional_starts, how_it_starts
from .runtime.finished import Finished
from .runtime.outside import Outside
from .runtime.run import Run
from .runtime.tracks import spawn, start_loop
from .state.chosen import chosen
from .state.dehydrated import Dehydrated
from .state.holders import CycleHold, Hold, Holders, TimerHold, expectation
from .state.records import DecisionView, Job, JobView, Task, TaskView, Track, Trigger, no_task
from .state.values import json_dict


def check_options(max_steps_without_wait: int, max_call_depth: int, seed: int) -> None:
    """The core's bounds are counts from 1 and its seed an int: else an EngineError naming
    the option."""
    for name, bound in (("max_steps_without_wait", max_steps_without_wait),
                        ("max_call_depth", max_call_depth)):
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 1:
            raise EngineError(f"{name} must be a count >= 1, got {bound!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise EngineError(f"seed must be an int, got {seed!r}")


class Core:
    """Everything the engine does, below the facade that wires store, facts and widgets."""

    behaviour = behaviour

    def __init__(self, *, now: int, facts: Any, dehydrate: bool, min_dehydrate_wait: int,
                 wake_retry_backoff: int, store: Store, tape: Outside, codec: Codec,
                 max_steps_without_wait: int = 10_000, max_call_depth: int = 100,
                 seed: int = 0):
        check_options(max_steps_without_wait, max_call_depth, seed)
        #: What the rules of decisions draw from (``draws.drawn``): a run is reproducible.
        self.seed = seed
        #: Whether this engine takes its fast paths (``fast``: one switch for all of them).
        self.fast = fast.enabled()
        self.kernel = Kernel(now, fast=self.fast)
        #: Nodes a track may enter without its lineage waiting (``Run.entering``).
        self.max_steps = max_steps_without_wait
        #: How deep call activities may nest (``call_activities.check_depth``).
        self.max_call_depth = max_call_depth
        #: What user callables go through (the facade's ``travel.tape.Tape``: it records
        #: what they answered, and, handed ``store`` wrapped in it, which store calls failed).
        self.tape = tape
        self.store = store
        self.codec = codec
        facts.clock = self.kernel
        #: emit(kind, instance, track, node, details): a fact at the current virtual time
        self.emit: Callable[..., Any] = facts.emit
        #: emit_all(instance, track, rows): many facts of one track, (kind, node, details)
        #: each, in order
        self.emit_all: Callable[..., Any] = facts.emit_all
        self.runs: dict[str, Run | Dehydrated | Finished] = {}  # instance id -> its record
        self.residency = Residency(self, backoff=wake_retry_backoff)
        #: The one router: what a holder's trigger does (``Residency.route``).
        self.deliver: Callable[..., str] = self.residency.route
        self.holders = Holders(self.kernel, self.emit, self.deliver, self.runs)
        #: What the store records besides checkpoints (the instance counter is this core's).
        self.journal = Journal(store, codec, self.kernel, self.emit, self.holders, self)
        self.dehydration = Dehydration(self.kernel, store, self.journal, self.runs,
                                       dehydrate=dehydrate, min_wait=min_dehydrate_wait,
                                       waiting=self.residency.pending,
                                       handing=self.residency._handing)
        #: A Run calls this when it may have become quiet (the residency hook).
        self.on_quiet: Callable[[Run], None] = self.dehydration.on_quiet
        #: A timer from one timer to the next runs its plan, anything else ``deliver``.
        self.plans = TimerPlans(self.runs, self.holders, self.kernel, self.emit, self.emit_all,
                                store, self.residency, self.dehydration, self.on_finished)
        # every kernel handler, in one place: a timer hold runs its plan when one applies
        # (else the router; always the router with the fast paths off), a cycle's the router
        self.kernel.handle(TimerHold, self.plans.fire if self.fast else self.deliver)
        self.kernel.handle(CycleHold, self.deliver)
        self.signatures: dict[str, list[str]] = {}  # process id -> signature of each version
        self.deployed: dict[tuple[str, int], Definition] = {}
        self.inbox: dict[str, Task] = {}
        self.closed_tasks: dict[str, str] = {}
        self.jobs: dict[str, Job] = {}
        self.next_instance = 0
        #: The armed start events that create instances (``starts``).
        self.starts = Starts(self.kernel, self.emit, self.holders, store, self.journal,
                             limit=max_call_depth, definition=self.definition,
                             launch=self.launch)
        #: Messages and signals: correlation, the time-to-live buffer, broadcasts.
        self.hub = Hub(self.kernel, self.emit, self.holders, self.journal, self.starts,
                       self.deliver)
        self.journal.buffer = self.hub  # the hub records through the journal, which records
        # the hub's buffer

    # -- deployment -----------------------------------------------------------------------
    def deploy(self, process: Process | Definition) -> Definition:
        """The deployed definition for this graph: a known version, or the next one."""
        defn = process.definition() if isinstance(process, Process) else process
        known = self.signatures.setdefault(defn.id, [])
        if defn.signature in known:
            version = known.index(defn.signature) + 1
            existing = self.deployed.get((defn.id, version))
            if existing is not None:
                return existing
        else:
            try:
                self.journal.set_meta({f"process:{defn.id}": json.dumps(known + [defn.signature])})
            except Exception as exc:
                raise EngineError(f"process {defn.id!r} not deployed: the store failed to "
                                  f"record it ({type(exc).__name__}: {exc})") from None
            known.append(defn.signature)
            version = len(known)
        defn = dataclasses.replace(defn, version=version)
        self.deployed[(defn.id, version)] = defn
        if version == len(known):  # the newest version's start events are the armed ones
            self.starts.arm(defn)
        return defn

    def definition(self, pid: str, version: int) -> Definition | None:
        return self.deployed.get((pid, version))

    def load_registry(self, meta: dict[str, str]) -> None:
        """Read the store's record of deployed versions."""
        self.signatures.update(registry(meta))

    # -- instances ------------------------------------------------------------------------
    def start(self, process: Process, data: dict[str, Any] | None = None,
              key: str | None = None) -> str:
        """Create an instance ready to run. On a durable store its first checkpoint is
        written before this returns, so a started instance survives a crash."""
        if not isinstance(process, Process):
            raise EngineError(f"start needs a Process, got {type(process).__name__}")
        values = json_dict(data, "start data")
        graph = process.definition()  # ``validate``: the one build (or lookup) per start
        if key is not None:
            if not isinstance(key, str) or not key:
                raise EngineError(f"instance key {key!r} must be a non-empty string")
            if key in self.runs:
                raise EngineError(f"instance key {key!r} is already used")
        defn = self.startable(graph)
        return self.launch(defn, values, key, defn.start)

    def start_many(self, process: Process, data: list[Any]) -> list[str]:
        """Create one instance per item of ``data``, all or none: every item is checked
        first, and on a durable store their first checkpoints are one transaction (a store
        that cannot group them writes them one by one and takes them back if one fails)."""
        if not isinstance(process, Process):
            raise EngineError(f"start_many needs a Process, got {type(process).__name__}")
        values = [json_dict(d, f"start data [{n}]") for n, d in enumerate(data)]
        defn = self.startable(process.definition())
        return self.launch_all([(defn, value, defn.start) for value in values], None)

    def start_on_conditions(self, data: dict[str, Any] | None,
                            process: Process | str | None = None) -> list[str]:
        """One new instance of each deployed process (its newest version; only ``process``
        when given) whose conditional start event holds on ``data``, at the first such
        start, in the order of the processes' ids; all or none, as ``start_many``."""
        values = json_dict(data, "start data")
        chosen = self.starts.on_conditions(self.conditioned(process), values,
                                           self.tape)
        return self.launch_all([(defn, json_dict(values, "start data"), sid)
                                for defn, sid in chosen], "conditional")

    def conditioned(self, process: Process | str | None) -> list[Definition]:
        """The versions ``start_on_conditions`` looks at: the newest deployed one of each
        process with a conditional start, or ``process``'s (a Process is deployed)."""
        if process is None:
            found = (self.callable(pid, None) for pid in sorted(self.signatures))
            return [d for d in found if d is not None and conditional_starts(d)]
        if isinstance(process, Process):
            graph: Definition | None = process.definition()
        elif isinstance(process, str):
            graph = self.callable(process, None)
            if graph is None:
                raise EngineError(f"process {process!r} is not deployed")
        else:
            raise EngineError(f"process must be a Process or a process id, got "
                              f"{type(process).__name__}")
        assert graph is not None
        if not conditional_starts(graph):
            raise EngineError(f"process {graph.id!r} has no conditional start event")
        return [self.deploy(graph)]

    def launch_all(self, starts: list[tuple[Definition, dict[str, Any], str]],
                   by: str | None) -> list[str]:
        """New instances, each of a version at a start event with its data, all or none:
        on a durable store their first checkpoints are one transaction."""
        made: list[tuple[Run, Track]] = []
        before = number = self.next_instance
        for defn, value, at in starts:
            run, tr, number = self.make(defn, value, None, at, after=number)
            made.append((run, tr))
        self.next_instance = number
        if self.store.durable and made:
            now = self.kernel.now
            if not self.journal.put_all([(run.id, capture(run, now)) for run, _ in made]):
                self.next_instance = before
                raise EngineError(f"no instance started: the store failed to record the "
                                  f"{len(made)} instances; nothing changed")
        for run, tr in made:
            run.stored = self.store.durable
            self.enter(run, tr, by)
        return [run.id for run, _ in made]

    def startable(self, graph: Definition) -> Definition:
        """The deployed version of a process graph that starts at a plain start event."""
        defn = self.deploy(graph)
        if not defn.start:
            raise EngineError(f"process {defn.id!r} has no plain start event, so "
                              f"eng.start() cannot start it; it is deployed, and starts by "
                              f"{how_it_starts(defn)}")
        return defn

    def launch(self, defn: Definition, values: dict[str, Any] | None, key: str | None,
               at: str, by: str | None = None, parent: tuple[str, str] | None = None,
               via: str | None = None, generation: int = 0) -> str:
        """A new instance of ``defn`` at start event ``at`` (``by``: the trigger kind of a
        start event that creates instances, or ``call`` for one called by ``parent``, the
        caller's instance and track; ``via``: at an event-based gateway that creates
        instances, the flow to the arm whose event created it), checkpointed first on a
        durable store. If the store refuses that checkpoint, a command's or a message's start
        is refused (EngineError, nothing changed: its caller hears it); one of ``TRIGGERED``
        starts all the same, resident (a ``checkpoint_failed`` fact says so; recovery calls
        again if a caller is recorded waiting for a child that is not in the store)."""
        run, tr, number = self.make(defn, values, key, at, parent)
        tr.via = via
        run.generation = generation
        if self.store.durable:
            before, self.next_instance = self.next_instance, number
            if self.journal.put(run.id, capture(run, self.kernel.now)):
                run.stored = True
            elif by not in TRIGGERED:
                self.next_instance = before
                raise EngineError(f"instance {run.id!r} not started: the store failed to "
                                  "record it; nothing changed")
        self.next_instance = number
        self.enter(run, tr, by)
        return run.id

    def make(self, defn: Definition, values: dict[str, Any] | None, key: str | None,
             at: str, parent: tuple[str, str] | None = None, after: int | None = None
             ) -> tuple[Run, Track, int]:
        """A new instance at start event ``at``, not registered yet, its first track, and
        the instance counter with it. Without ``key`` its id is the first free
        ``i<number>`` above ``after`` (default: the counter)."""
        number = self.next_instance if after is None else after
        if key is None:
            number += 1
            key = f"i{number}"
            while key in self.runs:
                number += 1
                key = f"i{number}"
        run = Run(self, key, defn, values)
        run.parent = parent
        return run, run.new_track(at, (), "start", quiet=True), number

    def enter(self, run: Run, tr: Track, by: str | None) -> None:
        """Register a made instance and set it going."""
        self.runs[run.id] = run
        defn = run.defn
        details: dict[str, Any] = {"process": defn.id, "version": defn.version}
        if by:
            details["by"] = by
        if run.parent is not None:
            details["caller"] = run.parent[0]
        self.emit("instance_started", run.id, None, tr.node, details)
        start_loop(run)
        if defn.event_starts.get("") and not self.behaviour.open_root(run, tr):
            return  # an incident at a start of an event subprocess ended it
        run.announce(tr)
        if tr.via is not None and not self.behaviour.open_arms(run, tr):
            return  # an incident arming a parallel gateway's other arms ended it
        spawn(run, tr)

    def run_of(self, iid: str) -> Run | Dehydrated | Finished:
        run = self.runs.get(iid) if isinstance(iid, str) else None
        if run is None:
            raise EngineError(f"unknown instance {shown(iid)}")
        return run

    # -- triggers -------------------------------------------------------------------------
    def recover(self) -> None:
        """Restart recovery (``recovery.py``): every stored instance back, the recorded
        triggers delivered; then the tracks of instances that had not run since their
        checkpoint get their coroutines, in order, to run when the next command runs (one
        whose instance ended meanwhile, or that runs already, is left)."""
        entries, damaged = read_journal(self.store.journal())
        ready = recover(self.residency, damaged)
        self.journal.replay(entries, self.redeliver)
        for run, tr in ready:
            if self.runs.get(run.id) is run and run.state == ACTIVE and tr.coro is None \
                    and tr.state == "ready":
                spawn(run, tr)

    def redeliver(self, iid: str, trigger: Trigger) -> None:
        """A recorded trigger after a restart: to the wait it was accepted for if that is
        held again; else it waits for the instance, replaying from an older checkpoint, to
        arm that wait again."""
        if trigger.kind in ("job", "error"):
            job = self.jobs.get(trigger.ref or "")
            if job is not None:
                self.finish_job(job, trigger)
            return
        key = (iid, *expectation(trigger)[1:])
        rec = self.runs.get(iid)
        for hold in (rec.holds if rec is not None else ()):
            if expectation(hold) == key:
                self.deliver(hold, trigger)
                return
        self.holders.expected[key] = trigger

    def close_task(self, task_id: str, how: str) -> None:
        if self.inbox.pop(task_id, None) is not None:
            self.closed_tasks[task_id] = how

    # -- residency hooks (what a Run calls) -------------------------------------------------

    def on_finished(self, run: Run) -> None:
        """An instance ended: its checkpoint leaves the store, and the engine keeps only its
        summary (what is still running of it holds the Run until it returns)."""
        if run.parent is not None and not call_activities.returned(run, self.journal.record,
                                                                   self.deliver):
            return  # its caller could not be told: its checkpoint stays to run it again
        if run.stored:
            self.journal.delete(run.id)
            run.stored = False
        if self.runs.get(run.id) is run:
            self.runs[run.id] = Finished(run)

    def callable(self, pid: str, version: int | None) -> Definition | None:
        """What a call activity calls: the newest deployed version of ``pid``, or ``version``."""
        if version is not None:
            return self.deployed.get((pid, version))
        for v in range(len(self.signatures.get(pid, ())), 0, -1):
            defn = self.deployed.get((pid, v))
            if defn is not None:
                return defn
        return None

    def end_child(self, child: str, reason: str) -> None:
        """A call activity was stopped: its child instance is terminated (hydrated first if
        it was dehydrated, so that everything it holds is withdrawn). Its caller's hold went
        first, so nobody is told of its end; it still names its caller (``parent``)."""
        rec = self.runs.get(child)
        if rec is None or isinstance(rec, Finished) or rec.residency == FINISHED:
            return
        if isinstance(rec, Dehydrated):
            try:
                rec = restore(self, rec, self.residency.load(rec))
            except Exception as exc:  # its store failed: it runs on alone, its caller gone
                self.emit("wake_failed", child, None, None, {"trigger": "call",
                                                            "cause": type(exc).__name__})
                return
        rec.finish("terminated")

    # -- user tasks -----------------------------------------------------------------------
    def tasks(self, instance: str | None = None) -> list[TaskView]:
        return [TaskView(t.id, t.instance, t.track, t.node, t.name, t.assignee, to_datetime(
            t.created)) for t in self.inbox.values() if instance in (None, t.instance)]

    # -- decisions (design-review mode) ---------------------------------------------------
    def decisions(self, instance: str | None = None) -> list[DecisionView]:
        """The decisions waiting for a person (or one instance's), in the order armed."""
        waiting = self.holders.decisions
        if instance is None:
            holds = sorted(waiting.values(), key=lambda h: h.seq)
        else:
            listed: list[Hold] = list(self.holders.record(self.run_of(instance).id).holds)
            holds = [h for h in listed if waiting.get((h.instance, h.track)) == h]
        out = []
        for h in holds:
            if activation.is_adhoc(self, h):
                continue  # an ad-hoc subprocess's: ``adhocs``
            defn = self.runs[h.instance].defn
            flows = defn.outgoing[h.node] if defn is not None else ()
            several = defn is not None and defn.nodes[h.node].kind == "inclusive_gateway"
            out.append(DecisionView(h.instance, h.track, h.node,
                                    tuple((f.id, f.target) for f in flows), several))
        return out

    def decide(self, instance: str, flow: str | list[str], track: str | None = None) -> None:
        """A person's choice at a decision of ``instance``: ``flow`` (its id, or the id of
        the node it leads to; at an inclusive gateway, a list of them); ``track`` when
        tracks wait at two decisions it could mean."""
        views = self.decisions(instance)
        if track is not None:
            views = [v for v in views if v.track == track]
        if not views:
            raise EngineError(f"instance {instance!r} waits at no decision"
                              + (f" on track {track!r}" if track is not None else ""))
        view, flows = chosen(views, flow, instance)
        hold = self.holders.decisions[(view.instance, view.track)]
        if view.several:  # the flows taken, in the gateway's order
            trigger = Trigger("decision", hold.node, "node", hold.track, {"flows": flows})
        else:
            trigger = Trigger("decision", hold.node, "node", hold.track, None, flows[0])
        self.journal.record([(hold.instance, trigger)])
        self.deliver(hold, trigger)

    adhocs, activate = activation.adhocs, activation.activate

    def complete_task(self, task_id: str, outputs: dict[str, Any] | None = None) -> None:
        hold = self.holders.tasks.get(task_id) if isinstance(task_id, str) else None
        if hold is None:
            raise no_task(self.closed_tasks, task_id)
        values = json_dict(outputs, f"outputs of task {task_id!r}")
        trigger = Trigger("task", hold.node, "node", hold.track, values, task_id)
        self.journal.record([(hold.instance, trigger)])
        self.deliver(hold, trigger)

    # -- worker jobs ----------------------------------------------------------------------
    def fetch_jobs(self, topic: str, worker: str, max_jobs: int | None = None) -> list[JobView]:
        if not isinstance(worker, str) or not worker:
            raise EngineError(f"worker {worker!r} must be a non-empty string")
        if max_jobs is not None and (not isinstance(max_jobs, int) or max_jobs < 0):
            raise EngineError(f"max_jobs {max_jobs!r} must be None or a count >= 0")
        found: list[JobView] = []
        for job in self.jobs.values():
            if job.topic == topic and job.worker is None:
                if max_jobs is not None and len(found) >= max_jobs:
                    break
                job.worker = worker
                run = self.runs[job.instance]
                assert isinstance(run, Run)
                run.at = run.tracks.get(job.track)  # what the job's track sees
                self.emit("job_locked", job.instance, job.track, job.node,
                          {"job": job.id, "worker": worker})
                found.append(JobView(job.id, job.topic, job.instance, job.node, worker,
                                     run.seen_copy()))
        return found

    def _job(self, job_id: str) -> Job:
        job = self.jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None:
            raise EngineError(f"unknown job {shown(job_id)}")
        if job.worker is None:
            raise EngineError(f"job {job_id!r} was not fetched by a worker")
        return job

    def complete_job(self, job_id: str, outputs: dict[str, Any] | None = None) -> None:
        job = self._job(job_id)
        values = json_dict(outputs, f"outputs of job {job_id!r}")
        trigger = Trigger("job", job.node, "node", job.track, values, job.id)
        self.journal.record([(job.instance, trigger)])
        self.finish_job(job, trigger)

    def fail_job(self, job_id: str, error: str) -> None:
        if not isinstance(error, str) or not error:
            raise EngineError(f"error of job {job_id!r} must be a non-empty string")
        job = self._job(job_id)
        trigger = Trigger("error", job.node, "node", job.track, {"error": error}, job.id)
        self.journal.record([(job.instance, trigger)])
        self.emit("job_failed", job.instance, job.track, job.node, {"job": job.id,
                                                                      "error": error})
        self.finish_job(job, trigger)

    def finish_job(self, job: Job, trigger: Trigger) -> None:
        run = self.runs[job.instance]
        assert isinstance(run, Run)
        tr = run.tracks[job.track]
        del self.jobs[job.id]
        self.holders.release_waits(run.id, tr.id, "withdrawn")
        if tr.wait is not None:
            tr.wait.fired = True
        assert tr.coro is not None
        self.kernel.resume(tr.coro, trigger)

    # -- what a stuck run names -----------------------------------------------------------
    def unbounded_cycles(self) -> list[Hold]:
        return [h for h in self.holders.all() if h.cycles == -1]
