"""Profile the dehydration path and the wake path on SQLite: cProfile over each phase alone.

The process is ``start -> timer_catch P1D -> end``. Phase "dehydration": ``eng.start_many`` of
N (one transaction for the first checkpoints) and ``eng.run(until=now)`` (each instance runs
to its timer, is checkpointed and dehydrates; the run's checkpoints committed together).
Phase "wake": ``eng.run()`` (each timer fires, the instance hydrates from the store and
completes). Prints the top functions of each phase by own time; read the shares, not the
absolute seconds (cProfile inflates per-call overhead).

    python benchmarks/profile_residency.py --n 20000 --top 15
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import sys
import tempfile
from pathlib import Path

import gobpm_nb as bpm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_timer_path import show  # noqa: E402


def one_timer() -> bpm.Process:
    p = bpm.Process("one_timer")
    p.start("s")
    p.timer_catch("wait", duration="P1D")
    p.end("e")
    p.flow("s", "wait", "e")
    return p.validate()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = bpm.SQLiteStore(Path(tmp) / "profile.db")
        eng = bpm.Engine(store=store, keep_facts=1000)
        process = one_timer()
        gc.collect()
        dehydration = cProfile.Profile()
        dehydration.enable()
        eng.start_many(process, [None] * args.n)
        eng.run(until=eng.now)
        dehydration.disable()
        if eng.stats()["instances"]["dehydrated"] != args.n:
            print(f"not every instance dehydrated: {eng.stats()}", file=sys.stderr)
            return 1
        gc.collect()
        wake = cProfile.Profile()
        wake.enable()
        eng.run()
        wake.disable()
        if eng.stats()["instances"]["finished"] != args.n:
            print(f"not every instance finished: {eng.stats()}", file=sys.stderr)
            return 1
        store.close()
    print(f"dehydration path (start to dehydrated on SQLite), N={args.n:,}")
    show(dehydration, args.top)
    print(f"\nwake path (timer fires, hydrate from SQLite, complete), N={args.n:,}")
    show(wake, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
