"""Event-based gateways that create instances (BPMN 2.0, 10.6.6): an exclusive one whose
first arm event starts an instance that goes on by that arm alone, and a parallel one whose
instance then waits on each other arm for its own event, correlated by the arm's key."""

from pathlib import Path

import pytest
from conftest import ended_at, left, recover

import gobpm_nb as bpm


def either():
    """An exclusive gateway that creates instances: an order message, a signal, or a
    receive task's message; each arm its own path."""
    p = bpm.Process("intake")
    p.event_gateway("g", "Order or recall", instantiate=True)
    p.message_catch("order", message="order")
    p.signal_catch("recall", signal="recall")
    p.receive_task("fax", message="fax")
    p.user_task("pack")
    p.end("packed")
    p.end("recalled")
    p.end("faxed")
    p.flow("g", "order", "pack", "packed")
    p.flow("g", "recall", "recalled")
    p.flow("g", "fax", "faxed")
    return p


def pair(timer=False):
    """A parallel gateway that creates instances: the order and its payment, in either
    order, correlated by ``order``; both paths join. ``timer``: a third arm, a day's wait."""
    p = bpm.Process("pair")
    p.event_gateway("g", instantiate=True, parallel=True)
    p.message_catch("placed", message="placed", key="order")
    p.message_catch("paid", message="paid", key="order")
    p.parallel_gateway("j")
    p.script_task("ship", fn=lambda d: {"shipped": True})
    p.end("done")
    p.flow("g", "placed", "j")
    p.flow("g", "paid", "j")
    p.flow("j", "ship", "done")
    if timer:
        p.timer_catch("day", duration="P1D")
        p.flow("g", "day", "j")
    return p


def started(eng):
    return [(f.instance, f.node, f.details["by"]) for f in eng.facts
            if f.kind == "instance_started"]


def test_deploy_arms_each_arm_of_an_instantiating_gateway_as_a_start():
    eng = bpm.Engine()
    eng.deploy(either())
    assert [(h.instance, h.track, h.kind, h.wait_kind, h.node, h.keys) for h in
            eng.holders()] == [("", "intake", "message", "start", "order", ("order",)),
                               ("", "intake", "signal", "start", "recall", ("recall",)),
                               ("", "intake", "message", "start", "fax", ("fax",))]
    with pytest.raises(bpm.EngineError, match="exclusive event-based gateway 'g'"):
        eng.start(either())


def test_the_first_arm_event_creates_an_instance_that_goes_on_by_that_arm_alone():
    eng = bpm.Engine()
    iid = eng.publish_message("order", payload={"sku": 7})
    assert iid is None  # not deployed yet: nobody took it
    eng.deploy(either())
    iid = eng.publish_message("order", payload={"sku": 7})
    eng.run()
    inst = eng.instance(iid)
    assert inst.data == {"sku": 7} and [t.node for t in eng.tasks()] == ["pack"]
    assert started(eng) == [(iid, "g", "message")]
    assert left(eng, inst) == ["g", "order"]
    won = [f for f in eng.facts if f.kind == "node_entered" and f.node == "order"]
    assert won[0].details == {"won": "message"}
    # the other arms are not armed for it; they stay armed as starts of new instances
    assert [(h.instance, h.node) for h in eng.holders()] == [
        ("", "order"), ("", "recall"), ("", "fax"), (iid, "pack")]
    eng.broadcast_signal("recall")
    eng.publish_message("fax", payload={"pages": 2})
    eng.run()
    ends = {i.id: [t.node for t in i.tracks if t.state == "completed"]
            for i in eng.instances()}
    assert ends == {iid: [], "i2": ["recalled"], "i3": ["faxed"]}
    assert eng.instance("i3").data == {"pages": 2}


def test_a_timer_arm_creates_an_instance_at_each_deadline_of_its_cycle():
    p = bpm.Process("tick")
    p.event_gateway("g", instantiate=True)
    p.timer_catch("hourly", cycle="R2/PT1H")
    p.message_catch("now", message="now")
    p.end("e")
    p.end("asked")
    p.flow("g", "hourly", "e")
    p.flow("g", "now", "asked")
    eng = bpm.Engine()
    eng.deploy(p)
    eng.advance("PT5H")
    begun = [(f.at.strftime("%H:%M"), f.details["by"]) for f in eng.facts
             if f.kind == "instance_started"]
    assert begun == [("01:00", "timer"), ("02:00", "timer")]
    assert all(i.state == "completed" for i in eng.instances())
    assert [h.node for h in eng.holders()] == ["now"]  # the cycle is spent


