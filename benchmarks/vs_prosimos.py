"""Side by side with Prosimos: the same BPMN model and the same scenario, run here and there.

Two models (``benchmarks/data/``), each with one scenario written once, in this engine's JSON
form (``docs/scenario.md``); ``prosimos_json.to_prosimos`` writes it as Prosimos' simulation
parameters:

- ``order``: ``order_handling.bpmn``, check (clerks) -> exclusive gateway, 0.7 pack
  (warehouse) / 0.3 notify (clerks) -> end; Poisson arrivals every 30 minutes on average,
  day and night; two clerks Monday to Friday 09:00-17:00, one packer Monday to Saturday
  08:00-18:00 (work pauses when a calendar closes and resumes when it opens); a day of
  warm-up and four weeks of arrivals after it.
- ``mmc``: ``mmc.bpmn``, an M/M/3 queue (Poisson arrivals every 8 minutes, exponential
  service of 20 minutes, three servers always at work): its mean waiting time has a closed
  form (Erlang C, 28.1 minutes), printed beside both.

Each side runs ``--reps`` replications (10) in this process, seeds 1..n, the two sides
interleaved (seed 1 here then there, seed 2 there then here, ...: a shared machine whose speed
drifts during the run slows both sides alike, where one side's ten in a row could land in a
slow minute and the other's in a fast one):
here ``Scenario.run()`` (the real engine); there ``prosimos.simulation_engine.run_simulation``
on the converted files, with numpy's and ``random``'s global generators seeded (Prosimos
draws from them). Prosimos simulates a number of cases, not a span of time: it is given the
arrivals the span holds, plus a margin, and the cases arriving after the span are left out of
its KPIs (they are counted in its speed: it simulated them).

The KPIs are ``Population.summary()``'s here, and computed from Prosimos' log the same way
there (``kpis``): cases arriving in the warm-up, or (Prosimos' margin) after the horizon, are
left out. Mean cycle time (arrival to end); mean waiting per task (creation to start of
work); pool utilisation (the working time the pool's resources spent on tasks from the
warm-up's end to the run's end, over the time the pool's calendar was open in that window,
times its size). Each figure is the mean over the replications with its 95 % confidence
interval (Student's t over the replications' values). ``agree``: ``inside`` when one side's
mean lies inside the other's interval, ``overlap`` when only the two intervals overlap,
``NO`` when they are apart.

Speed: simulated cases per second of wall time, each side's cases over the wall time of its
replications, in the same run, and the ratio (target: this engine at least 3x Prosimos).
The script checks each side simulated every case it was given (every case ended), and exits
non-zero if not; it never asserts on timing or on agreement.

    python benchmarks/vs_prosimos.py                       # 10 replications of each model
    python benchmarks/vs_prosimos.py --reps 2 --horizon P7D --models mmc --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import isodate
from common import fail, write_json  # benchmarks/common.py, beside this script
from prosimos_json import ProsimosInput, to_prosimos  # beside this script too

DATA = Path(__file__).resolve().parent / "data"
TARGET = 3.0
#: Prosimos simulates a number of cases: the expected arrivals times this, plus MARGIN_CASES,
#: so that its arrivals cover the span (the later ones are left out of its KPIs).
MARGIN, MARGIN_CASES = 1.25, 20

OFFICE = {d: ["09:00-17:00"] for d in ("mon", "tue", "wed", "thu", "fri")}
SHOP = {d: ["08:00-18:00"] for d in ("mon", "tue", "wed", "thu", "fri", "sat")}
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "order": ("order_handling.bpmn", {
        "process": "order", "start": "2026-01-05T00:00:00", "warmup": "P1D",
        "horizon": "P28D", "seed": 1,
        "arrivals": {"poisson": {"mean": "PT30M"}},
        "durations": {"check": {"exponential": {"mean": "PT8M"}},
                      "pack": {"normal": {"mean": "PT10M", "sd": "PT2M"}},
                      "notify": {"fixed": "PT5M"}},
        "pools": {"clerks": {"size": 2, "calendar": "office", "cost_per_hour": 30},
                  "warehouse": {"size": 1, "calendar": "shop", "cost_per_hour": 25}},
        "calendars": {"office": OFFICE, "shop": SHOP},
        "assign": {"check": "clerks", "notify": "clerks", "pack": "warehouse"},
        "branches": {"gw": {"flow_a": 0.7, "flow_b": 0.3}},
    }),
    "mmc": ("mmc.bpmn", {
        "process": "mmc", "start": "2026-01-05T00:00:00", "warmup": "P1D",
        "horizon": "P28D", "seed": 1,
        "arrivals": {"poisson": {"mean": "PT8M"}},
        "durations": {"serve": {"exponential": {"mean": "PT20M"}}},
        "pools": {"servers": {"size": 3}},
        "assign": {"serve": "servers"},
    }),
}


@dataclass
class Record:
    """What one run did: each case's arrival and end, each task execution's case, task,
    pool, creation, start and completion; the cases simulated and the wall seconds."""

    cases: dict[Any, tuple[datetime, datetime | None]] = field(default_factory=dict)
    works: list[tuple[Any, str, str, datetime, datetime, datetime]] = field(
        default_factory=list)
    simulated: int = 0
    wall: float = 0.0


def seconds(text: str) -> float:
    return float(isodate.parse_duration(text).total_seconds())


def window(sc: dict[str, Any]) -> tuple[datetime, datetime]:
    """The span whose arrivals the KPIs count: the warm-up's end to the horizon's."""
    begin = datetime.fromisoformat(sc["start"]).replace(tzinfo=UTC)
    w0 = begin + timedelta(seconds=seconds(sc.get("warmup", "PT0S")))
    return w0, w0 + timedelta(seconds=seconds(sc.get("horizon", "P30D")))


def open_seconds(calendar: dict[str, list[str]] | None, a: datetime, b: datetime) -> float:
    """Seconds between ``a`` and ``b`` when the weekly ``calendar`` is open (None: always)."""
    if b <= a:
        return 0.0
    if calendar is None:
        return (b - a).total_seconds()
    days = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
    total, day = 0.0, a.replace(hour=0, minute=0, second=0, microsecond=0)
    while day < b:
        for text in calendar.get(days[day.weekday()], []):
            lo, hi = (t.strip() for t in text.split("-"))
            lo_at = day + timedelta(hours=int(lo[:2]), minutes=int(lo[3:]))
            hi_at = day + timedelta(hours=int(hi[:2]), minutes=int(hi[3:]))
            total += max(0.0, (min(hi_at, b) - max(lo_at, a)).total_seconds())
        day += timedelta(days=1)
    return total


def kpis(sc: dict[str, Any], rec: Record) -> dict[str, float]:
    """Prosimos' run measured as ``Population.summary()`` measures one here: mean cycle time
    and mean waiting per task (seconds) of the cases arriving in the span; each pool's
    utilisation from the warm-up's end to the last end of a case that arrived before the
    horizon's end (or that end, if later): the working time its resources spent on tasks in
    that window over the time its calendar was open in it, times its size."""
    w0, w1 = window(sc)
    counted = {c for c, (arrived, _) in rec.cases.items() if w0 <= arrived < w1}
    cycles = [(end - arrived).total_seconds() for c, (arrived, end) in rec.cases.items()
              if c in counted and end is not None]
    out = {"cycle time": sum(cycles) / len(cycles)}
    waits: dict[str, list[float]] = {}
    for case, task, _, enabled, started, _ in rec.works:
        if case in counted:
            waits.setdefault(task, []).append((started - enabled).total_seconds())
    for task in sorted(waits):
        out[f"waiting {task}"] = sum(waits[task]) / len(waits[task])
    inside = {c for c, (arrived, _) in rec.cases.items() if arrived < w1}  # the margin: out
    w2 = max([w1, *(end for c, (_, end) in rec.cases.items() if c in inside and end)])
    for name, pool in sorted(sc["pools"].items()):
        calendar = sc.get("calendars", {}).get(pool.get("calendar"))
        worked = sum(open_seconds(calendar, max(s, w0), min(e, w2))
                     for c, _, p, _, s, e in rec.works if p == name and c in inside)
        out[f"utilisation {name}"] = worked / (pool["size"] * open_seconds(calendar, w0, w2))
    return out


def run_prosimos(inp: ProsimosInput, folder: Path, seed: int) -> Record:
    """One Prosimos replication of the converted scenario (its files written to ``folder``)."""
    import numpy as np
    from prosimos.simulation_engine import run_simulation

    model, params = folder / "model.bpmn", folder / "parameters.json"
    model.write_bytes(inp.bpmn)
    params.write_text(json.dumps(inp.parameters))
    total = math.ceil(inp.cases * MARGIN) + MARGIN_CASES
    np.random.seed(seed)
    random.seed(seed)
    t0 = time.perf_counter()
    _, log = run_simulation(str(model), str(params), total, starting_at=inp.starting_at)
    rec = Record(simulated=total, wall=time.perf_counter() - t0)
    resources = log.sim_setup.resources_map
    for trace in log.trace_list:
        ended = trace.completed_at if trace.event_list else None
        rec.cases[trace.p_case] = (trace.started_at, ended)
        for ev in trace.event_list:
            rec.works.append((trace.p_case, ev.task_id,
                              resources[ev.resource_id].pool_info.pool_id,
                              ev.enabled_datetime, ev.started_datetime,
                              ev.completed_datetime))
    if len(rec.cases) != total or any(end is None for _, end in rec.cases.values()):
        fail(f"Prosimos ran {len(rec.cases)} cases of {total}, or left one without an end")
    return rec


def run_ours(sc: dict[str, Any], model_path: Path, seed: int) -> tuple[dict[str, float],
                                                                      int, float]:
    """One replication here, ``Scenario.run()`` on the real engine: its KPIs (from
    ``Population.summary()``, in seconds), the cases it simulated and its wall seconds."""
    import gobpm_nb as bpm
    import gobpm_nb.bpmn  # noqa: F401  # imported untimed, as Prosimos is (load_bpmn's first
    # call would import it: half a second, once, inside the first replication's time)

    t0 = time.perf_counter()
    pop = bpm.Scenario.load({**sc, "seed": seed},
                            model=bpm.load_bpmn(model_path)).run(progress=False)
    wall = time.perf_counter() - t0
    summary = pop.summary()
    out = {"cycle time": summary["cycle_time_h"] * 3600}
    for key, value in sorted(summary.items()):
        kind, _, name = key.partition(":")
        if kind == "waiting_h" and name:
            out[f"waiting {name}"] = value * 3600
        elif kind == "utilisation":
            out[f"utilisation {name}"] = value
    cases = pop.simulated  # every case it ran, warm-up included (summary counts the rest)
    if not pop.cases()["ended"].all():
        fail(f"gobpm_nb left a case of {sc['process']} without an end (seed {seed})")
    return out, cases, wall


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95 % confidence interval (Student's t; 0 for one value)."""
    from scipy.stats import t  # Prosimos brings scipy

    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)


