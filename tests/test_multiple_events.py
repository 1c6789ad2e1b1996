"""Events with several definitions (BPMN 2.0 multiple and parallel multiple): a catch, a
boundary and an event subprocess's start wait for a message, a timer and a signal at once."""

import pytest
from conftest import ended_at

import gobpm_nb as bpm

PAID = {"message": "paid", "key": "order"}


def waiting(all_of=False, timer="PT2H"):
    """start -> a catch of the message ``paid`` (keyed by ``order``) and a timer -> end."""
    p = bpm.Process("pay")
    p.start("s")
    events = [PAID, {"timer": timer}]
    if all_of:
        p.catch("wait", all_of=events)
    else:
        p.catch("wait", any_of=events)
    p.end("e")
    p.flow("s", "wait", "e")
    return p


def fired(eng, node):
    return [f for f in eng.facts if f.kind == "timer_fired" and f.node == node]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_multiple_catch_takes_the_message_and_its_timer_never_fires(dehydrate):
    """The message comes first: the instance goes on with its payload, and the timer is
    withdrawn at once (no hold left, nothing fires later)."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(waiting(), {"order": "o1"})
    eng.advance("PT1M")
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    assert sorted(h.kind for h in eng.holders()) == ["message", "timer"]
    eng.publish_message("paid", key="o1", payload={"amount": 5})
    eng.advance("PT3H")
    assert inst.state == "completed" and inst.data["amount"] == 5
    assert eng.holders() == [] and fired(eng, "wait") == []


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_multiple_catch_takes_the_timer_and_the_message_is_dropped(dehydrate):
    """The timer comes first: the instance goes on, and a later message finds nobody."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(waiting(), {"order": "o1"})
    eng.advance("PT3H")
    assert inst.state == "completed" and len(fired(eng, "wait")) == 1
    eng.publish_message("paid", key="o1", payload={"amount": 5})
    eng.run()
    assert "amount" not in inst.data
    assert any(f.kind == "message_dropped" for f in eng.facts)


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_parallel_multiple_catch_waits_for_both(dehydrate):
    """The message alone does not move it (it dehydrates again over the timer); once the
    timer has fired too, the instance completes with the message's payload."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(waiting(all_of=True), {"order": "o1"})
    eng.advance("PT1M")
    eng.publish_message("paid", key="o1", payload={"amount": 5})
    eng.advance("PT1M")
    assert inst.state == "active"
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    assert [h.kind for h in eng.holders()] == ["timer"]
    eng.advance("PT2H")
    assert inst.state == "completed" and inst.data["amount"] == 5
    assert ended_at(inst) == ["e"]


def test_a_parallel_multiple_catch_remembers_what_came_across_a_crash(tmp_path):
    """On SQLite, the message has come, the engine crashes; the recovered engine waits only
    for the timer, fires it at its recorded deadline and completes the instance."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(waiting(all_of=True), {"order": "o1"})
    eng.advance("PT1M")
    eng.publish_message("paid", key="o1", payload={"amount": 5})
    eng.advance("PT1M")
    assert inst.checkpoint()["tracks"][0]["wait"]["came"] == ["message"]
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[waiting(all_of=True)])
    assert [h.kind for h in eng2.holders()] == ["timer"]
    eng2.publish_message("paid", key="o1", payload={"amount": 7})  # already come: dropped
    eng2.advance("PT2H")
    again = eng2.instance(inst.id)
    assert again.state == "completed" and again.data["amount"] == 5


