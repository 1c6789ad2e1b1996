"""Waking dehydrated instances: messages, signals, tasks, gateways, boundaries, failures."""

import pytest
from conftest import approval, ended_at, kinds, left

import gobpm_nb as bpm


def facts(eng, kind):
    return [f for f in eng.facts if f.kind == kind]


def catch(kind, **spec):
    p = bpm.Process(kind)
    p.start("s")
    getattr(p, kind)("w", **spec)
    p.end("e")
    p.flow("s", "w", "e")
    return p


def test_message_wake_wrong_key_does_not_hydrate_right_key_binds_the_payload():
    """Correlation lives on the holder: a mismatched key never hydrates anything."""
    eng = bpm.Engine()
    inst = eng.start(catch("message_catch", message="paid", key="order"), {"order": "o-1"})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    assert eng.publish_message("paid", key="o-2", payload={"sum": 1}) is None
    eng.run()
    assert inst.residency == "dehydrated" and facts(eng, "hydrated") == []
    assert eng.publish_message("paid", key="o-1", payload={"sum": 9}) == inst.id
    eng.run()
    assert inst.state == "completed" and inst.data == {"order": "o-1", "sum": 9}
    assert [f.details["trigger"] for f in facts(eng, "hydrated")] == ["message"]


def test_signal_wake():
    """A broadcast signal wakes a dehydrated instance and continues it."""
    eng = bpm.Engine()
    insts = [eng.start(catch("signal_catch", signal="go")) for _ in range(3)]
    eng.advance("PT1M")
    assert eng.stats()["instances"]["dehydrated"] == 3
    assert eng.broadcast_signal("go", {"x": 1}) == 3
    eng.run()
    assert all(i.state == "completed" and i.data == {"x": 1} for i in insts)
    assert len(facts(eng, "hydrated")) == 3


def test_user_task_wake_keeps_the_task_id_and_outputs_reach_the_data():
    """Completing a dehydrated instance's task wakes it; the id survived; outputs are merged."""
    p = bpm.Process("review")
    p.start("s")
    p.user_task("check", assignee="ann")
    p.end("e")
    p.flow("s", "check", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"n": 1})
    eng.advance("PT1M")
    (task,) = eng.tasks()
    assert inst.residency == "dehydrated" and task.id == "i1:check:1"
    eng.advance("P3D")
    assert eng.tasks() == [task]
    eng.complete_task(task.id, {"ok": True})
    eng.run()
    assert inst.state == "completed" and inst.data == {"n": 1, "ok": True}
    done = facts(eng, "task_completed")
    assert [f.details["task"] for f in done] == ["i1:check:1"]


def race(second="timer"):
    p = bpm.Process("race")
    p.start("s")
    p.event_gateway("gw")
    p.message_catch("paid", message="payment", key="order")
    if second == "timer":
        p.timer_catch("other", duration="PT2H")
    else:
        p.conditional_catch("other", condition="cancelled == True")
    p.end("ok")
    p.end("late")
    p.flow("s", "gw", "paid", "ok")
    p.flow("gw", "other", "late")
    return p


def test_event_gateway_message_arm_wins_the_timer_never_fires_one_hydration():
    """A dehydrated gateway: the message wins, the timer arm is withdrawn, one hydration."""
    eng = bpm.Engine()
    inst = eng.start(race(), {"order": "o-1"})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    assert sorted(h.node for h in eng.holders()) == ["other", "paid"]
    eng.publish_message("payment", key="o-1")
    eng.run()
    assert ended_at(inst) == ["ok"]
    assert len(facts(eng, "hydrated")) == 1 and facts(eng, "timer_fired") == []
    assert left(eng, inst) == ["s", "gw", "paid", "ok"]


def test_event_gateway_with_a_conditional_arm_stays_resident_and_its_timer_still_fires():
    """One unholdable (conditional) arm keeps the gateway resident; its timer arm fires."""
    p = bpm.Process("race")
    p.start("s")
    p.event_gateway("gw")
    p.conditional_catch("flag", condition="flag == True")
    p.timer_catch("t", duration="PT2H")
    p.end("by_flag")
    p.end("by_time")
    p.flow("s", "gw", "flag", "by_flag")
    p.flow("gw", "t", "by_time")
    eng = bpm.Engine()
    inst = eng.start(p, {"flag": False})
    eng.advance("PT1H")
    assert inst.residency == "resident" and eng.stats()["coroutines"] == 2
    assert [h.node for h in eng.holders()] == ["t"]
    eng.run()
    assert ended_at(inst) == ["by_time"] and "dehydrated" not in kinds(eng)


