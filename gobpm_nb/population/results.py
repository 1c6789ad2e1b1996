"""``Population``: what one run of a scenario did, as pandas DataFrames: per case, per
task, per pool (and over virtual time), a summary, the event log in XES column names.
Cases that arrived in the warm-up are left out of every KPI."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, shown
from .calendars import ALWAYS, HOUR

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .board import Board
    from .pools import Work
    from .spec import Plan

XES = ["case:concept:name", "concept:name", "time:timestamp", "lifecycle:transition",
       "org:resource"]


@dataclass
class Case:
    """A case: its instance id, arrival (virtual microseconds), start data, whether it
    arrived in the warm-up, and how it ended (``end`` None: still open at the end)."""

    id: str
    arrival: int
    data: dict[str, Any]
    warm: bool
    end: int | None = None
    state: str = "active"
    end_event: str | None = None
    #: The tracks its work items were created on (the run withdraws their open work when
    #: the case ends)
    tracks: list[str] = field(default_factory=list)


def working(points: list[tuple[int, int]], switches: list[tuple[int, bool]]
            ) -> list[tuple[int, int]]:
    """A busy count's steps masked by a calendar: work paused while it is closed counts as
    no work."""
    events = sorted([(t, 0, v) for t, v in points] + [(t, 1, int(s)) for t, s in switches])
    busy, is_open, out = 0, 1, []
    for t, kind, v in events:
        if kind == 0:
            busy = v
        else:
            is_open = v
        out.append((t, busy if is_open else 0))
    return out


#: The most bins a table over time may have (``Population.utilisation``, ``queues``): a
#: microsecond's bins over a month would fill the machine's memory.
MAX_BINS = 1_000_000
#: The most bars a cycle-time histogram draws (each bar is a matplotlib patch)
MOST_BARS = 1_000


def _pd() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("population KPIs need pandas: pip install 'gobpm_nb[population]'"
                          ) from None
    return pd


def _times(values: list[int | None]) -> Any:
    """Virtual microseconds as UTC timestamps (an array: it aligns with any index)."""
    pd = _pd()
    return pd.to_datetime(pd.Series(values, dtype="Int64"), unit="us", utc=True).array


def _spans(values: list[int | None]) -> Any:
    """Microseconds as timedeltas (an array)."""
    pd = _pd()
    return pd.to_timedelta(pd.Series(values, dtype="Int64"), unit="us").array


class Population:
    """One run's results: ``cases()``, ``tasks()``, ``pools()``, ``utilisation()``,
    ``queues()``, ``summary()``, ``event_log()``, ``to_xes(path)`` and the plots."""

    def __init__(self, scenario: Plan, cases: list[Case], works: list[Work],
                 changes: dict[str, list[tuple[int, int, int]]], ended: int,
                 final: Board | None = None):
        self.scenario = scenario
        #: the run's last instant as its dashboard shows it (``dashboard()``)
        self.final = final
        self._cases = cases
        self._works = works
        self._changes = changes
        self.ended = ended
        self.begin = scenario.start + scenario.warmup
        kept = {c.id for c in cases if not c.warm}
        self._kept_works = [w for w in works if w.case in kept]

    @property
    def simulated(self) -> int:
        """How many cases the run started, warm-up cases included (``summary()["cases"]``
        counts those after the warm-up): what the run's speed is measured in."""
        return len(self._cases)

    @property
    def end(self) -> int:
        """The end of the measured window: the later of the run's end and the horizon's."""
        return max(self.ended, self.begin + self.scenario.horizon)

    # -- per case -------------------------------------------------------------------------------
    def cases(self) -> pd.DataFrame:
        """One row per case (warm-up cases left out): ``case``, ``arrival``, ``end``,
        ``cycle_time``, ``waiting``, ``processing``, ``cost``, ``end_event``, ``state``,
        ``ended``, ``sla_breached``."""
        pd = _pd()
        sums: dict[str, list[int]] = {}
        cost: dict[str, float] = {}
        for w in self._kept_works:
            s = sums.setdefault(w.case, [0, 0])
            if w.started is not None:
                s[0] += w.started - w.created
                if w.ended is not None:
                    s[1] += w.ended - w.started
            cost[w.case] = cost.get(w.case, 0.0) + self._cost(w)
        rows = [c for c in self._cases if not c.warm]
        sla = self.scenario.sla
        cycle = [(c.end - c.arrival) if c.end is not None else None for c in rows]
        age = [(c.end if c.end is not None else self.ended) - c.arrival for c in rows]
        return pd.DataFrame({
            "case": [c.id for c in rows],
            "arrival": _times([c.arrival for c in rows]),
            "end": _times([c.end for c in rows]),
            "cycle_time": _spans(cycle),
            "waiting": _spans([sums.get(c.id, [0, 0])[0] for c in rows]),
            "processing": _spans([sums.get(c.id, [0, 0])[1] for c in rows]),
            "cost": [round(cost.get(c.id, 0.0), 6) for c in rows],
            "end_event": [c.end_event for c in rows],
            "state": [c.state for c in rows],
            "ended": [c.end is not None for c in rows],
            "sla_breached": [sla is not None and a > sla for a in age],
        })

    def _cost(self, w: Work) -> float:
        if w.started is None:
            return 0.0
        worked = w.work if not w.withdrawn else \
            w.pool.spec.calendar.open_between(w.started, w.ended or w.started)
        return worked / HOUR * w.pool.spec.cost_per_hour

    # -- per task -------------------------------------------------------------------------------
    def tasks(self) -> pd.DataFrame:
        """One row per task (its id): ``count`` (work items created), ``done``,
        ``withdrawn``, mean ``waiting`` and ``processing`` (of those started / done)."""
        pd = _pd()
        acc: dict[str, list[int]] = {}
        for w in self._kept_works:
            a = acc.setdefault(w.node, [0, 0, 0, 0, 0, 0])
            a[0] += 1
            if w.withdrawn:
                a[2] += 1
            elif w.ended is not None:
                a[1] += 1
                a[5] += w.ended - (w.started or w.ended)
            if w.started is not None:
                a[3] += 1
                a[4] += w.started - w.created
        names = sorted(acc)
        return pd.DataFrame({
            "count": [acc[n][0] for n in names], "done": [acc[n][1] for n in names],
            "withdrawn": [acc[n][2] for n in names],
            "waiting": _spans([acc[n][4] // acc[n][3] if acc[n][3] else None for n in names]),
            "processing": _spans([acc[n][5] // acc[n][1] if acc[n][1] else None
                                  for n in names]),
        }, index=pd.Index(names, name="task"))

    # -- per pool -------------------------------------------------------------------------------
    def pools(self) -> pd.DataFrame:
        """One row per pool: ``size``, ``utilisation`` (working time over the time its
        resources were available, in the measured window), mean and max ``queue``,
        ``cost``."""
        pd = _pd()
        names = sorted(n for n, p in self.scenario.pools.items())
        util, queue, peak, cost = [], [], [], []
        for n in names:
            spec = self.scenario.pools[n]
            worked = sum(self._worked(w) for w in self._works if w.pool.spec.name == n)
            avail = spec.calendar.open_between(self.begin, self.end) * (spec.size or 1)
            util.append(worked / avail if avail else float("nan"))
            q = self._mean_of(n, 2)
            queue.append(q)
            peak.append(max((c[2] for c in self._changes.get(n, [])
                             if c[0] >= self.begin), default=0))
            cost.append(round(worked / HOUR * spec.cost_per_hour, 6))
        return pd.DataFrame({"size": [self.scenario.pools[n].size for n in names],
                             "utilisation": util, "queue": queue, "max_queue": peak,
                             "cost": cost}, index=pd.Index(names, name="pool"))

    def _worked(self, w: Work) -> int:
        """Working time of ``w`` inside the measured window."""
        if w.started is None:
            return 0
        end = w.ended if w.ended is not None else self.ended
        lo, hi = max(w.started, self.begin), min(end, self.end)
        if hi <= lo:
            return 0
        cal = w.pool.spec.calendar
        full = cal.open_between(w.started, end) or 1
        share = cal.open_between(lo, hi) / full
        worked = w.work if not w.withdrawn else full
        return round(min(worked, full) * share)

    def _mean_of(self, pool: str, column: int) -> float:
        series = self._binned(pool, column, self.end - self.begin)
        return float(series[0]) if len(series) else 0.0

    def _binned(self, pool: str, column: int, width: int) -> np.ndarray:
        """Time-weighted means of a pool's busy (1) or queued (2) count over bins of
        ``width`` microseconds from the window's start."""
        import numpy as np

        changes = self._changes.get(pool, [])
        n = max(1, -(-(self.end - self.begin) // width))
        edges = np.array([min(self.begin + i * width, self.end) for i in range(n + 1)],
                         dtype=np.float64)
        if not changes:
            return np.zeros(n)
        points = [(c[0], c[column]) for c in changes]
        spec = self.scenario.pools.get(pool)
        if column == 1 and spec is not None and spec.calendar is not ALWAYS:
            points = working(points, spec.calendar.switches(points[0][0], self.end))
        times = np.array([t for t, _ in points] + [max(self.end, points[-1][0])],
                         dtype=np.float64)
        values = np.array([v for _, v in points], dtype=np.float64)
        area = np.concatenate([[0.0], np.cumsum(values * np.diff(times))])
        at = np.interp(edges, times, area, left=0.0)
        spans = np.diff(edges)
        return np.asarray(np.divide(np.diff(at), spans, out=np.zeros(n), where=spans > 0))

    def utilisation(self, freq: str = "PT1H") -> pd.DataFrame:
        """Busy resources over pool size, time-weighted per bin of ``freq`` (an ISO 8601
        duration) over the measured window; one column per pool."""
        return self._over_time(freq, 1)

    def queues(self, freq: str = "PT1H") -> pd.DataFrame:
        """Queued work (time-weighted mean per bin of ``freq``), one column per pool."""
        return self._over_time(freq, 2)

    def _over_time(self, freq: str, column: int) -> pd.DataFrame:
        from .reading import duration

        pd = _pd()
        width = duration(freq, "freq")
        if width <= 0:
            raise ScenarioError("freq", f"{freq!r} is no time: a bin must be longer than zero")
        n = -(-(self.end - self.begin) // width)
        if n > MAX_BINS:
            raise ScenarioError("freq", f"{freq!r} cuts the measured window into {n:,} bins, "
                                        f"more than {MAX_BINS:,}: give a longer one")
        index = _times([self.begin + i * width for i in range(n)])
        out = {}
        for name, spec in sorted(self.scenario.pools.items()):
            values = self._binned(name, column, width)[:n]
            out[name] = values / spec.size if column == 1 and spec.size else values
        return pd.DataFrame(out, index=pd.DatetimeIndex(index, name="time"))

    # -- summary --------------------------------------------------------------------------------
    def summary(self) -> pd.Series:
        """The run's KPIs as numbers (times in hours): cases, ended share, mean cycle time,
        waiting, processing and cost per case, SLA breach share, each pool's utilisation
        and each task's mean waiting."""
        pd = _pd()
        c = self.cases()
        hours = pd.Timedelta(hours=1)
        done = c[c["ended"]]
        out: dict[str, float] = {
            "cases": float(len(c)),
            "ended": float(c["ended"].mean()) if len(c) else float("nan"),
            "cycle_time_h": float(done["cycle_time"].mean() / hours) if len(done) else
            float("nan"),
            "waiting_h": float(c["waiting"].mean() / hours) if len(c) else float("nan"),
            "processing_h": float(c["processing"].mean() / hours) if len(c) else float("nan"),
            "cost": float(c["cost"].mean()) if len(c) else float("nan"),
            "sla_breached": float(c["sla_breached"].mean()) if len(c) else float("nan"),
        }
        for name, row in self.pools().iterrows():
            out[f"utilisation:{name}"] = float(row["utilisation"])
        for name, row in self.tasks().iterrows():
            w = row["waiting"]
            out[f"waiting_h:{name}"] = float(w / hours) if not pd.isna(w) else float("nan")
        return pd.Series(out, name="value")

    # -- the event log --------------------------------------------------------------------------
    def event_log(self) -> pd.DataFrame:
        """The run's event log in XES column names: a ``start`` and a ``complete`` row per
        work item (warm-up cases left out), ordered by time (at a tie, as the run did them: a
        start before its end). An item withdrawn while worked on (an interrupting boundary
        fired, its case ended) ends with ``ate_abort``, XES's standard lifecycle transition
        for an activity aborted after it started; one withdrawn before it started has no row."""
        pd = _pd()
        nodes = self.scenario.process.definition().nodes
        rows: list[tuple[int, int, str, str, str, str]] = []
        for w in self._kept_works:
            if w.started is None:
                continue
            name = getattr(nodes.get(w.node), "name", None) or w.node
            resource = f"{w.pool.spec.name}-{w.resource}"
            rows.append((w.started, len(rows), w.case, name, "start", resource))
            if w.ended is not None:
                end = "ate_abort" if w.withdrawn else "complete"
                rows.append((w.ended, len(rows), w.case, name, end, resource))
        rows.sort()
        return pd.DataFrame({
            XES[0]: [r[2] for r in rows], XES[1]: [r[3] for r in rows],
            XES[2]: _times([r[0] for r in rows]), XES[3]: [r[4] for r in rows],
            XES[4]: [r[5] for r in rows]}, columns=XES)

    def to_xes(self, path: str | os.PathLike[str]) -> None:
        """Write the event log as an XES file at ``path``, which ends in ``.xes`` (or
        ``.xes.gz``, compressed); needs pm4py (the ``xes`` extra)."""
        if not isinstance(path, (str, os.PathLike)) or \
                not str(path).lower().endswith((".xes", ".xes.gz")):
            raise ValueError(f"to_xes writes an XES file: give a path ending in .xes or "
                             f".xes.gz, got {path!r}")
        try:
            import pm4py
        except ImportError:
            raise ImportError("writing XES needs pm4py: pip install 'gobpm_nb[xes]'"
                              ) from None
        with warnings.catch_warnings():  # pm4py advertises a faster optional writer
            warnings.filterwarnings("ignore", "Install the optional requirement", UserWarning)
            pm4py.write_xes(self.event_log(), str(path), case_id_key=XES[0])

    # -- plots ----------------------------------------------------------------------------------
    def plot_data(self, freq: str = "PT1H") -> dict[str, Any]:
        """What the plots draw: ``cases``, ``sla_hours``, ``util`` and ``queue``."""
        sla = self.scenario.sla
        return {"cases": self.cases(), "sla_hours": sla / HOUR if sla is not None else None,
                "util": self.utilisation(freq), "queue": self.queues(freq)}

    def plot_cycle_times(self, ax: Any = None, bins: int = 30) -> Any:
        """A histogram of the cycle times (hours) in ``bins`` bars (1 to 1,000), the SLA
        dashed; the matplotlib axes."""
        from .plots import cycle_times

        if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MOST_BARS:
            raise ScenarioError("bins", f"{shown(bins)}: a histogram needs a count of bars "
                                        f"from 1 to {MOST_BARS:,}")
        sla = self.scenario.sla
        return cycle_times(self.cases(), sla / HOUR if sla is not None else None, ax, bins)

    def plot_pools(self, freq: str = "PT1H") -> Any:
        """Each pool's utilisation and queue over virtual time (two panels)."""
        from .plots import pools_over_time

        return pools_over_time(self.utilisation(freq), self.queues(freq))

    # -- the dashboard --------------------------------------------------------------------------
    def dashboard(self) -> Any:
        """A population dashboard (``gobpm_nb.ui.PopulationDashboard``) showing the run's
        end: case counters, each pool's busy resources and waiting work, the clock, and the
        tokens still standing on the process diagram. ``Scenario.run(dashboard=True)``
        shows one that follows the run while it runs."""
        from .board import dashboards, empty_board

        board = dashboards().PopulationDashboard(self.scenario, empty_board(self.scenario))
        if self.final is not None:
            board.ended(self.final)
        return board

    def __repr__(self) -> str:
        kept = sum(1 for c in self._cases if not c.warm)
        return f"Population({self.scenario.process.id!r}, cases={kept}, " \
               f"works={len(self._kept_works)})"


def compare(*pops: Population, labels: Sequence[str] | None = None,
            freq: str = "PT1H") -> Any:
    """Two to 26 populations side by side (cycle times overlaid; each one's utilisation
    and queues over virtual time, a column each): the matplotlib figure. ``labels`` name
    them (default A, B, C...)."""
    from .plots import side_by_side

    if not 2 <= len(pops) <= 26 or not all(isinstance(p, Population) for p in pops):
        raise TypeError(f"compare takes two to 26 populations (Scenario.run()'s results), "
                        f"a column each; it was given {len(pops)} argument(s) of types "
                        f"{sorted({type(p).__name__ for p in pops})}")
    names = list(labels) if labels is not None else [chr(ord("A") + i) for i in range(len(pops))]
    if len(names) != len(pops) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"compare: labels must be {len(pops)} strings, one per population; "
                        f"it was given {len(names)}")
    return side_by_side([p.plot_data(freq) for p in pops], names)
