"""Rewind: how long ``eng.rewind(n)`` takes in a 10,000- and a 100,000-fact history, beside a
plain replay of the whole history from its start, and what the history costs.

The history: batches of 20 instances of an order process (a parallel block with a short
timer, a script, a two-hour timer, a message catch, a user task under a non-interrupting
three-hour timer boundary), each batch followed by half an hour of virtual time, a message
to every other instance of the batch, ten task completions and an hour more, until the
engine has emitted the target number of facts. Most instances dehydrate and wake, so the
history is full of checkpoints written and read back.

For each size it prints: the live run (its time, its commands, the snapshots the engine
took on the way and what they cost), a plain replay of the whole history from its start
(no snapshot used or taken: what a rewind would cost without snapshots), rewinds to random
facts (the first one, then the median and the slowest of the rest; each is followed by
``replay()`` back to the end, not timed), and the history's memory per command and per
recorded callable outcome (tracemalloc). It checks that every rewind kept the facts before
its point and that every replay gave the whole log back, and exits non-zero if not; it never
asserts on timing.

    python benchmarks/rewind.py                      # 10,000 and 100,000 facts
    python benchmarks/rewind.py --sizes 5000 --points 10
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from typing import Any

import gobpm_nb as bpm
from gobpm_nb.travel import snapshots
from gobpm_nb.travel.rewind import Build


def order() -> bpm.Process:
    p = bpm.Process("order")
    p.start("s")
    p.parallel_gateway("fork")
    p.timer_catch("t1", duration="PT10M")
    p.script_task("calc", fn=lambda d: {"n": d.get("n", 0) + 1})
    p.timer_catch("t2", duration="PT2H")
    p.message_catch("paid", message="pay", key="k")
    p.user_task("check")
    p.timer_boundary("late", attached_to="check", duration="PT3H", interrupting=False)
    p.parallel_gateway("join")
    p.end("e")
    p.end("nudged")
    p.flow("s", "fork", "t1", "calc", "t2", "join", "e")
    p.flow("fork", "paid", "join")
    p.flow("fork", "check", "join")
    p.flow("late", "nudged")
    return p.validate()


def make_history(target: int) -> tuple[bpm.Engine, float]:
    """The engine after the scenario, and the wall time it took."""
    eng = bpm.Engine(keep_facts=None)
    p = order()
    n = 0
    t0 = time.perf_counter()
    while eng.stats()["facts"] < target:
        for _ in range(20):
            eng.start(p, {"k": n})
            n += 1
        eng.advance("PT30M")
        for i in range(n - 20, n, 2):
            eng.publish_message("pay", key=i)
        for task in eng.tasks()[:10]:
            eng.complete_task(task.id, {"ok": True})
        eng.advance("PT1H")
    return eng, time.perf_counter() - t0


def plain_replay(eng: bpm.Engine) -> tuple[float, int]:
    """Replay the whole history from its start, with no snapshot: (seconds, facts)."""
    saved = snapshots.SNAPSHOT_FACTS
    snapshots.SNAPSHOT_FACTS = 10**15
    try:
        hist = eng._state.history
        t0 = time.perf_counter()
        b = Build(eng._state, hist.snapshots[0], eng.keep_facts, type(eng)._on)
        b.forward(until=(len(hist.entries), 0))
        return time.perf_counter() - t0, b.engine.stats()["facts"]
    finally:
        snapshots.SNAPSHOT_FACTS = saved


def history_bytes(eng: bpm.Engine) -> tuple[float, float]:
    """Bytes per history entry and per recorded callable outcome, measured by building the
    same structures again under tracemalloc."""
    hist = eng._state.history
    entries = hist.entries
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    copy = entries.head(len(entries))
    copy.args = [a if type(a) is not str else "".join(a) for a in entries.args]  # fresh str
    per_entry = (tracemalloc.get_traced_memory()[0] - before) / max(1, len(entries))
    tape = eng._state.core.tape
    before = tracemalloc.get_traced_memory()[0]
    outcomes = [(site, ok, dict(v) if isinstance(v, dict) else
                 (v[0], dict(v[1]) if isinstance(v[1], dict) else v[1])
                 if isinstance(v, tuple) else v) for site, ok, v in tape.outcomes]
    per_outcome = (tracemalloc.get_traced_memory()[0] - before) / max(1, len(outcomes))
    tracemalloc.stop()
    del copy, outcomes
    return per_entry, per_outcome


def measure(target: int, points: int, rnd: random.Random) -> list[str]:
    original = snapshots.take
    spent: list[float] = []

    def take(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t0)

    snapshots.take = take
    try:
        eng, run_s = make_history(target)
    finally:
        snapshots.take = original
    facts = eng.stats()["facts"]
    full = [f.to_json() for f in eng.facts]
    hist = eng._state.history
    live_snaps = len(hist.snapshots)
    costs = [round(s.cost * 1000, 1) for s in hist.snapshots]
    plain_s, replayed = plain_replay(eng)
    problems = [] if replayed == facts else [f"plain replay gave {replayed} facts of {facts}"]
    times = []
    for k in range(points):
        n = rnd.randrange(facts + 1) if k else facts // 2
        t0 = time.perf_counter()
        r = eng.rewind(n)
        times.append(time.perf_counter() - t0)
        got = [f.to_json() for f in eng.facts]
        if got != full[:len(got)] or r.seq < n:
            problems.append(f"rewind({n}) kept other facts")
        eng.replay()
        if [f.to_json() for f in eng.facts] != full:
            problems.append(f"replay after rewind({n}) gave other facts")
    per_entry, per_outcome = history_bytes(eng)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    snap = snapshots.take(eng._state.core, facts, hist.place)
    snap_bytes = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    unfinished = sum(1 for i in eng.instances() if i.residency != "finished")
    del snap
    rest = times[1:] or times
    label = f"{target // 1000}k"
    lines = [
        f"history {label}: {facts:,} facts, {len(hist.entries):,} commands, "
        f"{len(eng._state.core.tape.outcomes):,} callable outcomes; live run {run_s:.2f} s",
        f"  snapshots taken live: {live_snaps - 1} (+ the start), at facts "
        f"{[s.seq for s in hist.snapshots]}, each copy in ms {costs}, {sum(spent):.3f} s in "
        f"all ({100 * sum(spent) / run_s:.1f}% of the run)",
        f"  plain replay of the whole history from its start: {plain_s:.3f} s",
        f"  rewind to a random fact (after each, replay() back to the end): first "
        f"{times[0] * 1000:.0f} ms, median {statistics.median(rest) * 1000:.0f} ms, "
        f"slowest {max(rest) * 1000:.0f} ms over {len(rest)}; snapshots now "
        f"{len(hist.snapshots)}",
        f"  history memory: {per_entry:.0f} bytes per command, {per_outcome:.0f} bytes per "
        f"callable outcome; a snapshot of the final state ({unfinished:,} unfinished "
        f"instances): {snap_bytes / 1e6:.2f} MB",
        f"rewind_{label}_first_ms={times[0] * 1000:.0f}",
        f"rewind_{label}_median_ms={statistics.median(rest) * 1000:.0f}",
        f"rewind_{label}_max_ms={max(rest) * 1000:.0f}",
        f"plain_replay_{label}_s={plain_s:.3f}",
        f"history_bytes_per_command_{label}={per_entry:.0f}",
    ]
    lines += [f"PROBLEM: {p}" for p in problems]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--points", type=int, default=20, help="rewinds per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    failed = False
    for size in args.sizes:
        for line in measure(size, args.points, rnd):
            print(line, flush=True)
            failed |= line.startswith("PROBLEM")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
