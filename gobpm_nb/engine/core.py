"""The engine core: instances, holders, the inbox and job queue, messages and signals.

Public calls validate everything first and raise a typed error before changing anything.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import deque
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ..errors import CheckpointError, EngineError, ModelError
from ..kernel import Kernel, to_datetime
from ..model import Definition, Process
from ..model.timers import add, is_negative, parse_duration
from .checkpoint import capture
from .dehydrate import (
    eligible,
    holds_of,
    releasable,
    release,
    restore,
    track_from,
    unheld,
    views_of_dehydrated,
)
from .holders import Holders, correlation
from .records import EventView, Hold, Job, JobView, Task, TaskView, Trigger
from .run import Released, Run

log = logging.getLogger("gobpm_nb")


def json_dict(value: Any, what: str) -> dict[str, Any]:
    """A copy of ``value`` if it is a dict of JSON values; EngineError naming ``what`` if not."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EngineError(f"{what} must be a dict of JSON values, got {type(value).__name__}")
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise EngineError(f"{what} is not JSON: {exc}") from None


class Core:
    """Everything the engine does, below the facade that wires store, facts and widgets."""

    def __init__(self, *, now: int, facts: Any, dehydrate: bool,
                 min_dehydrate_wait: int, wake_retry_backoff: int, store: Any, codec: Any):
        self.kernel = Kernel(now)
        self.store = store
        self.codec = codec
        facts.clock = self.kernel
        #: emit(kind, instance, track, node, details): a fact at the current virtual time
        self.emit: Callable[..., Any] = facts.emit
        self.runs: dict[str, Any] = {}  # instance id -> Run (resident, finished) or Released
        self.holders = Holders(self.kernel, self.emit, self.deliver, self.runs)
        self.dehydrate = dehydrate
        self.min_dehydrate_wait = min_dehydrate_wait
        self.min_wait = timedelta(microseconds=min_dehydrate_wait)
        self.wake_retry_backoff = wake_retry_backoff
        self.signatures: dict[str, list[str]] = {}  # process id -> signature of each version
        self.deployed: dict[tuple[str, int], Definition] = {}
        self.inbox: dict[str, Task] = {}
        self.closed_tasks: dict[str, str] = {}
        self.jobs: dict[str, Job] = {}
        self.buffer: dict[tuple[str, str], deque[list[Any]]] = {}
        self.seen_messages: set[str] = set()
        self.current: Any = None  # the coroutine running right now
        self.to_hydrate: list[tuple[dict[str, Any], Released]] = []
        self.next_instance = 0

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
            known.append(defn.signature)
            version = len(known)
            self.store.set_meta({f"process:{defn.id}": json.dumps(known)})
        defn = dataclasses.replace(defn, version=version)
        self.deployed[(defn.id, version)] = defn
        return defn

    def definition(self, pid: str, version: int) -> Definition | None:
        return self.deployed.get((pid, version))

    # -- instances ------------------------------------------------------------------------
    def start(self, process: Process, data: dict[str, Any] | None = None,
              key: str | None = None) -> str:
        if not isinstance(process, Process):
            raise EngineError(f"start needs a Process, got {type(process).__name__}")
        values = json_dict(data, "start data")
        process.validate()
        if key is not None and (not isinstance(key, str) or not key or key in self.runs):
            raise EngineError(f"instance key {key!r} is empty, not a string or already used")
        defn = self.deploy(process)
        if key is None:
            self.next_instance += 1
            while f"i{self.next_instance}" in self.runs:
                self.next_instance += 1
            key = f"i{self.next_instance}"
        run = Run(self, key, defn, values)
        self.runs[key] = run
        self.emit("instance_started", key, None, defn.start,
                  {"process": defn.id, "version": defn.version})
        run.start_loop()
        tr = run.new_track(defn.start, (), "start")
        run.spawn(tr)
        return key

    def run_of(self, iid: str) -> Run:
        run = self.runs.get(iid)
        if run is None:
            raise EngineError(f"unknown instance {iid!r}")
        return run

    # -- delivery -------------------------------------------------------------------------
    def deliver(self, hold: Hold, trigger: Trigger) -> None:
        """A holder's trigger: to the live track if resident, through a wake if not."""
        run = self.runs.get(hold.instance)
        if run is None or run.residency == "finished":
            self.holders.release(hold, "withdrawn")
            return
        if hold.kind == "timer":
            self.emit("timer_fired", run.id, hold.track, hold.node,
                      {"wait_kind": hold.wait_kind})
        if run.residency == "dehydrated":
            self.wake(run, hold, trigger)
        else:
            self.apply(run, hold, trigger)

    def apply(self, run: Run, hold: Hold, trigger: Trigger) -> None:
        """Deliver to a resident instance. The first trigger wins: the holds it beats are
        withdrawn at once, so nothing else can fire for that wait."""
        tr = run.tracks[hold.track]
        self.holders.waking.pop(hold, None)
        if hold.wait_kind == "node":
            self.holders.release_waits(run.id, tr.id, "withdrawn", firing=hold)
            if tr.wait is not None:
                tr.wait["fired"] = True
            if hold.kind == "task":
                self.close_task(hold.key or "", "completed")
                trigger.ref = hold.key
            if trigger.kind == "timer":  # only ever delivered inside a kernel event
                self.kernel.resume_within(tr.coro, trigger)  # the timer's event fires it
            else:
                self.kernel.resume(tr.coro, trigger)
            return
        boundary = run.defn.nodes[hold.node]
        if getattr(boundary, "interrupting", True):
            run.withdraw(tr, "cancelled", firing=hold)
        else:
            self.holders.release(hold, "fired")
        run.post(("boundary", tr.id, hold.node, trigger))

    def close_task(self, task_id: str, how: str) -> None:
        if self.inbox.pop(task_id, None) is not None:
            self.closed_tasks[task_id] = how

    # -- dehydration ----------------------------------------------------------------------
    def on_quiet(self, run: Run) -> None:
        """Every track of the instance is parked: a quiet point. The loop takes it from here
        when there is something to do (a release, or a durable checkpoint)."""
        if run.residency != "resident":
            return
        if self.store.durable or (self.dehydrate and releasable(self, run, warn=True)):
            run.post(("quiet",))

    def quiet_point(self, run: Run) -> None:
        """On the loop: write the checkpoint and, if the instance may, release it."""
        if run.residency != "resident" or run.running or run.mailbox:
            return
        free = self.dehydrate and releasable(self, run)
        if not free and not self.store.durable:
            return
        doc = capture(run, self.kernel.now)
        if free:
            for t in doc["tracks"]:
                if t["state"] == "waiting" and (t["wait"] or {}).get("kind") != "join":
                    t["state"] = "dehydrated"
        try:
            self.store.put(run.id, self.codec.encode(doc), self.meta())
        except Exception as exc:  # a store can fail in many ways; stay resident
            log.warning("checkpoint of instance %s not written (%s); it stays resident",
                        run.id, type(exc).__name__)
            self.emit("checkpoint_failed", run.id, None, None, {"cause": type(exc).__name__})
            return
        run.stored = True
        if free:
            release(self, run)

    def meta(self) -> dict[str, str]:
        """What the store records beside each checkpoint: the clock, the instance counter,
        and the buffered messages as they stand."""
        return {"clock": str(self.kernel.now), "next_instance": str(self.next_instance),
                "buffer": self.buffer_rows()}

    def load(self, run: Any) -> dict[str, Any]:
        """Read and check a released instance's checkpoint; raise what went wrong."""
        doc = self.codec.decode(self.store.get(run.id), run.id)
        proc = doc["process"]
        defn = self.definition(proc["id"], proc["version"])
        if defn is None or defn.signature != proc["signature"]:
            raise EngineError(f"process {proc['id']!r} version {proc['version']} is not "
                              "registered with this engine")
        run.defn = defn
        return doc

    def wake(self, rec: Any, hold: Hold, trigger: Trigger) -> None:
        """A trigger for a released instance: hydrate it, then deliver. A failed wake keeps
        its hold and is retried after ``wake_retry_backoff`` of virtual time."""
        try:
            doc = self.load(rec)
        except Exception as exc:  # store, codec or registry: the hold stays, we retry
            self.holders.waking[hold] = trigger
            self.emit("wake_failed", rec.id, hold.track, hold.node,
                      {"trigger": hold.kind, "cause": type(exc).__name__})
            self.kernel.call_at(self.kernel.now + self.wake_retry_backoff, self._retry, hold)
            return
        self.holders.waking.pop(hold, None)
        node_wake = hold.wait_kind == "node"
        self.emit("hydrated", rec.id, hold.track, hold.node, {
            "trigger": hold.kind, "track": hold.track,
            "outcome": "continuation" if node_wake else "boundary"})
        run = restore(self, rec, doc, woken=hold.track if node_wake else None)
        if not node_wake:
            self.apply(run, hold, trigger)
            return
        tr = run.tracks[hold.track]
        self.holders.release_waits(run.id, tr.id, "withdrawn", firing=hold)
        if hold.kind == "task":
            self.close_task(hold.key or "", "completed")
            trigger.ref = hold.key
        child = run.new_track(tr.node, (tr.id,), "continuation")
        # a timer's event fires its wait at once, resident or woken: the same order either way
        run.spawn(child, trigger, within=trigger.kind == "timer")

    def _retry(self, hold: Hold) -> None:
        trigger = self.holders.waking.get(hold)
        run = self.runs.get(hold.instance)
        if trigger is None or not hold.alive or run is None:
            return
        if run.residency == "dehydrated":
            self.wake(run, hold, trigger)
        elif run.residency == "resident":
            self.apply(run, hold, trigger)

    def on_finished(self, run: Run) -> None:
        """An instance ended: its checkpoint leaves the store."""
        if run.stored:
            try:
                self.store.delete(run.id, self.meta())
            except Exception as exc:
                log.warning("checkpoint of finished instance %s not deleted (%s)", run.id,
                            type(exc).__name__)
            run.stored = False

    # -- restart recovery -------------------------------------------------------------------
    def load_registry(self) -> None:
        """Read the store's record of deployed versions and the instance counter."""
        meta = self.store.meta()
        self.next_instance = int(meta.get("next_instance", "0"))
        for key, value in meta.items():
            if key.startswith("process:"):
                self.signatures[key.split(":", 1)[1]] = json.loads(value)
        for name, ckey, expiry, values, message_id in json.loads(meta.get("buffer", "[]")):
            self.buffer_message(name, ckey, expiry, values, message_id)
            if message_id is not None:
                self.seen_messages.add(message_id)

    def recover(self) -> None:
        """Rebuild every stored instance, trigger absent: each wait registers its holder at
        its recorded deadline; instances that cannot be held are hydrated at once."""
        pending: list[tuple[int, Any]] = []
        for iid in self.store.ids():
            pending.extend(self.recover_one(iid))
        for _, register in sorted(pending, key=lambda item: item[0]):
            register()
        waking = {id(run) for _, run in self.to_hydrate}
        for iid, run in self.runs.items():
            if run.residency == "dehydrated" and id(run) not in waking:
                self.emit("recovered", iid, None, None, {
                    "waits": len(self.holders.of_instance(iid)), "residency": "dehydrated"})
        for doc, run in self.to_hydrate:
            restore(self, run, doc)
            self.emit("recovered", run.id, None, None, {
                "waits": len(self.holders.of_instance(run.id)), "residency": "resident"})
        self.to_hydrate = []

    def recover_one(self, iid: str) -> list[tuple[int, Any]]:
        run = Released(iid, None, None, ())
        self.runs[iid] = run
        try:
            doc = self.codec.decode(self.store.get(iid), iid)
        except CheckpointError as exc:
            self.runs[iid] = self.failed_record(iid)
            self.emit("recovery_failed", iid, None, None, {"field": exc.field})
            log.error("instance %s not recovered: %s", iid, exc)
            return []
        proc = doc["process"]
        defn = self.definition(proc["id"], proc["version"])
        if defn is not None and defn.signature == proc["signature"]:
            run.defn = defn
        tracks = [track_from(self, t) for t in doc["tracks"]]
        parked = [t for t in tracks if (t.wait or {}).get("kind") != "join"]
        unholdable = any(unheld(t) is not None for t in parked)
        if unholdable and run.defn is None:
            self.runs[iid] = self.failed_record(iid)
            self.emit("recovery_failed", iid, None, None,
                      {"field": "process", "cause": "version not registered"})
            return []
        stay = run.defn is not None and (not self.dehydrate or unholdable or not all(
            eligible(self, run.defn, t) for t in parked))
        if stay:
            self.to_hydrate.append((doc, run))
        return [item for t in parked for item in holds_of(self, iid, t, run.defn)]

    def failed_record(self, iid: str) -> Run:
        """The record of an instance that could not be recovered: failed, holding nothing."""
        run = Run(self, iid, None, None)  # type: ignore[arg-type]
        run.state, run.residency = "failed", "finished"
        return run

    # -- user tasks -----------------------------------------------------------------------
    def tasks(self) -> list[TaskView]:
        return [TaskView(t.id, t.instance, t.track, t.node, t.name, t.assignee,
                         to_datetime(t.created)) for t in self.inbox.values()]

    def complete_task(self, task_id: str, outputs: dict[str, Any] | None = None) -> None:
        values = json_dict(outputs, f"outputs of task {task_id!r}")
        hold = self.holders.tasks.get(task_id) if isinstance(task_id, str) else None
        if hold is not None and hold in self.holders.waking:
            raise EngineError(f"task {task_id!r} is already completed; its wake is pending")
        if hold is None:
            how = self.closed_tasks.get(task_id) if isinstance(task_id, str) else None
            if how is not None:
                raise EngineError(f"task {task_id!r} is already {how}")
            raise EngineError(f"unknown task {task_id!r}")
        self.deliver(hold, Trigger("task", hold.node, "node", hold.track, values, task_id))

    # -- worker jobs ----------------------------------------------------------------------
    def fetch_jobs(self, topic: str, worker: str, max_jobs: int | None = None) -> list[JobView]:
        if not isinstance(worker, str) or not worker:
            raise EngineError(f"worker {worker!r} must be a non-empty string")
        found: list[JobView] = []
        for job in self.jobs.values():
            if job.topic == topic and job.worker is None:
                if max_jobs is not None and len(found) >= max_jobs:
                    break
                job.worker = worker
                run = self.runs[job.instance]
                self.emit("job_locked", job.instance, job.track, job.node,
                          {"job": job.id, "worker": worker})
                found.append(JobView(job.id, job.topic, job.instance, job.node, worker,
                                     run.data_copy()))
        return found

    def _job(self, job_id: str) -> Job:
        job = self.jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None:
            raise EngineError(f"unknown job {job_id!r}")
        if job.worker is None:
            raise EngineError(f"job {job_id!r} was not fetched by a worker")
        return job

    def complete_job(self, job_id: str, outputs: dict[str, Any] | None = None) -> None:
        values = json_dict(outputs, f"outputs of job {job_id!r}")
        job = self._job(job_id)
        self._finish_job(job, Trigger("job", job.node, "node", job.track, values, job.id))

    def fail_job(self, job_id: str, error: str) -> None:
        if not isinstance(error, str) or not error:
            raise EngineError(f"error of job {job_id!r} must be a non-empty string")
        job = self._job(job_id)
        self.emit("job_failed", job.instance, job.track, job.node, {"job": job.id,
                                                                      "error": error})
        self._finish_job(job, Trigger("error", job.node, "node", job.track,
                                      {"error": error}, job.id))

    def _finish_job(self, job: Job, trigger: Trigger) -> None:
        run = self.run_of(job.instance)
        tr = run.tracks[job.track]
        del self.jobs[job.id]
        self.holders.release_waits(run.id, tr.id, "withdrawn")
        if tr.wait is not None:
            tr.wait["fired"] = True
        self.kernel.resume(tr.coro, trigger)

    # -- messages and signals -------------------------------------------------------------
    def publish_message(self, name: str, key: Any = None, payload: dict[str, Any] | None = None,
                        message_id: str | None = None, ttl: Any = None) -> str | None:
        """Deliver to the first matching subscription; buffer it for ``ttl``; or drop it."""
        if not isinstance(name, str) or not name:
            raise EngineError(f"message name {name!r} must be a non-empty string")
        values = json_dict(payload, f"payload of message {name!r}")
        try:
            ckey = correlation(key)
        except (TypeError, ValueError):
            raise EngineError(f"message {name!r}: key {key!r} is not a JSON value") from None
        expiry = None
        if ttl is not None:
            try:
                span = parse_duration(ttl, "ttl")
            except ModelError as exc:
                raise EngineError(str(exc)) from None
            if is_negative(span):
                raise EngineError(f"ttl {ttl!r} is negative")
            from ..kernel import to_us
            expiry = to_us(add(to_datetime(self.kernel.now), span))
        if message_id is not None and message_id in self.seen_messages:
            self.emit("message_dropped", None, None, None,
                      {"message": name, "reason": "duplicate message id"})
            return None
        hold = self.holders.first_message(name, ckey)
        if hold is not None:
            if message_id is not None:
                self.seen_messages.add(message_id)
            self.emit("message_correlated", hold.instance, hold.track, hold.node,
                      {"message": name, "fields": len(values)})
            self.deliver(hold, Trigger("message", hold.node, hold.wait_kind, hold.track, values))
            return hold.instance
        if expiry is not None:
            if message_id is not None:
                self.seen_messages.add(message_id)
            self.buffer_message(name, ckey, expiry, values, message_id)
            self.emit("message_buffered", None, None, None, {"message": name})
            self.save_buffer()
            return None
        self.emit("message_dropped", None, None, None, {"message": name,
                                                        "reason": "no subscriber"})
        return None

    def buffer_message(self, name: str, ckey: str, expiry: int, values: dict[str, Any],
                       message_id: str | None) -> None:
        entry = [expiry, values, None, message_id]
        entry[2] = self.kernel.call_at(expiry, self._expire, (name, ckey, entry))
        self.buffer.setdefault((name, ckey), deque()).append(entry)

    def save_buffer(self) -> None:
        """A durable store records buffered messages at once (a message accepted with a ttl is
        a trigger: it must survive a restart). Taking one out is recorded with the
        checkpoint of the instance that took it."""
        if self.store.durable:
            self.store.set_meta({"buffer": self.buffer_rows()})

    def buffer_rows(self) -> str:
        return json.dumps([[name, ckey, e[0], e[1], e[3]]
                           for (name, ckey), queue in self.buffer.items() for e in queue])

    def _expire(self, item: tuple[str, str, list[Any]]) -> None:
        name, ckey, entry = item
        queue = self.buffer.get((name, ckey))
        if queue is not None and any(e is entry for e in queue):
            queue.remove(entry)
            if not queue:
                del self.buffer[(name, ckey)]
            self.emit("message_dropped", None, None, None, {"message": name,
                                                            "reason": "ttl expired"})
            self.save_buffer()

    def take_buffered(self, name: str, ckey: str) -> dict[str, Any] | None:
        """A buffered message waiting for this subscription, taken out of the buffer."""
        queue = self.buffer.get((name, ckey))
        if not queue:
            return None
        expiry, values, deadline, _ = queue.popleft()
        deadline.cancel()
        if not queue:
            del self.buffer[(name, ckey)]
        return values

    def broadcast_signal(self, name: str, payload: dict[str, Any] | None = None) -> int:
        if not isinstance(name, str) or not name:
            raise EngineError(f"signal name {name!r} must be a non-empty string")
        values = json_dict(payload, f"payload of signal {name!r}") or None
        holds = self.holders.signal_holds(name)
        self.emit("signal_broadcast", None, None, None, {"signal": name,
                                                         "receivers": len(holds)})
        for hold in holds:
            if hold.alive:
                self.deliver(hold, Trigger("signal", hold.node, hold.wait_kind, hold.track,
                                           values))
        return len(holds)

    # -- running --------------------------------------------------------------------------
    def describe(self, event: tuple[int, Any, Any, Any]) -> EventView:
        at, fn, arg, owner = event
        when = to_datetime(at)
        if isinstance(owner, tuple):
            iid, tid = owner
            node = None
            run = self.runs.get(iid)
            if tid is not None and run is not None and tid in run.tracks:
                node = run.tracks[tid].node
            return EventView(when, "track" if tid else "loop", iid, tid, node)
        if isinstance(arg, Hold):
            return EventView(when, arg.kind, arg.instance, arg.track, arg.node)
        return EventView(when, getattr(fn, "__name__", "event").strip("_"), None, None, None)

    # -- reading --------------------------------------------------------------------------
    def peek(self, run: Any) -> dict[str, Any]:
        """A released instance's checkpoint, read without hydrating it."""
        try:
            raw = self.store.get(run.id)
        except Exception as exc:  # the store's own failure, named for the reader
            raise EngineError(f"checkpoint of instance {run.id!r} cannot be read from the "
                              f"store ({type(exc).__name__})") from exc
        return self.codec.decode(raw, run.id)

    def data_of(self, run: Any) -> dict[str, Any]:
        if run.residency == "dehydrated":
            return dict(self.peek(run)["data"])
        return run.data_copy()

    def tracks_of(self, run: Any) -> list[Any]:
        if run.residency == "dehydrated":
            return views_of_dehydrated(run, self.peek(run))
        return [t.view() for t in run.tracks.values()]

    def unbounded_cycles(self) -> list[Hold]:
        return [h for h in self.holders.all() if h.cycles == -1]
