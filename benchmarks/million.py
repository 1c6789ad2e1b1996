"""A million instances dehydrated on SQLite on a one-day timer, all woken and completed.

The process is ``start -> timer_catch P1D -> end``. One engine, ``Engine(store=SQLiteStore(
path), keep_facts=1000)``: the kept fact log is bounded to the newest 1,000 facts (the
default keeps 100,000, which would be tens of MB of RSS that is not per-instance state);
every fact still goes to ``eng.subscribe``, where the script counts them.

Phase 1, start + dehydrate: N instances started in batches of ``--batch`` (1,000) with
``eng.start_many`` (one transaction per batch), each batch followed by ``eng.run(until=
eng.now)``, so each instance runs to its timer, is checkpointed (the batch's checkpoints
committed together) and dehydrates before the next batch starts (the clock does not move:
every timer falls due at the same instant, a day later). Then: N dehydrated, no resident
instance, no coroutine, N timer holds, N checkpoints in the store, N ``dehydrated`` facts.

Phase 2, wake + complete: ``eng.advance("P1DT1M")``: every timer fires, every instance
hydrates from SQLite, completes, and its checkpoint is deleted. Then: N finished, no
coroutine, no hold, nothing scheduled, an empty store, N ``hydrated`` and N
``instance_completed`` facts seen through ``eng.subscribe`` (none lost, none twice).

Prints the wall time of each phase (and per instance), RSS after each phase
(``/proc/self/statm``), the largest RSS sampled at each progress point, and the peak RSS of
the process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), beside the 300 MB target. A
progress line (rewritten with ``\\r`` every 5 %) goes to stdout when it is a terminal or with
``--progress``. Problems make the script exit non-zero; it never asserts on timing or memory.

    python benchmarks/million.py                      # N=1,000,000 (minutes)
    python benchmarks/million.py --n 100000 --progress --json out.json
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import check_all_woken, fail, write_json  # benchmarks/common.py, beside this script

import gobpm_nb as bpm

TARGET_MB = 300
KEEP_FACTS = 1000
WATCHED = ("dehydrated", "hydrated", "instance_completed")
#: Figures are in MB of 10^6 bytes, the stricter reading of the target (MiB shown beside).
MB = 1_000_000
MIB = 1024 * 1024


def rss_now() -> int:
    """Current resident set size in bytes (/proc/self/statm)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_peak() -> int:
    """Peak resident set size of this process in bytes (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Progress:
    """A plain-text progress line, rewritten every 5 %; also samples RSS there."""

    def __init__(self, label: str, total: int, show: bool) -> None:
        self.label, self.total, self.show = label, total, show
        self.step = max(1, total // 20)
        self.next = self.step
        self.t0 = time.perf_counter()
        self.max_rss = 0

    def update(self, done: int) -> None:
        if done < self.next and done != self.total:
            return
        self.next = (done // self.step + 1) * self.step
        rss = rss_now()
        self.max_rss = max(self.max_rss, rss)
        if self.show:
            pct = 100 * done // self.total
            bar = "#" * (pct // 5) + "." * (20 - pct // 5)
            print(f"\r{self.label:<16} [{bar}] {pct:3d}%  {done:>11,}/{self.total:,}  "
                  f"{time.perf_counter() - self.t0:7.1f} s  rss {rss / MB:6.1f} MB",
                  end="", flush=True)

    def close(self) -> None:
        if self.show:
            print(flush=True)


def build_process() -> bpm.Process:
    p = bpm.Process("million_one_day")
    p.start("start")
    p.timer_catch("wait", duration="P1D")
    p.end("end")
    p.flow("start", "wait", "end")
    return p.validate()


def run(n: int, batch: int, db: Path, show: bool) -> dict[str, Any]:
    process = build_process()
    store = bpm.SQLiteStore(db)
    eng = bpm.Engine(store=store, keep_facts=KEEP_FACTS)
    seen: Counter[str] = Counter()
    progress: Progress | None = None

    def count(fact: Any) -> None:
        kind = fact.kind
        if kind in WATCHED:
            seen[kind] += 1
            if kind == "instance_completed" and progress is not None:
                progress.update(seen[kind])

    eng.subscribe(count)
    rss_start = rss_now()

    # Phase 1: start + dehydrate, in batches.
    bar = Progress("start+dehydrate", n, show)
    t0 = time.perf_counter()
    for first in range(0, n, batch):
        eng.start_many(process, [None] * min(batch, n - first))
        eng.run(until=eng.now)
        bar.update(min(first + batch, n))
    dehydrate_s = time.perf_counter() - t0
    bar.close()
    rss_dehydrated = rss_now()
    stats = eng.stats()
    if stats["instances"]["dehydrated"] != n or stats["instances"]["resident"]:
        fail(f"after start+dehydrate: {stats['instances']}, expected {n} dehydrated")
    if stats["coroutines"] or stats["holds"].get("timer") != n:
        fail(f"after start+dehydrate: {stats['coroutines']} coroutines, holds {stats['holds']}, "
             f"expected 0 and {n} timer holds")
    if seen["dehydrated"] != n or len(store) != n:
        fail(f"after start+dehydrate: {seen['dehydrated']} dehydrated facts, {len(store)} "
             f"checkpoints stored, expected {n} each")
    db_bytes = sum(f.stat().st_size for f in db.parent.glob(db.name + "*"))

    # Phase 2: wake + complete.
    progress = Progress("wake+complete", n, show)
    t0 = time.perf_counter()
    eng.advance("P1DT1M")
    wake_s = time.perf_counter() - t0
    progress.close()
    rss_woken = rss_now()
    check_all_woken(eng, store, seen, n, finished=n)
    store.close()
    # the JSON keys release_s, rss_released and db_bytes_released are kept from before the
    # word was "dehydrated": they are the figures of phase 1
    return {"release_s": dehydrate_s, "wake_s": wake_s, "rss_start": rss_start,
            "rss_released": rss_dehydrated, "rss_woken": rss_woken,
            "rss_sampled_max": max(bar.max_rss, progress.max_rss, rss_dehydrated, rss_woken),
            "rss_peak": rss_peak(), "db_bytes_released": db_bytes,
            "completed": seen["instance_completed"], "hydrated": seen["hydrated"],
            "dehydrated": seen["dehydrated"], "facts": stats["facts"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="instances (1000000)")
    ap.add_argument("--batch", type=int, default=1_000,
                    help="instances per start_many, each followed by eng.run(until=eng.now) "
                    "(1000)")
    ap.add_argument("--progress", action="store_true",
                    help="show the progress line even when stdout is not a terminal")
    ap.add_argument("--db", metavar="PATH",
                    help="the SQLite file (must not exist; default: a fresh temp dir)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 1 or args.batch < 1:
        ap.error("--n and --batch must be >= 1")
    show = args.progress or sys.stdout.isatty()
    if args.db:
        db = Path(args.db)
        if db.exists():
            ap.error(f"--db {db} exists; give a new path")
        r = run(args.n, args.batch, db, show)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            r = run(args.n, args.batch, Path(tmp) / "million.db", show)

    n = args.n
    print(f"{n:,} instances on SQLite, one P1D timer each, started in batches of "
          f"{args.batch:,}, keep_facts={KEEP_FACTS}")
    print(f"start+dehydrate  {r['release_s']:9.1f} s  "
          f"{r['release_s'] / n * 1e6:8.1f} us/instance"
          f"  rss after {r['rss_released'] / MB:7.1f} MB  "
          f"(store {r['db_bytes_released'] / MB:,.1f} MB on disk)")
    print(f"wake+complete    {r['wake_s']:9.1f} s  {r['wake_s'] / n * 1e6:8.1f} us/instance"
          f"  rss after {r['rss_woken'] / MB:7.1f} MB")
    print(f"rss at start {r['rss_start'] / MB:.1f} MB; largest sampled (statm) "
          f"{r['rss_sampled_max'] / MB:.1f} MB; "
          f"{(r['rss_released'] - r['rss_start']) / n:,.0f} bytes/dehydrated instance")
    print(f"completed={r['completed']:,} hydrated={r['hydrated']:,} lost={n - r['completed']}")
    print(f"peak_rss_mb={r['rss_peak'] / MB:.1f} ({r['rss_peak'] / MIB:.1f} MiB) "
          f"target<={TARGET_MB}")
    print("all_completed=true")  # every check passed, or the script exited already
    if args.json:
        doc = {"n": n, "batch": args.batch, "keep_facts": KEEP_FACTS, **r,
               "target_mb": TARGET_MB}
        write_json(args.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
