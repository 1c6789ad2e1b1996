"""Simulated cases per second of wall time of a population run (``Scenario.run``) on a
two-task model: Poisson arrivals every 10 minutes, two clerks check (exponential, 8 min),
two packers ship (exponential, 8 min), 24/7. The figure the issue compares with Prosimos'
(benchmarks/vs_prosimos.py runs both on one model); the self-check is that every case
ended and the clerks' utilisation is near its 0.4.

    python benchmarks/population_speed.py [--days 14] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics

from common import fail, timed, write_json  # benchmarks/common.py, beside this script

import gobpm_nb as bpm


def two_tasks() -> bpm.Process:
    p = bpm.Process("order")
    p.start("s")
    p.user_task("check")
    p.user_task("ship")
    p.end("e")
    p.flow("s", "check", "ship", "e")
    return p


def scenario(days: int) -> bpm.Scenario:
    return bpm.Scenario(two_tasks(), horizon=f"P{days}D", seed=1,
                        arrivals={"poisson": {"mean": "PT10M"}},
                        durations={"check": {"exponential": {"mean": "PT8M"}},
                                   "ship": {"exponential": {"mean": "PT8M"}}},
                        pools={"clerks": {"size": 2}, "packers": {"size": 2}},
                        assign={"check": "clerks", "ship": "packers"})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    sc = scenario(args.days)
    rates = []
    for _ in range(args.rounds):
        wall, _, pop = timed(lambda: sc.run(progress=False))
        cases = pop.cases()
        if not cases["ended"].all():
            fail(f"{(~cases['ended']).sum()} cases did not end")
        util = pop.pools().loc["clerks", "utilisation"]
        if not 0.3 < util < 0.5:
            fail(f"the clerks' utilisation is {util:.2f}, expected about 0.4")
        rates.append(len(cases) / wall)
    rate = statistics.median(rates)
    print(f"cases={len(cases)} rounds={args.rounds}")
    print(f"cases_per_second={rate:.0f}")
    if args.json:
        write_json(args.json, {"cases": len(cases), "cases_per_second": rate})


if __name__ == "__main__":
    main()
