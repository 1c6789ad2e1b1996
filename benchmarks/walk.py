"""The call path of two walks through the engine: calls, modules and module switches.

Issue 22 names two walks and what they should cost after its refactor into layers; this
script records what they cost now. It reports, it never asserts on the figures: it exits 0
whenever both walks did what they should, and non-zero (VERIFY FAILED) only when one did not.

Walk 1, a message to a dehydrated instance. The process is ``start -> message_catch "wait"
(message "paid", key "order") -> user_task "next" -> end``. One instance is started on the
default ``Engine()`` and run (``eng.run()``) until it is dehydrated with its message holder
registered (checked). Then these segments are recorded, each on its own:
``publish_message`` (``eng.publish_message("paid", key=...)`` alone; it must return the
instance), then ``step 1``, ``step 2``, ... : each ``eng.step()`` from the first after the
message up to and including the step in which the node after the catch (``next``) is entered,
at most four. The walk passes when ``node_entered`` for ``next`` is a fact of the last recorded
step and of none before (today that is step 2: ``publish_message`` accepts the message and
queues the wake; step 1 is that ``wake`` event, which reads the checkpoint, hydrates the
instance and runs the continuation at the catch; step 2 enters ``next``, creates its task and
dehydrates the instance again).

Walk 2, a timer firing. The process is ``start -> timer_catch "wait" (PT1H) -> end``; one
instance is started and run to the clock's start (``eng.run(until=eng.now)``) until it is
dehydrated with its timer holder registered (checked). Then each ``eng.step()`` is recorded,
from the one that fires the timer up to and including the step in which ``end`` is entered, at
most four (today one step does it all: fire, wake, run the continuation, complete). The walk
passes when ``timer_fired`` is a fact of step 1 and ``node_entered`` for ``end`` of the last.

What is counted, per segment, with ``sys.setprofile`` (the profiler sees every Python-level
call and return, and every call of a C function):

* calls: Python-level ``call`` events of functions defined in the ``gobpm_nb`` package (the
  frame's module, ``f_globals["__name__"]``, is ``gobpm_nb`` or under it; code that dataclasses
  generate in a package module counts too). Each resumption of a generator or coroutine is a
  ``call`` event and is counted (closing one throws into it: a resumption too); ``resumed``
  says how many of the calls were resumptions.
  Python functions outside the package (``json``, ``logging``, a namedtuple's ``__new__``)
  are not counted as calls; ``other py`` counts those run under a package frame. C
  functions (builtins such as ``len``, methods of ``dict``, ``heapq``) are not counted as
  calls either; ``C calls`` counts those called directly from a package frame.
* modules: the distinct package modules those calls ran in.
* switches: a switch is a call or a return that moves control between two package frames of
  different modules. For a call, the two frames are the callee and the nearest package frame
  below it on the stack (the caller, or the caller of a standard-library function between
  them); for a return (a generator's yield included), the returning frame and the nearest
  package frame below it, which control goes back to. Frames outside the package are
  transparent; the first call into the package and the last return out of it, which have no
  package frame on the other side, are no switch. A call and its return across two modules
  are thus two switches.
* entered: per module, the switches whose destination it is (calls into it and returns to
  it from another module); ``entered most`` lists the five modules entered most, each with
  how many of its entries were calls into it (the rest are returns to it: a module that
  calls out to many others is re-entered each time one of them returns).

Each segment is a row; ``total`` adds up a walk's segments (its modules: distinct over them
all). Issue 22's targets are printed beside the figures, each ``met=yes`` or ``met=no``:
``publish_message`` at most 40 calls and 15 switches, and the timer walk (its total: every
step from the firing to ``end`` entered) at most 20 calls. ``--trace`` then prints each
recorded call as ``module.function``, indented by its depth among package calls; ``>`` marks
a call that switched module, ``(resumed)`` a generator's resumption.

Before recording, both walks run once on another engine (not recorded), so that no lazy
import or first-use cache is charged to them; the collector is off while recording.

    python benchmarks/walk.py                      # the figures and the targets
    python benchmarks/walk.py --trace              # and each recorded call, indented by depth
    python benchmarks/walk.py --json figures.json
"""

from __future__ import annotations

import argparse
import dis
import gc
import inspect
import sys
from collections import Counter
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from common import fail, write_json  # benchmarks/common.py, beside this script

import gobpm_nb as bpm

PACKAGE = "gobpm_nb"
MAX_STEPS = 4
#: Issue 22's targets: (walk, segment or "total", figure, at most).
TARGETS = [("message", "publish_message", "calls", 40),
           ("message", "publish_message", "switches", 15),
           ("timer", "total", "calls", 20)]
GENERATOR = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def package_module(frame: FrameType) -> str | None:
    """The module a frame runs in, when it is in the package (None otherwise)."""
    name = frame.f_globals.get("__name__")
    if name == PACKAGE or (isinstance(name, str) and name.startswith(PACKAGE + ".")):
        return name
    return None


