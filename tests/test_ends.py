"""Message and signal end events, none throw events, implicit ends and unreachable elements
(issue 23): what they do to the instances, and that they survive dehydration, a store, a
crash and a BPMN round trip."""

import logging

import pytest
from conftest import ended_at, recover
from test_views_scopes import nodes, process_dot, statements

import gobpm_nb as bpm


def catcher(message="shipped"):
    """start -> a message catch keyed by ``order`` -> end."""
    p = bpm.Process("wait")
    p.start("s")
    p.message_catch("got", message=message, key="order")
    p.end("e")
    p.flow("s", "got", "e")
    return p


def sender(**end):
    """start -> a user task -> the end event ``done`` given by ``end``."""
    p = bpm.Process("send")
    p.start("s")
    p.user_task("pack")
    p.end("done", **end)
    p.flow("s", "pack", "done")
    return p


def finish_tasks(eng):
    for task in eng.tasks():
        eng.complete_task(task.id)
    eng.run()


def incidents(eng):
    return [(f.node, f.details["cause"]) for f in eng.facts if f.kind == "incident"]


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_message_end_correlates_to_another_instances_catch(dehydrate):
    """The end event publishes its message with its key and payload: the waiting instance
    with that key gets the fields and completes, the sender completes at its end."""
    eng = bpm.Engine(dehydrate=dehydrate)
    other = eng.start(catcher(), {"order": 2})
    waiting = eng.start(catcher(), {"order": 1})
    eng.run()
    send = eng.start(sender(message="shipped", key="order", payload=["order", "parcel"]),
                     {"order": 1, "parcel": "P-7", "secret": True})
    eng.run()
    finish_tasks(eng)
    assert send.state == "completed" and ended_at(send) == ["done"]
    assert waiting.state == "completed" and waiting.data == {"order": 1, "parcel": "P-7"}
    assert other.state == "active"
    [fact] = [f for f in eng.facts if f.kind == "message_correlated"]
    assert (fact.instance, fact.node) == (waiting.id, "got")


def test_a_message_end_key_given_as_python_is_recorded_and_replayed():
    """A Python key of a message end is answered once and served from the tape on replay:
    the rewound engine ends in the same state."""
    eng = bpm.Engine()
    waiting = eng.start(catcher(), {"order": 3})
    eng.run()
    eng.start(sender(message="shipped", key=lambda d: d["n"] + 1), {"n": 2})
    eng.run()
    finish_tasks(eng)
    assert waiting.state == "completed"
    facts = [(f.kind, f.instance, f.node) for f in eng.facts]
    eng.rewind(3)
    eng.replay()
    assert [(f.kind, f.instance, f.node) for f in eng.facts] == facts


def test_a_signal_end_wakes_catchers_and_starts_instances():
    """The signal end broadcasts: an instance waiting on the signal goes on with the payload,
    and a process with a signal start of that name gets a new instance."""
    listener = bpm.Process("listen")
    listener.start("s")
    listener.signal_catch("heard", signal="fire")
    listener.end("e")
    listener.flow("s", "heard", "e")
    started = bpm.Process("on_fire")
    started.signal_start("alarm", signal="fire")
    started.end("e")
    started.flow("alarm", "e")
    eng = bpm.Engine()
    eng.deploy(started)
    inst = eng.start(listener)
    eng.run()
    send = eng.start(sender(signal="fire", payload=["floor"]), {"floor": 3})
    eng.run()
    finish_tasks(eng)
    assert send.state == "completed" and ended_at(send) == ["done"]
    assert inst.state == "completed" and inst.data == {"floor": 3}
    assert [i.process for i in eng.instances() if i.state == "completed"].count("on_fire") == 1


@pytest.mark.parametrize("end", [dict(message="shipped", key="order", payload=["parcel"]),
                                 dict(signal="fire", payload=["parcel"])])
def test_a_throwing_end_whose_payload_field_is_missing_is_an_incident_naming_it(end):
    """A payload field absent from the data fails the instance at the end event, naming the
    field; nothing is sent."""
    eng = bpm.Engine()
    waiting = eng.start(catcher(), {"order": 1})
    eng.run()
    send = eng.start(sender(**end), {"order": 1})
    eng.run()
    finish_tasks(eng)
    assert send.state == "failed"
    assert incidents(eng) == [("done", "payload field 'parcel' is not in the data")]
    assert waiting.state == "active"


def test_a_message_end_whose_publish_is_refused_is_an_incident():
    """A key the hub refuses (not JSON) is an incident at the end event, as at a throw."""
    eng = bpm.Engine()
    send = eng.start(sender(message="shipped", key=lambda d: {1, 2}))
    eng.run()
    finish_tasks(eng)
    assert send.state == "failed"
    [(node, cause)] = incidents(eng)
    assert node == "done" and "key" in cause


