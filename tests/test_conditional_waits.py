"""Conditional waits keep their instance resident (docs/semantics.md, Eligibility; the spec's
dehydratable waits: their trigger is the instance's own data commits): an intermediate
conditional catch, a conditional boundary and a conditional event subprocess start. The
outcome is the same with dehydration on and off, across a crash and ``Engine.recover``, and
after a rewind and replay; once no condition is armed, the instance dehydrates."""

import pytest
from conftest import left

import gobpm_nb as bpm


def catch_process():
    """A conditional catch on ``total >= 5`` beside a message catch whose payload sets it."""
    p = bpm.Process("catching")
    p.start("s")
    p.parallel_gateway("split")
    p.conditional_catch("ready", condition="total >= 5")
    p.message_catch("topup", message="topup", key="k")
    p.parallel_gateway("join")
    p.end("done")
    p.flow("s", "split", "ready", "join", "done")
    p.flow("split", "topup", "join")
    return p.validate()


def boundary_process(interrupting=True):
    """A user task under a conditional boundary on ``risk > 5``, beside a message catch whose
    payload sets ``risk``."""
    p = bpm.Process("guarded")
    p.start("s")
    p.parallel_gateway("split")
    p.user_task("approve")
    p.conditional_boundary("risky", attached_to="approve", condition="risk > 5",
                           interrupting=interrupting)
    p.message_catch("news", message="news", key="k")
    p.end("approved")
    p.end("stopped")
    p.end("heard")
    p.flow("s", "split", "approve", "approved")
    p.flow("split", "news", "heard")
    p.flow("risky", "stopped")
    return p.validate()


def start_process(interrupting=False):
    """A message catch whose payload sets ``risk``, under an event subprocess of the process
    whose conditional start opens on ``risk > 5`` and waits for a signal."""
    p = bpm.Process("watching")
    p.start("s")
    p.message_catch("news", message="news", key="k")
    p.timer_catch("later", duration="P1D")
    p.end("e")
    p.flow("s", "news", "later", "e")
    with p.event_subprocess("watch") as ev:
        ev.conditional_start("hot", condition="risk > 5", interrupting=interrupting)
        ev.signal_catch("calm", signal="calm")
        ev.end("ee")
        ev.flow("hot", "calm", "ee")
    return p.validate()


def scenario(process, message, payload):
    """The public commands of a run, as fn(engine): start two instances (k = 0, 1), a signal
    that wakes nothing's condition, the message to instance 0 with ``payload``, a day, the
    signal ``calm``."""
    return [
        lambda eng: eng.start(process, {"k": 0, "total": 0, "risk": 0}),
        lambda eng: eng.start(process, {"k": 1, "total": 0, "risk": 0}),
        lambda eng: eng.run(until=eng.now),
        lambda eng: eng.broadcast_signal("other"),
        lambda eng: eng.publish_message(message, key=0, payload=payload),
        lambda eng: eng.run(until=eng.now),
        lambda eng: eng.advance("P1D"),
        lambda eng: eng.broadcast_signal("calm"),
        lambda eng: eng.advance("P2D"),
    ]


def outcome(eng, into=None):
    """By instance: the nodes it left, in order, its state and its data."""
    done = {} if into is None else into
    for f in eng.facts:
        if f.kind == "node_left":
            done.setdefault(f.instance, []).append(f.node)
    return {i.id: (done.get(i.id, []), i.state, i.data) for i in eng.instances()}


def played(commands, **options):
    eng = bpm.Engine(**options)
    for command in commands:
        command(eng)
    return eng


def crashing(commands, process, path):
    """Crash and ``Engine.recover`` after every command; completions merged across engines."""
    done: dict = {}
    ended: dict = {}
    eng = bpm.Engine(store=bpm.SQLiteStore(path))
    try:
        for command in commands:
            command(eng)
            ended.update(outcome(eng, done))
            eng.store.close()
            eng = bpm.Engine.recover(bpm.SQLiteStore(path), processes=[process])
        ended.update(outcome(eng, done))
        return ended
    finally:
        eng.store.close()


