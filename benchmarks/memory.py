"""Memory per parked instance: gobpm_nb (resident, MemoryStore, SQLiteStore) against SimPy.

The process is ``start -> timer_catch P1D -> end``; N instances (default 100,000) park on the
one-day timer. Each mode runs in its own fresh subprocess (``--mode X``), so its RSS holds only
that mode's state; the child prints one JSON line and the parent collects them.

gobpm_nb modes: ``resident`` is ``Engine(dehydrate=False)``, ``memory`` the default MemoryStore
(a dehydrated instance keeps its encoded checkpoint bytes in memory), ``sqlite`` a SQLiteStore
in a fresh temp file; all with ``keep_facts=1000``. One warm-up instance is started and parked
first (so code paths, caches and the store exist), then RSS (``/proc/self/statm`` resident
pages x page size) is read after ``gc.collect()``. N instances are started in batches of 1,000
with ``eng.run(until=eng.now)`` after each batch, so they park and release as they go, then
``eng.advance("PT1M")``, ``gc.collect()`` and RSS again: bytes/instance = growth / N. The
engine must then hold all N+1 instances dehydrated with zero coroutines (resident mode: all
resident). Wake+complete times ``eng.run()``: every timer fires at +1 day, each instance
hydrates from the store and completes; all N+1 must be completed and (dehydrating modes)
N+1 ``hydrated`` facts seen through ``eng.subscribe`` (the kept fact log is bounded).

SimPy: RSS after importing simpy and creating the Environment, then N processes each on
``env.timeout(86400)``, ``env.run(until=1)``, RSS again; wake+complete times ``env.run()``.

Problems make the script exit non-zero; it never asserts on timing or memory.

    python benchmarks/memory.py                          # N=100,000, all four modes
    python benchmarks/memory.py --n 20000 --modes sqlite,simpy --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODES = ("resident", "memory", "sqlite", "simpy")
BATCH = 1_000
TARGET = 0.35  # issue 13: a released instance on SQLite at most 0.35x SimPy's parked process


def rss() -> int:
    """Resident set size in bytes, after a full collection."""
    gc.collect()
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def measure_gobpm(mode: str, n: int, db_dir: str) -> dict[str, Any]:
    import gobpm_nb as bpm

    p = bpm.Process("park_one_day")
    p.start("start")
    p.timer_catch("wait", duration="P1D")
    p.end("end")
    p.flow("start", "wait", "end")
    process = p.validate()
    store = bpm.SQLiteStore(Path(db_dir) / "memory_bench.db") if mode == "sqlite" else None
    eng = bpm.Engine(store=store, dehydrate=mode != "resident", keep_facts=1000)
    parked = "resident" if mode == "resident" else "dehydrated"
    problems = []

    eng.start(process)  # warm-up instance
    eng.run(until=eng.now)
    before = rss()
    t0 = time.perf_counter()
    for first in range(0, n, BATCH):
        for _ in range(min(BATCH, n - first)):
            eng.start(process)
        eng.run(until=eng.now)
    eng.advance("PT1M")
    park_s = time.perf_counter() - t0
    after = rss()

    stats = eng.stats()
    if stats["instances"][parked] != n + 1:
        problems.append(f"{mode}: {stats['instances']} after parking, expected {n + 1} {parked}")
    if parked == "dehydrated" and stats["coroutines"]:
        problems.append(f"{mode}: {stats['coroutines']} live coroutines after dehydration")

    hydrated = [0]

    def count(fact: Any) -> None:
        hydrated[0] += fact.kind == "hydrated"

    eng.subscribe(count)
    t0 = time.perf_counter()
    eng.run()
    wake_s = time.perf_counter() - t0

    stats = eng.stats()
    completed = sum(1 for i in eng.instances() if i.state == "completed")
    if stats["instances"]["finished"] != n + 1 or completed != n + 1:
        problems.append(f"{mode}: {stats['instances']}, {completed} completed, "
                        f"expected {n + 1} completed")
    want_hydrated = 0 if mode == "resident" else n + 1
    if hydrated[0] != want_hydrated:
        problems.append(f"{mode}: {hydrated[0]} hydrated facts, expected {want_hydrated}")
    if store is not None:
        store.close()
    return {"rss_before": before, "rss_after": after, "park_s": park_s, "wake_s": wake_s,
            "completed": completed - 1, "hydrated": hydrated[0], "problems": problems}


def measure_simpy(n: int) -> dict[str, Any]:
    import simpy

    env = simpy.Environment()
    done = [0]

    def proc(env: simpy.Environment):
        yield env.timeout(86400)
        done[0] += 1

    before = rss()
    t0 = time.perf_counter()
    for _ in range(n):
        env.process(proc(env))
    env.run(until=1)
    park_s = time.perf_counter() - t0
    after = rss()
    t0 = time.perf_counter()
    env.run()
    wake_s = time.perf_counter() - t0
    problems = [] if done[0] == n else [f"simpy: {done[0]} processes finished, expected {n}"]
    return {"rss_before": before, "rss_after": after, "park_s": park_s, "wake_s": wake_s,
            "completed": done[0], "problems": problems, "version": simpy.__version__}


def child(mode: str, n: int) -> int:
    if mode == "simpy":
        result = measure_simpy(n)
    else:
        with tempfile.TemporaryDirectory() as db_dir:
            result = measure_gobpm(mode, n, db_dir)
    result["bytes_per_instance"] = (result["rss_after"] - result["rss_before"]) / n
    print(json.dumps({"mode": mode, "n": n, **result}))
    return 0


def run_child(mode: str, n: int) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--mode", mode, "--n", str(n)],
                          capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"mode": mode, "n": n, "completed": 0, "bytes_per_instance": None,
                "problems": [f"{mode}: child exited {proc.returncode}: {proc.stderr.strip()}"]}
    return json.loads(lines[-1])


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=100_000, help="instances / processes (100000)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of "
                    + ",".join(MODES))
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    ap.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # child process
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be >= 1")
    if args.mode:
        return child(args.mode, args.n)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes must be a subset of {','.join(MODES)}")

    results = {m: run_child(m, args.n) for m in modes}
    simpy_bytes = results.get("simpy", {}).get("bytes_per_instance")
    rows = [("mode", "bytes/inst", "vs simpy", "park s", "wake+complete s", "completed")]
    for m, r in results.items():
        b = r.get("bytes_per_instance")
        ratio = b / simpy_bytes if b is not None and simpy_bytes else None
        r["ratio_to_simpy"] = ratio
        rows.append((m, fmt(b, ",.0f"), fmt(ratio, ".2f"), fmt(r.get("park_s"), ".3f"),
                     fmt(r.get("wake_s"), ".3f"), f"{r['completed']:,}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"memory per parked instance, N={args.n:,} on a P1D timer "
          f"(RSS growth / N; gobpm after 1 warm-up instance)")
    for row in rows:
        print("  ".join([row[0].ljust(widths[0])]
                        + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]))
    problems = [p for r in results.values() for p in r["problems"]]
    for p in problems:
        print(f"VERIFY FAILED: {p}", file=sys.stderr)
    all_completed = not problems and all(r["completed"] == args.n for r in results.values())
    sqlite_ratio = results.get("sqlite", {}).get("ratio_to_simpy")
    shown = "n/a" if sqlite_ratio is None else f"{sqlite_ratio:.2f}"  # needs both modes
    print(f"sqlite_vs_simpy={shown} target<={TARGET:.2f}")
    print(f"all_completed={str(all_completed).lower()}")
    if args.json:
        from common import write_json  # the parent only: a simpy child stays clean

        doc = {"n": args.n, "batch": BATCH, "modes": results, "sqlite_vs_simpy": sqlite_ratio,
               "target": TARGET, "all_completed": all_completed}
        write_json(args.json, doc)
    return 0 if all_completed else 1


if __name__ == "__main__":
    sys.exit(main())
