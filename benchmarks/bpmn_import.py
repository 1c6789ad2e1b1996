"""Import time of each MIWG reference model: ``load_bpmn`` on the file's bytes (parse, XSD
validation, reading every process, building and validating each), the median of several runs
after one warm-up (which also loads the schema once). Also the time of ``to_bpmn`` on the
largest. Nothing is asserted: it prints one line per model.

    python benchmarks/bpmn_import.py            # 21 runs per model
    python benchmarks/bpmn_import.py --runs 51
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import gobpm_nb as bpm

MIWG = Path(__file__).resolve().parent.parent / "tests" / "data" / "miwg"


def median_ms(fn, runs: int) -> float:
    fn()  # warm-up: the schema is loaded once per process
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    files = sorted(MIWG.glob("*.bpmn"))
    for path in files:
        data = path.read_bytes()
        ms = median_ms(lambda data=data: bpm.load_bpmn(data), args.runs)
        model = bpm.load_bpmn(data)
        elements = sum(len(p.elements) for p in model.processes.values())
        print(f"{path.stem:6} {len(data) / 1024:6.1f} KiB  {len(model.processes)} process(es) "
              f"{elements:3} elements  import {ms:7.2f} ms (median of {args.runs})")
    largest = max(files, key=lambda p: p.stat().st_size)
    model = bpm.load_bpmn(largest)
    ms = median_ms(model.to_bpmn, args.runs)
    print(f"to_bpmn of the largest ({largest.stem}): {ms:.2f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
