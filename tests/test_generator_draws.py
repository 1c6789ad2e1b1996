"""The property-test generator (tests/generate.py) really draws the elements it says it
draws, and they run there: over a fixed set of drawn processes, some have a complex gateway
whose join fires and then resets, a throw and an end that throw a message and a signal, a
compensation throw and a compensation end that do not wait, an ad-hoc subprocess (a person
activating its elements) and an event-based gateway that creates instances (exclusive and
parallel); each is passed in a run."""

from __future__ import annotations

from collections import Counter

from generate import apart, begin, build, processes
from hypothesis import HealthCheck, given, settings

import gobpm_nb as bpm

DRAWN = 300


def drawn_trees() -> list:
    """The first ``DRAWN`` processes the generator draws from a fixed seed."""
    trees: list = []

    @settings(max_examples=DRAWN, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(processes)
    def collect(tree):
        trees.append(tree)

    collect()
    return trees


def run(proc, called) -> bpm.Engine:
    """Two instances (k = 0 and 1) driven by every kind of trigger, a few rounds."""
    eng = bpm.Engine()
    for c in called:
        eng.deploy(c)
    for k in range(2):
        begin(eng, proc, {"k": k, "total": 0, "x": 0})
    eng.run(until=eng.now)
    for _ in range(3):
        for view in eng.adhocs():  # a person activates each element once
            for element in view.elements:
                if any(v == view for v in eng.adhocs()):
                    eng.activate(view.instance, view.adhoc, element, view.track)
                    eng.run(until=eng.now)
        for k in range(2):
            for m in ("ma", "mb"):
                eng.publish_message(m, key=k)
        for s in ("sa", "sb"):
            eng.broadcast_signal(s)
        for _ in range(4):  # each completion may cancel or create other tasks
            tasks = eng.tasks()
            if tasks:
                eng.complete_task(tasks[0].id)
        eng.advance("P1D")
    return eng


def what(e) -> str | None:
    """Which of the new elements ``e`` is, if any."""
    if e.kind == "complex_gateway" and e.activation is not None:
        return "complex join"
    if e.kind in ("multiple_throw", "multiple_end"):
        return e.kind
    if e.kind == "compensation_throw" and e.no_wait:
        return "compensation no wait"
    if e.kind == "compensation_end":
        return "compensation end no wait" if e.no_wait else "compensation end"
    if e.kind == "adhoc_subprocess":
        return "ad-hoc subprocess"
    if e.kind == "event_gateway" and e.instantiate:
        return "instantiating parallel gateway" if e.parallel else "instantiating gateway"
    return None


NEW = ("complex join", "multiple_throw", "multiple_end", "compensation no wait",
       "compensation end", "compensation end no wait", "ad-hoc subprocess",
       "instantiating gateway", "instantiating parallel gateway")


def test_the_new_elements_are_drawn_and_run():
    """Each new element is drawn (3 times at least) and passed in a run; a complex join
    fires and later takes a token in by its reset."""
    seen: Counter = Counter()
    passed: Counter = Counter()
    for tree in drawn_trees():
        proc, called, _ = build(tree)
        new = {e.id: what(e) for p in [proc, *called] for e in p.elements if what(e)}
        seen.update(new.values())
        if all(passed[k] >= 3 for k in [*new.values(), "reset"]):
            continue
        eng = run(proc, called)
        passed.update(new[f.node] for f in eng.facts
                      if f.kind == "node_left" and f.node in new)
        passed["reset"] += sum(f.kind == "gateway_reset" and f.node in new
                               for f in eng.facts)
    for kind in NEW:
        assert seen[kind] >= 3, f"{kind} drawn {seen[kind]} times in {DRAWN}: {seen}"
        assert passed[kind] >= 1, f"{kind} never passed in a run: {passed}"
    assert passed["reset"] >= 1, f"no complex gateway reset in any run: {passed}"


def test_apart_turns_the_message_and_signal_throws_into_quiet_blocks():
    """Instances kept apart throw neither messages nor signals: the throw of both becomes a
    script and the end of both a plain end."""
    tree = ([("send", "multiple", ("ma", "sa", False)),
             ("raise", "multiple", ("mb", "sb", True), 2)], [])
    together = build(tree).proc
    assert {e.kind for e in together.elements} >= {"multiple_throw", "multiple_end"}
    alone = build(apart(tree)).proc
    assert not {e.kind for e in alone.elements} & {"multiple_throw", "multiple_end"}
