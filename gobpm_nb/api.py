"""``Engine``: the public facade. It wires the core to its store, its fact log and widgets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from .engine.checkpoint import capture
from .engine.core import Core
from .engine.records import EventView, HoldView, JobView, TaskView
from .errors import EngineError, ModelError
from .instance import Instance
from .kernel import to_datetime, to_us
from .model import Process
from .model.timers import add, is_negative, parse_date, parse_duration
from .observe import Fact, FactLog
from .persist import MemoryStore, codec

DEFAULT_START = "2026-01-01T00:00:00Z"


def _span(value: Any, what: str) -> timedelta:
    try:
        span = parse_duration(value, what)
    except ModelError as exc:
        raise EngineError(str(exc)) from None
    if is_negative(span):
        raise EngineError(f"{what} {value!r} is negative; the clock never moves backwards")
    return span


class Engine:
    """A deterministic BPMN engine on a virtual clock. Nothing runs until step/run/advance."""

    def __init__(self, store: Any = None, start: str | datetime = DEFAULT_START, *,
                 min_dehydrate_wait: Any = "PT1H", wake_retry_backoff: Any = "PT15S",
                 dehydrate: bool = True, keep_facts: int | None = 100_000):
        try:
            begin = parse_date(start, "start")
        except ModelError as exc:
            raise EngineError(str(exc)) from None
        min_wait = _span(min_dehydrate_wait, "min_dehydrate_wait")
        backoff = _span(wake_retry_backoff, "wake_retry_backoff")
        if keep_facts is not None and (not isinstance(keep_facts, int) or keep_facts < 0):
            raise EngineError(f"keep_facts must be None or a count >= 0, got {keep_facts!r}")
        self._log = FactLog(keep_facts)
        self.store = store if store is not None else MemoryStore()
        self._core = Core(now=to_us(begin), facts=self._log, dehydrate=bool(dehydrate),
                          min_dehydrate_wait=min_wait // timedelta(microseconds=1),
                          wake_retry_backoff=backoff // timedelta(microseconds=1),
                          store=self.store, codec=codec)

    @classmethod
    def recover(cls, store: Any, processes: Any = (), **options: Any) -> Engine:
        """Restart recovery from a durable store, in a fresh engine. The clock resumes at the
        latest time the store recorded; each waiting track keeps its id and re-arms at its
        recorded deadline (an overdue timer fires once); tasks keep their ids. Instances whose
        process version is not among ``processes`` stay released until it is deployed."""
        meta = store.meta()
        start = to_datetime(int(meta["clock"])) if "clock" in meta else DEFAULT_START
        eng = cls(store=store, start=start, **options)
        eng._core.load_registry()
        for p in processes:
            eng._core.deploy(p)
        eng._core.recover()
        return eng

    # -- clock and running ----------------------------------------------------------------
    @property
    def now(self) -> datetime:
        """The virtual clock, a timezone-aware datetime."""
        return to_datetime(self._core.kernel.now)

    def step(self) -> EventView | None:
        """Run one scheduler event (moving the clock to the next deadline if nothing is
        ready now) and return what it was; None when nothing is scheduled at all."""
        event = self._core.kernel.step()
        return None if event is None else self._core.describe(event)

    def run(self, until: str | datetime | None = None) -> int:
        """Run until nothing is scheduled, or up to virtual time ``until`` (the clock then
        stands at ``until``). Returns the number of events run."""
        kernel = self._core.kernel
        if until is None:
            endless = self._core.unbounded_cycles()
            if endless:
                h = endless[0]
                raise EngineError(f"run() would never end: the unbounded cycle timer {h.node!r} "
                                  f"of instance {h.instance!r} is armed; give run(until=...)")
            return kernel.run()
        try:
            limit = to_us(parse_date(until, "until"))
        except ModelError as exc:
            raise EngineError(str(exc)) from None
        if limit < kernel.now:
            raise EngineError(f"run(until={until!r}) is before the clock ({self.now.isoformat()}"
                              "); the clock never moves backwards")
        count = kernel.run(limit)
        kernel.jump(limit)
        return count

    def advance(self, duration: str | timedelta) -> int:
        """Move virtual time forward by an ISO 8601 duration or timedelta, running every
        event that falls due on the way."""
        span = _span(duration, "duration")
        return self.run(until=add(self.now, span))

    # -- instances ------------------------------------------------------------------------
    def deploy(self, process: Process) -> int:
        """Deploy a process (``start`` does this too); return its version."""
        return self._core.deploy(process).version

    def start(self, process: Process, data: dict[str, Any] | None = None,
              key: str | None = None) -> Instance:
        """Schedule a new instance; ``key`` gives its id (default i1, i2…)."""
        return Instance(self, self._core.start(process, data, key))

    def instance(self, iid: str) -> Instance:
        self._core.run_of(iid)
        return Instance(self, iid)

    def instances(self) -> list[Instance]:
        return [Instance(self, i) for i in self._core.runs]

    def _checkpoint(self, iid: str) -> dict[str, Any]:
        run = self._core.run_of(iid)
        if run.residency == "dehydrated":
            return codec.export(self._core.peek(run))
        return codec.export(capture(run, self._core.kernel.now))

    # -- triggers -------------------------------------------------------------------------
    def publish_message(self, name: str, key: Any = None, payload: dict[str, Any] | None = None,
                        message_id: str | None = None, ttl: Any = None) -> str | None:
        """Correlate a message by name and key; returns the instance it reached, if any."""
        return self._core.publish_message(name, key, payload, message_id, ttl)

    def broadcast_signal(self, name: str, payload: dict[str, Any] | None = None) -> int:
        """Deliver a signal to every waiting subscriber; returns how many there were."""
        return self._core.broadcast_signal(name, payload)

    def tasks(self) -> list[TaskView]:
        return self._core.tasks()

    def complete_task(self, task_id: str, outputs: dict[str, Any] | None = None) -> None:
        self._core.complete_task(task_id, outputs)

    def fetch_jobs(self, topic: str, worker: str = "worker", max_jobs: int | None = None
                   ) -> list[JobView]:
        return self._core.fetch_jobs(topic, worker, max_jobs)

    def complete_job(self, job_id: str, outputs: dict[str, Any] | None = None) -> None:
        self._core.complete_job(job_id, outputs)

    def fail_job(self, job_id: str, error: str) -> None:
        self._core.fail_job(job_id, error)

    # -- observing ------------------------------------------------------------------------
    def holders(self) -> list[HoldView]:
        return self._core.holders.views()

    @property
    def facts(self) -> list[Fact]:
        return self._log.snapshot()

    def subscribe(self, fn: Callable[[Fact], Any]) -> Callable[[], None]:
        """Call ``fn`` with every fact from now on; returns the unsubscribe callable."""
        return self._log.subscribe(fn)

    def stats(self) -> dict[str, Any]:
        core = self._core
        residency = {"resident": 0, "dehydrated": 0, "finished": 0}
        for run in core.runs.values():
            residency[run.residency] += 1
        return {"instances": residency, "coroutines": len(core.kernel.live),
                "holds": dict(core.holders.counts), "tasks": len(core.inbox),
                "jobs": len(core.jobs), "facts": self._log.seq,
                "pending_events": core.kernel.pending()}

    def dashboard(self) -> Any:
        """A live dashboard widget: step/run/advance/play controls, publish and complete
        forms, counters, the holder table, the fact timeline and the selected instance's
        lineage and process views. Its controls call only this public API."""
        from .ui import dashboard

        return dashboard(self)

    def __repr__(self) -> str:
        s = self.stats()
        return f"Engine(now={self.now.isoformat()}, instances={s['instances']}, " \
               f"coroutines={s['coroutines']})"