def test_a_message_end_inside_a_subprocess_sends_and_the_subprocess_goes_on():
    """A message end in a subprocess publishes, ends the subprocess's track, and the
    subprocess leaves by its flow as after a plain end."""
    p = bpm.Process("outer")
    p.start("s")
    with p.subprocess("ship") as sp:
        sp.start("ss")
        sp.end("told", message="shipped", key="order")
        sp.flow("ss", "told")
    p.user_task("after")
    p.end("e")
    p.flow("s", "ship", "after", "e")
    eng = bpm.Engine()
    waiting = eng.start(catcher(), {"order": 5})
    eng.run()
    inst = eng.start(p, {"order": 5})
    eng.run()
    assert waiting.state == "completed"
    assert [t.node for t in eng.tasks()] == ["after"]
    finish_tasks(eng)
    assert inst.state == "completed"


def test_message_and_signal_ends_survive_a_crash_on_sqlite(tmp_path):
    """Waiting senders and catchers recovered from SQLite after a crash: completing the
    senders' tasks delivers the message and the signal to the recovered catchers."""
    db = tmp_path / "ends.db"
    listener = bpm.Process("listen")
    listener.start("s")
    listener.signal_catch("heard", signal="fire")
    listener.end("e")
    listener.flow("s", "heard", "e")
    by_message = sender(message="shipped", key="order", payload=["order"])
    by_signal = bpm.Process("alarm")
    by_signal.start("s")
    by_signal.user_task("pack")
    by_signal.end("done", signal="fire")
    by_signal.flow("s", "pack", "done")
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    for proc, data in ((catcher(), {"order": 4}), (listener, {}), (by_message, {"order": 4}),
                       (by_signal, {})):
        eng.start(proc, data)
    eng.run()
    eng.store.close()
    eng2 = recover(db, catcher(), listener, by_message, by_signal)
    finish_tasks(eng2)
    assert {i.id: i.state for i in eng2.instances()} == {
        "i1": "completed", "i2": "completed", "i3": "completed", "i4": "completed"}


