"""Timers written as expressions over the instance data, and cron cycles: from Python and
from files (JUEL, FEEL, SpiffWorkflow's Python strings, Flowable's cron)."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.model.timers import CronCycle, parse_cycle

FLOWABLE = Path(__file__).parent / "data" / "flowable"


def at(text):
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def fired(eng, instance=None):
    return [(f.node, f.at) for f in eng.facts if f.kind == "timer_fired"
            and (instance is None or f.instance == instance)]


def incidents(eng):
    return [f.details["cause"] for f in eng.facts if f.kind == "incident"]


def waiting(**timer):
    p = bpm.Process("wait")
    p.start("s")
    p.timer_catch("t", **timer)
    p.end("e")
    p.flow("s", "t", "e")
    return p


def test_a_duration_expression_is_read_from_the_data_when_armed():
    """duration='=timeout' waits for the instance's own timeout: 2 h for one, 3 h for
    another."""
    eng = bpm.Engine()
    one = eng.start(waiting(duration="=timeout"), {"timeout": "PT2H"})
    two = eng.start(waiting(duration="=timeout"), {"timeout": "PT3H"})
    eng.advance("PT4H")
    assert one.state == two.state == "completed"
    assert fired(eng, one.id) == [("t", at("2026-01-01T02:00:00"))]
    assert fired(eng, two.id) == [("t", at("2026-01-01T03:00:00"))]


def test_a_date_expression_waits_for_that_date():
    eng = bpm.Engine()
    inst = eng.start(waiting(date="=due"), {"due": "2026-01-03T09:00:00Z"})
    eng.advance("P3D")
    assert inst.state == "completed" and fired(eng) == [("t", at("2026-01-03T09:00:00"))]


@pytest.mark.parametrize("data, cause", [
    ({"timeout": 90}, "timer duration 'timeout' gave a value of type int, not an ISO 8601 "
                      "duration string"),
    ({"timeout": "soon"}, "timer duration 'timeout' gave a string that is not an ISO 8601 "
                          "duration"),
    ({}, "timer duration 'timeout' names missing field 'timeout'"),
])
def test_a_value_that_is_not_a_duration_is_an_incident_naming_its_type_not_its_value(
        data, cause):
    eng = bpm.Engine()
    inst = eng.start(waiting(duration="=timeout"), data)
    eng.run()
    assert inst.state == "failed" and incidents(eng) == [cause]
    assert "soon" not in cause


def test_a_cycle_expression_is_evaluated_again_at_each_repetition():
    """As Camunda 8 re-arms a cycle: once the data no longer gives a cycle, the next
    repetition is an incident, and nothing is left armed."""
    p = bpm.Process("r")
    p.start("s")
    p.parallel_gateway("split")
    p.user_task("u")
    p.timer_boundary("b", attached_to="u", cycle="=every", interrupting=False)
    p.end("e1")
    p.end("e2")
    p.timer_catch("later", duration="PT90M")
    p.script_task("spoil", fn=lambda d: {"every": 5})
    p.end("e3")
    p.flow("s", "split")
    p.flow("split", "u", "e1")
    p.flow("split", "later", "spoil", "e3")
    p.flow("b", "e2")
    eng = bpm.Engine()
    inst = eng.start(p, {"every": "R/PT1H"})
    eng.advance("PT3H")
    assert [t for n, t in fired(eng) if n == "b"] == [at("2026-01-01T01:00:00"),
                                                      at("2026-01-01T02:00:00")]
    assert inst.state == "failed" and incidents(eng) == [
        "timer cycle 'every' gave a value of type int, not an ISO 8601 repeating interval or "
        "a cron cycle string"]
    assert eng.holders() == [] and eng.tasks() == []


def test_an_event_subprocess_timer_start_reads_its_instances_data():
    """Armed when the instance starts: its own data gives the wait; without it, an incident
    at the start event, and nothing is left held."""
    p = bpm.Process("esp")
    p.start("s")
    p.user_task("u")
    p.end("e")
    p.flow("s", "u", "e")
    with p.event_subprocess("ev") as ev:
        ev.timer_start("ts", duration="=wait", interrupting=False)
        ev.end("ee")
        ev.flow("ts", "ee")
    eng = bpm.Engine()
    eng.start(p, {"wait": "PT1H"})
    eng.advance("PT2H")
    assert fired(eng) == [("ts", at("2026-01-01T01:00:00"))]
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.advance("PT2H")
    assert inst.state == "failed" and eng.holders() == []
    assert incidents(eng) == ["timer duration 'wait' names missing field 'wait'"]


def test_an_expression_that_does_not_parse_is_refused_when_built():
    with pytest.raises(bpm.ModelError, match="uses 'open'"):
        waiting(duration="=open('x')").validate()


def test_a_cron_cycle_fires_on_each_time_it_names():
    """A non-interrupting cron boundary, every fifth minute (seconds first, as Camunda)."""
    p = bpm.Process("cron")
    p.start("s")
    p.user_task("u")
    p.timer_boundary("every5", attached_to="u", cycle="0 0/5 * * * ?", interrupting=False)
    p.end("e")
    p.end("pinged")
    p.flow("s", "u", "e")
    p.flow("every5", "pinged")
    eng = bpm.Engine()
    eng.start(p)
    eng.advance("PT16M")
    assert [t for _, t in fired(eng)] == [at("2026-01-01T00:05:00"), at("2026-01-01T00:10:00"),
                                         at("2026-01-01T00:15:00")]


@pytest.mark.parametrize("text, why", [
    ("*/5 * * * *", "of 5 fields"),
    ("0 0/5 * * * ? 2027 1", "of 8 fields"),
    ("0 61 * * * ?", "not a cron expression"),
    ("0 0 12 * * FOO", "not a cron expression"),
])
def test_a_cron_cycle_that_camunda_would_refuse_is_a_model_error(text, why):
    with pytest.raises(bpm.ModelError, match=why):
        parse_cycle(text)


def test_a_cron_cycle_reads_quartz_question_marks_and_a_year():
    assert parse_cycle("0 0 12 ? * MON-FRI 2027") == CronCycle("0 0 12 ? * MON-FRI 2027")
    assert CronCycle("0 0 12 ? * MON-FRI").after(at("2026-01-02T12:00:00")) == \
        at("2026-01-05T12:00:00")  # Friday noon, then Monday noon


def test_a_start_timer_expression_is_evaluated_when_deployed_without_data():
    """A literal string needs no data; naming a field is refused when the process is
    validated: no instance exists yet whose data it could read."""
    def started(**timer):
        p = bpm.Process("st")
        p.timer_start("go", **timer)
        p.end("e")
        p.flow("go", "e")
        return p

    eng = bpm.Engine()
    eng.deploy(started(cycle="='R2/PT1H'"))
    eng.advance("PT3H")
    assert [t for _, t in fired(eng)] == [at("2026-01-01T01:00:00"), at("2026-01-01T02:00:00")]
    with pytest.raises(bpm.ModelError, match="evaluated when it is deployed"):
        started(duration="=wait").validate()


def test_the_evaluated_deadline_survives_a_crash_and_is_not_evaluated_again(tmp_path):
    """Armed at 00:00 for 2 h; recovered from SQLite at 01:00, it still fires at 02:00
    (evaluated again it would fire at 03:00)."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(waiting(duration="=timeout"), {"timeout": "PT2H"})
    eng.advance("PT1H")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[waiting(duration="=timeout")])
    eng2.advance("PT3H")
    assert eng2.instance("i1").state == "completed"
    assert fired(eng2) == [("t", at("2026-01-01T02:00:00"))]


