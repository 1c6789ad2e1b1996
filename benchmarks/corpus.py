"""Measure the BPMN corpus: the share of processes that run, here and in SpiffWorkflow.

    python benchmarks/corpus_gather.py                  # fill build/corpus/ first
    python benchmarks/corpus.py                         # measure build/corpus/
    python benchmarks/corpus.py some/dir --json out.json --top 30

Every ``*.bpmn``, ``*.bpmn2`` and ``*.bpmn20.xml`` file under the folder, in sorted order, is
read with ``gobpm_nb.load_bpmn(path)``. A file *loads* when that returns a model (a
``ModelError`` means the file cannot be read at all). A process *runs as written* when
``model.process(id)`` returns it: no error note concerns it and it validates. Its *blocking
notes* are the error notes ``model.errors(id)`` lists (or, with none, the problems of the
``ModelError`` that ``process(id)`` raised). When ``load_bpmn`` takes ``run_as_drawn``, the
file is read again with ``run_as_drawn=True`` and the same is counted in design-review mode.

SpiffWorkflow 3 reads the same file with its plain ``BpmnParser`` (no validator):
``add_bpmn_file``, then ``get_spec`` for each process; a process *Spiff runs* is one whose
spec it builds (Spiff builds only a process it calls executable: ``isExecutable`` absent or
"true"). Spiff's percentages are over the processes this engine read.

A file *runs* (f.run; either engine) when it loads and has a process Spiff calls executable,
and every such process runs: the same processes judged on both sides. f.all counts the files
whose every process, executable or not, runs here. "Spiff only" (s.only) counts the
processes Spiff builds a spec for that do not run here as written: what the goal "accept
at least what SpiffWorkflow parses" has left to do.

Groups are the folder's first level (``miwg`` is split by tool: ``miwg/<tool>``). Notes are
counted after their ids, names, paths and numbers are stripped: each row says how many
processes the note blocks and in how many files (a family of notes, such as the XSD's
errors, is also totalled). Anything but a ``ModelError`` out of ``load_bpmn``, ``process``
or the report's rendering is a crash, printed with its traceback's last frames; so is a
file that takes longer than ``--timeout`` seconds. With ``--start``, each process that runs
as written is also started and driven (see ``started``): crashes there are findings too.
The output depends only on the files, except the last line (the total time).
"""

from __future__ import annotations

import argparse
import inspect
import logging
import re
import signal
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gobpm_nb as bpm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "build" / "corpus"
EXTENSIONS = (".bpmn", ".bpmn2", ".bpmn20.xml")
DESIGN = "run_as_drawn"  # the keyword of design-review mode, when load_bpmn has it


# ------------------------------------------------------------------------ normalising notes
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
ELLIPSIS = re.compile(r"\([^()\n]*\.\.\.\)")  # "(Vacation Approval ...)": a quoted fragment
NUMBER = re.compile(r"(?<![\w./])(?!8601\b)\d+(?![\w.])")  # not ISO 8601, BPMN 2.0, ids
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # "<Element ... at 0x7f...>": a memory address


def normalise(text: str, path: str | None = None) -> str:
    """A note without what differs from file to file: the file's path, what it quotes (ids,
    names, expressions; a quoted {namespace}tag stays: it says which element), numbers,
    memory addresses."""
    if path:
        text = text.replace(f"{path}: ", "").replace(path, "<file>")

    def quoted(match: re.Match[str]) -> str:
        inner = match.group(0)[1:-1]
        return match.group(0) if inner.startswith("{") else "'…'"

    text = QUOTED.sub(quoted, ADDRESS.sub("", text))
    text = ELLIPSIS.sub("(…)", text)
    return " ".join(NUMBER.sub("N", text).split())