def verdict(a: tuple[float, float], b: tuple[float, float]) -> str:
    """``inside`` (one mean inside the other's interval), ``overlap`` (the intervals
    overlap, neither mean inside the other's), or ``NO``."""
    (ma, ha), (mb, hb) = a, b
    if abs(ma - mb) <= max(ha, hb):
        return "inside"
    return "overlap" if abs(ma - mb) <= ha + hb else "NO"


def shown(name: str, value: float, half: float) -> str:
    if name.startswith("utilisation"):
        return f"{value:7.3f} ± {half:5.3f}"
    return f"{value / 60:8.1f} ± {half / 60:6.1f}"


def erlang_c_wait(sc: dict[str, Any]) -> float:
    """The M/M/c mean waiting time in seconds (Erlang C) of a one-task Poisson scenario."""
    lam = 1 / seconds(sc["arrivals"]["poisson"]["mean"])
    (task, dist), = sc["durations"].items()
    mu = 1 / seconds(dist["exponential"]["mean"])
    c = sc["pools"][sc["assign"][task]]["size"]
    a = lam / mu
    top = a ** c / math.factorial(c) / (1 - a / c)
    waiting = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    return waiting / (c * mu - lam)


Run = tuple[dict[str, float], int, float]  # one replication's KPIs, cases simulated, wall s


