"""Timer throughput: gobpm_nb's engine timer path against SimPy timeouts, in one run.

gobpm_nb: a process ``start -> ten timer_catch nodes -> end`` (durations PT1M..PT50M, varied
per node; all below ``min_dehydrate_wait`` so every instance stays resident), N instances
started with ``eng.start``; only ``eng.run()`` is timed (start-up is reported on its own line).
The engine is the default ``Engine()``: facts on, ``keep_facts`` at its default, so every fact
is still emitted.

SimPy: N processes, each yielding ten ``env.timeout(...)`` of the same durations (in minutes);
only ``env.run()`` is timed.

Throughput is timer firings (engine) and timeouts (SimPy) per wall-clock second. Both sides
run ``--rounds`` times (3), alternating which goes first, each after ``gc.collect()``; the
ratio of each round is printed, and the table and ``ratio=`` are the median round's (one run
of each on a shared machine moves the ratio by a tenth either way). The script
checks that both sides did all the work (every instance finished, the expected facts were
emitted, the clocks ended where they must) and exits non-zero if not; it never asserts on
timing.

    python benchmarks/timer_throughput.py                 # N=100,000
    python benchmarks/timer_throughput.py --n 20000 --rounds 5 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections import Counter
from datetime import timedelta
from typing import Any

from common import fail, timed, write_json  # benchmarks/common.py, beside this script

import gobpm_nb as bpm

#: Minutes of the ten timers, in node order: varied, all below one hour.
DURATIONS_MIN = (7, 23, 1, 41, 15, 50, 3, 32, 11, 28)
TARGET = 0.30
KEEP_FACTS_DEFAULT = 100_000  # Engine(keep_facts=...) default


def build_process() -> bpm.Process:
    """start -> timer t0 -> ... -> timer t9 -> end."""
    p = bpm.Process("timer_bench")
    p.start("start")
    timers = [p.timer_catch(f"wait{i}", duration=f"PT{m}M")
              for i, m in enumerate(DURATIONS_MIN)]
    p.end("end")
    p.flow("start", *timers, "end")
    return p.validate()


def facts_per_instance(process: bpm.Process, sample: int = 3) -> tuple[int, Counter[str]]:
    """Run ``sample`` instances on a fresh engine that keeps every fact: facts per instance,
    by kind. The benchmark engine keeps only the newest facts, so this is what its total
    fact count is checked against."""
    eng = bpm.Engine(keep_facts=None)
    for _ in range(sample):
        eng.start(process)
    eng.run()
    kinds = Counter(f.kind for f in eng.facts)
    total = sum(kinds.values())
    if total % sample or any(v % sample for v in kinds.values()):
        fail(f"{sample} identical instances emitted uneven facts: {dict(kinds)}")
    return total // sample, Counter({k: v // sample for k, v in kinds.items()})


def bench_engine(n: int, process: bpm.Process) -> dict[str, Any]:
    per_instance, kinds = facts_per_instance(process)
    if kinds["timer_fired"] != len(DURATIONS_MIN):
        fail(f"one instance fired {kinds['timer_fired']} timers, "
             f"expected {len(DURATIONS_MIN)}")

    eng = bpm.Engine()  # defaults: facts on, keep_facts=100_000, min_dehydrate_wait=PT1H
    begin = eng.now

    def start_all() -> None:
        start = eng.start
        for _ in range(n):
            start(process)

    setup_s, _, _ = timed(start_all)
    run_s, run_cpu_s, events = timed(eng.run)

    stats = eng.stats()
    firings = n * len(DURATIONS_MIN)
    if stats["instances"]["finished"] != n:
        fail(f"engine finished {stats['instances']} instances, expected {n} finished")
    if stats["coroutines"] or any(stats["holds"].values()) or stats["pending_events"]:
        fail(f"engine not idle after run(): {stats}")
    if stats["facts"] != n * per_instance:
        fail(f"engine emitted {stats['facts']} facts, expected {n} x {per_instance}")
    if eng.now - begin != timedelta(minutes=sum(DURATIONS_MIN)):
        fail(f"engine clock ended at {eng.now}, expected start + {sum(DURATIONS_MIN)} min")
    # The log keeps only the newest keep_facts facts (all instance completions here, as
    # every instance finishes at the same virtual instant), so timer_fired facts are checked
    # through the total: n x (facts of one instance, 10 of them timer_fired).
    retained = len(eng.facts)
    if retained != min(stats["facts"], KEEP_FACTS_DEFAULT):
        fail(f"fact log retained {retained} facts, expected min(total, {KEEP_FACTS_DEFAULT})")
    return {
        "setup_s": setup_s,
        "run_s": run_s,
        "run_cpu_s": run_cpu_s,
        "firings": firings,
        "firings_per_s": firings / run_s,
        "kernel_events": events,
        "facts": stats["facts"],
        "facts_per_instance": per_instance,
        "facts_per_s": stats["facts"] / run_s,
        "timer_fired_per_instance": kinds["timer_fired"],
        "facts_retained": retained,
        "timer_fired": n * kinds["timer_fired"],
    }


def bench_simpy(n: int) -> dict[str, Any]:
    import simpy

    env = simpy.Environment()
    done = [0]

    def proc(env: simpy.Environment):
        timeout = env.timeout
        for m in DURATIONS_MIN:
            yield timeout(m)
        done[0] += 1

    def start_all() -> None:
        process = env.process
        for _ in range(n):
            process(proc(env))

    setup_s, _, _ = timed(start_all)
    run_s, run_cpu_s, _ = timed(env.run)
    if done[0] != n:
        fail(f"simpy finished {done[0]} processes, expected {n}")
    if env.now != sum(DURATIONS_MIN):
        fail(f"simpy clock ended at {env.now}, expected {sum(DURATIONS_MIN)}")
    timeouts = n * len(DURATIONS_MIN)
    return {"setup_s": setup_s, "run_s": run_s, "run_cpu_s": run_cpu_s, "timeouts": timeouts,
            "timeouts_per_s": timeouts / run_s, "version": simpy.__version__}


def table(n: int, e: dict[str, Any], s: dict[str, Any], ratio: float) -> str:
    rows = [
        ("", "gobpm_nb", "simpy"),
        ("timers fired", f"{e['firings']:,}", f"{s['timeouts']:,}"),
        ("start-up s", f"{e['setup_s']:.3f}", f"{s['setup_s']:.3f}"),
        ("run wall s", f"{e['run_s']:.3f}", f"{s['run_s']:.3f}"),
        ("run cpu s", f"{e['run_cpu_s']:.3f}", f"{s['run_cpu_s']:.3f}"),
        ("firings/s", f"{e['firings_per_s']:,.0f}", f"{s['timeouts_per_s']:,.0f}"),
        ("kernel events", f"{e['kernel_events']:,}", "-"),
        ("facts emitted", f"{e['facts']:,}", "-"),
        ("facts/s", f"{e['facts_per_s']:,.0f}", "-"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    lines = [f"timer throughput, N={n:,} instances x {len(DURATIONS_MIN)} timers "
             f"(PT{min(DURATIONS_MIN)}M..PT{max(DURATIONS_MIN)}M)"]
    lines += [f"{a:<{w0}}  {b:>{w1}}  {c:>{w2}}" for a, b, c in rows]
    lines.append(f"engine/simpy throughput ratio: {ratio:.2f}")
    return "\n".join(lines)


def median_round(rounds: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The round whose ``key`` is the median (the lower middle one for an even count)."""
    ordered = sorted(rounds, key=lambda r: r[key])
    return ordered[(len(ordered) - 1) // 2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=100_000, help="instances / processes (100000)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds, each timing both sides (3); the median counts")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 1 or args.rounds < 1:
        ap.error("--n and --rounds must be >= 1")

    process = build_process()
    rounds: list[dict[str, Any]] = []
    for i in range(args.rounds):
        sides: dict[str, Any] = {}
        for side in (("engine", "simpy") if i % 2 == 0 else ("simpy", "engine")):
            gc.collect()  # the other side's garbage is gone before this one is timed
            sides[side] = bench_engine(args.n, process) if side == "engine" \
                else bench_simpy(args.n)
        sides["ratio"] = sides["engine"]["firings_per_s"] / sides["simpy"]["timeouts_per_s"]
        rounds.append(sides)
    mid = median_round(rounds, "ratio")
    ratio = mid["ratio"]
    print(table(args.n, mid["engine"], mid["simpy"], ratio))
    if args.rounds > 1:
        each = " ".join(f"{r['ratio']:.2f}" for r in rounds)
        print(f"ratio of each round (engine first, then SimPy first, ...): {each}; "
              f"the table is the median round's")
    print(f"ratio={ratio:.2f} target>={TARGET:.2f}")
    if args.json:
        doc = {"n": args.n, "durations_min": list(DURATIONS_MIN), "engine": mid["engine"],
               "simpy": mid["simpy"], "ratio": ratio, "target": TARGET,
               "rounds": [{"ratio": r["ratio"],
                           "firings_per_s": r["engine"]["firings_per_s"],
                           "timeouts_per_s": r["simpy"]["timeouts_per_s"]} for r in rounds]}
        write_json(args.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
