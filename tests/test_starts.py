"""Start events that create instances: message, timer and signal starts in the process
itself, armed by deploy as holds of no instance, replaced by a newer version."""

import pytest

import gobpm_nb as bpm


def ordered(message="order_placed", version_mark=None):
    p = bpm.Process("orders")
    p.message_start("order", message=message)
    p.user_task("pack")
    p.end("shipped")
    p.flow("order", "pack", "shipped")
    if version_mark:
        p.script_task("mark", fn=lambda d: {})  # a different graph: a new version
        p.end("marked")
        p.flow("pack", "mark", "marked")
    return p


def test_a_message_nobody_waits_for_starts_an_instance_with_its_payload_as_data():
    eng = bpm.Engine()
    eng.deploy(ordered())
    (held,) = eng.holders()
    assert (held.instance, held.track, held.kind, held.wait_kind, held.node) == (
        "", "orders", "message", "start", "order")
    iid = eng.publish_message("order_placed", key=None, payload={"sku": 7})
    eng.run()
    inst = eng.instance(iid)
    assert inst.data == {"sku": 7} and [t.node for t in eng.tasks()] == ["pack"]
    started = [f for f in eng.facts if f.kind == "instance_started"][0]
    assert started.node == "order" and started.details["by"] == "message"
    assert len(eng.holders()) == 2  # the start stays armed beside the task


def test_a_waiting_catch_takes_the_message_before_a_message_start():
    p = bpm.Process("waiter")
    p.start("s")
    p.message_catch("wait", message="order_placed", key="k")
    p.end("e")
    p.flow("s", "wait", "e")
    eng = bpm.Engine()
    eng.deploy(ordered())
    waiter = eng.start(p, {"k": 1})
    eng.run()
    assert eng.publish_message("order_placed", key=1) == waiter.id
    assert len(eng.instances()) == 1
    assert eng.publish_message("order_placed", key=2) == "i2"


def test_a_signal_starts_one_instance_per_process_that_listens():
    def listener(pid):
        p = bpm.Process(pid)
        p.signal_start("go", signal="launch")
        p.end("e")
        p.flow("go", "e")
        return p

    eng = bpm.Engine()
    eng.deploy(listener("a"))
    eng.deploy(listener("b"))
    assert eng.broadcast_signal("launch", payload={"n": 1}) == 2
    eng.run()
    assert sorted((i.definition.id, i.state, i.data["n"]) for i in eng.instances()) == [
        ("a", "completed", 1), ("b", "completed", 1)]


@pytest.mark.parametrize("spec,starts", [
    ({"cycle": "R3/PT1H"}, ["01:00", "02:00", "03:00"]),
    ({"duration": "PT90M"}, ["01:30"]),
    ({"date": "2026-01-01T04:00:00Z"}, ["04:00"]),
])
def test_a_timer_start_creates_instances_on_its_deadlines(spec, starts):
    p = bpm.Process("tick")
    p.timer_start("t", **spec)
    p.script_task("work", fn=lambda d: {"done": True})
    p.end("e")
    p.flow("t", "work", "e")
    eng = bpm.Engine()
    eng.deploy(p)
    (held,) = eng.holders()
    assert held.kind == "timer" and held.wait_kind == "start" and held.deadline is not None
    eng.advance("PT6H")
    begun = [f.at.strftime("%H:%M") for f in eng.facts if f.kind == "instance_started"]
    assert begun == starts and eng.holders() == []
    assert all(i.state == "completed" for i in eng.instances())


def test_a_newer_version_replaces_the_older_ones_start_events():
    eng = bpm.Engine()
    assert eng.deploy(ordered("old_name")) == 1
    assert eng.deploy(ordered("new_name", version_mark=True)) == 2
    assert [(h.node, h.keys) for h in eng.holders()] == [("order", ("new_name",))]
    assert eng.publish_message("old_name") is None
    iid = eng.publish_message("new_name")
    assert eng.instance(iid).definition.version == 2
    released = [f for f in eng.facts if f.kind == "wait_released"]
    assert released[0].details["reason"] == "withdrawn"