def compare(name: str, reps: int, horizon: str | None, ours: bool) -> dict[str, Any]:
    """Both sides' replications of one scenario; prints its table and returns its figures."""
    file, sc = SCENARIOS[name]
    sc = {**sc, **({"horizon": horizon} if horizon else {})}
    inp = to_prosimos(sc, DATA / file)
    sides: dict[str, list[Run]] = {"prosimos": [], **({"gobpm_nb": []} if ours else {})}
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(1, reps + 1):  # interleaved, each side first in turn
            for side in sorted(sides, reverse=seed % 2 == 0):
                if side == "prosimos":
                    rec = run_prosimos(inp, Path(folder), seed)
                    sides[side].append((kpis(sc, rec), rec.simulated, rec.wall))
                else:
                    sides[side].append(run_ours(sc, DATA / file, seed))
    figures = {side: summary(runs) for side, runs in sides.items()}
    print_table(name, sc, reps, figures)
    return figures


def summary(runs: list[Run]) -> dict[str, Any]:
    """Each KPI's mean and 95 % half-width over the replications; cases per wall second."""
    names = sorted({k for kpi, _, _ in runs for k in kpi},
                   key=lambda k: (k.split()[0] != "cycle", k))
    cases, wall = sum(r[1] for r in runs), sum(r[2] for r in runs)
    return {"kpis": {k: interval([kpi[k] for kpi, _, _ in runs if k in kpi]) for k in names},
            "cases": cases, "wall_s": wall, "cases_per_s": cases / wall}


