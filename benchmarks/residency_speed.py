"""Dehydration and wake beside SpiffWorkflow: per-instance cost on the same one-timer process.

Both engines load one BPMN file, ``benchmarks/data/one_timer.bpmn`` (start -> intermediate
timer catch ``P1D`` -> end): gobpm_nb with ``load_bpmn(path).process()``, SpiffWorkflow 3.x
with its ``BpmnParser`` (parsed once). Per instance:

gobpm_nb, on a ``SQLiteStore`` in a fresh temp file, ``Engine(store=..., keep_facts=1000)``:

- **create-to-dehydrated, a population** (the target's figure): ``eng.start_many(process,
  [None] * N)`` (every first checkpoint in one transaction) and one ``eng.run(until=eng.now)``
  (each instance runs to the timer, is checkpointed at its quiet point and dehydrates: zero
  coroutines, only its holder stays in memory; the run's checkpoints are committed together,
  ``journal.GROUP`` at most per transaction). Measured in its own round, on its own store.
- **create-to-dehydrated, one by one** (shown): ``eng.start(process)`` + ``eng.run(until=
  eng.now)`` for each instance: two commands, so two commits per instance.
- **wake-and-complete**: ``eng.advance("PT2H")`` past the timers (the clock stands 30 minutes
  before them): every instance hydrates
  from SQLite, fires its timer as a continuation fork, completes; its checkpoint is deleted.

SpiffWorkflow (in memory: Spiff has no store; its applications keep the JSON themselves):

- **create-to-wait**: ``BpmnWorkflow(spec)`` + ``do_engine_steps()`` until the instance waits
  on its timer (the timer task WAITING, its deadline computed).
- **serialize**: ``BpmnWorkflowSerializer().serialize_json(wf)`` (shown; not in a target).
- **deserialize-fire-finish**: ``deserialize_json(text)``, ``refresh_timers()`` (the timer
  sees its deadline passed and becomes READY) and ``do_engine_steps()`` to the end;
  ``is_completed()`` must be true.

Spiff's timers compare their deadline with ``datetime.now(timezone.utc)``, the wall clock.
The script gives Spiff a virtual clock the same way gobpm_nb has one: the ``datetime`` name in
``SpiffWorkflow.bpmn.specs.event_definitions.timer`` (the only place Spiff reads the time for
a timer) is replaced by a subclass whose ``now()`` is the real ``now()`` plus an offset; the
offset is 0 while instances are created (so the deadline is computed and stored exactly as
in production) and P1DT1M while they are woken. Every instance thus runs Spiff's own code
path, with the real one-day timer, the stored deadline and the ordinary comparison; the only
added cost is one Python-level ``now()`` call per timer check, on Spiff's side. (The
alternatives were worse: a past date or a zero duration in a copy of the file changes what
Spiff computes and stores, and sleeping out a short timer measures ``time.sleep``.) The
duration in the file is a FEEL string literal (``="P1D"``, as Camunda Modeler writes it);
Spiff's default script engine is Python, so the script gives it a subclass whose
``evaluate`` drops FEEL's leading ``=`` and lets Python read the literal ``"P1D"`` (one call
per instance, at creation).

Rounds alternate the order (gobpm_nb first, then SpiffWorkflow first, ...) on the same
machine in one run; gobpm_nb's side of a round is two rounds back to back (the population,
then one by one), each on a fresh store. Each phase is timed over all N instances of the
round (wall clock, ``perf_counter``; CPU seconds shown too) after ``gc.collect()``.
Per-instance figures are the medians over the rounds (the wake's over both kinds of
gobpm_nb round). gobpm_nb gets one untimed warm-up instance per round (started,
dehydrated and woken before the timed phases), Spiff one untimed round of a few instances.

The script checks both sides did all the work and exits non-zero if not: after dehydration,
N+1 dehydrated gobpm instances, no coroutine, N+1 timer holds, N+1 checkpoints in the store;
after the wake, N+1 finished, N ``instance_completed`` and ``hydrated`` facts seen through
``eng.subscribe``, no coroutine, no hold, an empty store. Spiff: each created workflow not
completed with its one WAITING task on the timer, and (a control) a deserialized copy that
does not finish while the offset is 0; after the wake, all N completed. It never asserts on
timing.

The figure lines ``release_vs_spiff=`` and ``release_one_by_one_vs_spiff=`` and the JSON
keys with "release" in them (``release_s``, ``gobpm_release``, ``release_vs_spiff``...)
keep the names they had before an instance giving up its coroutines was said to
*dehydrate*: the figure lines share the JSON's names, and figures written before still
compare. They measure create-to-dehydrated.

    python benchmarks/residency_speed.py                     # N=5,000 per round, 5 rounds
    python benchmarks/residency_speed.py --n 2000 --rounds 3 --json out.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from common import (  # benchmarks/common.py, beside this script
    check_all_woken,
    fail,
    timed,
    write_json,
)

import gobpm_nb as bpm

BPMN = Path(__file__).resolve().parent / "data" / "one_timer.bpmn"
PROCESS_ID = "one_timer"
TIMER = "wait"
TARGET = 0.30
WAKE_OFFSET = timedelta(days=1, minutes=1)


# --------------------------------------------------------------------------- gobpm_nb


def load_gobpm() -> bpm.Process:
    model = bpm.load_bpmn(BPMN)
    errors = [n for n in model.report if n.severity == "error"]
    if errors:
        fail(f"gobpm_nb cannot run {BPMN.name}: {errors}")
    return model.process(PROCESS_ID)


def gobpm_round(process: bpm.Process, n: int, population: bool) -> dict[str, float]:
    """One round on a fresh SQLite store: dehydrate N instances (``population``: with
    ``start_many`` and one run; else one ``start`` and one ``run`` each), then wake them."""
    with tempfile.TemporaryDirectory() as tmp:
        store = bpm.SQLiteStore(Path(tmp) / "residency_speed.db")
        eng = bpm.Engine(store=store, keep_facts=1000)
        seen: Counter[str] = Counter()
        watched = {"instance_completed", "hydrated", "dehydrated"}

        def count(fact: Any) -> None:
            if fact.kind in watched:
                seen[fact.kind] += 1

        eng.subscribe(count)
        # Warm-up, untimed: one instance dehydrated, then woken alone (its deadline is an
        # hour before the timed instances'), so both paths, the store and the version exist.
        eng.start(process)
        eng.run(until=eng.now)
        eng.advance("PT1H")
        if seen["dehydrated"] != 1:
            fail(f"gobpm_nb warm-up instance did not dehydrate: {eng.stats()}")
        seen.clear()

        def dehydrate_all() -> None:
            if population:
                eng.start_many(process, [None] * n)
                eng.run(until=eng.now)
                return
            start, run = eng.start, eng.run
            for _ in range(n):
                start(process)
                run(until=eng.now)

        rel_s, rel_cpu, _ = timed(dehydrate_all)
        stats = eng.stats()
        if stats["instances"]["dehydrated"] != n + 1 or stats["instances"]["resident"]:
            fail(f"gobpm_nb after dehydration: {stats['instances']}, expected {n + 1} dehydrated")
        if stats["coroutines"] or stats["holds"].get("timer") != n + 1:
            fail(f"gobpm_nb after dehydration: {stats['coroutines']} coroutines, holds "
                 f"{stats['holds']}, expected 0 and {n + 1} timer holds")
        if seen["dehydrated"] != n or len(store) != n + 1:
            fail(f"gobpm_nb after dehydration: {seen['dehydrated']} dehydrated facts, "
                 f"{len(store)} checkpoints stored, expected {n} and {n + 1}")

        eng.advance("PT23H30M")  # untimed: the warm-up instance wakes and completes alone
        if seen["instance_completed"] != 1 or seen["hydrated"] != 1:
            fail(f"gobpm_nb warm-up wake: {dict(seen)}")
        seen.clear()

        wake_s, wake_cpu, _ = timed(lambda: eng.advance("PT2H"))
        check_all_woken(eng, store, seen, n, finished=n + 1)
        store.close()
    return {"release_s": rel_s, "release_cpu_s": rel_cpu, "wake_s": wake_s,
            "wake_cpu_s": wake_cpu}


# ----------------------------------------------------------------------- SpiffWorkflow


class Spiff:
    """SpiffWorkflow 3.x set up as the module docstring says: the file parsed once, a FEEL
    literal-aware script engine, and a virtual clock for its timers."""

    def __init__(self) -> None:
        import SpiffWorkflow
        import SpiffWorkflow.bpmn.specs.event_definitions.timer as timer_module
        from SpiffWorkflow.bpmn import BpmnWorkflow
        from SpiffWorkflow.bpmn.parser import BpmnParser
        from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
        from SpiffWorkflow.bpmn.serializer import BpmnWorkflowSerializer
        from SpiffWorkflow.util.task import TaskState

        class FeelLiteralEngine(PythonScriptEngine):
            def evaluate(self, task: Any, expression: str, external_context: Any = None) -> Any:
                if expression.startswith("="):
                    expression = expression[1:]
                return super().evaluate(task, expression, external_context)

        real_now = datetime.now

        class VirtualClock(datetime):
            offset = timedelta(0)

            @classmethod
            def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
                return real_now(tz) + cls.offset

        timer_module.datetime = VirtualClock  # type: ignore[misc]
        self.clock = VirtualClock
        self.version = getattr(SpiffWorkflow, "__version__", None) or _dist_version()
        parser = BpmnParser()
        parser.add_bpmn_file(str(BPMN))
        self.spec = parser.get_spec(PROCESS_ID)
        self.workflow_cls = BpmnWorkflow
        self.script_engine = FeelLiteralEngine()
        self.serializer = BpmnWorkflowSerializer()
        self.waiting = TaskState.WAITING

    def check_waiting(self, wf: Any) -> None:
        waiting = [t.task_spec.name for t in wf.get_tasks(state=self.waiting)]
        if wf.is_completed() or waiting != [TIMER]:
            fail(f"a Spiff workflow after create: completed={wf.is_completed()}, "
                 f"waiting tasks {waiting}, expected only {TIMER!r}")

    def round(self, n: int) -> dict[str, float]:
        spec, make, engine = self.spec, self.workflow_cls, self.script_engine
        ser = self.serializer
        self.clock.offset = timedelta(0)

        def create_all() -> list[Any]:
            out = []
            for _ in range(n):
                wf = make(spec, script_engine=engine)
                wf.do_engine_steps()
                out.append(wf)
            return out

        create_s, create_cpu, workflows = timed(create_all)
        for wf in workflows:
            self.check_waiting(wf)
        ser_s, ser_cpu, texts = timed(lambda: [ser.serialize_json(wf) for wf in workflows])
        workflows.clear()  # the live workflows are gone before the wake
        control = ser.deserialize_json(texts[0])  # the clock has not moved: it must wait
        control.script_engine = engine
        control.refresh_timers()
        control.do_engine_steps()
        self.check_waiting(control)

        self.clock.offset = WAKE_OFFSET

        def wake_all() -> int:
            done = 0
            for text in texts:
                wf = ser.deserialize_json(text)
                wf.script_engine = engine
                wf.refresh_timers()
                wf.do_engine_steps()
                done += wf.is_completed()
            return done

        wake_s, wake_cpu, done = timed(wake_all)
        self.clock.offset = timedelta(0)
        if done != n:
            fail(f"Spiff completed {done} of {n} workflows after the timer")
        return {"create_s": create_s, "create_cpu_s": create_cpu, "serialize_s": ser_s,
                "serialize_cpu_s": ser_cpu, "wake_s": wake_s, "wake_cpu_s": wake_cpu,
                "json_bytes": len(texts[0])}


def _dist_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("SpiffWorkflow")
    except PackageNotFoundError:
        return None


# ------------------------------------------------------------------------------ main


def per_instance_us(rounds: list[dict[str, float]], key: str, n: int) -> float:
    return statistics.median(r[key] for r in rounds) / n * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--n", type=int, default=5_000, help="instances per round (5000)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (5)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 1 or args.rounds < 1:
        ap.error("--n and --rounds must be >= 1")
    try:
        spiff = Spiff()
    except ImportError:
        print("SpiffWorkflow is not installed: pip install SpiffWorkflow (a test extra)",
              file=sys.stderr)
        return 2
    process = load_gobpm()
    spiff.round(min(args.n, 50))  # untimed warm-up of Spiff's code paths

    g_rounds: list[dict[str, float]] = []
    s_rounds: list[dict[str, float]] = []
    p_rounds: list[dict[str, float]] = []
    for i in range(args.rounds):
        order = ("gobpm", "spiff") if i % 2 == 0 else ("spiff", "gobpm")
        for side in order:
            if side == "gobpm":
                p_rounds.append(gobpm_round(process, args.n, population=True))
                g_rounds.append(gobpm_round(process, args.n, population=False))
            else:
                s_rounds.append(spiff.round(args.n))

    n = args.n
    g_rel = per_instance_us(p_rounds, "release_s", n)
    g_one = per_instance_us(g_rounds, "release_s", n)
    g_wake = per_instance_us(g_rounds + p_rounds, "wake_s", n)
    s_create = per_instance_us(s_rounds, "create_s", n)
    s_ser = per_instance_us(s_rounds, "serialize_s", n)
    s_wake = per_instance_us(s_rounds, "wake_s", n)
    cpu = {name: per_instance_us(rs, key, n) for name, rs, key in
           (("gobpm_release", p_rounds, "release_cpu_s"),
            ("gobpm_release_one", g_rounds, "release_cpu_s"),
            ("gobpm_wake", g_rounds + p_rounds, "wake_cpu_s"),
            ("spiff_create", s_rounds, "create_cpu_s"),
            ("spiff_serialize", s_rounds, "serialize_cpu_s"),
            ("spiff_wake", s_rounds, "wake_cpu_s"))}
    release_ratio = g_rel / s_create
    wake_ratio = g_wake / s_wake
    with_ser_ratio = g_rel / (s_create + s_ser)
    cpu_release_ratio = cpu["gobpm_release"] / cpu["spiff_create"]
    cpu_wake_ratio = cpu["gobpm_wake"] / cpu["spiff_wake"]

    rows = [("per instance, median of rounds", "wall us", "cpu us", "spread (wall us)"),
            ("gobpm_nb create-to-dehydrated, population (SQLite)", g_rel,
             cpu["gobpm_release"], _spread(p_rounds, "release_s", n)),
            ("gobpm_nb create-to-dehydrated, one by one (SQLite)", g_one,
             cpu["gobpm_release_one"], _spread(g_rounds, "release_s", n)),
            ("gobpm_nb wake-and-complete (SQLite)", g_wake, cpu["gobpm_wake"],
             _spread(g_rounds + p_rounds, "wake_s", n)),
            ("Spiff create-to-wait (memory)", s_create, cpu["spiff_create"],
             _spread(s_rounds, "create_s", n)),
            ("Spiff serialize_json", s_ser, cpu["spiff_serialize"],
             _spread(s_rounds, "serialize_s", n)),
            ("Spiff deserialize-fire-finish", s_wake, cpu["spiff_wake"],
             _spread(s_rounds, "wake_s", n))]
    text = [(r[0], r[1] if isinstance(r[1], str) else f"{r[1]:,.1f}",
             r[2] if isinstance(r[2], str) else f"{r[2]:,.1f}", r[3]) for r in rows]
    widths = [max(len(r[i]) for r in text) for i in range(4)]
    print(f"dehydration and wake beside SpiffWorkflow {spiff.version}, one-timer process "
          f"({BPMN.name}), N={n:,} per round, {args.rounds} alternating rounds")
    for r in text:
        print("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in
                                                  zip(r[1:], widths[1:], strict=True)]))
    print(f"Spiff JSON per waiting instance: {s_rounds[-1]['json_bytes']:,} bytes")
    print(f"create-to-dehydrated vs Spiff create+serialize: {with_ser_ratio:.2f} (information)")
    print(f"by CPU time: wake {cpu_wake_ratio:.2f}, dehydration {cpu_release_ratio:.2f} "
          f"(information; the targets are on wall time)")
    print(f"wake_vs_spiff={wake_ratio:.2f} target<={TARGET:.2f}")
    print(f"release_one_by_one_vs_spiff={g_one / s_create:.2f} (information: two commits "
          "per instance)")
    print(f"release_vs_spiff={release_ratio:.2f} target<={TARGET:.2f}")
    print("all_completed=true")  # every check above passed, or the script exited already
    if args.json:
        doc = {"n": n, "rounds": args.rounds, "gobpm_rounds": g_rounds,
               "gobpm_population_rounds": p_rounds, "spiff_rounds": s_rounds,
               "per_instance_us": {"gobpm_release": g_rel, "gobpm_release_one": g_one,
                                   "gobpm_wake": g_wake,
                                   "spiff_create": s_create, "spiff_serialize": s_ser,
                                   "spiff_wake": s_wake},
               "per_instance_cpu_us": cpu,
               "wake_vs_spiff": wake_ratio, "release_vs_spiff": release_ratio,
               "release_vs_spiff_with_serialize": with_ser_ratio,
               "cpu_wake_vs_spiff": cpu_wake_ratio, "cpu_release_vs_spiff": cpu_release_ratio,
               "target": TARGET,
               "spiff_version": spiff.version}
        write_json(args.json, doc)
    return 0


def _spread(rounds: list[dict[str, float]], key: str, n: int) -> str:
    values = [r[key] / n * 1e6 for r in rounds]
    return f"{min(values):,.1f}..{max(values):,.1f}"


if __name__ == "__main__":
    sys.exit(main())