def test_a_parallel_gateways_instance_waits_on_its_other_arms_keyed_by_its_data():
    eng = bpm.Engine()
    eng.deploy(pair())
    iid = eng.publish_message("placed", payload={"order": "o-7", "sku": 3})
    eng.run()
    assert [(h.instance, h.kind, h.node, h.keys) for h in eng.holders()] == [
        ("", "message", "placed", ("placed",)), ("", "message", "paid", ("paid",)),
        (iid, "message", "paid", ("paid", "o-7"))]
    assert eng.instance(iid).residency == "dehydrated"
    other = eng.publish_message("paid", key="o-8")  # no instance waits for o-8: a new one
    assert other != iid
    assert eng.publish_message("paid", key="o-7", payload={"sum": 10}) == iid
    eng.run()
    inst = eng.instance(iid)
    assert inst.state == "completed"
    assert inst.data == {"order": "o-7", "sku": 3, "sum": 10, "shipped": True}
    assert [t.node for t in inst.tracks if t.state == "completed"] == ["done"]
    assert eng.instance(other).state == "active"


def test_the_second_arm_first_the_first_arm_then_correlates():
    eng = bpm.Engine()
    eng.deploy(pair())
    iid = eng.publish_message("paid", payload={"order": "o-1", "sum": 4})
    eng.run()
    assert eng.publish_message("placed", key="o-1") == iid
    eng.run()
    assert eng.instance(iid).state == "completed" and len(eng.instances()) == 1


def test_two_arm_messages_at_one_instant_make_one_instance():
    """The second arrives before the instance has run a step: its arm is armed already."""
    eng = bpm.Engine()
    eng.deploy(pair())
    iid = eng.publish_message("placed", payload={"order": "o-2"})
    assert eng.publish_message("paid", key="o-2", payload={"sum": 1}) == iid
    eng.run()
    assert [i.id for i in eng.instances()] == [iid]
    assert eng.instance(iid).state == "completed"
    assert eng.instance(iid).data == {"order": "o-2", "sum": 1, "shipped": True}


def test_a_parallel_gateways_timer_arm_waits_from_the_instances_creation():
    eng = bpm.Engine()
    eng.deploy(pair(timer=True))
    eng.advance("PT6H")
    iid = eng.publish_message("placed", payload={"order": "o-3"})
    eng.run(until=eng.now)
    day = [h for h in eng.holders() if h.instance == iid and h.kind == "timer"]
    assert [h.deadline.isoformat() for h in day] == ["2026-01-02T06:00:00+00:00"]
    eng.publish_message("paid", key="o-3")
    eng.advance("P1D")
    assert eng.instance(iid).state == "completed"
    started_by = {f.instance: f.details["by"] for f in eng.facts if f.kind == "instance_started"}
    # the deployed timer arm (a day after deploying) started an instance of its own
    assert started_by == {iid: "message", "i2": "timer"}


def test_dehydration_changes_nothing_a_user_sees(tmp_path):
    def play(**options):
        eng = bpm.Engine(**options)
        eng.deploy(pair(timer=True))
        a = eng.publish_message("placed", payload={"order": "a"})
        eng.run(until=eng.now)
        b = eng.publish_message("paid", payload={"order": "b"})
        eng.advance("PT2H")
        eng.publish_message("paid", key="a", payload={"sum": 2})
        eng.publish_message("placed", key="b")
        eng.advance("P2D")
        return [(i.id, i.state, i.data, left(eng, i)) for i in eng.instances()], (a, b)

    on, (a, b) = play()
    assert play(dehydrate=False)[0] == on
    assert play(store=bpm.SQLiteStore(tmp_path / "s.db"))[0] == on
    assert play(min_dehydrate_wait="PT0S")[0] == on
    # the third: the deployed day-long timer arm's instance, with no data to correlate its
    # message arms by: an incident at the first of them
    assert [(iid, state) for iid, state, _, _ in on] == [
        (a, "completed"), (b, "completed"), ("i3", "failed")]


