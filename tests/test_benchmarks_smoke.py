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


MEMORY_SCRIPT = SCRIPT.parent / "memory.py"


def test_memory_benchmark_runs():
    pytest.importorskip("simpy")
    proc = subprocess.run([sys.executable, str(MEMORY_SCRIPT), "--n", "300"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^sqlite_vs_simpy=\d+\.\d\d target<=0\.50$", proc.stdout,
                     re.MULTILINE), proc.stdout
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout


@pytest.mark.parametrize("script, phases", [("profile_timer_path.py", ["eng.run()"]),
                                            ("profile_residency.py", ["release path",
                                                                      "wake path"])])
def test_profile_scripts_run_and_print_each_phase(script, phases):
    """Each profile script runs on a small N and prints a table per phase."""
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / script), "--n", "200",
                           "--top", "5"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for phase in phases:
        assert phase in proc.stdout
    assert proc.stdout.count("profiled total") == len(phases)