def test_dehydrated_user_task_with_a_24h_interrupting_timer_escalates_at_25h():
    """The approval example dehydrated: at +25 h the boundary wakes it and it escalates."""
    eng = bpm.Engine()
    inst = eng.start(approval(), {"amount": 120})
    eng.advance("PT1H")
    assert inst.residency == "dehydrated" and eng.stats()["coroutines"] == 0
    assert sorted(h.kind for h in eng.holders()) == ["task", "timer"]
    eng.advance("PT24H")
    assert inst.state == "completed" and ended_at(inst) == ["escalated"]
    assert eng.tasks() == [] and eng.holders() == []
    (wake,) = facts(eng, "hydrated")
    assert wake.details == {"trigger": "timer", "track": "t1", "outcome": "boundary"}
    t1, t2 = inst.tracks
    assert t1.state == "cancelled" and (t2.origin, t2.parents) == ("boundary", ("t1",))


def test_a_message_boundary_on_a_dehydrated_user_task_fires_the_boundary_not_the_task():
    """A boundary's trigger never travels as the guarded node's trigger."""
    p = bpm.Process("guard")
    p.start("s")
    p.user_task("approve")
    p.message_boundary("withdrawn", attached_to="approve", message="cancel", key="id")
    p.end("done")
    p.end("cancelled")
    p.flow("s", "approve", "done")
    p.flow("withdrawn", "cancelled")
    eng = bpm.Engine()
    inst = eng.start(p, {"id": 5})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    eng.publish_message("cancel", key=5, payload={"reason": "client"})
    eng.run()
    assert ended_at(inst) == ["cancelled"] and inst.data["reason"] == "client"
    assert "task_completed" not in kinds(eng) and eng.tasks() == []
    assert left(eng, inst) == ["s", "withdrawn", "cancelled"]


def test_non_interrupting_timer_boundary_on_a_dehydrated_task_forks_and_dehydrates_again():
    """The boundary forks, the task stays open, and the instance dehydrates once more."""
    p = bpm.Process("remind")
    p.start("s")
    p.user_task("approve")
    p.timer_boundary("nudge", attached_to="approve", duration="PT4H", interrupting=False)
    p.end("done")
    p.end("nudged")
    p.flow("s", "approve", "done")
    p.flow("nudge", "nudged")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT5H")
    assert ended_at(inst) == ["nudged"]
    assert len(eng.tasks()) == 1 and inst.residency == "dehydrated"
    assert len(facts(eng, "dehydrated")) == 2
    assert [h.kind for h in eng.holders()] == ["task"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert sorted(ended_at(inst)) == ["done", "nudged"]


def test_two_triggers_at_one_instant_give_one_hydration():
    """Two triggers for one dehydrated instance at the same moment: one hydration, both
    delivered."""
    p = bpm.Process("two")
    p.start("s")
    p.parallel_gateway("fork")
    p.message_catch("a", message="ma", key="k")
    p.message_catch("b", message="mb", key="k")
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "fork", "a", "join", "e")
    p.flow("fork", "b", "join")
    eng = bpm.Engine()
    inst = eng.start(p, {"k": 1})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    eng.publish_message("ma", key=1, payload={"a": 1})
    eng.publish_message("mb", key=1, payload={"b": 2})
    eng.run()
    assert len(facts(eng, "hydrated")) == 1
    assert inst.state == "completed" and inst.data == {"k": 1, "a": 1, "b": 2}


class FlakyStore(bpm.MemoryStore):
    """A store whose reads fail a given number of times."""

    def __init__(self, failures):
        super().__init__()
        self.failures = failures

    def get(self, instance):
        if self.failures:
            self.failures -= 1
            raise OSError("disk unavailable")
        return super().get(instance)


def test_a_wake_whose_store_read_fails_twice_keeps_its_hold_and_succeeds_on_the_third_try():
    """A failed wake keeps its hold, emits wake_failed, and retries after the backoff."""
    store = FlakyStore(0)
    eng = bpm.Engine(store=store, wake_retry_backoff="PT15S")
    inst = eng.start(catch("timer_catch", duration="PT2H"))
    eng.advance("PT1M")
    store.failures = 2
    eng.advance("PT1H59M")
    assert [f.details for f in facts(eng, "wake_failed")] == [
        {"trigger": "timer", "cause": "OSError"}]
    assert [h.node for h in eng.holders()] == ["w"] and inst.residency == "dehydrated"
    eng.advance("PT15S")
    assert len(facts(eng, "wake_failed")) == 2 and inst.residency == "dehydrated"
    eng.advance("PT15S")
    assert inst.state == "completed" and eng.holders() == []
    assert len(facts(eng, "hydrated")) == 1 and len(facts(eng, "timer_fired")) == 1
    assert facts(eng, "hydrated")[0].at.second == 30


