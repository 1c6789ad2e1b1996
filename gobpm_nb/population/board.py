"""What a population dashboard shows of a run at one virtual instant: the clock, the cases
(started, running, completed, SLA breached), each pool's busy resources and waiting work,
and the tokens standing on each element of the process now (the heat map).

Read from the driver and the engine's public API only, at an instant the driver chose
(between two of its steps), so it is exact there; the widget (``gobpm_nb.ui.population``)
draws it. Cases that arrived in the warm-up are left out of the case counters, as they are
out of every KPI; their tokens are on the heat map (they are in the engine).
Deterministic: plain data in definition, pool-name and case order; no wall clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from ..errors import EngineError
from ..kernel import to_datetime
from ..observe.projections import standing
from .spec import Plan

#: The case counters, in the order the dashboard shows them ("ended otherwise": ended in a
#: state other than completed, such as failed; shown only when there are some).
OTHERWISE = "ended otherwise"
CASE_COUNTERS = ("cases started", "running", "completed", OTHERWISE, "SLA breached")


class Board(NamedTuple):
    """One instant of a run: ``at`` (virtual microseconds) and its ``clock`` text, the case
    ``counters`` (:data:`CASE_COUNTERS`, plus ``warm-up cases`` when the scenario has a
    warm-up), one row per pool (``pool``, ``size``, ``busy``, ``waiting``, ``open``: its
    calendar is open now), and ``heat``: element id -> tokens standing there, elements with
    none left out, in definition order."""

    at: int
    clock: str
    counters: dict[str, int]
    pools: list[dict[str, Any]]
    heat: dict[str, int]

    @property
    def tokens(self) -> int:
        """The tokens on the heat map."""
        return sum(self.heat.values())


class Running(Protocol):
    """What a board reads of a run (``driver.Driver``): its scenario, cases by instance id,
    pools by name, the engine it drives and the process deployed."""

    @property
    def sc(self) -> Plan: ...

    @property
    def cases(self) -> Mapping[str, Any]: ...

    @property
    def pools(self) -> Mapping[str, Any]: ...

    @property
    def eng(self) -> Any: ...

    @property
    def process(self) -> Any: ...


#: Where the package root registers the widgets' module (``gobpm_nb.ui.population``,
#: imported on first use: the population layer never imports the widgets).
_DASHBOARDS: list[Callable[[], Any]] = []


def register_dashboards(load: Callable[[], Any]) -> None:
    """Say where population dashboards come from (the package root does)."""
    _DASHBOARDS[:] = [load]


def dashboards() -> Any:
    """The population dashboards' module: ``PopulationDashboard(scenario, board)`` and
    ``shown(scenario, dashboard, board)``."""
    if not _DASHBOARDS:
        raise EngineError("no population dashboard is registered (import gobpm_nb first)")
    return _DASHBOARDS[0]()


def clock_text(at: int) -> str:
    """A virtual instant as the dashboard writes it: ``Mon 2026-01-05 10:30``."""
    return f"{to_datetime(at):%a %Y-%m-%d %H:%M}"


def empty_board(sc: Plan) -> Board:
    """What a dashboard of scenario ``sc`` shows before a run: its start, no case, idle
    pools."""
    counters = {k: 0 for k in CASE_COUNTERS if k != OTHERWISE}
    if sc.warmup:
        counters["warm-up cases"] = 0
    pools = [{"pool": name, "size": spec.size, "busy": 0, "waiting": 0,
              "open": spec.calendar.next_open(sc.start) == sc.start}
             for name, spec in sorted(sc.pools.items())]
    return Board(sc.start, clock_text(sc.start), counters, pools, {})


def board_of(d: Running, at: int) -> Board:
    """The run of driver ``d`` as it stands at virtual time ``at`` (between two steps)."""
    return Board(at, clock_text(at), _counters(d, at), _pools(d, at), _heat(d))


def _counters(d: Running, at: int) -> dict[str, int]:
    sla = d.sc.sla
    started = running = completed = breached = warm = 0
    for case in d.cases.values():
        if case.warm:
            warm += 1
            continue
        started += 1
        if case.end is None:
            running += 1
        elif case.state == "completed":
            completed += 1
        if sla is not None and (case.end if case.end is not None else at) - case.arrival > sla:
            breached += 1
    out = dict(zip(CASE_COUNTERS, (started, running, completed,
                                   started - running - completed, breached), strict=True))
    if not out[OTHERWISE]:
        del out[OTHERWISE]
    if d.sc.warmup:
        out["warm-up cases"] = warm
    return out


def _pools(d: Running, at: int) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(d.sc.pools):
        pool = d.pools[name]
        cal = pool.spec.calendar
        rows.append({"pool": name, "size": pool.spec.size, "busy": pool.busy,
                     "waiting": pool.waiting, "open": cal.next_open(at) == at})
    return rows


def _heat(d: Running) -> dict[str, int]:
    """Tokens per element: the tracks standing on a node in each case still running."""
    counts: dict[str, int] = {}
    eng = d.eng
    for case in d.cases.values():
        if case.end is not None:
            continue
        views = eng.instance_tracks(case.id)
        live = standing(views)
        for v in views:
            if v.id in live:
                counts[v.node] = counts.get(v.node, 0) + 1
    order = d.process.definition().nodes
    return {n: counts[n] for n in order if n in counts} | \
        {n: counts[n] for n in sorted(counts) if n not in order}