CASES = {
    "catch": (catch_process(), "topup", {"total": 5}),
    "interrupting boundary": (boundary_process(True), "news", {"risk": 9}),
    "non-interrupting boundary": (boundary_process(False), "news", {"risk": 9}),
    "interrupting start": (start_process(True), "news", {"risk": 9}),
    "non-interrupting start": (start_process(False), "news", {"risk": 9}),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_conditional_wait_ends_alike_resident_dehydrated_recovered_and_replayed(
        tmp_path, case):
    """The same outcome without dehydration, with it, dehydrating at every timer, on SQLite
    crashing after every command, and after a rewind to the start and a replay; with
    dehydration the instances stayed resident over their conditional waits."""
    process, message, payload = case
    commands = scenario(process, message, payload)
    ref = outcome(played(commands, dehydrate=False))
    assert ref["i1"][0] != ref["i2"][0]  # the condition rose for instance 0 only
    on = played(commands[:3])
    assert [i.residency for i in on.instances()] == ["resident", "resident"]
    for command in commands[3:]:
        command(on)
    assert outcome(on) == ref
    every = played(commands, min_dehydrate_wait="PT0S")
    assert outcome(every) == ref
    facts = every.facts
    every.rewind(0)
    every.replay()
    assert every.facts == facts and outcome(every) == ref
    assert crashing(commands, process, tmp_path / "crash.db") == ref


def test_an_instance_parked_on_a_conditional_catch_stays_resident_and_the_data_fires_it():
    """Parked on a conditional catch and a message catch, the instance stays resident (the
    conditional wait has no holder: only the message's is listed); the message's payload
    makes the condition true and the catch fires, then the instance ends."""
    eng = bpm.Engine()
    inst = eng.start(catch_process(), {"k": 0, "total": 0})
    eng.run()
    assert inst.residency == "resident" and eng.stats()["coroutines"] > 0
    assert [(h.node, h.kind) for h in eng.holders()] == [("topup", "message")]
    eng.publish_message("topup", key=0, payload={"total": 7})
    eng.run()
    assert inst.state == "completed"
    assert left(eng, inst) == ["s", "split", "topup", "ready", "join", "done"]


def test_a_trigger_that_leaves_the_condition_false_keeps_the_catch_and_the_instance():
    """A signal that changes nothing the condition reads: the catch stays parked and the
    instance resident, never dehydrated."""
    p = bpm.Process("waiting")
    p.start("s")
    p.parallel_gateway("split")
    p.conditional_catch("ready", condition="total >= 5")
    p.signal_catch("ping", signal="ping")
    p.end("e1")
    p.end("e2")
    p.flow("s", "split", "ready", "e1")
    p.flow("split", "ping", "e2")
    eng = bpm.Engine()
    inst = eng.start(p.validate(), {"total": 0})
    eng.run()
    eng.broadcast_signal("ping")
    eng.run()
    assert inst.residency == "resident" and inst.state == "active"
    assert left(eng, inst) == ["s", "split", "ping", "e2"]
    assert [f.kind for f in eng.facts if f.kind in ("dehydrated", "hydrated")] == []


def test_a_condition_already_true_when_its_boundary_is_armed_fires_before_dehydrating():
    """A conditional boundary whose condition holds when the task is entered fires at the
    loop's next turn: the instance dehydrates only after it (over the message catch), so a
    condition true at release is never carried away unfired."""
    eng = bpm.Engine()
    inst = eng.start(boundary_process(True), {"k": 0, "risk": 9})
    eng.run()
    order = [(f.kind, f.node) for f in eng.facts if f.kind == "dehydrated" or (
        f.kind == "node_left" and f.node == "risky")]
    assert order == [("node_left", "risky"), ("dehydrated", None)]
    assert inst.residency == "dehydrated" and eng.tasks() == []


def test_a_recovered_instance_with_a_conditional_boundary_comes_back_resident(tmp_path):
    """On SQLite, an instance resident over a user task with a conditional boundary comes
    back resident after a crash, the boundary's last value kept: the message that makes the
    condition true then interrupts the task, as without the crash."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(boundary_process(True), {"k": 0, "risk": 0})
    eng.run()
    eng.store.close()
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[boundary_process(True)])
    try:
        inst = eng.instance(inst.id)
        assert inst.residency == "resident" and len(eng.tasks()) == 1
        eng.publish_message("news", key=0, payload={"risk": 9})
        eng.run()
        assert inst.state == "completed" and eng.tasks() == []
        assert left(eng, inst) == ["news", "heard", "risky", "stopped"]
    finally:
        eng.store.close()


@pytest.mark.parametrize("payload", [None, {"other": 1}])
def test_a_wake_asks_a_condition_no_more_than_a_resident_instance_does(payload):
    """A condition given as a Python function is asked when the catch is entered and after
    each data change, never because the instance was woken: a signal without a payload asks
    nothing, one with a payload asks once, with dehydration on as off (resident both ways)."""
    def calls_with(**options):
        calls = []

        def ready(data):
            calls.append(data.get("other"))
            return data["total"] >= 5

        p = bpm.Process("asked")
        p.start("s")
        p.parallel_gateway("split")
        p.conditional_catch("ready", condition=ready)
        p.signal_catch("ping", signal="ping")
        p.user_task("later")
        p.end("e1")
        p.end("e2")
        p.flow("s", "split", "ready", "e1")
        p.flow("split", "ping", "later", "e2")
        eng = bpm.Engine(**options)
        inst = eng.start(p.validate(), {"total": 0})
        eng.run()
        eng.broadcast_signal("ping", payload)
        eng.run()
        return calls, inst.residency

    off, resident = calls_with(dehydrate=False)
    on, dehydrated = calls_with()
    assert (resident, dehydrated) == ("resident", "resident")
    assert on == off == ([None] if payload is None else [None, 1])


def test_an_instance_waiting_only_on_a_condition_stays_resident_holding_nothing():
    """An instance whose only wait is a conditional catch stays resident and holds nothing
    (nothing outside it can fire it: it waits for a change of its own data)."""
    p = bpm.Process("only")
    p.start("s")
    p.conditional_catch("c", condition="total > 1")
    p.end("e")
    p.flow("s", "c", "e")
    eng = bpm.Engine()
    inst = eng.start(p.validate(), {"total": 0})
    eng.run()
    assert inst.residency == "resident" and eng.holders() == []
    assert [f for f in eng.facts if f.kind == "dehydrated"] == []
