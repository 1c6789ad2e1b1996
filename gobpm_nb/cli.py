"""``python -m gobpm_nb check model.bpmn``: the import report as a table; the exit status
says whether the process to run can run (0), cannot (1), or the command was wrong (2)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .bpmn import BpmnModel, Note, load_bpmn
from .errors import ModelError

HEADERS = ("severity", "line", "element", "tag", "message")


def table(notes: Sequence[Note]) -> list[str]:
    """The notes as aligned columns (the message last, never cut)."""
    rows = [HEADERS] + [(n.severity, "" if n.line is None else str(n.line), n.element or "-",
                         n.tag, n.message) for n in notes]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out = []
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].rjust(widths[1]), r[2].ljust(widths[2]),
                 r[3].ljust(widths[3]), r[4]]
        out.append("  ".join(cells).rstrip())
    return out


def summary(model: BpmnModel) -> list[str]:
    """One line per process: executable or not, runs or not."""
    out = []
    for pid in model.processes:
        errors = len(model.errors(pid))
        flag = "executable" if pid in model.executable else "not executable"
        state = "runs" if not errors else f"cannot run ({errors} error{'s' * (errors != 1)})"
        out.append(f"process {pid!r} ({flag}): {state}")
    return out


def check(path: str, process: str | None, out: TextIO) -> int:
    """Print the report of ``path``; 0 when the process to run can run, 1 otherwise."""
    try:
        model = load_bpmn(path)
    except ModelError as exc:
        print(f"{path}: cannot be read: {exc}", file=out)
        return 1
    notes = model.report
    errors = sum(1 for n in notes if n.severity == "error")
    print(f"{path}: {len(model.processes)} process(es), {errors} error(s), "
          f"{len(notes) - errors} warning(s)", file=out)
    if notes:
        print("", file=out)
        for line in table(notes):
            print(line, file=out)
    print("", file=out)
    for line in summary(model):
        print(line, file=out)
    try:
        pid = model.main() if process is None else process
        errors_of = model.errors(pid) if pid in model.processes else []
        if errors_of:
            print(f"cannot run: process {pid!r} has {len(errors_of)} error note(s) (above)",
                  file=out)
            return 1
        model.process(pid)
    except ModelError as exc:
        print(f"cannot run: {exc}", file=out)
        return 1
    print(f"runs: process {pid!r}", file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gobpm_nb",
                                     description="Tools for gobpm_nb models.")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("check", help="print the import report of a BPMN file; exit 1 if "
                                       "its executable process cannot run")
    cmd.add_argument("file", help="a .bpmn file")
    cmd.add_argument("--process", default=None,
                     help="the process to check (default: the executable one)")
    args = parser.parse_args(argv)
    return check(args.file, args.process, out if out is not None else sys.stdout)
