"""A timer that hands its track to the next timer runs as a compiled plan, without resuming
the track's coroutine. Nothing a user can see changes: the same facts, the same steps, the
same states, holds and checkpoints as the general path (each scenario is run both ways)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gobpm_nb as bpm
from gobpm_nb.engine import fast
from gobpm_nb.engine.residency.router import Residency


def chain(durations: tuple[str, ...], pid: str = "chain") -> bpm.Process:
    """start -> one timer per duration -> end."""
    p = bpm.Process(pid)
    p.start("start")
    timers = [p.timer_catch(f"w{i}", duration=d) for i, d in enumerate(durations)]
    p.end("end")
    p.flow("start", *timers, "end")
    return p.validate()


def chain_beside_a_message() -> bpm.Process:
    """A chain of timers on one branch, a message wait on the other."""
    p = bpm.Process("beside")
    p.start("start")
    p.parallel_gateway("split")
    p.timer_catch("a", duration="PT5M")
    p.timer_catch("b", duration="PT7M")
    p.timer_catch("c", duration="PT3M")
    p.message_catch("paid", message="paid", key="order")
    p.parallel_gateway("join")
    p.end("end")
    p.flow("start", "split", "a", "b", "c", "join", "end")
    p.flow("split", "paid", "join")
    return p.validate()


def seen(eng: bpm.Engine) -> dict[str, Any]:
    """Everything a user can read of the engine."""
    return {"facts": [f.as_dict() for f in eng.facts], "stats": eng.stats(),
            "holders": eng.holders(), "now": eng.now,
            "instances": [(i.id, i.state, i.residency, i.data, i.tracks)
                          for i in eng.instances()]}


def both_ways(monkeypatch: pytest.MonkeyPatch, scenario: Any) -> tuple[Any, Any, int]:
    """The scenario's result with plans, then with the fast paths switched off (every timer
    on the general path), and how many timers went the general path when plans were on."""
    general = 0
    route = Residency.route

    def counting(self: Any, hold: Any, trigger: Any = None) -> str:
        nonlocal general
        if trigger is None:
            general += 1
        return route(self, hold, trigger)

    with monkeypatch.context() as m:
        m.setattr(Residency, "route", counting)
        m.setenv(fast.SWITCH, "1")  # on, whatever the environment says
        planned = scenario()
    planned_general, general = general, 0
    with monkeypatch.context() as m:
        m.setattr(Residency, "route", counting)
        m.setenv(fast.SWITCH, "0")  # the one switch: every fast path off
        plain = scenario()
    assert general > 0, "with the fast paths off, every timer takes the general path"
    return planned, plain, planned_general


def stepped(eng: bpm.Engine) -> list[Any]:
    out = []
    while (event := eng.step()) is not None:
        out.append(event)
    return out


def test_a_chain_of_timers_steps_through_the_same_events_and_facts(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=None)
        p = chain(("PT7M", "PT23M", "PT1M", "PT41M", "PT15M"))
        for n in range(3):
            eng.start(p, data={"n": n})
            eng.step()
        return stepped(eng), seen(eng)

    planned, plain, general = both_ways(monkeypatch, scenario)
    assert planned == plain
    assert general == 0  # every timer, the last one into the end event too
    assert planned[1]["stats"]["instances"]["finished"] == 3


def test_a_subscriber_sees_every_fact_of_a_plan_in_order(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=10)
        got: list[Any] = []
        eng.subscribe(lambda f: got.append(f.as_dict()))
        eng.start(chain(("PT1M", "PT2M", "PT3M")))
        eng.run()
        return got, [f.as_dict() for f in eng.facts]

    planned, plain, _ = both_ways(monkeypatch, scenario)
    assert planned == plain
    kinds = [f["kind"] for f in planned[0]]
    i = kinds.index("timer_fired")
    assert kinds[i:i + 5] == ["timer_fired", "wait_released", "node_left", "node_entered",
                              "wait_held"]


def test_on_sqlite_every_quiet_point_of_a_chain_is_checkpointed_the_same(monkeypatch, tmp_path):
    runs = iter(("planned", "plain"))

    def scenario() -> Any:
        store = bpm.SQLiteStore(Path(tmp_path) / f"{next(runs)}.db")
        eng = bpm.Engine(store=store, keep_facts=None)
        inst = eng.start(chain(("PT5M", "PT10M", "PT15M", "PT20M")))
        docs = []
        for _ in range(4):
            eng.advance("PT6M")
            docs.append(inst.checkpoint() if inst.residency != "finished" else None)
        eng.run()
        out = seen(eng), docs, store.ids()
        store.close()
        return out

    planned, plain, _ = both_ways(monkeypatch, scenario)
    assert planned == plain
    assert any(d is not None for d in planned[1])


def test_long_timers_dehydrate_between_links_of_the_chain_as_before(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=None)
        eng.start(chain(("PT2H", "PT10M", "P1D", "PT30M")))
        residency = []
        for _ in range(6):
            eng.advance("PT9H")
            residency.append(eng.stats()["instances"])
        return residency, seen(eng)

    planned, plain, _ = both_ways(monkeypatch, scenario)
    assert planned == plain
    kinds = [f["kind"] for f in planned[1]["facts"]]
    assert "dehydrated" in kinds and "hydrated" in kinds


def test_a_chain_beside_another_wait_goes_the_general_path(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=None)
        eng.start(chain_beside_a_message(), data={"order": "o1"})
        eng.advance("PT6M")
        eng.publish_message("paid", key="o1")
        eng.run()
        return seen(eng)

    planned, plain, general = both_ways(monkeypatch, scenario)
    assert planned == plain
    assert planned["instances"][0][1] == "completed"
    assert general == 2  # a, while the message wait was held beside it, and c, into the join


def test_a_rewind_into_a_chain_replays_the_same_facts(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=None)
        p = chain(("PT1M", "PT2M", "PT3M", "PT4M"))
        for _ in range(2):
            eng.start(p)
        eng.run()
        before = [f.as_dict() for f in eng.facts]
        eng.rewind(len(before) // 2)
        eng.run()
        return before, [f.as_dict() for f in eng.facts]

    planned, plain, _ = both_ways(monkeypatch, scenario)
    assert planned == plain
    before, after = planned
    assert after == before


def ends_after_a_timer() -> list[bpm.Process]:
    """Timers into end events of every sort: an error end caught by a boundary of its
    subprocess, an uncaught error end, a terminate end beside a waiting branch, a plain end
    inside a subprocess, and a called process whose end resumes its caller."""
    caught = bpm.Process("caught")
    caught.start("s")
    with caught.subprocess("sub") as sp:
        sp.start("in")
        sp.timer_catch("t", duration="PT1M")
        sp.end("boom", error="E1")
        sp.flow("in", "t", "boom")
    caught.error_boundary("on_e1", attached_to="sub", error="E1")
    caught.end("done")
    caught.end("handled")
    caught.flow("s", "sub", "done")
    caught.flow("on_e1", "handled")
    uncaught = bpm.Process("uncaught")
    uncaught.start("s")
    uncaught.timer_catch("t", duration="PT2M")
    uncaught.end("boom", error="E2")
    uncaught.flow("s", "t", "boom")
    terminate = bpm.Process("terminate")
    terminate.start("s")
    terminate.parallel_gateway("fork")
    terminate.timer_catch("t", duration="PT3M")
    terminate.signal_catch("never", signal="never")
    terminate.end("stop", terminate=True)
    terminate.end("e")
    terminate.flow("s", "fork", "t", "stop")
    terminate.flow("fork", "never", "e")
    inner = bpm.Process("inner")
    inner.start("s")
    with inner.subprocess("sub") as sp:
        sp.start("in")
        sp.timer_catch("t", duration="PT4M")
        sp.end("out")
        sp.flow("in", "t", "out")
    inner.timer_catch("after", duration="PT1M")
    inner.end("e")
    inner.flow("s", "sub", "after", "e")
    caller = bpm.Process("caller")
    caller.start("s")
    caller.call_activity("call", process="inner")
    caller.end("e")
    caller.flow("s", "call", "e")
    return [p.validate() for p in (caught, uncaught, terminate, inner, caller)]


def test_timers_into_end_events_of_every_sort_end_the_same_way(monkeypatch):
    def scenario() -> Any:
        eng = bpm.Engine(keep_facts=None)
        for p in ends_after_a_timer():
            eng.deploy(p)
        for p in ends_after_a_timer():
            if p.id != "inner":
                eng.start(p)
        eng.run()
        return seen(eng)

    planned, plain, _ = both_ways(monkeypatch, scenario)
    assert planned == plain
    states = {i[0]: i[1] for i in planned["instances"]}
    assert sorted(states.values()) == ["completed", "completed", "completed", "failed",
                                       "terminated"]
    assert planned["stats"]["coroutines"] == 0
