"""``python -m gobpm_nb check model.bpmn``: the report as a table; exit 0 when the process
to run can run, 1 when it cannot (or the file cannot be read), 2 for a wrong command."""

import io
import subprocess
import sys

import pytest
from bpmn_shapes import BPMN_DIR, MIWG_DIR

from gobpm_nb.cli import main


def check(*args):
    """Exit status and output of the command run in-process."""
    out = io.StringIO()
    return main(["check", *map(str, args)], out=out), out.getvalue()


def test_a_runnable_file_prints_its_table_and_exits_0():
    """The header, one row per note with its line, one line per process, then 'runs'."""
    path = BPMN_DIR / "tasks.bpmn"
    status, out = check(path)
    assert status == 0
    assert out.splitlines() == [
        f"{path}: 1 process(es), 0 error(s), 1 warning(s)",
        "",
        "severity  line  element  tag         message",
        "warning     16  total    scriptTask  script task 'total' has no Python function "
        "(its zeebe:script expression '=price * qty' is not run): it passes the data "
        "through unchanged until p.set_function('total', fn)",
        "",
        "process 'tasks' (executable): runs",
        "runs: process 'tasks'",
    ]


def test_a_file_whose_executable_process_cannot_run_exits_1():
    """C.3.0's executable process has two errors: listed, and the exit status is 1."""
    status, out = check(MIWG_DIR / "C.3.0.bpmn")
    assert status == 1
    lines = out.splitlines()
    assert lines[2].split() == ["severity", "line", "element", "tag", "message"]
    assert sum(1 for line in lines if line.startswith("error ")) == 2
    assert lines[-1] == ("cannot run: process '_8170787a-3207-434d-9bea-4787059f444f' has "
                         "2 error note(s) (above)")


def test_a_file_with_no_executable_process_exits_1_unless_one_is_named():
    """A.4.0 has two non-executable processes: check asks for one; --process picks it (the
    second has two expanded subprocesses, and runs too)."""
    status, out = check(MIWG_DIR / "A.4.0.bpmn")
    assert status == 1 and "no executable process; name one of" in out.splitlines()[-1]
    status, out = check(MIWG_DIR / "A.4.0.bpmn", "--process", "WFP-6-1")
    assert status == 0 and out.splitlines()[-1] == "runs: process 'WFP-6-1'"
    status, out = check(MIWG_DIR / "A.4.0.bpmn", "--process", "WFP-6-2")
    assert status == 0 and out.splitlines()[-1] == "runs: process 'WFP-6-2'"


def test_an_unreadable_file_exits_1_saying_why(tmp_path):
    """A missing file or a refused one: one line saying why, status 1."""
    status, out = check(tmp_path / "missing.bpmn")
    assert status == 1 and "cannot be read: cannot read BPMN file" in out
    evil = tmp_path / "evil.bpmn"
    evil.write_text('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "x">]><x>&e;</x>')
    status, out = check(evil)
    assert status == 1 and "DOCTYPE is refused" in out


@pytest.mark.slow  # a fresh interpreter
def test_python_dash_m_runs_the_command():
    """The module entry point: the same table, the exit status as the process status."""
    ok = subprocess.run([sys.executable, "-m", "gobpm_nb", "check",
                         str(MIWG_DIR / "C.1.0.bpmn")], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == \
        "runs: process 'bpmn-miwg-test-case-c.1.0'"
    bad = subprocess.run([sys.executable, "-m", "gobpm_nb", "check",
                          str(MIWG_DIR / "C.3.0.bpmn")], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1
    usage = subprocess.run([sys.executable, "-m", "gobpm_nb"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 2 and "usage:" in usage.stderr