# ------------------------------------------------------------------------ one file
class Timeout(BaseException):
    """A file took too long (a BaseException: no ``except Exception`` of a run catches it)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise Timeout in this thread after ``seconds`` (SIGALRM; Python code only)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise Timeout(f"took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def crash(where: str, exc: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    return {"where": where, "type": type(exc).__name__, "message": str(exc)[:500],
            "frames": [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames[-4:]],
            "traceback": "".join(traceback.format_exception(exc)).rstrip()}


def spiff_executable(model: Any) -> list[str]:
    """The ids of the processes SpiffWorkflow calls executable (isExecutable absent or
    "true"), as this engine read the file."""
    out = []
    for node in model.tree.getroot():
        if isinstance(node.tag, str) and node.tag.rpartition("}")[2] == "process" \
                and node.get("isExecutable", "true") == "true" and node.get("id"):
            out.append(node.get("id"))
    return out


def ours(path: Path, rel: str, crashes: list[dict[str, Any]], runnable: list[Any],
         **options: Any) -> dict[str, Any]:
    """What this engine makes of the file (with ``options`` given to ``load_bpmn``); each
    process that runs is appended to ``runnable``, as (id, Process)."""
    mode = " (design-review mode)" if options else ""
    try:
        model = bpm.load_bpmn(path, **options)
    except bpm.ModelError as exc:
        return {"loaded": False, "load_error": normalise(str(exc), str(path)),
                "processes": {}, "executable": []}
    except Exception as exc:  # a crash is a finding
        crashes.append({"file": rel, **crash(f"load_bpmn{mode}", exc)})
        return {"loaded": False, "load_error": f"crash: {type(exc).__name__}",
                "processes": {}, "executable": []}
    try:
        str(model.report)  # what people look at first; a crash here is a finding too
        model.report._repr_html_()
    except Exception as exc:
        crashes.append({"file": rel, **crash(f"report{mode}", exc)})
    processes = {}
    for pid in model.processes:
        try:
            runnable.append((pid, model.process(pid)))
            processes[pid] = {"runs": True, "blocking": []}
        except bpm.ModelError as exc:
            notes = [n.message for n in model.errors(pid)] or list(exc.problems)
            processes[pid] = {"runs": False, "blocking": [normalise(n) for n in notes]}
        except Exception as exc:
            crashes.append({"file": rel, **crash(f"process({pid!r}){mode}", exc)})
            processes[pid] = {"runs": False,
                              "blocking": [f"crash: {type(exc).__name__} in process()"]}
    return {"loaded": True, "load_error": None, "processes": processes,
            "executable": spiff_executable(model)}


def started(process: Any, rel: str, pid: str, crashes: list[dict[str, Any]],
            others: tuple[Any, ...] = ()) -> str:
    """Start the process on a fresh engine with no data (the file's ``others`` processes that
    run deployed first, so that a call activity finds them), advance a day and complete
    every user task it offers (no outputs), ten rounds at most: 'completed', the state it is left
    in, 'no plain start' (it starts by a message, timer or signal: not tried), or
    'refused: <why>' (an EngineError or ModelError). Any other exception is a crash."""
    try:
        if not process.definition().start:
            return "no plain start"
        eng = bpm.Engine()
        for other in others:
            eng.deploy(other)
        inst = eng.start(process)
        for _ in range(10):
            eng.advance("P1D")
            tasks = [t for t in eng.tasks() if t.instance == inst.id]
            if not tasks:
                break
            for task in tasks:
                eng.complete_task(task.id, {})
        return inst.state
    except bpm.GobpmError as exc:
        return f"refused: {normalise(str(exc))}"
    except Exception as exc:
        crashes.append({"file": rel, **crash(f"start {pid!r}", exc)})
        return f"crash: {type(exc).__name__}"


def spiff(path: Path) -> dict[str, Any]:
    """What SpiffWorkflow's plain BpmnParser makes of the file."""
    from SpiffWorkflow.bpmn.parser import BpmnParser

    parser = BpmnParser()
    try:
        parser.add_bpmn_file(str(path))
    except Exception as exc:
        return {"parsed": False, "error": normalise(f"{type(exc).__name__}: {exc}", str(path)),
                "specs": {}}
    specs = {}
    for pid in sorted(parser.process_parsers):
        try:
            parser.get_spec(pid)
            specs[pid] = None
        except Exception as exc:
            specs[pid] = normalise(f"{type(exc).__name__}: {exc}", str(path))
    return {"parsed": True, "error": None, "specs": specs}


