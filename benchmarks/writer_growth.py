"""How ``to_bpmn`` of a process built in Python grows with its size: a chain of N script
tasks (start -> t1 -> ... -> tN -> end), written once per size after one warm-up on a small
chain. Prints the curve, one line per size: tasks, seconds, microseconds per task. A linear
writer keeps the last column flat. Nothing is asserted about time; the script checks that
every written file holds every task and every flow.

    python benchmarks/writer_growth.py                 # 1,000, 2,000 and 5,000 tasks
    python benchmarks/writer_growth.py --sizes 200,400
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fail, timed  # noqa: E402

import gobpm_nb as bpm  # noqa: E402


def chain(n: int) -> bpm.Process:
    """start -> t1 -> ... -> tn -> end."""
    p = bpm.Process(f"chain{n}")
    p.start("start")
    ids = [p.script_task(f"t{i}") for i in range(1, n + 1)]
    p.end("end")
    p.flow("start", *ids, "end")
    return p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000",
                        help="comma-separated task counts (default 1000,2000,5000)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    chain(20).to_bpmn()  # warm-up: imports, the first layout
    print(f"{'tasks':>7}  {'seconds':>8}  {'us/task':>8}")
    for n in sizes:
        p = chain(n)
        wall, _, text = timed(p.to_bpmn)
        if text.count("<bpmn:scriptTask ") != n or text.count("<bpmn:sequenceFlow ") != n + 1:
            fail(f"the file of {n} tasks does not hold every task and flow")
        print(f"{n:>7,}  {wall:>8.3f}  {wall / n * 1e6:>8.1f}")


if __name__ == "__main__":
    main()
