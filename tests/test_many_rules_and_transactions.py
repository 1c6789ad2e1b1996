"""Multi-instance on a business rule task (a worker job, as a file's zeebe:taskDefinition
makes it) and on a transaction subprocess (each inner instance a transaction of its own; a
cancel end in one cancels the whole activity)."""

from __future__ import annotations

import pytest
from conftest import ended_at, recover

import gobpm_nb as bpm

RULES = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="scoring" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="rule"/>
    <bpmn:businessRuleTask id="rule">
      <bpmn:extensionElements><zeebe:taskDefinition type="score"/></bpmn:extensionElements>
      <bpmn:multiInstanceLoopCharacteristics{seq}>
        <bpmn:extensionElements>
          <zeebe:loopCharacteristics inputCollection="=applicants" inputElement="who"
              outputCollection="scores" outputElement="=score"/>
        </bpmn:extensionElements>
      </bpmn:multiInstanceLoopCharacteristics>
    </bpmn:businessRuleTask>
    <bpmn:sequenceFlow id="f2" sourceRef="rule" targetRef="e"/>
    <bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""


def scoring(sequential=False):
    seq = ' isSequential="true"' if sequential else ""
    return bpm.load_bpmn(RULES.replace("{seq}", seq)).process()


def score_all(eng, expect):
    jobs = eng.fetch_jobs("score", worker="w")
    assert len(jobs) == expect
    for job in reversed(jobs):  # out of order: the scores still land in item order
        eng.complete_job(job.id, {"score": len(job.data["who"])})
        eng.run()


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_parallel_business_rule_task_scores_every_item_in_item_order(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(scoring(), {"applicants": ["ann", "bo", "cyd"]})
    eng.run()
    score_all(eng, 3)
    assert inst.state == "completed" and inst.data["scores"] == [3, 2, 3]


def test_a_sequential_business_rule_task_asks_one_job_at_a_time():
    eng = bpm.Engine()
    inst = eng.start(scoring(sequential=True), {"applicants": ["ann", "bo"]})
    eng.run()
    score_all(eng, 1)
    score_all(eng, 1)
    assert inst.state == "completed" and inst.data["scores"] == [3, 2]


def test_a_multi_instance_business_rule_task_survives_a_crash_and_a_rewind(tmp_path):
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(scoring(), {"applicants": ["ann", "bo"]})
    eng.run()
    eng.store.close()
    eng = recover(db, scoring())
    score_all(eng, 2)
    assert eng.instance(inst.id).data["scores"] == [3, 2]
    mem = bpm.Engine(keep_facts=None)
    inst = mem.start(scoring(), {"applicants": ["ann", "bo"]})
    mem.run()
    mark = mem.facts[-1].seq
    score_all(mem, 2)
    mem.rewind(mark)
    assert inst.state == "active" and "scores" not in inst.data
    score_all(mem, 2)
    assert inst.data["scores"] == [3, 2]


def test_the_file_round_trip_keeps_the_business_rule_task_a_multi_instance_job():
    p = scoring()
    back = bpm.Process.from_bpmn(p.to_bpmn())
    rule = back.definition().nodes["rule"]
    assert rule.many is not None and rule.topic == "score"


def booking(sequential=False, pid="bookings"):
    """s -> tx (a multi-instance transaction over ``items``: book [undone by unbook] ->
    ok? -> z, or abort (a cancel end) when the item is "bad") -> e; its cancel boundary
    -> ce. ``ok?`` waits for a person (a user task ``check``) so the instances overlap."""
    p = bpm.Process(pid)
    p.start("s")
    with p.transaction("tx") as tx:
        tx.start("a")
        tx.script_task("book", fn=lambda d: {"booked": d.get("booked", []) + [d["item"]]})
        tx.compensation_boundary("ub", attached_to="book", handler="unbook")
        tx.script_task("unbook", fn=lambda d: {"unbooked": d.get("unbooked", []) + [d["item"]]},
                       for_compensation=True)
        tx.user_task("check", assignee="clerk")
        tx.exclusive_gateway("ok", default="z")
        tx.end("z")
        tx.end("abort", cancel=True)
        tx.flow("a", "book", "check", "ok")
        tx.flow("ok", "z")
        tx.flow("ok", "abort", condition="item == 'bad'")
    p.multi_instance("tx", collection="items", element="item", sequential=sequential)
    p.cancel_boundary("cancelled", attached_to="tx")
    p.end("e")
    p.end("ce")
    p.flow("s", "tx", "e")
    p.flow("cancelled", "ce")
    return p


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_cancel_in_one_inner_transaction_undoes_it_and_cancels_the_whole_activity(dehydrate):
    """Three transactions in parallel; the one for "bad" is cancelled: its booking is
    undone, the cancel boundary fires once, the other two inner instances are cancelled."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(booking(), {"items": ["a", "bad", "c"]})
    eng.run()
    tasks = eng.tasks()
    assert len(tasks) == 3
    eng.complete_task(tasks[1].id)  # the check of "bad" (the second inner instance)
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["abort", "unbook", "ce"]
    assert inst.data["unbooked"] == ["bad"]
    assert eng.tasks() == []
    assert [f.kind for f in eng.facts].count("transaction_cancelled") == 1


def test_without_a_cancel_every_inner_transaction_completes():
    eng = bpm.Engine()
    inst = eng.start(booking(sequential=True), {"items": ["a", "c"]})
    eng.run()
    for _ in range(2):
        (task,) = eng.tasks()
        eng.complete_task(task.id)
        eng.run()
    assert inst.state == "completed" and "ce" not in ended_at(inst)
    assert "unbooked" not in inst.data


def test_a_multi_instance_transaction_survives_a_crash_before_the_cancel(tmp_path):
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(booking(), {"items": ["bad", "c"]})
    eng.run()
    eng.store.close()
    eng = recover(db, booking())
    first = eng.tasks()[0]
    eng.complete_task(first.id)
    eng.run()
    done = eng.instance(inst.id)
    assert done.state == "completed" and "ce" in ended_at(done)
    assert done.data["unbooked"] == ["bad"]


def test_a_multi_instance_transaction_survives_a_bpmn_round_trip_and_a_rewind():
    xml = booking().to_bpmn()
    assert "<bpmn:transaction" in xml and "multiInstanceLoopCharacteristics" in xml
    back = bpm.Process.from_bpmn(xml)
    for name in ("book", "unbook"):  # the file carries no Python functions
        back.set_function(name, booking().definition().nodes[name].fn)
    eng = bpm.Engine(keep_facts=None)
    inst = eng.start(back, {"items": ["a", "bad"]})
    eng.run()
    mark = eng.facts[-1].seq
    tasks = eng.tasks()
    eng.complete_task(tasks[1].id)
    eng.run()
    first = [f.as_dict() for f in eng.facts]
    assert inst.data["unbooked"] == ["bad"]
    eng.rewind(mark)
    eng.complete_task(tasks[1].id)
    eng.run()
    assert [f.as_dict() for f in eng.facts if f.kind != "rewound"] == first