def measure(path: Path, rel: str, timeout: float, design: bool, with_spiff: bool,
            start: bool = False) -> dict[str, Any]:
    """Every figure of one file; each stage (this engine, design-review mode, SpiffWorkflow,
    and with ``start`` each process started) has ``timeout`` seconds."""
    crashes: list[dict[str, Any]] = []
    runnable: list[Any] = []
    record: dict[str, Any] = {"file": rel, "group": group_of(rel)}
    stages = [("ours", "load_bpmn", lambda: ours(path, rel, crashes, runnable))]
    if design:
        stages.append(("design", "load_bpmn (design-review mode)",
                       lambda: ours(path, rel, crashes, [], **{DESIGN: True})))
    if with_spiff:
        stages.append(("spiff", "SpiffWorkflow", lambda: spiff(path)))
    for key, where, run in stages:
        try:
            with deadline(timeout):
                record[key] = run()
        except Timeout as exc:
            crashes.append({"file": rel, "where": where, "type": "Timeout",
                            "message": str(exc), "frames": [], "traceback": ""})
            record[key] = ({"parsed": False, "error": "timeout", "specs": {}} if key == "spiff"
                           else {"loaded": False, "load_error": "timeout", "processes": {},
                                 "executable": []})
    for pid, process in runnable if start else ():
        try:
            with deadline(timeout):
                outcome = started(process, rel, pid, crashes,
                                  tuple(p for other, p in runnable if other != pid))
        except Timeout as exc:
            crashes.append({"file": rel, "where": f"start {pid!r}", "type": "Timeout",
                            "message": str(exc), "frames": [], "traceback": ""})
            outcome = "timeout"
        record["ours"]["processes"][pid]["started"] = outcome
    record["crashes"] = crashes
    return record


def group_of(rel: str) -> str:
    parts = rel.split("/")
    if len(parts) == 1:
        return "."
    if parts[0] == "miwg" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


# ------------------------------------------------------------------------ figures
def figures(records: list[dict[str, Any]], design: bool, with_spiff: bool) -> dict[str, Any]:
    """Counts per group (and 'miwg' over every tool, and 'all')."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        keys = [r["group"], "all"]
        if r["group"].startswith("miwg/"):
            keys.append("miwg")
        c = counts(r, design, with_spiff)
        for key in keys:
            rows[key].update(c)
            rows[key]["files"] += 1
    return {key: dict(sorted(row.items())) for key, row in sorted(rows.items())}


def counts(r: dict[str, Any], design: bool, with_spiff: bool) -> Counter[str]:
    c: Counter[str] = Counter()
    o = r["ours"]
    c["loaded"] += o["loaded"]
    c["processes"] += len(o["processes"])
    c["run"] += sum(p["runs"] for p in o["processes"].values())
    executable = o["executable"]
    c["file_runs"] += bool(o["loaded"] and executable
                           and all(o["processes"].get(p, {}).get("runs") for p in executable))
    c["file_all"] += bool(o["processes"] and all(p["runs"] for p in o["processes"].values()))
    for p in o["processes"].values():
        if "started" in p:
            c["tried"] += p["started"] != "no plain start"
            c["completed"] += p["started"] == "completed"
    if design:
        d = r["design"]
        c["design_run"] += sum(p["runs"] for p in d["processes"].values())
        c["design_file_all"] += bool(d["processes"]
                                     and all(p["runs"] for p in d["processes"].values()))
        c["design_file_runs"] += bool(
            d["loaded"] and d["executable"]
            and all(d["processes"].get(p, {}).get("runs") for p in d["executable"]))
    if with_spiff:
        s = r["spiff"]
        built = [pid for pid, error in s["specs"].items() if error is None]
        wanted = [pid for pid, error in s["specs"].items()
                  if error is None or "is not executable" not in error]
        c["spiff_parsed"] += s["parsed"]
        c["spiff_run"] += len(built)
        c["spiff_file_runs"] += bool(s["parsed"] and wanted and len(built) == len(wanted))
        c["spiff_only"] += sum(1 for pid in built
                               if not o["processes"].get(pid, {}).get("runs"))
    return c


def blocking(records: list[dict[str, Any]], key: str,
             only: Callable[[dict[str, Any], str], bool] | None = None) -> list[dict[str, Any]]:
    """Each normalised blocking note: how many processes it blocks, in how many files."""
    processes: Counter[str] = Counter()
    files: dict[str, set[str]] = defaultdict(set)
    for r in records:
        for pid, p in r[key]["processes"].items():
            if p["runs"] or (only is not None and not only(r, pid)):
                continue
            for note in sorted(set(p["blocking"])):
                processes[note] += 1
                files[note].add(r["file"])
    return [{"note": note, "processes": n, "files": len(files[note])}
            for note, n in sorted(processes.items(), key=lambda kv: (-kv[1], kv[0]))]


# notes that differ in their details but share one cause: each family's total is printed too
FAMILIES = (("not valid BPMN 2.0 XML:", "not valid BPMN 2.0 XML (any XSD error)"),
            ("condition '…' (", "condition '…' does not translate (any reason)"))


def families(records: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Per family of notes: how many distinct notes, processes blocked and files."""
    out = []
    for prefix, title in FAMILIES:
        notes, files, processes = set(), set(), 0
        for r in records:
            for p in r[key]["processes"].values():
                mine = {n for n in p["blocking"] if n.startswith(prefix)}
                if mine and not p["runs"]:
                    notes |= mine
                    processes += 1
                    files.add(r["file"])
        out.append({"note": title, "distinct": len(notes), "processes": processes,
                    "files": len(files)})
    return out


