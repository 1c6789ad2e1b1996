"""The run of a scenario: a driver event queue (arrivals, finished work, messages and
signals from outside, calendars opening) interleaved with the engine's own events. The
driver runs the engine (its public commands' bodies, through ``api.driving``: on an engine
of its own keeping no history, the command envelope has nothing to record) up to the
earlier of its own next instant and the engine's next deadline, reads the facts of the
kinds it needs as they came (tasks and jobs created, tracks withdrawn, cases ended), hands
queued work to free resources, and at its own instants starts cases and completes work. At
a tie the engine's events run first.

Most instants are the driver's alone (an arrival, a finished task): there the engine has
nothing to run before the driver's commands, so its clock is only moved there (the kernel's
``jump``, what ``run(until=...)`` ends with) and the engine runs once, after them; an
instant whose commands were all moot (work withdrawn meanwhile, a calendar opening) runs
it not at all."""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..api import Engine, driving
from ..errors import EngineError, ScenarioError
from ..kernel import iso
from ..model import elements as el
from ..observe import Raw
from .board import board_of, empty_board
from .calendars import HOUR
from .draws import Stream
from .pools import PoolRun, Work
from .results import Case, Population
from .spec import UNASSIGNED, Outside, Plan, is_work

#: Track states that end a track: its open work is withdrawn.
ENDED = frozenset({"cancelled", "withdrawn", "failed", "completed", "merged"})
WANTED = frozenset({"task_created", "job_created", "track_state", "wait_released",
                    "node_entered", "instance_completed", "instance_failed"})
WORKER = "population"
#: How many pieces of work that take no time a case may take up at one virtual instant
#: before the run is found standing still (work that takes time moves the clock on)
STILL = 10_000