def test_a_message_for_a_wake_in_retry_is_not_delivered_twice():
    """While a message wake is retried, a second message with the same key finds no subscriber."""
    store = FlakyStore(0)
    eng = bpm.Engine(store=store)
    inst = eng.start(catch("message_catch", message="m", key="k"), {"k": 1})
    eng.advance("PT1M")
    store.failures = 1
    assert eng.publish_message("m", key=1, payload={"n": 1}) == inst.id
    assert eng.publish_message("m", key=1, payload={"n": 2}) is None
    eng.run()
    assert inst.state == "completed" and inst.data["n"] == 1


def test_reading_a_dehydrated_instance_from_a_failing_store_raises_a_typed_error():
    """inst.data of a dehydrated instance whose store fails raises EngineError naming it."""
    store = FlakyStore(0)
    eng = bpm.Engine(store=store)
    inst = eng.start(catch("timer_catch", duration="PT2H"))
    eng.advance("PT1M")
    store.failures = 1
    with pytest.raises(bpm.EngineError, match="'i1'"):
        _ = inst.data
    assert inst.data == {} and inst.residency == "dehydrated"


def stepped_after(trigger, dehydrate):
    """Every event ``eng.step()`` runs after ``trigger(eng, instances)``, as (kind, instance,
    the nodes its facts entered), for three instances parked on a message, a task and a
    signal, with dehydration on or off."""
    p = bpm.Process("three")
    p.start("s")
    p.parallel_gateway("split")
    p.message_catch("m", message="paid", key="id")
    p.user_task("u")
    p.signal_catch("g", signal="go")
    p.script_task("after_m", fn=lambda d: {"m": 1})
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "split", "m", "after_m", "join", "e")
    p.flow("split", "u", "join")
    p.flow("split", "g", "join")
    eng = bpm.Engine(dehydrate=dehydrate)
    insts = [eng.start(p, {"id": n}) for n in range(2)]
    eng.advance("PT1M")
    trigger(eng, insts)
    out = []
    while True:
        seen = len(eng.facts)
        event = eng.step()
        if event is None:
            return out, [(i.state, i.data) for i in insts]
        entered = [f.node for f in eng.facts[seen:] if f.kind == "node_entered"]
        if any(f.kind == "hydrated" for f in eng.facts[seen:]):
            assert event.kind == "wake" and entered[:1] == [event.node]
            entered = entered[1:]  # the continuation fork re-enters the wait it woke at
        out.append((event.kind, event.instance, entered))


@pytest.mark.parametrize("trigger", [
    lambda eng, insts: [eng.publish_message("paid", key=1), eng.publish_message("paid", key=0)],
    lambda eng, insts: [eng.complete_task(t.id, {}) for t in eng.tasks()],
    lambda eng, insts: eng.broadcast_signal("go"),
    lambda eng, insts: [eng.broadcast_signal("go"), eng.publish_message("paid", key=0),
                        eng.complete_task(eng.tasks()[1].id, {})],
], ids=["two messages", "two tasks", "a signal to both", "one of each"])
def test_a_trigger_wakes_a_dehydrated_instance_in_the_event_a_resident_one_would_run(trigger):
    """A command accepts a trigger for a dehydrated instance; the wake is the next scheduler
    event (kind ``wake``), in the place where a resident instance's track would resume: the
    same events, in the same order, entering the same nodes, to the same end."""
    resident, resident_end = stepped_after(trigger, dehydrate=False)
    woken, woken_end = stepped_after(trigger, dehydrate=True)
    assert woken_end == resident_end
    assert [(i, nodes) for _, i, nodes in woken] == [(i, nodes) for _, i, nodes in resident]
    # where the resident run resumes a parked track, the dehydrated one wakes the instance
    assert [k for k, _, _ in resident] == ["track" if k == "wake" else k for k, _, _ in woken]
    assert [k for k, _, _ in woken].count("wake") >= 2  # each instance woken at least once
