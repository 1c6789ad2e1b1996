"""Throw and end events with several event definitions: each is thrown in the order given
(a message published, a signal broadcast, an escalation raised), then the track goes on or
ends."""

from __future__ import annotations

import pytest
from conftest import ended_at, recover

import gobpm_nb as bpm


def thrower(end=False, pid="thrower"):
    """s -> ok (user task) -> both (throws message ``paid`` keyed by ``order`` and signal
    ``go``, with the ``amount`` field) -> e; or the end event throws them itself."""
    p = bpm.Process(pid)
    p.start("s")
    p.user_task("ok", assignee="x")
    events = [{"message": "paid", "key": "order"}, {"signal": "go"}]
    if end:
        p.end("e", events=events, payload=["amount"])
        p.flow("s", "ok", "e")
    else:
        p.throw("both", events=events, payload=["amount"])
        p.end("e")
        p.flow("s", "ok", "both", "e")
    return p


def on_message():
    p = bpm.Process("on_message")
    p.start("s")
    p.message_catch("m", message="paid", key="order")
    p.end("e")
    p.flow("s", "m", "e")
    return p


def on_signal():
    p = bpm.Process("on_signal")
    p.start("s")
    p.signal_catch("g", signal="go")
    p.end("e")
    p.flow("s", "g", "e")
    return p


def run_all(eng, end=False):
    m = eng.start(on_message(), {"order": "o-1"})
    g = eng.start(on_signal())
    t = eng.start(thrower(end), {"order": "o-1", "amount": 7})
    eng.run()
    return m, g, t


def throws(eng):
    return [(f.kind, f.details.get("message") or f.details.get("signal")) for f in eng.facts
            if f.kind in ("message_correlated", "message_dropped", "signal_broadcast")]


