"""Smoke test: the timer throughput benchmark runs end to end on a small N (no timing checks)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "timer_throughput.py"


def test_timer_throughput_benchmark_runs(tmp_path):
    pytest.importorskip("simpy")
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--n", "200", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^ratio=\d+\.\d\d target>=0\.30$", proc.stdout, re.MULTILINE), proc.stdout
    assert out.exists()