def below(frame: FrameType) -> str | None:
    """The module of the nearest package frame below ``frame`` on the stack, if any."""
    f = frame.f_back
    while f is not None:
        mod = package_module(f)
        if mod is not None:
            return mod
        f = f.f_back
    return None


class Recorder:
    """The profile function of one segment: it counts calls, switches and entries, and keeps
    each package call as ``(depth, module, qualified name, resumed, switched)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, str, bool, bool]] = []
        self.switches = 0
        self.entered: Counter[str] = Counter()
        self.by_call: Counter[str] = Counter()
        self.c_calls = 0
        self.other_py = 0
        self.depth = 0
        self._first_resume: dict[CodeType, int] = {}

    def _resumed(self, frame: FrameType) -> bool:
        """A generator or coroutine frame that stands past its first RESUME was resumed."""
        code = frame.f_code
        if not code.co_flags & GENERATOR:
            return False
        first = self._first_resume.get(code)
        if first is None:
            first = next(i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
            self._first_resume[code] = first
        return frame.f_lasti != first

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            mod = package_module(frame)
            if mod is None:
                if below(frame) is not None:  # not the script's own frame
                    self.other_py += 1
                return
            src = below(frame)
            switched = src is not None and src != mod
            if switched:
                self.switches += 1
                self.entered[mod] += 1
                self.by_call[mod] += 1
            self.calls.append((self.depth, mod, frame.f_code.co_qualname,
                               self._resumed(frame), switched))
            self.depth += 1
        elif event == "return":
            mod = package_module(frame)
            if mod is None:
                return
            self.depth -= 1
            dst = below(frame)
            if dst is not None and dst != mod:
                self.switches += 1
                self.entered[dst] += 1
        elif event == "c_call" and package_module(frame) is not None:
            self.c_calls += 1

    def figures(self) -> dict[str, Any]:
        return {"calls": len(self.calls), "resumed": sum(c[3] for c in self.calls),
                "c_calls": self.c_calls, "other_py": self.other_py,
                "modules": len({c[1] for c in self.calls}), "switches": self.switches,
                "entered": dict(self.entered.most_common()),
                "entered_by_call": dict(self.by_call.most_common())}


def record(fn: Callable[[], Any]) -> tuple[Recorder, Any]:
    """Run ``fn`` under a fresh Recorder (the collector off); its figures and fn's result."""
    rec = Recorder()
    gc.collect()
    gc.disable()
    sys.setprofile(rec)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
        gc.enable()
    return rec, result


def message_process() -> bpm.Process:
    p = bpm.Process("walk_message")
    p.start("start")
    p.message_catch("wait", message="paid", key="order")
    p.user_task("next")
    p.end("end")
    p.flow("start", "wait", "next", "end")
    return p.validate()


def timer_process() -> bpm.Process:
    p = bpm.Process("walk_timer")
    p.start("start")
    p.timer_catch("wait", duration="PT1H")
    p.end("end")
    p.flow("start", "wait", "end")
    return p.validate()


def dehydrated(eng: bpm.Engine, iid: str, kind: str) -> None:
    """The instance is dehydrated, and its one holder is a held ``kind`` hold at ``wait``."""
    state = eng.describe_instance(iid).residency
    holds = [(h.kind, h.node, h.state) for h in eng.holders(iid)]
    if state != "dehydrated" or holds != [(kind, "wait", "held")]:
        fail(f"instance {iid!r} is {state} with holders {holds}, expected dehydrated with a "
             f"held {kind} hold at 'wait'")


def steps_until(eng: bpm.Engine, node: str, segments: dict[str, Recorder],
                facts: list[list[Any]]) -> None:
    """Record each ``eng.step()`` up to the one in which ``node`` is entered (at most
    MAX_STEPS); the facts of each step go to ``facts``."""
    for n in range(1, MAX_STEPS + 1):
        seen = len(eng.facts)  # the default engine keeps every fact of so short a walk
        rec, event = record(eng.step)
        new = eng.facts[seen:]
        segments[f"step {n}"] = rec
        facts.append(new)
        if event is None:
            fail(f"step {n}: nothing was scheduled before {node!r} was entered")
        if any(f.kind == "node_entered" and f.node == node for f in new):
            return
    fail(f"{node!r} was not entered within {MAX_STEPS} steps")


def entered_only_last(facts: list[list[Any]], node: str) -> bool:
    hits = [any(f.kind == "node_entered" and f.node == node for f in fs) for fs in facts]
    return hits[-1] and not any(hits[:-1])


def walk_message() -> tuple[dict[str, Recorder], str]:
    """Walk 1 on a fresh default engine: its segments and the check it passed."""
    eng = bpm.Engine()
    iid = eng.start(message_process(), {"order": "o-1"}).id
    eng.run()
    dehydrated(eng, iid, "message")
    rec, reached = record(lambda: eng.publish_message("paid", key="o-1", payload={"sum": 9}))
    if reached != iid:
        fail(f"publish_message returned {reached!r}, expected the dehydrated instance {iid!r}")
    segments: dict[str, Recorder] = {"publish_message": rec}
    facts: list[list[Any]] = []
    steps_until(eng, "next", segments, facts)
    if not entered_only_last(facts, "next"):
        fail("'next' was entered before the last recorded step")
    return segments, f"'next' entered in step {len(facts)}"


