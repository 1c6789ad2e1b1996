"""Call activities: a child instance of a deployed process, data in and out, a parent link;
parent and child dehydrated and woken on their own; the child's error reaches the caller."""

import pytest

import gobpm_nb as bpm


def child_process(error=None, mark=None):
    c = bpm.Process("check")
    c.start("s")
    c.user_task("review")
    if error:
        c.exclusive_gateway("ok", default="fine")
        c.end("refuse", error=error)
        c.script_task("fine", fn=lambda d: {"score": d["amount"] * 2, "noise": 1})
        c.end("e")
        c.flow("s", "review", "ok")
        c.flow("ok", "refuse", condition="bad")
        c.flow("ok", "fine", "e")
    else:
        c.script_task("score", fn=lambda d: {"score": d["amount"] * (mark or 2), "noise": 1})
        c.end("e")
        c.flow("s", "review", "score", "e")
    return c


def parent_process(version=None, boundary=None, inputs=("amount",)):
    p = bpm.Process("order")
    p.start("s")
    p.call_activity("call", process="check", version=version, inputs=list(inputs),
                    outputs=["score"])
    p.end("e")
    p.flow("s", "call", "e")
    if boundary == "error":
        p.error_boundary("refused", attached_to="call", error="NO")
        p.end("handled")
        p.flow("refused", "handled")
    elif boundary == "timer":
        p.timer_boundary("late", attached_to="call", duration="PT1H")
        p.end("gave_up")
        p.flow("late", "gave_up")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_call_runs_a_child_instance_with_data_in_and_out(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    eng.deploy(child_process())
    parent = eng.start(parent_process(), {"amount": 21, "other": "x"})
    eng.run()
    (child,) = [i for i in eng.instances() if i.id != parent.id]
    assert child.data == {"amount": 21}  # only the inputs go in
    assert child.parent == parent.id and parent.parent is None
    assert child.residency == parent.residency == ("dehydrated" if dehydrate else "resident")
    hold = [h for h in eng.holders(parent.id)][0]
    assert (hold.kind, hold.node, hold.keys) == ("call", "call", (child.id,))
    started = [f for f in eng.facts if f.kind == "instance_started" and f.instance == child.id]
    assert started[0].details == {"process": "check", "version": 1, "by": "call",
                                  "caller": parent.id}
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert child.state == "completed" and parent.state == "completed"
    assert child.parent == parent.id  # kept by the summary of a finished instance
    assert parent.data == {"amount": 21, "other": "x", "score": 42}  # only the outputs come back
    assert eng.holders() == []


def test_a_call_takes_the_newest_version_or_the_pinned_one():
    eng = bpm.Engine()
    eng.deploy(child_process())
    eng.deploy(child_process(mark=10))
    newest = eng.start(parent_process(), {"amount": 1})
    pinned = eng.start(parent_process(version=1), {"amount": 1})
    eng.run()
    for t in eng.tasks():
        eng.complete_task(t.id)
    eng.run()
    assert newest.data["score"] == 10 and pinned.data["score"] == 2


def test_an_error_the_child_does_not_catch_reaches_the_call_activity_boundary():
    eng = bpm.Engine()
    eng.deploy(child_process(error="NO"))
    parent = eng.start(parent_process(boundary="error", inputs=("amount", "bad")),
                       {"amount": 1, "bad": True})
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    child = [i for i in eng.instances() if i.id != parent.id][0]
    assert child.state == "terminated" and parent.state == "completed"
    assert [t.node for t in parent.tracks if t.state == "completed"][-1] == "handled"
    assert [f.details for f in eng.facts if f.kind == "error_to_caller"] == [
        {"error": "NO", "caller": parent.id}]
    assert [f.details for f in eng.facts if f.kind == "error_caught"] == [
        {"error": "NO", "boundary": "refused"}]


def test_an_error_nobody_catches_fails_the_caller_with_an_incident():
    eng = bpm.Engine()
    eng.deploy(child_process(error="NO"))
    parent = eng.start(parent_process(inputs=("amount", "bad")), {"amount": 1, "bad": True})
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert parent.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.instance == parent.id and "NO" in incident.details["cause"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_boundary_on_the_call_terminates_the_child(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    eng.deploy(child_process())
    parent = eng.start(parent_process(boundary="timer"), {"amount": 1})
    eng.advance("PT2H")
    child = [i for i in eng.instances() if i.id != parent.id][0]
    assert child.state == "terminated" and parent.state == "completed"
    assert eng.tasks() == [] and eng.holders() == []


@pytest.mark.parametrize("restart", [None, "memory", "sqlite"])
def test_a_child_terminated_by_its_interrupted_call_still_names_its_caller(tmp_path, restart):
    """``parent`` is who called the instance, however the call ended: kept while the child
    is dehydrated, across a restart, and after the interrupted call terminated it."""
    store = bpm.SQLiteStore(tmp_path / "c.db") if restart == "sqlite" else bpm.MemoryStore()
    processes = [child_process(), parent_process(boundary="timer")]
    eng = bpm.Engine(store=store)
    eng.deploy(processes[0])
    parent = eng.start(processes[1], {"amount": 1})
    eng.advance("PT10M")
    child_id = [i.id for i in eng.instances() if i.id != parent.id][0]
    assert eng.instance(child_id).residency == "dehydrated"
    assert eng.instance(child_id).parent == parent.id
    if restart:
        del eng
        if restart == "sqlite":
            store.close()  # the crashed engine's store lets go of the file
        eng = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "c.db") if restart == "sqlite"
                                 else store, processes=processes)
        assert eng.instance(child_id).parent == parent.id
    eng.advance("PT2H")
    child = eng.instance(child_id)
    assert child.state == "terminated" and eng.instance(parent.id).state == "completed"
    assert child.parent == parent.id
    assert eng.holders() == [] and eng.tasks() == []


@pytest.mark.parametrize("throw", ["signal", "message"])
def test_a_child_whose_throw_interrupts_its_call_activity_ends_terminated_not_failed(throw):
    """The child throws what its caller's interrupting boundary on the call activity
    catches: the boundary terminates the child in the middle of the throw, and the child
    goes no further (it used to enter its next node, a timer, on the finished instance:
    an AttributeError, an incident and instance_failed after its instance_completed)."""
    c = bpm.Process("thrower")
    c.start("s")
    if throw == "signal":
        c.signal_throw("send", signal="stop")
    else:
        c.message_throw("send", message="stop", key="k")
    c.timer_catch("wait", duration="PT10M")
    c.end("e")
    c.flow("s", "send", "wait", "e")
    p = bpm.Process("caller")
    p.start("s")
    p.call_activity("call", process="thrower")
    if throw == "signal":
        p.signal_boundary("stopped", attached_to="call", signal="stop")
    else:
        p.message_boundary("stopped", attached_to="call", message="stop", key="k")
    p.end("e")
    p.end("handled")
    p.flow("s", "call", "e")
    p.flow("stopped", "handled")
    eng = bpm.Engine()
    eng.deploy(c)
    parent = eng.start(p, {"k": 7})
    eng.run()
    (child,) = [i for i in eng.instances() if i.id != parent.id]
    assert (parent.state, child.state) == ("completed", "terminated")
    ends = [(f.kind, f.instance) for f in eng.facts
            if f.kind in ("instance_completed", "instance_failed", "incident")]
    assert ends == [("instance_completed", child.id), ("instance_completed", parent.id)]
    assert eng.holders() == [] and eng.stats()["coroutines"] == 0


def test_a_call_to_a_process_that_is_not_deployed_is_an_incident():
    eng = bpm.Engine()
    parent = eng.start(parent_process(), {"amount": 1})
    eng.run()
    assert parent.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.details["cause"] == "calls process 'check', which is not deployed"


def test_a_missing_input_field_is_an_incident():
    eng = bpm.Engine()
    eng.deploy(child_process())
    parent = eng.start(parent_process(), {"other": 1})
    eng.run()
    assert parent.state == "failed" and len(eng.instances()) == 1


def test_parent_and_child_recover_after_a_restart(tmp_path):
    db = tmp_path / "calls.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(child_process())
    parent = eng.start(parent_process(), {"amount": 4})
    eng.run()
    assert parent.checkpoint()["tracks"][0]["wait"]["kind"] == "call"
    child_id = [i.id for i in eng.instances() if i.id != parent.id][0]
    assert eng.checkpoint(child_id)["parent"] == {"instance": parent.id, "track": "t1"}
    eng.store.close()
    del eng
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[child_process(),
                                                                parent_process()])
    assert sorted(h.kind for h in eng2.holders()) == ["call", "task"]
    eng2.complete_task(eng2.tasks()[0].id)
    eng2.run()
    assert eng2.instance(parent.id).data["score"] == 8
    assert eng2.instance(parent.id).state == "completed"