class Driver:
    """One run of a scenario on a fresh engine."""

    def __init__(self, sc: Plan):
        self.sc = sc
        self.eng = Engine(start=iso(sc.start), seed=sc.seed, keep_history=False,
                          keep_facts=0, dehydrate=False)
        self.process = sc.runnable()
        self.eng.deploy(self.process)
        self.driving = driving(self.eng)  # its commands, without the envelope it needs not
        self.starting = self.driving.starter(self.process)
        defn = self.process.definition()
        self.ends = frozenset(n for n, e in defn.nodes.items() if isinstance(e, el.EndEvent))
        self.work_nodes = frozenset(n for n, e in defn.nodes.items() if is_work(e))
        self.heap: list[tuple[int, int, str, Any]] = []
        self.seq = 0
        self.streams: dict[str, Stream] = {}
        self.cases: dict[str, Case] = {}
        self.works: list[Work] = []
        self.open: dict[tuple[str, str], list[Work]] = {}
        self.pools = {name: PoolRun(spec, sc.priority.get(name))
                      for name, spec in sc.pools.items()}
        self.pools[UNASSIGNED.name] = PoolRun(UNASSIGNED, None)
        self.dirty: dict[str, PoolRun] = {}
        #: each work node's pool
        self.pool_of = {node: self.pools[sc.pool_of(node).name] for node in self.work_nodes}
        self.kernel = self.driving.kernel
        self.issued = False  # whether an engine command was given at this instant
        #: pieces of work of no duration each case took up at ``instant`` (a case taking
        #: up too many at one instant stands still: ``_stands_still``)
        self.instant = sc.start
        self.taken: dict[str, int] = {}
        self.facts: list[Raw] = []  # the facts of the kinds it reads, as the log keeps them
        self.driving.tap(WANTED, self.facts.append)
        #: each data field's generator and stream; each work node's duration and stream
        self.makers = [(name, gen, self.stream(f"data:{name}")) for name, gen in sc.data.items()]
        self.timing: dict[str, tuple[Any, Stream]] = {}
        self.warm_end = sc.start + sc.warmup
        self.arrival_end = self.warm_end + sc.horizon
        self.limit = self.arrival_end + sc.drain
        self.coming = sc.arrivals.times(self.stream("arrivals"), sc.start, self.arrival_end)
        #: called with the virtual time after each instant the driver ran (a dashboard
        #: following the run); None: nothing is called
        self.watch: Callable[[int], object] | None = None

    def stream(self, source: str) -> Stream:
        s = self.streams.get(source)
        if s is None:
            s = self.streams[source] = Stream(self.sc.seed, source)
        return s

    def push(self, at: int, kind: str, payload: Any) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (at, self.seq, kind, payload))

    # -- the loop -----------------------------------------------------------------------------
    def go(self, progress: bool | None) -> int:
        """Run to the end; returns the virtual time it ended at."""
        self._next_arrival()
        # the bar measures the span of arrivals (the drain after it, up to a year by default,
        # would leave it at a few per cent when the cases end): it may run past its total
        bar = _bar(progress, (self.arrival_end - self.sc.start) / HOUR)
        run_to, kernel, heap, loops, now = \
            self.driving.run_to, self.kernel, self.heap, 0, self.sc.start
        limit, pop, apply, absorb, dispatch = \
            self.limit, heapq.heappop, self._apply, self._absorb, self._dispatch
        watch = self.watch
        while True:
            due = kernel.next_at()
            nxt = heap[0][0] if heap else limit + 1
            if due is not None and due < nxt:
                nxt = due
            if nxt > limit:
                break
            now = nxt
            if due == now or kernel.due_by(now):
                run_to(now)
                absorb()
            else:
                kernel.jump(now)
            if heap and heap[0][0] == now:
                self.issued = False
                while heap and heap[0][0] == now:
                    _, _, kind, payload = pop(heap)
                    apply(now, kind, payload)
                if self.issued:
                    run_to(now)
                    absorb()
            dispatch(now)
            if watch is not None:
                watch(now)
            loops += 1
            if bar is not None and loops % 512 == 0:
                bar.update((now - self.sc.start) / HOUR - bar.n)
        if bar is not None:  # done: full, even when the last case ended before arrivals did
            bar.update(max((now - self.sc.start) / HOUR, bar.total) - bar.n)
            bar.close()
        return now

    def _stands_still(self, now: int, w: Work) -> None:
        """A case took up more than ``STILL`` pieces of work of no duration at one instant:
        work in a loop, which would go round for ever with the clock standing."""
        raise ScenarioError("durations", f"the run stands still at {iso(now)}: case {w.case} "
                                         f"took up more than {STILL:,} pieces of work of no "
                                         f"duration at that instant, the last at {w.node}; "
                                         "work in a loop needs a duration longer than zero")

    def _apply(self, now: int, kind: str, payload: Any) -> None:
        if kind == "arrive":
            self._arrive(now, payload)
        elif kind == "finish":
            self._finish(now, payload)
        elif kind == "outside":
            self._send(payload[0], payload[1])
        else:  # "open": a calendar opened; the pool is dispatched below
            payload.waking = False
            self.dirty[payload.spec.name] = payload

    def _next_arrival(self) -> None:
        nxt = next(self.coming, None)
        if nxt is not None:
            self.push(nxt[0], "arrive", nxt[1])

    def _arrive(self, now: int, given: dict[str, Any] | None) -> None:
        data = {name: gen.sample(stream.next()) for name, gen, stream in self.makers}
        if given:
            data.update(given)
        self.issued = True
        iid = self.starting(data)
        self.cases[iid] = Case(iid, now, data, now < self.warm_end)
        for i, o in enumerate(self.sc.outside):
            if o.share >= 1 or self.stream(f"outside:{i}:share").next() < o.share:
                after = round(o.after.sample(self.stream(f"outside:{i}").next()))
                self.push(now + after, "outside", (o, iid))
        self._next_arrival()

    def _send(self, o: Outside, iid: str) -> None:
        self.issued = True
        if o.kind == "signal":
            self.eng.broadcast_signal(o.name, o.payload)
            return
        key = self.cases[iid].data.get(o.key) if o.key is not None else None
        self.eng.publish_message(o.name, key=key, payload=o.payload)

    # -- facts ----------------------------------------------------------------------------------
    def _absorb(self) -> None:
        """Read the facts that came since the last time: raw tuples ``(seq, t, kind,
        instance, track, node, details)``, their details read in place, not copied (the
        driver only looks at them)."""
        kept, topics = self.facts, []
        if not kept:
            return
        facts = kept.copy()
        kept.clear()
        cases = self.cases
        for f in facts:
            kind = f[2]
            details: Any = f[6]
            if kind == "node_entered":
                if f[5] in self.ends and f[3] in cases:
                    cases[f[3]].end_event = f[5]
            elif kind == "track_state":
                if details["state"] in ENDED:
                    self._withdraw((f[3], f[4]), f[1])
            elif kind == "task_created" or kind == "job_created":
                self._created(f, kind)
                if kind == "job_created" and details["topic"] not in topics:
                    topics.append(details["topic"])
            elif kind == "wait_released":
                if details["kind"] == "task" and details.get("reason") != "fired":
                    self._withdraw((f[3], f[4]), f[1])
            elif f[3] in cases:  # the case ended
                self._ended(f)
        for topic in topics:
            self.eng.fetch_jobs(topic, worker=WORKER)

    def _created(self, f: Raw, kind: str) -> None:
        node, iid = f[5] or "", f[3] or ""
        if node not in self.work_nodes or iid not in self.cases:
            return
        pool = self.pool_of[node]
        details: Any = f[6]
        ref = details["task" if kind == "task_created" else "job"]
        w = Work(iid, node, ref, kind[:4], pool, f[4] or "", f[1])
        self.works.append(w)
        self.open.setdefault((w.case, w.track), []).append(w)
        case = self.cases[iid]
        case.tracks.append(w.track)
        pool.push(w, case.data)
        pool.note(f[1])
        self.dirty[pool.spec.name] = pool

    def _ended(self, f: Raw) -> None:
        case = self.cases[f[3] or ""]
        case.end = f[1]
        case.state = "failed" if f[2] == "instance_failed" else (f[6] or {}).get(
            "state", "completed")
        for track in case.tracks:
            self._withdraw((case.id, track), f[1])
        case.tracks = []

    def _withdraw(self, key: tuple[Any, Any], at: int) -> None:
        works = self.open.pop(key, None)
        for w in works or ():
            w.withdrawn = True
            pool = w.pool
            if w.started is None:
                pool.waiting -= 1
            else:
                w.ended = at
                pool.give_back(w.resource)
                self.dirty[pool.spec.name] = pool
            pool.note(at)

    # -- work -----------------------------------------------------------------------------------
    def _dispatch(self, now: int) -> None:
        if not self.dirty:
            return
        pools, self.dirty = self.dirty, {}
        for name in sorted(pools) if len(pools) > 1 else pools:
            pool = pools[name]
            if not pool.waiting or not pool.has_free():
                continue
            cal = pool.spec.calendar
            opens = now if cal.name == "24/7" else cal.next_open(now)
            if opens is None:
                continue
            if opens > now:
                if not pool.waking:
                    pool.waking = True
                    self.push(opens, "open", pool)
                continue
            while pool.has_free():
                w = pool.take()
                if w is None:
                    break
                self._start(now, w, pool)
            pool.note(now)

    def _start(self, now: int, w: Work, pool: PoolRun) -> None:
        resource = pool.resource()
        assert resource is not None
        timing = self.timing.get(w.node)
        if timing is None:
            timing = self.timing[w.node] = (self.sc.durations.get(w.node),
                                            self.stream(f"duration:{w.node}"))
        dist, stream = timing
        w.work = round(dist.sample(stream.next())) if dist else 0
        w.resource, w.started = resource, now
        pool.busy += 1
        cal = pool.spec.calendar
        ends = now + w.work if cal.name == "24/7" else cal.finish(now, w.work)
        if ends == now:  # work that takes no time: the clock will not move on past it
            if now != self.instant:
                self.instant, self.taken = now, {}
            taken = self.taken[w.case] = self.taken.get(w.case, 0) + 1
            if taken > STILL:
                self._stands_still(now, w)
        self.push(ends, "finish", w)

    def _finish(self, now: int, w: Work) -> None:
        if w.withdrawn:
            return
        works = self.open.get((w.case, w.track))
        if works is not None and w in works:
            works.remove(w)
            if not works:
                del self.open[(w.case, w.track)]
        w.ended = now
        self.issued = True
        try:
            if w.kind == "task":
                self.driving.complete_task(w.ref)
            else:
                self.driving.complete_job(w.ref)
        except EngineError:  # gone meanwhile (its track was withdrawn at this instant)
            w.withdrawn = True
        w.pool.give_back(w.resource)
        w.pool.note(now)
        self.dirty[w.pool.spec.name] = w.pool


