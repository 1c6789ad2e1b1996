"""Conditional and default flows out of an activity (BPMN 2.0, sequence flow): every flow
whose condition holds is taken, and every one without a condition; the default flow only
when no other one is."""

import pytest
from conftest import ended_at

import gobpm_nb as bpm


def review():
    """A user task whose flows go to ``rush`` (amount > 1000), ``audit`` (flagged) and, by
    default, to ``normal``."""
    p = bpm.Process("review")
    p.start("s")
    p.user_task("check", default="normal")
    p.end("rush")
    p.end("audit")
    p.end("normal")
    p.flow("s", "check")
    p.flow("check", "rush", condition="amount > 1000")
    p.flow("check", "audit", condition="flagged")
    p.flow("check", "normal")
    return p


def finish(eng, inst, data=None):
    eng.run()
    eng.complete_task(eng.tasks()[0].id, data or {})
    eng.run()
    return ended_at(inst)


def test_the_default_flow_out_of_a_task_is_taken_when_no_condition_holds():
    """A small, unflagged amount leaves the task by its default flow."""
    eng = bpm.Engine()
    inst = eng.start(review(), {"amount": 10, "flagged": False})
    assert finish(eng, inst) == ["normal"]
    assert inst.state == "completed"


def test_the_default_flow_is_not_taken_when_a_condition_holds():
    """Each flow whose condition holds is taken (both, here), and the default is not."""
    eng = bpm.Engine()
    inst = eng.start(review(), {"amount": 5000})
    assert finish(eng, inst, {"flagged": True}) == ["rush", "audit"]


def test_conditions_out_of_a_subprocess_take_every_true_flow_and_the_unconditional_one():
    """A subprocess's flows split as an inclusive gateway would: the true conditions and
    the flow without one, never the false one."""
    p = bpm.Process("sub")
    p.start("s")
    with p.subprocess("work") as sp:
        sp.start("ws")
        sp.end("we")
        sp.flow("ws", "we")
    for end in ("big", "small", "always"):
        p.end(end)
    p.flow("s", "work")
    p.flow("work", "big", condition="amount > 100")
    p.flow("work", "small", condition="amount <= 100")
    p.flow("work", "always")
    eng = bpm.Engine()
    inst = eng.start(p, {"amount": 500})
    eng.run()
    assert sorted(ended_at(inst)) == ["always", "big", "we"]  # "we": the inside's end


def test_an_activity_with_nothing_to_take_is_an_incident_naming_it():
    """No true condition, no flow without one, no default: the instance fails at the task."""
    p = bpm.Process("stuck")
    p.start("s")
    p.script_task("calc", fn=lambda d: {"x": 1})
    p.end("e")
    p.flow("s", "calc")
    p.flow("calc", "e", condition="x > 5")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "calc"
    assert "no default flow" in incident.details["cause"]


def test_a_default_flow_is_checked_when_the_process_is_validated():
    """A default that is not one of the activity's targets, or that carries a condition, or
    that sits on an event, is refused with its element named."""
    p = bpm.Process("bad")
    p.start("s")
    p.user_task("t", default="nowhere")
    p.user_task("u", default="e")
    p.timer_catch("w", duration="PT1H")
    p.end("e")
    p.flow("s", "t", "u")
    p.flow("u", "e", condition="x > 1")
    p.flow("t", "w", "e")
    p.default_flow("w", "e")
    with pytest.raises(bpm.ModelError) as exc:
        p.validate()
    text = str(exc.value)
    assert "user_task 't': default 'nowhere' is not one of its outgoing targets" in text
    assert "user_task 'u': its default flow 'u->e' may not carry a condition" in text
    assert "timer_catch 'w' cannot have a default flow" in text


def test_an_activity_default_survives_a_round_trip_through_a_bpmn_file():
    """The task's ``default`` attribute names its default flow, and the process read back
    takes it as the built one does."""
    text = review().to_bpmn()
    assert 'default="check-&gt;normal"' in text or 'default="Flow_check_normal"' in text
    again = bpm.Process.from_bpmn(text)
    (check,) = [e for e in again.elements if e.id == "check"]
    assert check.default == "normal"
    assert again.to_bpmn() == text
    eng = bpm.Engine()
    inst = eng.start(again, {"amount": 10, "flagged": False})
    assert finish(eng, inst) == ["normal"]


def test_an_activity_default_is_part_of_the_process_signature():
    """Giving a task a default flow makes a new version of the process."""
    plain = bpm.Process("review")
    plain.start("s")
    plain.user_task("check")
    plain.end("e")
    plain.flow("s", "check", "e")
    with_default = bpm.Process("review")
    with_default.start("s")
    with_default.user_task("check", default="e")
    with_default.end("e")
    with_default.flow("s", "check", "e")
    assert plain.definition().signature != with_default.definition().signature