def test_a_woken_arm_is_a_continuation_and_the_instance_dehydrates_again():
    eng = bpm.Engine()
    eng.deploy(pair(timer=True))
    iid = eng.publish_message("placed", payload={"order": "o-4"})
    eng.run(until=eng.now)
    assert eng.instance(iid).residency == "dehydrated"
    eng.publish_message("paid", key="o-4")
    eng.run(until=eng.now)
    woke = [f for f in eng.facts if f.kind == "hydrated" and f.instance == iid]
    assert [(f.details["trigger"], f.details["outcome"]) for f in woke] == [
        ("message", "continuation")]
    assert eng.instance(iid).residency == "dehydrated"  # the day's wait is still held
    assert eng.stats()["coroutines"] == 0


def test_a_crash_before_the_instance_ran_recovers_its_arms(tmp_path):
    """The store holds the instance as of its creation; recovery arms its other arms again
    and delivers the message that was accepted for one of them."""
    db = tmp_path / "s.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(pair())
    iid = eng.publish_message("placed", payload={"order": "o-5"})
    assert eng.publish_message("paid", key="o-5", payload={"sum": 9}) == iid
    eng.store.close()
    del eng
    eng2 = recover(db, pair())
    eng2.run()
    inst = eng2.instance(iid)
    assert inst.state == "completed" and inst.data["sum"] == 9
    assert len(eng2.instances()) == 1


def test_a_crash_while_one_arm_waits_recovers_it_dehydrated(tmp_path):
    db = tmp_path / "s.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(pair())
    iid = eng.publish_message("paid", payload={"order": "o-6"})
    eng.run()
    held = [h for h in eng.holders() if h.instance == iid]
    eng.store.close()
    del eng
    eng2 = recover(db, pair())
    assert eng2.instance(iid).residency == "dehydrated"
    assert [h for h in eng2.holders() if h.instance == iid] == held
    assert eng2.publish_message("placed", key="o-6") == iid
    eng2.run()
    assert eng2.instance(iid).state == "completed"


def test_rewind_to_each_fact_and_replay_gives_the_same_facts():
    eng = bpm.Engine()
    eng.deploy(pair(timer=True))
    eng.publish_message("placed", payload={"order": "a"})
    eng.publish_message("paid", key="a")
    eng.publish_message("paid", payload={"order": "b"})
    eng.step()
    eng.advance("PT3H")
    eng.publish_message("placed", key="b")
    eng.advance("P1D")
    facts = [f.to_json() for f in eng.facts]
    for n in range(0, len(facts), 5):
        eng.rewind(n)
        kept = [f.to_json() for f in eng.facts]  # to the end of the event that emitted n
        assert len(kept) >= n and kept == facts[:len(kept)]
        eng.replay()
        assert [f.to_json() for f in eng.facts] == facts


def test_a_parallel_gateway_that_does_not_instantiate_is_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.event_gateway("g", parallel=True)
    p.message_catch("a", message="a", key="k")
    p.end("e")
    p.flow("s", "g", "a", "e")
    with pytest.raises(bpm.ModelError, match="event_gateway 'g' is parallel but does not "
                                             "instantiate"):
        p.validate()


@pytest.mark.parametrize("change, problem", [
    (lambda p: (p.start("s"), p.flow("s", "g")), "may have no incoming flow"),
    (lambda p: (p.conditional_catch("c", condition="x > 1"), p.flow("g", "c", "e")),
     "arm 'c' is a condition"),
])
def test_an_instantiating_gateway_must_be_able_to_start(change, problem):
    p = bpm.Process("bad")
    p.event_gateway("g", instantiate=True)
    p.message_catch("a", message="a")
    p.end("e")
    p.flow("g", "a", "e")
    change(p)
    with pytest.raises(bpm.ModelError, match=problem):
        p.validate()


def test_a_message_arm_of_a_parallel_gateway_needs_its_key():
    p = bpm.Process("bad")
    p.event_gateway("g", instantiate=True, parallel=True)
    p.message_catch("a", message="a")
    p.message_catch("b", message="b", key="k")
    p.end("e")
    p.flow("g", "a", "e")
    p.flow("g", "b", "e")
    with pytest.raises(bpm.ModelError, match="message_catch 'a' has no correlation key"):
        p.validate()


