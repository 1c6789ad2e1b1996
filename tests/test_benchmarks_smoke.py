"""Smoke test: the timer throughput benchmark runs end to end on a small N (no timing checks)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test runs a benchmark script in a new process

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
    """The one-timer case alone prints the script's original lines and nothing else."""
    pytest.importorskip("simpy")
    proc = subprocess.run([sys.executable, str(MEMORY_SCRIPT), "--n", "300", "--cases",
                           "one-timer"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^sqlite_vs_simpy=\d+\.\d\d target<=0\.35$", proc.stdout,
                     re.MULTILINE), proc.stdout
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout
    assert "dehydrated instances on SQLite" not in proc.stdout


def test_memory_benchmark_measures_dehydrated_instances_with_scopes(tmp_path):
    """Each scoped case at a small N: all dehydrated, woken and completed (the script checks),
    and a table row with its bytes per dehydrated instance and its holds (never a memory
    check)."""
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(MEMORY_SCRIPT), "--n", "50", "--cases",
                           "subprocess,event-subprocess,many,inclusive,call", "--json",
                           str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^case +N +bytes/dehydrated +holds/instance$", proc.stdout,
                     re.MULTILINE), proc.stdout
    for case, holds in [("subprocess", r"2 \(timer 2\)"),
                        ("event-subprocess", r"2 \(timer 1, message 1\)"),
                        ("many", r"10 \(task 10\)"), ("inclusive", r"2 \(timer 2\)"),
                        ("call", r"2 \(timer 1, call 1\)")]:
        assert re.search(rf"^{case} +50 +-?[\d,]+ +{holds}$", proc.stdout,
                         re.MULTILINE), proc.stdout
    assert "sqlite_vs_simpy" not in proc.stdout  # the one-timer case was not asked for
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout
    assert out.exists()


@pytest.mark.parametrize("script, phases", [("profile_timer_path.py", ["eng.run()"]),
                                            ("profile_residency.py", ["dehydration path",
                                                                      "wake path"])])
def test_profile_scripts_run_and_print_each_phase(script, phases):
    """Each profile script runs on a small N and prints a table per phase."""
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / script), "--n", "200",
                           "--top", "5"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for phase in phases:
        assert phase in proc.stdout
    assert proc.stdout.count("profiled total") == len(phases)


def test_residency_speed_benchmark_runs(tmp_path):
    """Dehydration and wake beside SpiffWorkflow on a small N: the script verified both sides
    did all the work and printed its figure lines (never a timing check; release_vs_spiff is
    create-to-dehydrated, named as its JSON key)."""
    pytest.importorskip("SpiffWorkflow")
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / "residency_speed.py"), "--n",
                           "100", "--rounds", "2", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for figure in ("wake_vs_spiff", "release_vs_spiff"):
        assert re.search(rf"^{figure}=\d+\.\d\d target<=0\.30$", proc.stdout,
                         re.MULTILINE), proc.stdout
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout
    assert out.exists()


def test_million_benchmark_runs_small(tmp_path):
    """benchmarks/million.py at 10,000 instances (not a million): every instance dehydrated,
    woken and completed, none lost, the phase and RSS lines printed (never a timing or
    memory check)."""
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / "million.py"), "--n", "10000",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for phase in ("start+dehydrate", "wake+complete"):
        assert re.search(rf"^{re.escape(phase)} +\d+\.\d s", proc.stdout,
                         re.MULTILINE), proc.stdout
    assert re.search(r"^completed=10,000 hydrated=10,000 lost=0$", proc.stdout,
                     re.MULTILINE), proc.stdout
    assert re.search(r"^peak_rss_mb=\d+\.\d \(\d+\.\d MiB\) target<=300$", proc.stdout,
                     re.MULTILINE), proc.stdout
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout
    assert "\r" not in proc.stdout  # no progress line when stdout is not a terminal
    assert out.exists()


def test_writer_growth_benchmark_prints_its_curve():
    """benchmarks/writer_growth.py on tiny chains: one row per size (tasks, seconds,
    microseconds per task), every file checked by the script (never a timing check)."""
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / "writer_growth.py"), "--sizes",
                           "20,40"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^ +tasks +seconds +us/task$", proc.stdout, re.MULTILINE), proc.stdout
    for n in (20, 40):
        assert re.search(rf"^ +{n} +\d+\.\d{{3}} +\d+\.\d$", proc.stdout,
                         re.MULTILINE), proc.stdout


