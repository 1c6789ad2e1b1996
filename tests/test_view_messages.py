"""Coalesced updates: a 100,000-event run sends a bounded number of messages, and ends exact."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.ui import dashboard_traits
from gobpm_nb.ui import views as views_module

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "dashboard_overhead.py"
TRAITS = ("clock", "counters", "tasks", "holds", "decisions", "facts", "fact_page", "instances",
          "instance_rows", "selected", "lineage_dot", "process_dot", "process_bpmn",
          "process_marks")
MINUTES = (7, 23, 1, 41, 15, 50, 3, 32, 11, 28)


def ten_timers():
    p = bpm.Process("timers")
    p.start("start")
    waits = [p.timer_catch(f"wait{i}", duration=f"PT{m}M") for i, m in enumerate(MINUTES)]
    p.end("end")
    p.flow("start", *waits, "end")
    return p.validate()


def count_messages(widget):
    """Wrap the widget's comm so every message to the front end is counted."""
    sent = []
    original = widget.comm.send

    def send(*args, **kwargs):
        sent.append(time.monotonic())
        return original(*args, **kwargs)

    widget.comm.send = send
    return sent


@pytest.mark.slow
def test_100k_events_send_a_bounded_number_of_messages():
    """10,000 instances x 10 timers: at most one update per 50 ms of wall time plus the final
    one, and the traits then equal a fresh projection."""
    eng = bpm.Engine(keep_facts=None)  # a fresh projection must see every fact
    board = eng.dashboard()
    sent = count_messages(board)
    process = ten_timers()
    t0 = time.monotonic()
    for _ in range(10_000):
        eng.start(process)
    events = eng.run()
    board.refresh()  # what the notebook's after-cell hook does
    wall = time.monotonic() - t0
    fired = sum(1 for f in eng.facts if f.kind == "timer_fired")
    assert fired == 100_000 and events > 100_000
    assert len(sent) <= wall / views_module.INTERVAL + 2, (len(sent), wall)
    gaps = [b - a for a, b in zip(sent, sent[1:], strict=False)]
    # every update but the final one waited out the interval
    assert all(gap >= views_module.INTERVAL * 0.99 for gap in gaps[:-1]), gaps
    fresh = dashboard_traits(eng, board.selected)
    assert {name: getattr(board, name) for name in TRAITS} == fresh
    assert board.counters["finished"] == 10_000 and board.counters["coroutines"] == 0
    board.close()


@pytest.mark.slow  # a 30,000-event run
def test_updates_flow_while_a_long_run_is_in_progress():
    """A run that lasts longer than the interval already shows progress before it returns."""
    eng = bpm.Engine()
    board = eng.dashboard()
    process = ten_timers()
    for _ in range(3000):
        eng.start(process)
    seen = []
    board.observe(lambda change: seen.append(change["new"]), names="clock")
    eng.run()
    mid_run = list(seen)
    board.refresh()
    assert mid_run, "no update reached the widget during the run"
    assert board.clock == "2026-01-01T03:31:00Z"
    board.close()


@pytest.mark.slow
def test_overhead_benchmark_runs():
    """The dashboard-overhead benchmark runs both cases and prints both figures and the ratio."""
    proc = subprocess.run([sys.executable, str(BENCH), "--n", "300", "--rounds", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^without dashboard: [\d,]+ events/s", proc.stdout, re.MULTILINE)
    assert re.search(r"^with dashboard: +[\d,]+ events/s", proc.stdout, re.MULTILINE)
    assert re.search(r"^ratio=\d+\.\d\d target>=0\.80$", proc.stdout, re.MULTILINE), proc.stdout
