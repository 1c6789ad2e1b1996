"""Boundary events (timer, message, signal, conditional), conditional catches and end events."""

import pytest
from conftest import ended_at, kinds

import gobpm_nb as bpm


def guarded(kind, interrupting=True, **spec):
    p = bpm.Process("guarded")
    p.start("s")
    p.user_task("work")
    getattr(p, f"{kind}_boundary")("b", attached_to="work", interrupting=interrupting, **spec)
    p.end("done")
    p.end("side")
    p.flow("s", "work", "done")
    p.flow("b", "side")
    return p


def test_interrupting_message_boundary_cancels_the_task():
    """A matching message fires the boundary: the task leaves the inbox, the track is cancelled."""
    eng = bpm.Engine()
    inst = eng.start(guarded("message", message="cancel", key="id"), {"id": 3})
    eng.run()
    assert eng.publish_message("cancel", key=3, payload={"why": "x"}) == inst.id
    assert eng.tasks() == []
    eng.run()
    assert ended_at(inst) == ["side"] and inst.data["why"] == "x"
    assert inst.tracks[0].state == "cancelled"


def test_non_interrupting_signal_boundary_forks_and_the_task_stays_open():
    """A non-interrupting signal forks at the boundary; the task is still in the inbox."""
    eng = bpm.Engine(dehydrate=False)
    inst = eng.start(guarded("signal", interrupting=False, signal="ping"))
    eng.run()
    eng.broadcast_signal("ping")
    eng.run()
    assert ended_at(inst) == ["side"]
    assert len(eng.tasks()) == 1 and inst.tracks[0].state == "waiting"
    eng.broadcast_signal("ping")
    eng.run()
    assert ended_at(inst) == ["side", "side"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and eng.holders() == []


def test_non_interrupting_cycle_boundary_fires_each_repetition():
    """R3/PT10M on a non-interrupting boundary fires three times, ten minutes apart."""
    eng = bpm.Engine()
    inst = eng.start(guarded("timer", interrupting=False, cycle="R3/PT10M"))
    eng.advance("PT2H")
    fired = [f.at.minute for f in eng.facts if f.kind == "timer_fired"]
    assert fired == [10, 20, 30]
    assert ended_at(inst) == ["side"] * 3
    assert [h.kind for h in eng.holders()] == ["task"]


def test_timer_boundary_by_date():
    """A boundary with an absolute date fires at that date."""
    eng = bpm.Engine()
    inst = eng.start(guarded("timer", date="2026-01-03T12:00:00Z"))
    eng.run()
    assert ended_at(inst) == ["side"]
    assert eng.now.isoformat() == "2026-01-03T12:00:00+00:00"


def test_conditional_boundary_fires_when_a_data_change_makes_it_true():
    """A conditional boundary is re-evaluated whenever the instance's data changes."""
    p = bpm.Process("cond")
    p.start("s")
    p.parallel_gateway("fork")
    p.user_task("work")
    p.conditional_boundary("b", attached_to="work", condition="risk > 5")
    p.timer_catch("later", duration="PT1H")
    p.script_task("raise_risk", fn=lambda d: {"risk": 9})
    p.end("done")
    p.end("side")
    p.end("e2")
    p.flow("s", "fork", "work", "done")
    p.flow("fork", "later", "raise_risk", "e2")
    p.flow("b", "side")
    eng = bpm.Engine()
    inst = eng.start(p, {"risk": 1})
    eng.advance("PT30M")
    assert len(eng.tasks()) == 1
    eng.advance("PT1H")
    assert sorted(ended_at(inst)) == ["e2", "side"] and eng.tasks() == []


def test_conditional_catch_waits_until_its_condition_holds():
    """A conditional catch parks while false and continues once a data change makes it true."""
    p = bpm.Process("cond")
    p.start("s")
    p.parallel_gateway("fork")
    p.conditional_catch("until", condition=lambda d: d["stock"] > 0)
    p.user_task("restock")
    p.end("shipped")
    p.end("e2")
    p.flow("s", "fork", "until", "shipped")
    p.flow("fork", "restock", "e2")
    eng = bpm.Engine()
    inst = eng.start(p, {"stock": 0})
    eng.run()
    assert inst.state == "active"
    eng.complete_task(eng.tasks()[0].id, {"stock": 3})
    eng.run()
    assert sorted(ended_at(inst)) == ["e2", "shipped"]


def test_a_terminate_end_cancels_every_other_track():
    """Reaching a terminate end ends the instance as terminated; other tracks are cancelled."""
    p = bpm.Process("term")
    p.start("s")
    p.parallel_gateway("fork")
    p.user_task("slow")
    p.end("kill", terminate=True)
    p.end("e")
    p.flow("s", "fork", "slow", "e")
    p.flow("fork", "kill")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "terminated"
    assert eng.tasks() == [] and eng.holders() == [] and eng.stats()["coroutines"] == 0
    assert sorted(t.state for t in inst.tracks) == ["cancelled", "completed"]


def test_an_error_end_fails_the_instance_naming_the_error():
    """An error end event with nothing to catch it fails the instance with an incident."""
    p = bpm.Process("err")
    p.start("s")
    p.end("broken", error="E42")
    p.flow("s", "broken")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed"
    assert [f.details.get("error") for f in eng.facts if f.kind == "incident"] == ["E42"]
    assert "instance_failed" in kinds(eng)


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_non_interrupting_boundary_hears_a_second_trigger_at_the_same_instant(dehydrate):
    """Two messages (and two signals) at one instant both fire a non-interrupting boundary."""
    p = bpm.Process("mb")
    p.start("s")
    p.user_task("u")
    p.message_boundary("info", attached_to="u", message="info", key="k", interrupting=False)
    p.signal_boundary("ping", attached_to="u", signal="ping", interrupting=False)
    p.script_task("log", fn=lambda d: {"heard": d.get("heard", 0) + 1})
    p.end("e")
    p.end("ei")
    p.flow("s", "u", "e")
    p.flow("info", "log", "ei")
    p.flow("ping", "log")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p, {"k": "A"})
    eng.advance("PT2H")
    assert [eng.publish_message("info", key="A") for _ in range(2)] == ["i1", "i1"]
    assert [eng.broadcast_signal("ping") for _ in range(2)] == [1, 1]
    eng.run()
    assert inst.data["heard"] == 4 and inst.state == "active"


def test_a_non_interrupting_message_boundary_takes_each_buffered_message_then_listens():
    """Two messages buffered before the task: the boundary fires for both, says so with
    message_correlated (buffered), and hears a third one that comes later."""
    p = bpm.Process("nb")
    p.start("s")
    p.user_task("u")
    p.message_boundary("mb", attached_to="u", message="pay", key="k", interrupting=False)
    p.end("e")
    p.end("e2")
    p.flow("s", "u", "e")
    p.flow("mb", "e2")
    eng = bpm.Engine()
    eng.publish_message("pay", key="x", ttl="PT1H")
    eng.publish_message("pay", key="x", ttl="PT1H")
    eng.start(p, {"k": "x"})
    eng.advance("PT10M")
    assert eng.publish_message("pay", key="x") == "i1"
    eng.advance("PT10M")
    fired = [f for f in eng.facts if f.kind == "node_left" and f.node == "mb"]
    correlated = [f.details.get("buffered", False) for f in eng.facts
                  if f.kind == "message_correlated"]
    assert len(fired) == 3 and correlated == [True, True, False]
    assert [(h.node, h.kind) for h in eng.holders()] == [("u", "task"), ("mb", "message")]