#: The collector's youngest threshold while a population run goes (Python's default is
#: 700). A run makes many small objects and keeps a good share (its cases, works, pool
#: changes): at the default the collector runs every few cases, and every so often walks
#: the whole heap (a notebook's heap is large). Results do not depend on it.
YOUNG = 10_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Raise the collector's youngest threshold for the run, and put it back after; a
    threshold of 0 (collection off) or above ``YOUNG`` is left as it is."""
    before = gc.get_threshold()
    if 0 < before[0] < YOUNG:
        gc.set_threshold(YOUNG, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _bar(progress: bool | None, total: float) -> Any:
    if progress is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, delay=0 if progress else 1.0, unit="h", leave=False,
                desc="virtual hours")


def drive(sc: Plan, progress: bool | None = None, board: Any = None) -> Population:
    """Run ``sc`` once; its Population. ``board``: a population dashboard
    (``gobpm_nb.ui.population``) that follows the run: ``follow(read, start)`` (``read(at)``
    gives the run's ``Board`` at virtual time ``at``) returns the watch called after each
    instant, ``ended(final)`` is told the end."""
    d = Driver(sc)
    if board is not None:
        d.watch = board.follow(lambda at: board_of(d, at), empty_board(sc), sc)
    with _fewer_collections():
        ended = d.go(progress)
    final = board_of(d, ended)
    if board is not None:
        board.ended(final)
    return Population(sc, list(d.cases.values()), d.works,
                      {n: p.changes for n, p in d.pools.items() if p.changes}, ended, final)