def test_start_refuses_a_process_that_starts_only_by_a_trigger():
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError, match="no plain start event"):
        eng.start(ordered())
    assert eng.instances() == []


def test_a_process_with_both_starts_runs_either_way():
    p = ordered()
    p.start("by_hand")
    p.flow("by_hand", "pack")
    eng = bpm.Engine()
    first = eng.start(p, {"who": "clerk"})
    second = eng.publish_message("order_placed", payload={"who": "shop"})
    eng.run()
    assert first.data == {"who": "clerk"} and eng.instance(second).data == {"who": "shop"}


def test_a_timer_start_keeps_its_next_deadline_across_a_restart(tmp_path):
    p = bpm.Process("tick")
    p.timer_start("t", cycle="R3/PT1H")
    p.end("e")
    p.flow("t", "e")
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "s.db"))
    eng.deploy(p)
    eng.advance("PT1H30M")
    assert len(eng.instances()) == 1
    (held,) = eng.holders()
    eng.store.close()
    del eng
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "s.db"), processes=[p])
    (again,) = eng2.holders()
    assert again.deadline == held.deadline  # 02:00, not an hour after the restart
    eng2.advance("PT10H")
    begun = [f.at.strftime("%H:%M") for f in eng2.facts if f.kind == "instance_started"]
    assert begun == ["02:00", "03:00"] and eng2.holders() == []


def test_a_date_timer_start_that_fired_does_not_fire_again_after_a_restart(tmp_path):
    p = bpm.Process("once")
    p.timer_start("t", date="2026-01-01T02:00:00Z")
    p.end("e")
    p.flow("t", "e")
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "o.db"))
    eng.deploy(p)
    eng.advance("PT3H")
    eng.store.close()
    del eng
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "o.db"), processes=[p])
    eng2.advance("P1D")
    assert [f for f in eng2.facts if f.kind == "instance_started"] == []
    assert eng2.holders() == []


def test_a_store_that_fails_a_message_start_hands_the_error_to_the_publisher(tmp_path):
    class Failing(bpm.SQLiteStore):
        fail = False

        def put(self, *args, **kwargs):
            if self.fail:
                raise OSError("disk full")
            return super().put(*args, **kwargs)

    store = Failing(tmp_path / "f.db")
    eng = bpm.Engine(store=store)
    eng.deploy(ordered())
    store.fail = True
    with pytest.raises(bpm.EngineError, match="not started"):
        eng.publish_message("order_placed", payload={"sku": 1})
    assert eng.instances() == []
    store.fail = False
    assert eng.publish_message("order_placed", payload={"sku": 1}) is not None


def test_start_events_that_cannot_start_instances_are_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.error_start("err")
    p.signal_start("soft", signal="x", interrupting=False)
    p.message_start("keyed", message="m", key="k")
    p.end("e")
    p.flow("s", "e")
    p.flow("err", "e")
    p.flow("soft", "e")
    p.flow("keyed", "e")
    with pytest.raises(bpm.ModelError) as err:
        p.definition()
    text = "\n".join(err.value.problems)
    assert "error_start 'err' is in the process itself" in text
    assert "signal_start 'soft' starts instances: it cannot be non-interrupting" in text
    assert "message_start 'keyed' starts instances: a correlation key has no use" in text


def test_starting_a_message_started_process_names_the_message_and_the_call():
    """MIWG C.1.0's invoice process starts only by its message start event: eng.start says
    which message to publish, as the call to type."""
    from bpmn_shapes import MIWG_DIR

    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError) as info:
        eng.start(bpm.Process.from_bpmn(MIWG_DIR / "C.1.0.bpmn"))
    assert "message start 'StartEvent_1': eng.publish_message('invoice-received-C.1.0', " \
        "payload={...})" in str(info.value)
    assert eng.instances() == []
