"""A start event of the process with several event definitions: any one of them creates an
instance (BPMN 2.0, 10.5.2); each definition is held on its own, as a start event's."""

from pathlib import Path

import pytest

import gobpm_nb as bpm

SPIFF = Path(__file__).parent / "data" / "spiff"


def either():
    """Started by message ``a``, message ``b`` or, once, one hour after deployment."""
    p = bpm.Process("either")
    p.start_on("go", any_of=[{"message": "a"}, {"message": "b"}, {"timer": "PT1H"}])
    p.end("e")
    p.flow("go", "e")
    return p


def started(eng):
    return [(f.at.strftime("%H:%M"), f.details["by"]) for f in eng.facts
            if f.kind == "instance_started"]


def test_any_definition_creates_an_instance_and_the_messages_stay_armed():
    eng = bpm.Engine()
    eng.deploy(either())
    eng.publish_message("b", payload={"n": 1})
    eng.advance("PT2H")
    eng.publish_message("a", payload={"n": 2})
    eng.run()
    assert started(eng) == [("00:00", "message"), ("01:00", "timer"), ("02:00", "message")]
    assert [i.data for i in eng.instances()] == [{"n": 1}, {}, {"n": 2}]
    assert sorted(h.keys[0] for h in eng.holders()) == ["a", "b"]  # the timer fired for good


def test_eng_start_says_how_such_a_process_starts():
    with pytest.raises(bpm.EngineError, match="any one of its 3 event definitions"):
        bpm.Engine().start(either())


def test_its_holds_come_back_after_a_restart(tmp_path):
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "m.db"))
    eng.deploy(either())
    eng.advance("PT30M")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "m.db"), processes=[either()])
    eng2.publish_message("a")
    eng2.advance("PT1H")
    assert started(eng2) == [("00:30", "message"), ("01:00", "timer")]


def test_two_timers_on_one_start_are_refused():
    p = bpm.Process("two")
    p.start_on("go", any_of=[{"timer": "PT1H"}, {"timer": "PT2H"}])
    p.end("e")
    p.flow("go", "e")
    with pytest.raises(bpm.ModelError, match="at most one timer"):
        p.validate()


def test_spiffworkflow_multiple_start_runs_as_written_and_round_trips():
    model = bpm.load_bpmn(SPIFF / "multiple-start.bpmn")
    assert model.errors("main") == []
    p = model.process("main")
    eng = bpm.Engine()
    eng.deploy(p)
    eng.publish_message("message_2", payload={"x": 1})
    eng.publish_message("message_1", payload={"x": 2})
    eng.run()
    assert [(i.state, i.data) for i in eng.instances()] == [("completed", {"x": 1}),
                                                           ("completed", {"x": 2})]
    again = bpm.load_bpmn(p.to_bpmn())
    assert again.errors("main") == []
