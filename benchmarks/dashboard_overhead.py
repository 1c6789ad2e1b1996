"""Dashboard overhead: the same 100,000-event run with and without a live dashboard attached.

Workload: N instances (default 10,000) of ``start -> ten timer_catch nodes -> end`` (durations
PT1M..PT50M, all below ``min_dehydrate_wait``, so every instance stays resident): N x 10 =
100,000 timer firings. Only ``eng.run()`` is timed (plus, with a dashboard, the final
``refresh()`` that makes its view exact); starting the instances is not.

With a dashboard: ``eng.dashboard()`` is attached before the instances start and stays
subscribed to every fact. No front end is connected, but the widget builds and "sends" its
traits exactly as in a notebook (the comm is a dummy one); the script counts the update
messages it would have sent and checks that the final traits equal a fresh projection.

The two cases run alternately, ``--rounds`` times each, in this one process; the medians are
compared. The script exits non-zero if the work was not all done or the final view was not
exact; it never asserts on timing.

    python benchmarks/dashboard_overhead.py              # N=10,000 (100,000 timer events)
    python benchmarks/dashboard_overhead.py --n 2000 --rounds 1 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

from common import fail, write_json  # benchmarks/common.py, beside this script
from timer_throughput import DURATIONS_MIN, build_process  # the same workload

import gobpm_nb as bpm
from gobpm_nb.observe.projections import PathTracker, process_state
from gobpm_nb.render.dot import process_dot
from gobpm_nb.ui import dashboard_traits

TARGET = 0.80
TRAITS = ("clock", "counters", "tasks", "holds", "facts", "instances", "selected",
          "lineage_dot", "process_dot")


def process_nodes(process: bpm.Process) -> list[str]:
    return ["start", *(f"wait{i}" for i in range(len(DURATIONS_MIN))), "end"]


def count_updates(widget: Any) -> list[int]:
    """Count the update messages the widget hands to its comm."""
    sent = [0]
    comm = widget.comm
    original = comm.send

    def send(*args: Any, **kwargs: Any) -> Any:
        sent[0] += 1
        return original(*args, **kwargs)

    comm.send = send
    return sent


def one_run(n: int, process: bpm.Process, with_dashboard: bool) -> dict[str, Any]:
    eng = bpm.Engine()  # defaults: facts on, keep_facts=100_000
    board = eng.dashboard() if with_dashboard else None
    sent = count_updates(board) if board is not None else [0]
    start = eng.start
    for _ in range(n):
        start(process)
    before = sent[0]
    gc.collect()
    t0 = time.perf_counter()
    eng.run()
    if board is not None:
        board.refresh()
    wall = time.perf_counter() - t0
    stats = eng.stats()
    if stats["instances"]["finished"] != n or stats["coroutines"]:
        fail(f"not every instance finished: {stats}")
    result = {"wall_s": wall, "events": n * len(DURATIONS_MIN),
              "events_per_s": n * len(DURATIONS_MIN) / wall, "messages": sent[0] - before}
    if board is not None:
        fresh = dashboard_traits(eng, board.selected)
        # The fact log keeps only the newest 100,000 facts, so a fresh projection no longer
        # sees the selected instance's early node_left facts; the dashboard, subscribed
        # from the start, does. Every instance ran start -> ... -> end, so its path taken
        # is every node: check the process view against that.
        everything = PathTracker(board.selected)
        everything.left = everything.entered = set(process_nodes(process))
        fresh["process_dot"] = process_dot(process_state(eng, board.selected, everything))
        for name in TRAITS:
            if getattr(board, name) != fresh[name]:
                fail(f"dashboard trait {name!r} differs from a fresh projection after the run")
        if board.counters["finished"] != n:
            fail(f"dashboard shows {board.counters} after the run")
        board.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=10_000,
                    help="instances (10000: ten timers each, 100,000 events)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each case (5)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 1 or args.rounds < 1:
        ap.error("--n and --rounds must be >= 1")

    process = build_process()
    plain: list[dict[str, Any]] = []
    live: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        plain.append(one_run(args.n, process, with_dashboard=False))
        gc.collect()
        live.append(one_run(args.n, process, with_dashboard=True))
        gc.collect()

    base = statistics.median(r["events_per_s"] for r in plain)
    with_board = statistics.median(r["events_per_s"] for r in live)
    ratio = with_board / base
    messages = max(r["messages"] for r in live)
    walls = [r["wall_s"] for r in live]
    plain_runs = ", ".join(f"{r['wall_s']:.3f}" for r in plain)
    live_runs = ", ".join(f"{w:.3f}" for w in walls)
    print(f"dashboard overhead, N={args.n:,} instances x {len(DURATIONS_MIN)} timers = "
          f"{args.n * len(DURATIONS_MIN):,} events, {args.rounds} round(s), medians")
    print(f"without dashboard: {base:,.0f} events/s (runs: {plain_runs} s)")
    print(f"with dashboard:    {with_board:,.0f} events/s (runs: {live_runs} s)")
    print(f"update messages during a run (most): {messages} "
          f"(bound: wall/0.05 + 2 = {max(walls) / 0.05 + 2:.0f})")
    print(f"ratio={ratio:.2f} target>={TARGET:.2f}")
    if args.json:
        doc = {"n": args.n, "events": args.n * len(DURATIONS_MIN), "rounds": args.rounds,
               "without": plain, "with": live, "events_per_s_without": base,
               "events_per_s_with": with_board, "ratio": ratio, "target": TARGET}
        write_json(args.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