def load_errors(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = Counter(r["ours"]["load_error"] for r in records if not r["ours"]["loaded"])
    return [{"note": note, "files": n}
            for note, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]


def start_outcomes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = Counter(p["started"] for r in records for p in r["ours"]["processes"].values()
                    if "started" in p)
    return [{"outcome": outcome, "processes": n}
            for outcome, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]


def spiff_refusals(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: Counter[str] = Counter()
    for r in records:
        s = r["spiff"]
        if not s["parsed"]:
            found[s["error"]] += 1
        for error in s["specs"].values():
            if error is not None and "is not executable" not in error:
                found[error] += 1
    return [{"note": note, "count": n}
            for note, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]


# ------------------------------------------------------------------------ printing
def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    - "


def table(rows: dict[str, dict[str, int]], keys: list[str], design: bool,
          with_spiff: bool, start: bool = False) -> list[str]:
    head = f"{'group':44} {'files':>6} {'loaded':>6} {'procs':>6} {'run':>6} {'%':>6}"
    if design:
        head += f" {'design':>6} {'%':>6} {'d.f.all':>7}"
    head += f" {'f.all':>6} {'f.run':>6}"
    if start:
        head += f" {'tried':>6} {'done':>6}"
    if with_spiff:
        head += f" {'spiff':>6} {'%':>6} {'s.f.run':>7} {'s.only':>6}"
    lines = [head, "-" * len(head)]
    for key in keys:
        row = rows[key]
        procs = row.get("processes", 0)
        line = (f"{key:44.44} {row['files']:6} {row.get('loaded', 0):6} {procs:6} "
                f"{row.get('run', 0):6} {pct(row.get('run', 0), procs)}")
        if design:
            line += (f" {row.get('design_run', 0):6} {pct(row.get('design_run', 0), procs)}"
                     f" {row.get('design_file_all', 0):7}")
        line += f" {row.get('file_all', 0):6} {row.get('file_runs', 0):6}"
        if start:
            line += f" {row.get('tried', 0):6} {row.get('completed', 0):6}"
        if with_spiff:
            line += (f" {row.get('spiff_run', 0):6} {pct(row.get('spiff_run', 0), procs)}"
                     f" {row.get('spiff_file_runs', 0):7} {row.get('spiff_only', 0):6}")
        lines.append(line)
    return lines


def note_table(title: str, rows: list[dict[str, Any]], top: int, width: int) -> list[str]:
    lines = ["", f"{title} (top {min(top, len(rows))} of {len(rows)})",
             f"{'procs':>6} {'files':>6}  note"]
    for row in rows[:top]:
        note = row["note"] if len(row["note"]) <= width else row["note"][:width - 1] + "…"
        lines.append(f"{row['processes']:6} {row['files']:6}  {note}")
    return lines


def report(records: list[dict[str, Any]], design: bool, with_spiff: bool, top: int,
           width: int, start: bool = False) -> tuple[list[str], dict[str, Any]]:
    rows = figures(records, design, with_spiff)
    groups = [k for k in rows if k not in ("all", "miwg") and not k.startswith("miwg/")]
    tools = [k for k in rows if k.startswith("miwg/")]
    main = (["miwg"] if tools else []) + groups + ["all"]
    lines = ["corpus: files, files loaded, processes, processes that run as written (run), "
             "files whose every process runs (f.all), files whose every executable process "
             "runs (f.run)"]
    if design:
        lines.append("design-review mode (run_as_drawn=True): processes that run (design), "
                     "files whose every process runs (d.f.all)")
    if start:
        lines.append("started (--start): processes with a plain start started (tried), and "
                     "those that completed with every user task completed (done)")
    if with_spiff:
        lines.append("SpiffWorkflow: processes it builds a spec for (spiff), files whose every "
                     "executable process it builds (s.f.run), processes it builds that do not "
                     "run here (s.only)")
    lines.append("")
    lines += table(rows, main, design, with_spiff, start)
    if not design:
        lines.append("design-review mode: not available yet")
    if tools:
        lines += ["", "MIWG suite by tool"]
        lines += table(rows, tools + ["miwg"], design, with_spiff, start)
    notes = blocking(records, "ours")
    lines += note_table("notes that block a process as written", notes, top, width)
    grouped = families(records, "ours")
    lines += ["", "families of notes that block a process as written",
              f"{'procs':>6} {'files':>6} {'notes':>6}  family"]
    lines += [f"{r['processes']:6} {r['files']:6} {r['distinct']:6}  {r['note']}"
              for r in grouped]
    spiff_gap: list[dict[str, Any]] = []
    if with_spiff:
        spiff_gap = blocking(records, "ours", lambda r, pid:
                             r["spiff"]["specs"].get(pid, "") is None)
        lines += note_table("notes that block a process SpiffWorkflow builds", spiff_gap,
                            top, width)
    design_notes: list[dict[str, Any]] = []
    if design:
        design_notes = blocking(records, "design")
        lines += note_table("notes that block a process in design-review mode", design_notes,
                            top, width)
    outcomes: list[dict[str, Any]] = []
    if start:
        outcomes = start_outcomes(records)
        lines += ["", "what starting a process that runs came to", f"{'procs':>6}  outcome"]
        lines += [f"{r['processes']:6}  {r['outcome'][:width]}" for r in outcomes[:top]]
    unloaded = load_errors(records)
    lines += ["", f"files that do not load ({sum(r['files'] for r in unloaded)})",
              f"{'files':>6}  reason"]
    lines += [f"{r['files']:6}  {r['note'][:width]}" for r in unloaded[:top]]
    refusals: list[dict[str, Any]] = []
    if with_spiff:
        refusals = spiff_refusals(records)
        lines += ["", f"what SpiffWorkflow refuses (top {min(top, len(refusals))} of "
                      f"{len(refusals)})", f"{'count':>6}  reason"]
        lines += [f"{r['count']:6}  {r['note'][:width]}" for r in refusals[:top]]
    crashes = [c for r in records for c in r["crashes"]]
    lines += ["", f"crashes: {len(crashes)}"]
    for c in crashes:
        lines.append(f"  {c['file']}: {c['where']}: {c['type']}: {c['message'][:200]}")
        lines += [f"      at {frame}" for frame in c["frames"]]
    doc = {"groups": rows, "design_review_mode": design, "spiff": with_spiff,
           "blocking": notes, "blocking_families": grouped, "blocking_spiff_runs": spiff_gap,
           "blocking_design": design_notes, "start_outcomes": outcomes,
           "load_errors": unloaded, "spiff_refusals": refusals, "crashes": crashes,
           "files": [{k: v for k, v in r.items() if k != "crashes"} for r in records]}
    return lines, doc


def bpmn_files(folder: Path) -> list[tuple[Path, str]]:
    found = [(p, p.relative_to(folder).as_posix()) for p in folder.rglob("*")
             if p.is_file() and p.name.lower().endswith(EXTENSIONS)]
    return sorted(found, key=lambda item: item[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR,
                        help="the corpus folder (default build/corpus/)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure here")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds per file and engine before it counts as a crash")
    parser.add_argument("--top", type=int, default=20, help="rows of each note table")
    parser.add_argument("--width", type=int, default=150, help="characters of a note shown")
    parser.add_argument("--no-spiff", action="store_true", help="leave SpiffWorkflow out")
    parser.add_argument("--start", action="store_true",
                        help="also start each process that runs and drive it (see started)")
    args = parser.parse_args()
    if not args.dir.is_dir():
        print(f"no folder {args.dir}: run benchmarks/corpus_gather.py first", file=sys.stderr)
        return 2
    with_spiff = not args.no_spiff
    if with_spiff:
        try:
            import SpiffWorkflow  # noqa: F401
        except ImportError:
            print("SpiffWorkflow is not installed: its columns are left out", file=sys.stderr)
            with_spiff = False
    design = DESIGN in inspect.signature(bpm.load_bpmn).parameters
    logging.disable(logging.CRITICAL)  # SpiffWorkflow logs what it parses
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    records = [measure(path, rel, args.timeout, design, with_spiff, args.start)
               for path, rel in bpmn_files(args.dir)]
    lines, doc = report(records, design, with_spiff, args.top, args.width, args.start)
    print("\n".join(lines))
    print(f"total time {time.perf_counter() - t0:.1f} s")
    if args.json:
        write_json(args.json, {"dir": str(args.dir), **doc})
    return 0


if __name__ == "__main__":
    sys.exit(main())