def test_an_expression_timer_dehydrates_and_rewinds_like_an_iso_one():
    eng = bpm.Engine()
    inst = eng.start(waiting(duration="=timeout"), {"timeout": "PT2H"})
    eng.advance("PT1H")
    assert inst.residency == "dehydrated"
    eng.advance("PT2H")
    full = [f.as_dict() for f in eng.facts]
    eng.rewind(2)
    eng.replay()
    assert [f.as_dict() for f in eng.facts] == full


def test_a_file_timer_in_juel_feel_or_python_reads_the_data():
    """${wait} (JUEL), =duration(wait) (FEEL), wait (SpiffWorkflow's Python), "PT1H" (a
    Python string) and a JUEL template all wait for what the data says."""
    texts = ["${wait}", "=duration(wait)", "wait", '"PT1H"', "R1/${wait}"]
    for text in texts:
        kind = "timeCycle" if text.startswith("R") else "timeDuration"
        model = bpm.load_bpmn(_catch_file(kind, text))
        assert model.errors("p") == [], text
        eng = bpm.Engine()
        inst = eng.start(model.process("p"), {"wait": "PT1H"})
        eng.advance("PT2H")
        assert inst.state == "completed" and fired(eng) == [("t", at("2026-01-01T01:00:00"))]
        again = bpm.load_bpmn(model.process("p").to_bpmn())
        assert again.errors("p") == [], text


def test_iso_text_is_read_as_it_is_whatever_expression_language_the_file_names():
    """OMNITRACKER names its own expressionLanguage; its P7D is still a duration."""
    xml = _catch_file("timeDuration", "P7D").replace(
        'targetNamespace="t"', 'targetNamespace="t" expressionLanguage="urn:acme:expr"')
    model = bpm.load_bpmn(xml)
    assert model.errors("p") == []
    eng = bpm.Engine()
    eng.start(model.process("p"))
    eng.advance("P8D")
    assert fired(eng) == [("t", at("2026-01-08T00:00:00"))]


def test_a_file_timer_that_does_not_translate_is_an_error_note_naming_it():
    model = bpm.load_bpmn(_catch_file("timeDuration", "${provider.getDuration()}"))
    (note,) = model.errors("p")
    assert note.element == "t" and "timer duration" in note.message
    assert "does not translate" in note.message


def test_flowable_cron_start_and_juel_boundary_run_as_written():
    cron = bpm.load_bpmn(FLOWABLE / "StartTimerEventTest.testCycleDateStartTimerEvent.bpmn20.xml")
    eng = bpm.Engine()
    eng.deploy(cron.process("startTimerEventExample"))
    eng.advance("PT11M")
    assert [t for _, t in fired(eng)] == [at("2026-01-01T00:05:00"), at("2026-01-01T00:10:00")]
    name = "DurationTimeTimerEventTest.testVariableExpressionBoundaryTimerEvent.bpmn20.xml"
    juel = bpm.load_bpmn(FLOWABLE / name)
    eng = bpm.Engine()
    inst = eng.start(juel.process("testDurationExpressionOnBoundaryTimer"),
                     {"duration": "PT30M"})
    eng.advance("PT1H")
    assert inst.state == "completed" and eng.tasks() == []
    assert fired(eng) == [("boundaryTimer", at("2026-01-01T00:30:00"))]


def _catch_file(tag: str, text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
             targetNamespace="t">
  <process id="p" isExecutable="true">
    <startEvent id="s"/>
    <intermediateCatchEvent id="t">
      <timerEventDefinition><{tag}>{text}</{tag}></timerEventDefinition>
    </intermediateCatchEvent>
    <endEvent id="e"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
  </process>
</definitions>"""