def walk_timer() -> tuple[dict[str, Recorder], str]:
    """Walk 2 on a fresh default engine: its segments and the check it passed."""
    eng = bpm.Engine()
    iid = eng.start(timer_process()).id
    eng.run(until=eng.now)
    dehydrated(eng, iid, "timer")
    segments: dict[str, Recorder] = {}
    facts: list[list[Any]] = []
    steps_until(eng, "end", segments, facts)
    if not any(f.kind == "timer_fired" and f.node == "wait" for f in facts[0]):
        fail("step 1 did not fire the timer at 'wait'")
    if not entered_only_last(facts, "end"):
        fail("'end' was entered before the last recorded step")
    return segments, f"timer fired in step 1, 'end' entered in step {len(facts)}"


def total(segments: dict[str, Recorder]) -> dict[str, Any]:
    """The segments' figures added up (modules: distinct over all of them)."""
    out: dict[str, Any] = {k: 0 for k in ("calls", "resumed", "c_calls", "other_py",
                                          "switches")}
    entered: Counter[str] = Counter()
    by_call: Counter[str] = Counter()
    for rec in segments.values():
        fig = rec.figures()
        for k in out:
            out[k] += fig[k]
        entered.update(rec.entered)
        by_call.update(rec.by_call)
    out["modules"] = len({c[1] for rec in segments.values() for c in rec.calls})
    out["entered"] = dict(entered.most_common())
    out["entered_by_call"] = dict(by_call.most_common())
    return out


def short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


def show(title: str, figures: dict[str, dict[str, Any]], check: str) -> None:
    """One walk's table: a row per segment and the total, then the modules entered most."""
    print(title)
    print(f"{'segment':<16} {'calls':>6} {'resumed':>8} {'C calls':>8} {'other py':>9} "
          f"{'modules':>8} {'switches':>9}")
    for name, fig in figures.items():
        print(f"{name:<16} {fig['calls']:>6} {fig['resumed']:>8} {fig['c_calls']:>8} "
              f"{fig['other_py']:>9} {fig['modules']:>8} {fig['switches']:>9}")
    for name, fig in figures.items():
        by_call = fig["entered_by_call"]
        most = ", ".join(f"{short(m)} {n} ({by_call.get(m, 0)} by call)"
                         for m, n in list(fig["entered"].items())[:5])
        print(f"  entered most, {name}: {most or '-'}")
    print(f"walk_check=passed ({check})")


def trace(title: str, segments: dict[str, Recorder]) -> None:
    """Each recorded call as module.function, indented by its depth among package calls;
    ``>`` marks a call that switched module, ``(resumed)`` a generator's resumption."""
    for name, rec in segments.items():
        print(f"\ntrace of {title}, {name}:")
        for depth, mod, fn, resumed, switched in rec.calls:
            mark = ">" if switched else " "
            print(f"{mark} {'  ' * depth}{short(mod)}.{fn}{' (resumed)' if resumed else ''}")


def targets(figures: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Issue 22's targets beside the figures, each met or not (reported, never asserted)."""
    rows = []
    for walk, segment, figure, most in TARGETS:
        value = figures[walk][segment][figure]
        rows.append({"walk": walk, "segment": segment, "figure": figure, "value": value,
                     "target": most, "met": value <= most})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--trace", action="store_true", help="print each recorded call")
    ap.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = ap.parse_args(argv)
    walk_message()  # once unrecorded: lazy imports and first-use caches are not charged
    walk_timer()
    walks = {"message": ("walk 1: a message to a dehydrated instance (start -> message catch "
                         "'wait' -> user task 'next' -> end)", walk_message()),
             "timer": ("walk 2: a timer firing (start -> timer catch 'wait' PT1H -> end)",
                       walk_timer())}
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    for key, (title, (segments, check)) in walks.items():
        figures[key] = {name: rec.figures() for name, rec in segments.items()}
        figures[key]["total"] = total(segments)
        show(title, figures[key], check)
        print()
    rows = targets(figures)
    print("targets (issue 22; reported, never asserted):")
    for r in rows:
        print(f"{r['walk']}.{r['segment']}.{r['figure']}={r['value']} target<={r['target']} "
              f"met={'yes' if r['met'] else 'no'}")
    if args.trace:
        for title, (segments, _) in walks.values():
            trace(title.split(":")[0], segments)
    if args.json:
        write_json(args.json, {"figures": figures, "targets": rows,
                               "counted": "Python-level calls of functions in the gobpm_nb "
                                          "package (generator resumptions included); C "
                                          "calls and other Python calls apart"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
