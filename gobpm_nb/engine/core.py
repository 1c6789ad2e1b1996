"""The engine core: instances, holders, the inbox and job queue, messages and signals.

Public calls validate everything first and raise a typed error before changing anything.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from ..errors import EngineError, ModelError
from ..kernel import Kernel, to_datetime
from ..model import Definition, Process
from ..model.timers import add, is_negative, parse_duration
from .holders import Holders, correlation
from .records import EventView, Hold, Job, JobView, Task, TaskView, Trigger
from .run import Run

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

    def __init__(self, *, now: int, emit: Callable[..., Any], dehydrate: bool,
                 min_dehydrate_wait: int, wake_retry_backoff: int):
        self.kernel = Kernel(now)
        kernel = self.kernel

        def emit_now(kind: str, instance: str | None, track: str | None, node: str | None,
                     details: dict[str, Any] | None = None) -> None:
            emit(kernel.now, kind, instance, track, node, details)

        self.emit = emit_now
        self.holders = Holders(self.kernel, self.emit, self.deliver)
        self.dehydrate = dehydrate
        self.min_dehydrate_wait = min_dehydrate_wait
        self.wake_retry_backoff = wake_retry_backoff
        self.runs: dict[str, Run] = {}
        self.deployed: dict[str, list[Definition]] = {}
        self.inbox: dict[str, Task] = {}
        self.closed_tasks: dict[str, str] = {}
        self.jobs: dict[str, Job] = {}
        self.buffer: dict[tuple[str, str], deque[list[Any]]] = {}
        self.seen_messages: set[str] = set()
        self.current: Any = None  # the coroutine running right now
        self.next_instance = 0

    # -- deployment -----------------------------------------------------------------------
    def deploy(self, process: Process | Definition) -> Definition:
        """The deployed definition for this graph: the latest version, or a new one."""
        defn = process.definition() if isinstance(process, Process) else process
        versions = self.deployed.setdefault(defn.id, [])
        for known in reversed(versions):
            if known.signature == defn.signature:
                return known
        defn = dataclasses.replace(defn, version=len(versions) + 1)
        versions.append(defn)
        return defn

    def definition(self, pid: str, version: int) -> Definition | None:
        versions = self.deployed.get(pid, [])
        return versions[version - 1] if 0 < version <= len(versions) else None

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
        if run.residency == "dehydrated":
            self.wake(run, hold, trigger)
            return
        self.apply(run, hold, trigger)

    def apply(self, run: Run, hold: Hold, trigger: Trigger) -> None:
        """Deliver to a resident instance. The first trigger wins: the holds it beats are
        withdrawn at once, so nothing else can fire for that wait."""
        tr = run.tracks[hold.track]
        if hold.kind == "timer":
            self.emit("timer_fired", run.id, tr.id, hold.node, {"wait_kind": hold.wait_kind})
        if hold.wait_kind == "node":
            self.holders.release_waits(run.id, tr.id, "withdrawn", firing=hold)
            if tr.wait is not None:
                tr.wait["fired"] = True
            if hold.kind == "task":
                self.close_task(hold.task or "", "completed")
                trigger.ref = hold.task
            self.kernel.resume(tr.coro, trigger)
            return
        boundary = run.defn.nodes[hold.node]
        if getattr(boundary, "interrupting", True):
            self.withdraw(run, tr, firing=hold)
        else:
            self.holders.release(hold, "fired")
        run.post(("boundary", tr.id, hold.node, trigger))

    def withdraw(self, run: Run, tr: Any, firing: Hold | None = None) -> None:
        """Withdraw at once everything that could still fire for a track (it is being
        interrupted): its holds, its task, its job."""
        self.holders.release_waits(run.id, tr.id, "cancelled", firing=firing)
        wait = tr.wait or {}
        if wait.get("kind") == "task":
            self.close_task(wait["task"], "cancelled")
        if wait.get("kind") == "job":
            self.jobs.pop(wait["job"], None)
        if tr.wait is not None:
            tr.wait["fired"] = True

    def close_task(self, task_id: str, how: str) -> None:
        if self.inbox.pop(task_id, None) is not None:
            self.closed_tasks[task_id] = how

    def wake(self, run: Run, hold: Hold, trigger: Trigger) -> None:
        raise EngineError(f"instance {run.id!r} is dehydrated and waking is not available")

    def on_quiet(self, run: Run) -> None:
        """Every track of the instance is parked: a quiet point."""

    def quiet_point(self, run: Run) -> None:
        """The loop's handling of a quiet point."""

    def on_finished(self, run: Run) -> None:
        """An instance ended."""

    # -- user tasks -----------------------------------------------------------------------
    def tasks(self) -> list[TaskView]:
        return [TaskView(t.id, t.instance, t.track, t.node, t.name, t.assignee,
                         to_datetime(t.created)) for t in self.inbox.values()]

    def complete_task(self, task_id: str, outputs: dict[str, Any] | None = None) -> None:
        values = json_dict(outputs, f"outputs of task {task_id!r}")
        hold = self.holders.tasks.get(task_id) if isinstance(task_id, str) else None
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
            entry = [expiry, values, None]
            entry[2] = self.kernel.call_at(expiry, self._expire, (name, ckey, entry))
            self.buffer.setdefault((name, ckey), deque()).append(entry)
            self.emit("message_buffered", None, None, None, {"message": name})
            return None
        self.emit("message_dropped", None, None, None, {"message": name,
                                                        "reason": "no subscriber"})
        return None

    def _expire(self, item: tuple[str, str, list[Any]]) -> None:
        name, ckey, entry = item
        queue = self.buffer.get((name, ckey))
        if queue is not None and entry in queue:
            queue.remove(entry)
            if not queue:
                del self.buffer[(name, ckey)]
            self.emit("message_dropped", None, None, None, {"message": name,
                                                            "reason": "ttl expired"})

    def take_buffered(self, name: str, ckey: str) -> dict[str, Any] | None:
        """A buffered message waiting for this subscription, taken out of the buffer."""
        queue = self.buffer.get((name, ckey))
        if not queue:
            return None
        expiry, values, deadline = queue.popleft()
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
    def data_of(self, run: Run) -> dict[str, Any]:
        return run.data_copy()

    def tracks_of(self, run: Run) -> list[Any]:
        return [t.view() for t in run.tracks.values()]

    def unbounded_cycles(self) -> list[Hold]:
        return [h for hs in self.holders.by_track.values() for h in hs if h.cycles == -1]