def test_many_growth_benchmark_runs_small(tmp_path):
    """benchmarks/many_growth.py at a few dozen items: every instance completed, a row per
    shape and size and the per-item ratio printed (never a timing check)."""
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / "many_growth.py"), "--sizes",
                           "20,40", "--json", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for shape in ("task", "subprocess"):
        for n in (20, 40):
            assert re.search(rf"^{shape} +{n} +\d+\.\d\d +\d+\.\d\d +\d+\.\d{{3}}$",
                             proc.stdout, re.MULTILINE), proc.stdout
        assert re.search(rf"^{shape}_per_item_ratio=\d+\.\d\d \(40 over 20 items",
                         proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^all_completed=true$", proc.stdout, re.MULTILINE), proc.stdout
    assert out.exists()


def test_walk_script_records_both_walks(tmp_path):
    """benchmarks/walk.py: each walk named, its segments' counts positive integers, its walk
    check passed, the targets reported and the trace printed (never a check of the figures)."""
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(SCRIPT.parent / "walk.py"), "--trace", "--json",
                           str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for walk in ("walk 1: a message to a dehydrated instance", "walk 2: a timer firing"):
        assert re.search(rf"^{walk} ", proc.stdout, re.MULTILINE), proc.stdout
    rows = re.findall(r"^(publish_message|step \d|total) +(\d+) +\d+ +\d+ +\d+ +(\d+) +(\d+)$",
                      proc.stdout, re.MULTILINE)
    names = [r[0] for r in rows]
    assert names[:2] == ["publish_message", "step 1"] and names.count("total") == 2
    assert names[names.index("total") + 1] == "step 1", proc.stdout  # walk 2's first step
    assert all(int(n) > 0 for r in rows for n in r[1:]), proc.stdout  # calls, modules, switches
    assert len(re.findall(r"^walk_check=passed \(", proc.stdout, re.MULTILINE)) == 2
    for target in (r"message\.publish_message\.calls=\d+ target<=40",
                   r"message\.publish_message\.switches=\d+ target<=15",
                   r"timer\.total\.calls=\d+ target<=20"):
        assert re.search(rf"^{target} met=(yes|no)$", proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^> +engine\.residency\.hub\.Hub\.publish_message$", proc.stdout,
                     re.MULTILINE)
    assert out.exists()


CORPUS_SCRIPT = SCRIPT.parent / "corpus.py"
MIWG = Path(__file__).resolve().parent / "data" / "miwg"


def test_corpus_script_counts_a_small_corpus(tmp_path):
    """benchmarks/corpus.py on three files: A.1.0 (one process, start -> tasks -> end: it
    runs), B.1.0 (four processes: two plain start -> task -> end run; WFP-6-1's timer start
    has an empty timeDate, WFP-6-2 calls a global task) and an XML file cut short (it does
    not load). Every process is isExecutable="false": no file has a process SpiffWorkflow
    calls executable, so f.run and Spiff's counts are 0. With --start the three processes
    that run are started and complete."""
    corpus = tmp_path / "corpus"
    (corpus / "miwg" / "Reference").mkdir(parents=True)
    (corpus / "broken").mkdir()
    for name in ("A.1.0", "B.1.0"):
        data = (MIWG / f"{name}.bpmn").read_bytes()
        (corpus / "miwg" / "Reference" / f"{name}.bpmn").write_bytes(data)
    (corpus / "broken" / "cut.bpmn").write_text(
        '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">'
        '<process id="p"><startEvent id="s"/>', encoding="utf-8")
    (corpus / "broken" / "notes.txt").write_text("not a BPMN file", encoding="utf-8")
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(corpus), "--start",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # group, files, loaded, processes, run as written, % (then design-review mode's three
    # columns once load_bpmn has it), files whose every process runs, files whose every
    # executable process runs, started, completed
    design = r"(?: +\d+ +(?:\d+\.\d%|-) +\d+)?"
    for group, figures in [("miwg", rf"2 +2 +5 +3 +60\.0%{design} +1 +0 +3 +3"),
                           ("broken", rf"1 +0 +0 +0 +-{design} +0 +0 +0 +0"),
                           ("all", rf"3 +2 +5 +3 +60\.0%{design} +1 +0 +3 +3"),
                           ("miwg/Reference", rf"2 +2 +5 +3 +60\.0%{design} +1 +0 +3 +3")]:
        assert re.search(rf"^{re.escape(group)} +{figures}(?: |$)", proc.stdout,
                         re.MULTILINE), (group, proc.stdout)
    assert re.search(r"^ +1 +1  startEvent '…': date '…' is not an ISO 8601 date-time$",
                     proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^files that do not load \(1\)$", proc.stdout, re.MULTILINE)
    assert re.search(r"^ +1  not well-formed XML: ", proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^ +3  completed$", proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^crashes: 0$", proc.stdout, re.MULTILINE), proc.stdout
    if "run_as_drawn" not in proc.stdout:
        assert "design-review mode: not available yet" in proc.stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    figures = doc["groups"]["all"]
    assert (figures["files"], figures["loaded"], figures["processes"], figures["run"]) == \
        (3, 2, 5, 3)
    assert [f["file"] for f in doc["files"]] == ["broken/cut.bpmn", "miwg/Reference/A.1.0.bpmn",
                                                 "miwg/Reference/B.1.0.bpmn"]


POPULATION_SCRIPT = SCRIPT.parent / "population_speed.py"


def test_population_speed_benchmark_runs(tmp_path):
    """The population benchmark runs a short scenario, checks itself and prints its rate."""
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(POPULATION_SCRIPT), "--days", "1", "--rounds",
                           "1", "--json", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^cases_per_second=\d+$", proc.stdout, re.MULTILINE), proc.stdout
    assert json.loads(out.read_text())["cases"] > 100