def test_a_failing_key_on_another_arm_fails_the_instance_and_the_arms_stay_armed():
    eng = bpm.Engine()
    eng.deploy(pair())
    iid = eng.publish_message("placed", payload={"sku": 1})  # no "order" field
    eng.run()
    inst = eng.instance(iid)
    assert inst.state == "failed"
    assert [f.node for f in eng.facts if f.kind == "incident"] == ["paid"]
    assert [h.instance for h in eng.holders()] == ["", ""]  # the starts, nothing of iid
    other = eng.publish_message("paid", key="o")  # its key fills the ``order`` field
    eng.run()
    assert other == "i2" and eng.instance(other).data == {"order": "o"}
    assert [(h.node, h.keys) for h in eng.holders() if h.instance == other] == [
        ("placed", ("placed", "o"))]


def test_the_gateway_round_trips_through_a_bpmn_file_with_its_diagram():
    p = pair(timer=True)
    xml = p.to_bpmn()
    assert 'instantiate="true"' in xml and 'eventGatewayType="Parallel"' in xml
    assert 'bpmnElement="g"' in xml  # drawn: a shape in the diagram
    model = bpm.load_bpmn(xml)
    assert [(n.severity, n.element) for n in model.report] == [("warning", "ship")]  # no fn
    back, built = model.process().definition(), p.definition()
    for eid in ("g", "placed", "paid", "day"):
        assert repr(back.nodes[eid]) == repr(built.nodes[eid])
    assert back.nodes["g"].instantiate and back.nodes["g"].parallel
    assert model.to_bpmn() == bpm.load_bpmn(model.to_bpmn()).to_bpmn()
    q = either()
    again = bpm.load_bpmn(q.to_bpmn())
    assert not again.report  # an exclusive one's arms need no key: no note
    assert again.process().definition().signature == q.definition().signature


def test_the_process_view_draws_the_gateway_as_one_that_instantiates():
    from gobpm_nb.bpmn.drawing import drawing
    from gobpm_nb.observe.projections import process_state
    from gobpm_nb.render.dot import process_dot

    eng = bpm.Engine()
    eng.deploy(pair())
    iid = eng.publish_message("placed", payload={"order": "v"})
    eng.run()
    state = process_state(eng, iid)
    (g,) = [n for n in state.nodes if n.id == "g"]
    assert g.detail == "parallel · instantiates"
    assert "⊕" in process_dot(state)
    drawn = drawing(pair().definition())
    assert drawn is not None and 'eventGatewayType="Parallel"' in drawn.xml
    eng.deploy(either())
    one = eng.broadcast_signal("recall")
    eng.run()
    state = process_state(eng, next(i.id for i in eng.instances() if i.id != iid))
    (g,) = [n for n in state.nodes if n.id == "g"]
    assert g.detail == "instantiates" and "⬠" in process_dot(state) and one == 1


# -- a BPMN file ----------------------------------------------------------------------------
FILE = Path(__file__).parent / "data" / "bpmn" / "event_gateway_starts.bpmn"


def test_a_modelers_file_runs_its_parallel_gateway_that_creates_instances():
    model = bpm.load_bpmn(FILE)
    assert list(model.report) == []
    p = model.process("order_pairing")
    eng = bpm.Engine()
    eng.deploy(p)
    iid = eng.publish_message("payment-received", payload={"orderId": "A-1", "sum": 30})
    eng.run()
    assert eng.instance(iid).residency == "dehydrated"
    assert eng.publish_message("order-placed", key="A-1", payload={"items": 2}) == iid
    eng.run()
    (task,) = eng.tasks()
    assert task.node == "Task_ship" and task.instance == iid
    eng.complete_task(task.id)
    eng.run()
    inst = eng.instance(iid)
    assert inst.state == "completed" and inst.data == {"orderId": "A-1", "sum": 30, "items": 2}
    assert left(eng, inst)[:2] == ["Gateway_pair", "Event_paid"]


def test_a_modelers_file_runs_its_exclusive_gateway_that_creates_instances():
    model = bpm.load_bpmn(FILE)
    eng = bpm.Engine()
    eng.deploy(model.process("hotline"))
    eng.broadcast_signal("call")
    eng.publish_message("mail", payload={"from": "ann"})
    eng.advance("P2D")
    by = [(f.instance, f.details["by"]) for f in eng.facts if f.kind == "instance_started"]
    assert by == [("i1", "signal"), ("i2", "message"), ("i3", "timer"), ("i4", "timer")]
    assert all(i.state == "completed" for i in eng.instances())
    assert [left(eng, i)[1] for i in eng.instances()] == [
        "Event_call", "Task_mail", "Event_nightly", "Event_nightly"]


