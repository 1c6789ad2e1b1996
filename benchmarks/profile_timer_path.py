"""Profile the engine side of ``timer_throughput.py``: cProfile over ``eng.run()`` only.

Prints the top functions by own time (tottime) with their share of the profiled total.
cProfile inflates per-call overhead, so read the shares, not the absolute seconds.

    python benchmarks/profile_timer_path.py --n 20000 --top 15 [--out prof.pstats]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
from pathlib import Path

import gobpm_nb as bpm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timer_throughput import build_process  # noqa: E402


def show(prof: cProfile.Profile, top: int) -> None:
    """The top functions by own time, with their share of the profiled total."""
    st = pstats.Stats(prof)
    total = st.total_tt  # type: ignore[attr-defined]
    rows = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)  # type: ignore
    print(f"profiled total {total:.2f}s")
    print(f"{'own s':>7} {'own %':>6} {'cum s':>7} {'calls':>10}  function")
    for (file, line, name), (_cc, nc, tt, ct, _callers) in rows[:top]:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        print(f"{tt:7.2f} {100 * tt / total:5.1f}% {ct:7.2f} {nc:10,}  {name}  ({where})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--out", metavar="PATH", help="also dump the raw pstats here")
    args = ap.parse_args(argv)

    process = build_process()
    eng = bpm.Engine()
    for _ in range(args.n):
        eng.start(process)
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    eng.run()
    prof.disable()
    if eng.stats()["instances"]["finished"] != args.n:
        print(f"not every instance finished: {eng.stats()}", file=sys.stderr)
        return 1
    if args.out:
        prof.dump_stats(args.out)

    print(f"cProfile of eng.run(), N={args.n:,} instances x 10 timers")
    show(prof, args.top)
    calls = pstats.Stats(prof).total_calls  # type: ignore[attr-defined]
    print(f"calls per firing (builtins included): {calls / (args.n * 10):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