def print_table(name: str, sc: dict[str, Any], reps: int,
                figures: dict[str, dict[str, Any]]) -> None:
    sides = list(figures)
    print(f"\n== {name}: {reps} replications each; times in minutes, mean ± 95 % CI half-width; "
          "agree: inside = one mean in the other's CI, overlap = the CIs overlap")
    print(f"{'KPI':22s}" + "".join(f"{s:>22s}" for s in sides) +
          ("   agree" if len(sides) == 2 else ""))
    for kpi in figures[sides[0]]["kpis"]:
        cells = [figures[s]["kpis"].get(kpi) for s in sides]
        row = f"{kpi:22s}" + "".join(f"{shown(kpi, *c):>22s}" if c else f"{'-':>22s}"
                                     for c in cells)
        if len(sides) == 2 and all(cells):
            row += f"   {verdict(cells[0], cells[1])}"  # type: ignore[arg-type]
        print(row)
    if name == "mmc":
        print(f"{'closed form (Erlang C)':22s}  waiting {erlang_c_wait(sc) / 60:.1f}")
    for s in sides:
        f = figures[s]
        print(f"speed {s}: {f['cases']} cases in {f['wall_s']:.2f} s = "
              f"{f['cases_per_s']:.0f} cases/s")
    if len(sides) == 2:
        ratio = figures[sides[1]]["cases_per_s"] / figures[sides[0]]["cases_per_s"]
        print(f"ratio={ratio:.2f} target>={TARGET:.2f}")


def main(argv: Iterable[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--horizon", help="ISO 8601 duration replacing each scenario's horizon")
    ap.add_argument("--models", default="order,mmc")
    ap.add_argument("--prosimos-only", action="store_true",
                    help="run Prosimos' side only")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(None if argv is None else list(argv))
    import gobpm_nb as bpm

    ours = not args.prosimos_only and hasattr(bpm, "Scenario")
    if not args.prosimos_only and not ours:
        print("gobpm_nb: this build has no Scenario (the population run): Prosimos' side only")
    doc = {}
    for name in args.models.split(","):
        if name not in SCENARIOS:
            fail(f"no model {name!r}: {', '.join(SCENARIOS)}")
        doc[name] = compare(name, args.reps, args.horizon, ours)
    if args.json:
        write_json(args.json, {"reps": args.reps, "models": doc})


if __name__ == "__main__":
    sys.exit(main())