@pytest.mark.parametrize("end", [False, True])
@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_message_and_a_signal_are_thrown_in_order_and_wake_their_waits(end, dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    m, g, t = run_all(eng, end)
    assert (m.residency, g.residency) == (("dehydrated",) * 2 if dehydrate else ("resident",) * 2)
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert [i.state for i in (m, g, t)] == ["completed"] * 3
    assert throws(eng) == [("message_correlated", "paid"), ("signal_broadcast", "go")]
    assert m.data == {"order": "o-1", "amount": 7} and g.data == {"amount": 7}
    assert ended_at(t) == ["e"]


def test_an_escalation_caught_by_an_interrupting_boundary_stops_what_comes_after_it():
    """Message, then escalation, then signal: the escalation's interrupting boundary on the
    subprocess cancels the throwing track, so the signal is never broadcast."""
    p = bpm.Process("escalating")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("in")
        sp.throw("all", events=[{"message": "paid"}, {"escalation": "late"},
                                {"signal": "go"}])
        sp.end("out")
        sp.flow("in", "all", "out")
    p.escalation_boundary("caught", attached_to="sp", escalation="late")
    p.end("done")
    p.end("escalated")
    p.flow("s", "sp", "done")
    p.flow("caught", "escalated")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert ended_at(inst) == ["escalated"]
    assert throws(eng) == [("message_dropped", "paid")]


def test_an_escalation_nobody_catches_is_a_fact_and_the_rest_is_thrown():
    p = bpm.Process("uncaught")
    p.start("s")
    p.throw("all", events=[{"escalation": "late"}, {"signal": "go"}])
    p.end("e")
    p.flow("s", "all", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed"
    kinds = [f.kind for f in eng.facts if f.kind in ("escalation_uncaught", "signal_broadcast")]
    assert kinds == ["escalation_uncaught", "signal_broadcast"]


@pytest.mark.parametrize("events, problem", [
    ([{"signal": "go"}], "needs two event definitions or more"),
    ([{"signal": "go"}, {"timer": "PT1H"}], "event 1 must be a dict with exactly one of"),
    ([{"signal": "go"}, {"signal": "x", "key": "k"}], "event 1 must be a dict"),
    ([{"signal": ""}, {"message": "m"}], "names no signal"),
    ("go", "give the events as a list of dicts"),
])
def test_a_bad_list_of_definitions_is_refused_naming_the_event(events, problem):
    p = bpm.Process("bad")
    p.start("s")
    p.throw("t", events=events)
    p.end("e")
    p.flow("s", "t", "e")
    with pytest.raises(bpm.ModelError, match=problem):
        p.validate()


def test_an_end_with_events_and_another_kind_is_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.end("e", events=[{"signal": "a"}, {"signal": "b"}], terminate=True)
    p.flow("s", "e")
    with pytest.raises(bpm.ModelError, match="give no other kind beside it"):
        p.validate()


def test_the_thrower_waiting_before_the_throw_survives_a_crash_on_sqlite(tmp_path):
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    m, g, t = run_all(eng)
    assert t.residency == "dehydrated"
    eng.store.close()  # the crash
    eng = recover(db, thrower(), on_message(), on_signal())
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert [eng.instance(i.id).state for i in (m, g, t)] == ["completed"] * 3
    assert throws(eng)[-2:] == [("message_correlated", "paid"), ("signal_broadcast", "go")]


def test_rewind_before_the_throw_and_replay_gives_the_same_facts():
    eng = bpm.Engine(keep_facts=None)
    run_all(eng, end=True)
    mark = eng.facts[-1].seq
    task = eng.tasks()[0].id
    eng.complete_task(task)
    eng.run()
    first = [f.as_dict() for f in eng.facts]
    eng.rewind(mark)
    assert [i.state for i in eng.instances()] == ["active"] * 3
    eng.complete_task(task)
    eng.run()
    assert [f.as_dict() for f in eng.facts if f.kind != "rewound"] == first


@pytest.mark.parametrize("end", [False, True])
def test_a_bpmn_file_round_trip_keeps_each_definition_in_order(end):
    xml = thrower(end).to_bpmn()
    tag = "endEvent" if end else "intermediateThrowEvent"
    node = xml[xml.index(f'<bpmn:{tag} id="{"e" if end else "both"}"'):]
    assert node.index("messageEventDefinition") < node.index("signalEventDefinition")
    back = bpm.Process.from_bpmn(xml)
    assert back.to_bpmn() == xml
    assert not [n for n in bpm.load_bpmn(xml).report if n.severity == "error"]
    eng = bpm.Engine()
    m, g, t = (eng.start(on_message(), {"order": "o-1"}), eng.start(on_signal()),
               eng.start(back, {"order": "o-1", "amount": 7}))
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert [i.state for i in (m, g, t)] == ["completed"] * 3


def test_a_file_throw_in_document_order_with_an_escalation():
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="t">
  <bpmn:signal id="Sig" name="go"/>
  <bpmn:escalation id="Esc" escalationCode="late"/>
  <bpmn:process id="file" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <bpmn:intermediateThrowEvent id="t">
      <bpmn:signalEventDefinition signalRef="Sig"/>
      <bpmn:escalationEventDefinition escalationRef="Esc"/>
    </bpmn:intermediateThrowEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
    <bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""
    p = bpm.load_bpmn(xml).process()
    (t,) = [e for e in p.elements if e.id == "t"]
    assert [(d.kind, d.signal or d.escalation) for d in t.events] == [("signal", "go"),
                                                                       ("escalation", "late")]
    eng = bpm.Engine()
    eng.start(p)
    eng.run()
    kinds = [f.kind for f in eng.facts if f.kind in ("escalation_uncaught", "signal_broadcast")]
    assert kinds == ["signal_broadcast", "escalation_uncaught"]


def test_a_file_throw_with_a_kind_it_cannot_throw_stays_a_placeholder():
    xml = thrower().to_bpmn().replace(
        '<bpmn:signalEventDefinition signalRef="Signal_go"/>',
        '<bpmn:signalEventDefinition signalRef="Signal_go"/><bpmn:linkEventDefinition name="x"/>')
    model = bpm.load_bpmn(xml)
    assert [n.element for n in model.report if n.severity == "error"] == ["both"]


def test_the_process_view_draws_the_throw_with_what_it_throws():
    from gobpm_nb.ui.process import process_picture
    eng = bpm.Engine()
    _, _, t = run_all(eng)
    picture = process_picture(eng, t.id)
    assert "⬟" in picture.dot and "message paid, signal go" in picture.dot
    assert 'bpmnElement="both"' in picture.bpmn


def test_a_file_throw_of_two_messages_publishes_both_in_document_order():
    """As SpiffWorkflow's multiple-throw.bpmn: two message definitions on one throw, each a
    message of its own; both are published and each reaches its own waiting instance."""
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="t">
  <bpmn:message id="M1" name="message_1"/>
  <bpmn:message id="M2" name="message_2"/>
  <bpmn:process id="initiate" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <bpmn:intermediateThrowEvent id="t">
      <bpmn:messageEventDefinition messageRef="M1"/>
      <bpmn:messageEventDefinition messageRef="M2"/>
    </bpmn:intermediateThrowEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
    <bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""
    model = bpm.load_bpmn(xml)
    assert [n for n in model.report if n.severity == "error"] == []
    p = model.process()
    (t,) = [e for e in p.elements if e.id == "t"]
    assert [d.message for d in t.events] == ["message_1", "message_2"]
    eng = bpm.Engine()
    waits = {}
    for name in ("message_1", "message_2"):
        w = bpm.Process(f"on_{name}")
        w.start("s")
        w.message_catch("m", message=name, key=bpm.NO_KEY)
        w.end("e")
        w.flow("s", "m", "e")
        waits[name] = eng.start(w)
    eng.run()
    eng.start(p)
    eng.run()
    assert [waits[n].state for n in ("message_1", "message_2")] == ["completed"] * 2
    taken = [f.details["message"] for f in eng.facts if f.kind == "message_correlated"]
    assert taken == ["message_1", "message_2"]