def test_bad_call_activities_are_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.call_activity("c1", process="")
    p.call_activity("c2", process="x", version=0)
    p.end("e")
    p.flow("s", "c1", "c2", "e")
    with pytest.raises(bpm.ModelError) as err:
        p.definition()
    text = "\n".join(err.value.problems)
    assert "call_activity 'c1' names no process" in text
    assert "call_activity 'c2': version 0 is not a version number" in text


class RefusesSome(bpm.SQLiteStore):
    """A SQLite store that refuses every checkpoint of the instances in ``refuse``."""

    refuse: frozenset = frozenset()

    def put(self, instance, doc, meta=None):
        if instance in self.refuse:
            raise OSError(f"disk full writing {instance}")
        super().put(instance, doc, meta)


@pytest.mark.parametrize("crash", [False, True])
def test_a_child_whose_checkpoint_the_store_refuses_still_runs_and_is_called_again_after_a_crash(
        tmp_path, crash):
    """The store refuses the called child's checkpoints: the child starts all the same,
    resident (a checkpoint_failed fact says so; the caller gets no incident). After a crash
    the store holds the caller waiting for a child it does not hold: recovery calls again,
    and the new child's result reaches the caller."""
    db = tmp_path / "calls.db"
    store = RefusesSome(db)
    store.refuse = frozenset({"i2"})
    eng = bpm.Engine(store=store)
    eng.deploy(child_process())
    parent = eng.start(parent_process(), {"amount": 4})
    eng.run()
    assert [f.kind for f in eng.facts if f.kind in ("incident", "instance_failed")] == []
    assert "i2" in [f.instance for f in eng.facts if f.kind == "checkpoint_failed"]
    assert [(t.instance, t.node) for t in eng.tasks()] == [("i2", "review")]
    if crash:
        store.close()
        eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[child_process(),
                                                                   parent_process()])
        eng.run()
        assert [(t.instance, t.node) for t in eng.tasks()] == [("i3", "review")]
        assert eng.instance("i3").parent == parent.id
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert eng.instance(parent.id).state == "completed"
    assert eng.instance(parent.id).data["score"] == 8


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_child_that_fails_as_it_starts_fails_its_call_with_an_incident(dehydrate):
    """The called process's event subprocess has a message start keyed by a field the child's
    data lacks: the child fails as it starts (an incident at that start), and its call
    activity fails with an incident naming the child, as for any failed child."""
    child = bpm.Process("keyed_child")
    child.start("s")
    child.user_task("work")
    child.end("e")
    child.flow("s", "work", "e")
    with child.event_subprocess("ev") as ev:
        ev.message_start("es", message="cancel", key="id")
        ev.end("ee")
        ev.flow("es", "ee")
    eng = bpm.Engine(dehydrate=dehydrate)
    eng.deploy(child)
    p = bpm.Process("caller")
    p.start("s")
    p.call_activity("call", process="keyed_child", inputs=["amount"])
    p.end("e")
    p.flow("s", "call", "e")
    inst = eng.start(p, {"amount": 1})
    eng.run()
    (kid,) = [i for i in eng.instances() if i.process == "keyed_child"]
    causes = {(f.instance, f.node): f.details["cause"] for f in eng.facts if f.kind == "incident"}
    assert "names missing field 'id'" in causes[(kid.id, "es")]
    assert causes[(inst.id, "call")] == f"called instance {kid.id} failed"
    assert inst.state == "failed" and kid.state == "failed" and eng.holders() == []