def test_a_modelers_file_writes_back_its_gateways_as_read():
    model = bpm.load_bpmn(FILE)
    xml = model.to_bpmn()
    assert 'instantiate="true" eventGatewayType="Parallel"' in xml
    assert 'instantiate="true" eventGatewayType="Exclusive"' in xml
    again = bpm.load_bpmn(xml)
    for pid in ("order_pairing", "hotline"):
        assert again.process(pid).definition().signature == \
            model.process(pid).definition().signature


def test_the_process_view_draws_a_files_gateway_from_its_own_diagram():
    from gobpm_nb.bpmn.drawing import drawing

    eng = bpm.Engine()
    p = bpm.load_bpmn(FILE).process("order_pairing")
    eng.deploy(p)
    drawn = drawing(p.definition())
    assert drawn is not None and drawn.source == "file"
    assert 'id="Gateway_pair_di"' in drawn.xml and 'eventGatewayType="Parallel"' in drawn.xml


NOT_INSTANTIATING = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="defs"
    targetNamespace="http://example.com/review">
  <signal id="s_go" name="go"/>
  <signal id="s_stop" name="stop"/>
  <process id="p" isExecutable="true">
    <startEvent id="s"/>
    <eventBasedGateway id="both" name="Both" eventGatewayType="Parallel"/>
    <intermediateCatchEvent id="go"><signalEventDefinition signalRef="s_go"/>
    </intermediateCatchEvent>
    <intermediateCatchEvent id="stop"><signalEventDefinition signalRef="s_stop"/>
    </intermediateCatchEvent>
    <endEvent id="went"/>
    <endEvent id="stopped"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="both"/>
    <sequenceFlow id="f2" sourceRef="both" targetRef="go"/>
    <sequenceFlow id="f3" sourceRef="both" targetRef="stop"/>
    <sequenceFlow id="f4" sourceRef="go" targetRef="went"/>
    <sequenceFlow id="f5" sourceRef="stop" targetRef="stopped"/>
  </process>