def test_a_none_throw_passes_and_is_left_like_any_node():
    """A none intermediate throw (a milestone) is entered and left; the instance goes on."""
    p = bpm.Process("m")
    p.start("s")
    p.throw("half", "Half way")
    p.end("e")
    p.flow("s", "half", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed"
    assert [f.node for f in eng.facts if f.kind == "node_left"] == ["s", "half", "e"]


@pytest.mark.parametrize("make", ["user_task", "message_catch"])
def test_an_element_without_outgoing_flow_ends_its_track_with_a_warning(make, caplog):
    """A task or a catch event with no outgoing flow is valid: validate() warns, naming it;
    the track ends there and, the last one, completes the instance."""
    p = bpm.Process("p")
    p.start("s")
    if make == "user_task":
        p.user_task("last")
    else:
        p.message_catch("last", message="go", key="order")
    p.flow("s", "last")
    with caplog.at_level(logging.WARNING, logger="gobpm_nb"):
        p.validate()
    warning = f"{make} 'last' has no outgoing flow: its track ends there (an implicit end)"
    assert p.warnings == [warning]
    assert warning in caplog.text
    eng = bpm.Engine()
    inst = eng.start(p, {"order": 1})
    eng.run()
    if make == "user_task":
        finish_tasks(eng)
    else:
        eng.publish_message("go", key=1)
        eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["last"]


def test_an_implicit_end_waits_for_the_other_tracks():
    """One branch ending without an end event does not complete the instance while another
    branch still runs."""
    p = bpm.Process("p")
    p.start("s")
    p.parallel_gateway("fork")
    p.script_task("quick", fn=lambda d: {"quick": True})
    p.user_task("slow")
    p.end("e")
    p.flow("s", "fork", "quick")
    p.flow("fork", "slow", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "active" and inst.data == {"quick": True}
    finish_tasks(eng)
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["e", "quick"]


def test_a_gateway_without_outgoing_flow_is_still_an_error():
    """Only activities and events end implicitly: a gateway with no way out is refused."""
    p = bpm.Process("p")
    p.start("s")
    p.exclusive_gateway("g")
    p.flow("s", "g")
    with pytest.raises(bpm.ModelError, match="exclusive_gateway 'g' has no way out"):
        p.validate()


def test_an_unreachable_task_is_a_warning_and_never_entered():
    """An unreachable task does not stop the process from running; it is never entered."""
    p = bpm.Process("p")
    p.start("s")
    p.end("e")
    p.user_task("lonely")
    p.end("e2")
    p.flow("s", "e")
    p.flow("lonely", "e2")
    assert p.warnings == ["user_task 'lonely' is unreachable from the start event",
                          "end 'e2' is unreachable from the start event"]
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed" and eng.tasks() == []
    assert "lonely" not in [f.node for f in eng.facts]


def test_end_events_refuse_two_things_at_once():
    """A message end that also terminates, or an end given both message and signal, is
    refused, naming what conflicts."""
    p = bpm.Process("p")
    p.start("s")
    p.end("both", message="m", terminate=True)
    p.end("two", message="m", signal="x")
    p.end("stray", key="order")
    p.exclusive_gateway("g")
    p.flow("s", "g", "both")
    p.flow("g", "two")
    p.flow("g", "stray")
    with pytest.raises(bpm.ModelError) as info:
        p.validate()
    problems = info.value.problems
    assert ("end event 'both': give at most one of terminate, error, escalation, message or "
            "signal (it has terminate and message)") in problems
    assert ("end event 'two': give at most one of terminate, error, escalation, message or "
            "signal (it has message and signal)") in problems
    assert "end event 'stray': key= needs message=" in problems


def round_trip(p):
    """``p`` written as BPMN, read back, written again: the process read, and both files."""
    xml = p.to_bpmn()
    back = bpm.load_bpmn(xml)
    (q,) = back.processes.values()
    return q, xml, q.to_bpmn(), back.report


def test_message_and_signal_ends_and_a_none_throw_round_trip_through_bpmn():
    """Written and read back, the ends keep their message, key, signal and payload, the
    milestone stays a none throw, with their shapes; the second file equals the first."""
    p = bpm.Process("ends")
    p.start("s")
    p.throw("half", "Half way")
    p.exclusive_gateway("g")
    p.end("done", message="shipped", key="order", payload=["order"])
    p.end("alarm", signal="fire", payload=["floor"])
    p.flow("s", "half", "g")
    p.flow("g", "done", condition="order > 1")
    p.flow("g", "alarm")
    q, xml, again, report = round_trip(p)
    assert [(e.kind, e.id) for e in q.elements] == [(e.kind, e.id) for e in p.elements]
    assert q.definition().signature == p.definition().signature
    assert again == xml and report == []
    assert '<bpmndi:BPMNShape id="done_di" bpmnElement="done">' in xml
    assert '<bpmn:signalEventDefinition signalRef="Signal_fire"/>' in xml


def test_an_imported_message_end_runs_and_reads_its_key_from_zeebe():
    """A file's <endEvent> with a messageEventDefinition whose <message> has a
    zeebe:subscription key reads back the same after a write, and publishes to the instance
    with that key."""
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="send" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:endEvent id="told"><bpmn:messageEventDefinition messageRef="M"/></bpmn:endEvent>
    <bpmn:sequenceFlow id="f" sourceRef="s" targetRef="told"/>
  </bpmn:process>
  <bpmn:message id="M" name="shipped">
    <bpmn:extensionElements><zeebe:subscription correlationKey="=order"/>
    </bpmn:extensionElements>
  </bpmn:message>
</bpmn:definitions>"""
    model = bpm.load_bpmn(xml)
    assert model.report == []
    again = bpm.load_bpmn(model.to_bpmn())
    assert [(e.kind, e.id) for e in again.process("send").elements] == [
        ("start", "s"), ("message_end", "told")]
    eng = bpm.Engine()
    waiting = eng.start(catcher(), {"order": 8})
    eng.run()
    eng.start(model.process("send"), {"order": 8})
    eng.run()
    assert waiting.state == "completed"


def test_implicit_ends_and_unreachable_elements_are_warning_notes_after_a_round_trip():
    """A process with a task without outgoing flow and an unreachable task writes and reads
    back; the report warns about each, naming it by its tag in the file, and it runs."""
    p = bpm.Process("loose")
    p.start("s")
    p.user_task("last")
    p.user_task("lonely")
    p.flow("s", "last")
    q, xml, again, report = round_trip(p)
    assert again == xml
    assert [(n.severity, n.element, n.message) for n in report] == [
        ("warning", "last", "userTask 'last' has no outgoing flow: its track ends there (an "
                            "implicit end)"),
        ("warning", "lonely", "userTask 'lonely' is unreachable from the start event")]
    eng = bpm.Engine()
    inst = eng.start(q)
    eng.run()
    finish_tasks(eng)
    assert inst.state == "completed"


def test_the_process_view_draws_the_ends_and_the_milestone_with_their_marks():
    """The message end shows an envelope and its message and key, the signal end a filled
    triangle and its signal, both thick like any end; the milestone is a plain throw."""
    p = bpm.Process("ends")
    p.start("s")
    p.throw("half")
    p.parallel_gateway("g")
    p.end("done", message="shipped", key="order")
    p.end("alarm", signal="fire")
    p.flow("s", "half", "g", "done")
    p.flow("g", "alarm")
    eng = bpm.Engine()
    inst = eng.start(p, {"order": 1})
    dot = process_dot(eng, inst)
    shown, shapes = nodes(dot), statements(dot)
    assert shown["done"] == ["✉", "done", "shipped · order"]
    assert shown["alarm"] == ["▲", "alarm", "fire"]
    assert "penwidth=3.2" in shapes["done"] and "penwidth=3.2" in shapes["alarm"]
    assert shown["half"] == ["", "half"]
