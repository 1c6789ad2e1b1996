"""Many items: how the time to run a multi-instance activity to its end grows with its items.

One instance of a process with a parallel multi-instance activity over ``xs`` — a user task
with an output collection (``task``), or a subprocess holding a user task (``subprocess``) —
on the default engine (dehydration on, memory store): start it and run it until every item
waits on its task (the instance dehydrates), then complete every task and run it to its end
(one wake). For each size it prints the items, the CPU seconds of this process (wall
seconds beside them: on a shared machine they also count other work) and the CPU
milliseconds per item; the last lines are the per-item time at the largest size over the
smallest. Linear growth keeps
that near 1; a cost that grows with the items already there makes it grow with the size
(before each completion stopped looking through every track and hold of the instance:
2.7 for 4,000 items over 1,000, 10.7 CPU seconds at 4,000 where it now takes 1).

It checks that every instance completed with no hold or task left, and exits non-zero if
not; it never asserts on timing.

Each shape first runs once at the smallest size, not shown: without it the first figure
of a shape depends on what ran before it (a first run pays once for what later runs reuse),
and the ratio measured that, not growth.

A task completed with ``run()`` after each one wakes the instance and lets it dehydrate
again each time, and a dehydration writes the whole checkpoint (every live item): that is
linear per completion by design (an instance dehydrates whole), so it is not measured here.

    python benchmarks/many_growth.py                    # 1,000 / 2,000 / 4,000 items
    python benchmarks/many_growth.py --sizes 100,200 --shapes task
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gobpm_nb as bpm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fail, timed, write_json  # noqa: E402


def process(shape: str) -> bpm.Process:
    p = bpm.Process(f"many-{shape}")
    p.start("s")
    if shape == "subprocess":
        with p.subprocess("each") as sp:
            sp.flow(sp.start("a"), sp.user_task("review"), sp.end("z"))
        p.multi_instance("each", collection="xs", element="x")
    else:
        p.user_task("each")
        p.multi_instance("each", collection="xs", element="x", output_collection="ys",
                         output_element="y")
    p.end("e")
    p.flow("s", "each", "e")
    return p


def measure(shape: str, n: int) -> tuple[float, float]:
    """Wall and CPU seconds to start, dehydrate, complete every item and end one instance of
    ``n`` items."""
    eng = bpm.Engine()
    p = process(shape)

    def work() -> bpm.Instance:
        inst = eng.start(p, {"xs": list(range(n))})
        eng.run()
        for task in eng.tasks():
            eng.complete_task(task.id, {"y": 1})
        eng.run()
        return inst

    wall, cpu, inst = timed(work)
    if inst.state != "completed" or eng.holders() or eng.tasks():
        fail(f"{shape} over {n} items: {inst.state}, {len(eng.holders())} holds and "
             f"{len(eng.tasks())} tasks left")
    if shape == "task" and inst.data["ys"] != [1] * n:
        fail(f"{shape} over {n} items: the output collection is wrong")
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sizes", default="1000,2000,4000", help="item counts, comma-separated")
    ap.add_argument("--shapes", default="task,subprocess", help="task, subprocess")
    ap.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    figures: dict[str, list[dict[str, float]]] = {}
    print(f"{'shape':<11} {'items':>6} {'cpu s':>7} {'wall s':>7} {'ms/item':>8}")
    for shape in args.shapes.split(","):
        rows = figures[shape] = []
        measure(shape, sizes[0])  # a warm-up, not shown: the first run of a shape pays once
        for n in sizes:
            wall, cpu = measure(shape, n)
            rows.append({"items": n, "cpu": cpu, "wall": wall, "per_item": cpu / n})
            print(f"{shape:<11} {n:>6,} {cpu:7.2f} {wall:7.2f} {1000 * cpu / n:8.3f}")
    for shape, rows in figures.items():
        ratio = rows[-1]["per_item"] / rows[0]["per_item"]
        print(f"{shape}_per_item_ratio={ratio:.2f} ({rows[-1]['items']:,} over "
              f"{rows[0]['items']:,} items; linear is about 1)")
    print("all_completed=true")
    if args.json:
        write_json(args.json, {"sizes": sizes, "figures": figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
