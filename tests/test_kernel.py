"""The scheduler and the virtual clock."""

from datetime import UTC, datetime, timedelta

import pytest
from conftest import Down, snapshot

import gobpm_nb as bpm
from gobpm_nb.kernel import PASS, SUSPEND, Kernel


def test_the_clock_starts_at_2026_and_is_timezone_aware():
    """A new engine's clock reads 2026-01-01T00:00:00Z."""
    assert bpm.Engine().now == datetime(2026, 1, 1, tzinfo=UTC)
    assert bpm.Engine(start="2026-03-01T09:00:00Z").now.hour == 9


def test_events_at_one_time_run_first_in_first_out():
    """Ties in virtual time break by the order the events were scheduled."""
    k = Kernel(0)
    seen = []
    k.call_at(10, seen.append, "b")
    k.call_soon(seen.append, "a")
    k.call_at(10, seen.append, "c")
    k.call_at(5, seen.append, "early")
    k.run()
    assert seen == ["a", "early", "b", "c"]
    assert k.now == 10


def test_a_cancelled_deadline_never_runs():
    """Cancelling a scheduled deadline makes it vanish from the run."""
    k = Kernel(0)
    seen = []
    d = k.call_at(3, seen.append, "x")
    d.cancel()
    assert k.run() == 0 and seen == [] and k.now == 0


def test_coroutines_are_counted_while_alive():
    """The registry of live coroutines shrinks as coroutines finish."""
    k = Kernel(0)

    def body():
        yield SUSPEND
        yield PASS
        yield SUSPEND

    c = body()
    k.spawn(c, "owner")
    assert len(k.live) == 1
    k.run()
    assert len(k.live) == 1  # parked on SUSPEND
    k.resume(c)
    k.run()
    assert len(k.live) == 0


def test_step_moves_the_clock_to_the_next_deadline_when_idle():
    """step() with nothing ready jumps virtual time to the next timer and fires it."""
    p = bpm.Process("t")
    p.start("s")
    p.timer_catch("wait", duration="PT10M")
    p.end("e")
    p.flow("s", "wait", "e")
    eng = bpm.Engine()
    eng.start(p)
    events = []
    while (ev := eng.step()) is not None:
        events.append(ev)
    assert any(ev.kind == "timer" and ev.node == "wait" for ev in events)
    assert eng.now == datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
    assert eng.step() is None


def test_advance_runs_due_events_and_stops_the_clock_at_the_target():
    """advance() fires what falls due and leaves the clock exactly at now + duration."""
    eng = bpm.Engine()
    eng.advance("PT90M")
    assert eng.now == datetime(2026, 1, 1, 1, 30, tzinfo=UTC)
    eng.advance(timedelta(minutes=30))
    assert eng.now.hour == 2


@pytest.mark.parametrize("call", [
    lambda e: e.advance("-PT1H"),
    lambda e: e.advance("soon"),
    lambda e: e.run(until="2025-12-31T00:00:00Z"),
])
def test_the_clock_never_moves_backwards_and_bad_durations_change_nothing(call):
    """A negative or malformed advance, or run(until=past), raises and changes nothing."""
    eng = bpm.Engine()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError):
        call(eng)
    assert snapshot(eng) == before


def test_run_refuses_to_start_with_an_unbounded_cycle_armed():
    """run() without until= raises EngineError naming the cycle timer; run(until=) works."""
    p = bpm.Process("c")
    p.start("s")
    p.user_task("t")
    p.timer_boundary("tick", attached_to="t", cycle="R/PT1H", interrupting=False)
    p.end("e")
    p.end("ticked")
    p.flow("s", "t", "e")
    p.flow("tick", "ticked")
    eng = bpm.Engine()
    eng.start(p)
    eng.step(), eng.step(), eng.step()
    with pytest.raises(bpm.EngineError, match="tick"):
        eng.run()
    eng.run(until="2026-01-01T05:30:00Z")
    fired = [f for f in eng.facts if f.kind == "timer_fired"]
    assert len(fired) == 5


def test_step_reports_each_documented_event_kind():
    """Stepping through a ttl expiry, a failing wake's retry, a timer, a track and a loop
    turn reports exactly those kinds, each naming what it ran."""

    p = bpm.Process("t")
    p.start("s")
    p.timer_catch("wait", duration="PT2H")
    p.end("e")
    p.flow("s", "wait", "e")
    store = Down()
    eng = bpm.Engine(store=store)
    eng.start(p)
    eng.publish_message("nobody", key=1, ttl="PT1H")
    kinds = set()
    while eng.now < datetime(2026, 1, 1, 2, tzinfo=UTC):
        ev = eng.step()
        kinds.add(ev.kind)
        if ev.kind == "expiry":
            assert ev.instance is None and ev.at.hour == 1
        store.down = eng.now >= datetime(2026, 1, 1, 1, tzinfo=UTC)
    ev = eng.step()
    assert ev.kind == "retry" and ev.instance == "i1"
    store.down = False
    eng.run()
    kinds.add("retry")
    assert kinds == {"track", "loop", "timer", "expiry", "retry"}
    timer = [f for f in eng.facts if f.kind == "timer_fired"]
    assert len(timer) == 1 and eng.instance("i1").state == "completed"


def test_a_timer_firing_is_one_event_that_enters_the_next_node():
    """The step that fires a timer runs its fire path, leaves it and enters the node after it
    (one scheduler event per firing), resident or dehydrated, with the same facts either way."""
    def steps(dehydrate):
        p = bpm.Process("t")
        p.start("s")
        p.timer_catch("wait", duration="P1D")
        p.user_task("next")
        p.end("e")
        p.flow("s", "wait", "next", "e")
        eng = bpm.Engine(dehydrate=dehydrate)
        eng.start(p)
        eng.run(until=eng.now)
        seen = len(eng.facts)
        ev = eng.step()
        kinds = [(f.kind, f.node) for f in eng.facts[seen:] if f.kind != "hydrated"]
        return ev.kind, ev.node, kinds, [t.id for t in eng.tasks()]

    resident, dehydrated = steps(False), steps(True)
    kind, node, facts, tasks = resident
    assert (kind, node) == ("timer", "wait")
    assert facts[0] == ("timer_fired", "wait")
    assert ("node_left", "wait") in facts and ("node_entered", "next") in facts
    assert ("task_created", "next") in facts and tasks  # the task is there after one step
    woken = dehydrated[2]  # the continuation fork re-enters the wait, then goes on the same way
    assert dehydrated[:2] == ("timer", "wait") and dehydrated[3]
    assert woken[woken.index(("node_left", "wait")):][:3] == facts[2:5]