</definitions>"""


def test_a_parallel_gateway_that_does_not_instantiate_is_refused_as_written():
    model = bpm.load_bpmn(NOT_INSTANTIATING)
    with pytest.raises(bpm.ModelError, match="line 8: eventBasedGateway 'both' is parallel "
                                             "but does not instantiate"):
        model.process()


def test_as_drawn_a_parallel_gateway_that_does_not_instantiate_is_an_exclusive_one():
    model = bpm.load_bpmn(NOT_INSTANTIATING, run_as_drawn=True)
    notes = [n.message for n in model.report if n.element == "both"]
    assert notes == ["as drawn: eventBasedGateway 'both' is parallel but does not instantiate, "
                     "which BPMN does not allow: it is an exclusive event-based gateway"]
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.broadcast_signal("stop")
    eng.broadcast_signal("go")
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["stopped"]


def test_a_signal_fires_a_waiting_arm_and_starts_an_instance_too():
    """A signal is not correlated: every listener hears it, the deployed arm included."""
    p = bpm.Process("audited")
    p.event_gateway("g", instantiate=True, parallel=True)
    p.message_catch("placed", message="placed", key="order")
    p.signal_catch("audit", signal="audit")
    p.parallel_gateway("j")
    p.end("e")
    p.flow("g", "placed", "j", "e")
    p.flow("g", "audit", "j")
    eng = bpm.Engine()
    eng.deploy(p)
    first = eng.publish_message("placed", payload={"order": "o-1"})
    eng.run()
    eng.broadcast_signal("audit", payload={"order": "o-2"})
    eng.run()
    assert eng.instance(first).state == "completed"
    (second,) = [i for i in eng.instances() if i.id != first]
    assert second.state == "active" and second.data == {"order": "o-2"}
    assert [(h.kind, h.node, h.keys) for h in eng.holders() if h.instance == second.id] == [
        ("message", "placed", ("placed", "o-2"))]


COMMANDS = [
    ("publish_message", ("placed",), {"payload": {"order": "a"}}),
    ("publish_message", ("paid",), {"key": "a", "payload": {"sum": 1}}),
    ("publish_message", ("paid",), {"payload": {"order": "b"}}),
    ("advance", ("PT3H",), {}),
    ("publish_message", ("placed",), {"key": "b"}),
    ("advance", ("P2D",), {}),
]


def outcome(eng):
    return [(i.id, i.state, i.data, ended_at(i)) for i in eng.instances()]


@pytest.mark.parametrize("crash_after", range(1, len(COMMANDS)))
def test_a_crash_between_any_two_calls_changes_nothing(tmp_path, crash_after):
    """SQLite, a crash after each call in turn (the engine dropped, recovered from the
    file), then the rest of the calls: the same instances, data and paths as without."""
    ref = bpm.Engine()
    ref.deploy(pair(timer=True))
    for name, args, kwargs in COMMANDS:
        getattr(ref, name)(*args, **kwargs)
    db = tmp_path / "s.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(pair(timer=True))
    for name, args, kwargs in COMMANDS[:crash_after]:
        getattr(eng, name)(*args, **kwargs)
    eng.store.close()
    del eng
    eng = recover(db, pair(timer=True))
    for name, args, kwargs in COMMANDS[crash_after:]:
        getattr(eng, name)(*args, **kwargs)
    eng.run(until=ref.now)
    assert outcome(eng) == outcome(ref)


def test_a_timer_arm_keeps_its_next_deadline_across_a_restart(tmp_path):
    p = bpm.Process("tick")
    p.event_gateway("g", instantiate=True)
    p.timer_catch("hourly", cycle="R3/PT1H")
    p.signal_catch("poke", signal="poke")
    p.end("e")
    p.flow("g", "hourly", "e")
    p.flow("g", "poke", "e")
    db = tmp_path / "s.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(p)
    eng.advance("PT1H30M")
    held = [h for h in eng.holders() if h.kind == "timer"]
    eng.store.close()
    del eng
    eng2 = recover(db, p)
    assert [h for h in eng2.holders() if h.kind == "timer"] == held  # 02:00, as recorded
    eng2.advance("PT10H")
    begun = [f.at.strftime("%H:%M") for f in eng2.facts if f.kind == "instance_started"]
    assert begun == ["02:00", "03:00"]


def test_a_newer_version_replaces_the_older_ones_arms():
    eng = bpm.Engine()
    eng.deploy(either())
    newer = either()
    newer.end("spare")
    newer.flow("pack", "spare")
    eng.deploy(newer)
    assert [(h.node, h.track) for h in eng.holders()] == [
        ("order", "intake"), ("recall", "intake"), ("fax", "intake")]
    withdrawn = [f.node for f in eng.facts if f.kind == "wait_released"]
    assert withdrawn == ["order", "recall", "fax"]
    iid = eng.publish_message("order")
    started = [f for f in eng.facts if f.kind == "instance_started"]
    assert started[0].instance == iid and started[0].details["version"] == 2


def test_two_arms_events_at_one_instant_wake_the_dehydrated_instance_once():
    p = bpm.Process("trio")
    p.event_gateway("g", instantiate=True, parallel=True)
    for arm in ("placed", "paid", "packed"):
        p.message_catch(arm, message=arm, key="order")
    p.parallel_gateway("j")
    p.end("e")
    for arm in ("placed", "paid", "packed"):
        p.flow("g", arm, "j")
    p.flow("j", "e")
    eng = bpm.Engine()
    eng.deploy(p)
    iid = eng.publish_message("placed", payload={"order": "t"})
    eng.run()
    assert eng.instance(iid).residency == "dehydrated"
    assert eng.publish_message("paid", key="t") == iid
    assert eng.publish_message("packed", key="t") == iid
    eng.run()
    assert eng.instance(iid).state == "completed"
    assert len([f for f in eng.facts if f.kind == "hydrated"]) == 1


def test_as_drawn_a_gateway_that_creates_instances_is_the_start_of_its_process():
    model = bpm.load_bpmn(FILE, run_as_drawn=True)
    assert list(model.report) == []  # nothing assumed: no implicit start is added
    eng = bpm.Engine()
    eng.deploy(model.process("hotline"))
    iid = eng.publish_message("mail")
    eng.run()
    assert eng.instance(iid).state == "completed"