def guarded(interrupting=True):
    """A user task with a boundary that fires on the message ``cancel`` or the signal
    ``stop``, leading to ``stopped``; the task leads to ``done``."""
    p = bpm.Process("guarded")
    p.start("s")
    p.user_task("work")
    p.boundary("halt", attached_to="work", interrupting=interrupting,
               any_of=[{"message": "cancel", "key": "order"}, {"signal": "stop"}])
    p.end("done")
    p.end("stopped")
    p.flow("s", "work", "done")
    p.flow("halt", "stopped")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_multiple_boundary_fires_on_its_signal_and_withdraws_the_message(dehydrate):
    """The signal interrupts the task: the instance ends at ``stopped``, the task leaves the
    inbox and the message arm is withdrawn."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(guarded(), {"order": "o1"})
    eng.advance("PT1M")
    assert sorted(h.kind for h in eng.holders()) == ["message", "signal", "task"]
    eng.broadcast_signal("stop")
    eng.advance("PT1M")
    assert inst.state == "completed" and ended_at(inst) == ["stopped"]
    assert eng.tasks() == [] and eng.holders() == []


def test_a_non_interrupting_multiple_boundary_fires_on_each_and_listens_again():
    """The message and then the signal each fork to ``stopped``; the task stays, and its
    completion ends the instance at ``done``."""
    eng = bpm.Engine()
    inst = eng.start(guarded(interrupting=False), {"order": "o1"})
    eng.advance("PT1M")
    eng.publish_message("cancel", key="o1")
    eng.advance("PT1M")
    eng.broadcast_signal("stop")
    eng.advance("PT1M")
    assert ended_at(inst) == ["stopped", "stopped"]
    assert sorted(h.kind for h in eng.holders()) == ["message", "signal", "task"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and ended_at(inst)[-1] == "done"


def test_an_event_subprocess_starts_on_the_first_of_its_definitions():
    """Its start takes a signal or a timer: the signal comes first, the handler runs and
    interrupts the process; the timer never fires."""
    p = bpm.Process("handled")
    p.start("s")
    p.user_task("work")
    p.end("done")
    p.flow("s", "work", "done")
    with p.event_subprocess("on_stop") as ev:
        ev.start_on("stop_or_late", any_of=[{"signal": "stop"}, {"timer": "PT5H"}])
        ev.end("halted")
        ev.flow("stop_or_late", "halted")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT1H")
    eng.broadcast_signal("stop")
    eng.advance("PT6H")
    assert inst.state == "completed" and ended_at(inst)[-1] == "halted"
    assert fired(eng, "stop_or_late") == [] and eng.tasks() == []


def test_several_definitions_are_checked_when_the_process_is_validated():
    """One definition, two of one kind or a message without a key is refused."""
    p = bpm.Process("bad")
    p.start("s")
    p.catch("one", any_of=[{"timer": "PT1H"}])
    p.catch("two", any_of=[{"timer": "PT1H"}, {"timer": "PT2H"}])
    p.catch("nokey", any_of=[{"message": "m"}, {"signal": "x"}])
    p.user_task("t")
    p.boundary("b", attached_to="t", any_of=[{"signal": "x"}, {"timer": "PT1H"}])
    p.end("e")
    p.flow("s", "one", "two", "nokey", "t", "e")
    p.flow("b", "e")
    with pytest.raises(bpm.ModelError) as exc:
        p.validate()
    text = str(exc.value)
    assert "multiple_catch 'one' needs two event definitions or more" in text
    assert "multiple_catch 'two': give at most one message, one timer and one signal" in text
    assert "multiple_catch 'nokey': its message 'm' has no correlation key" in text


def test_multiple_events_survive_a_round_trip_through_a_bpmn_file():
    """The catch (multiple and parallel multiple) and the boundary are written with one
    definition each (``parallelMultiple`` for all_of) and read back the same: the same
    signature, the same text written again."""
    for p in (waiting(), waiting(all_of=True), guarded(interrupting=False)):
        text = p.to_bpmn()
        again = bpm.Process.from_bpmn(text)
        assert again.definition().signature == p.definition().signature
        assert again.to_bpmn() == text
    assert 'parallelMultiple="true"' in waiting(all_of=True).to_bpmn()
    assert "parallelMultiple" not in waiting().to_bpmn()


REFERENCED = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="http://example.com">
  <signal id="Sig_stop" name="stop"/>
  <signalEventDefinition id="StopDef" signalRef="Sig_stop"/>
  <process id="p" isExecutable="true">
    <startEvent id="s"/>
    <intermediateCatchEvent id="wait">
      <timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition>
      <eventDefinitionRef>StopDef</eventDefinitionRef>
    </intermediateCatchEvent>
    <endEvent id="e"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>
  </process>
</definitions>"""


def test_a_file_event_with_a_definition_and_a_referenced_one_runs_on_the_first():
    """A catch event with a timer and an ``eventDefinitionRef`` to a root signal definition
    is a multiple catch: the signal before the hour ends it, and the timer never fires."""
    model = bpm.load_bpmn(REFERENCED)
    assert not model.errors("p")
    eng = bpm.Engine()
    inst = eng.start(model.process("p"))
    eng.advance("PT10M")
    eng.broadcast_signal("stop")
    eng.advance("PT2H")
    assert inst.state == "completed" and fired(eng, "wait") == []


def test_a_non_interrupting_multiple_boundary_recovers_after_a_crash(tmp_path):
    """On SQLite the message arm has fired once and listens again; after a crash the
    recovered engine still holds both arms, and the signal forks while the task waits."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(guarded(interrupting=False), {"order": "o1"})
    eng.advance("PT1M")
    eng.publish_message("cancel", key="o1")
    eng.advance("PT1M")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[guarded(interrupting=False)])
    assert sorted(h.kind for h in eng2.holders()) == ["message", "signal", "task"]
    eng2.broadcast_signal("stop")
    eng2.advance("PT1M")
    again = eng2.instance(inst.id)
    # the recovered instance knows its live tracks; the track the signal forked has ended
    assert ended_at(again) == ["stopped"] and again.state == "active"
    assert [t.node for t in again.tracks if t.state != "completed"] == ["work"]


def test_an_event_subprocess_multiple_start_survives_a_round_trip():
    """A non-interrupting start with a signal and a timer is written with both definitions
    and ``isInterrupting="false"``, and read back the same."""
    p = bpm.Process("handled")
    p.start("s")
    p.user_task("work")
    p.end("done")
    p.flow("s", "work", "done")
    with p.event_subprocess("on_stop") as ev:
        ev.start_on("stop_or_late", any_of=[{"signal": "stop"}, {"timer": "PT5H"}],
                    interrupting=False)
        ev.end("noted")
        ev.flow("stop_or_late", "noted")
    text = p.to_bpmn()
    assert 'isInterrupting="false"' in text
    assert "signalEventDefinition" in text and "timerEventDefinition" in text
    again = bpm.Process.from_bpmn(text)
    assert again.definition().signature == p.definition().signature
    assert again.to_bpmn() == text
