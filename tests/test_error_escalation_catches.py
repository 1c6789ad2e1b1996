"""Error and escalation intermediate catch events: not valid BPMN (an error or an escalation
is caught by a boundary event or an event subprocess's start). As written each is an error
note that says so, and the process is refused; in design-review mode each passes as a
milestone with an ``as drawn:`` note."""

from __future__ import annotations

import pytest

import gobpm_nb as bpm

FILE = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="t">
  <bpmn:error id="Err" errorCode="E1"/>
  <bpmn:escalation id="Esc" escalationCode="late"/>
  <bpmn:process id="drawn" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="oops"/>
    <bpmn:intermediateCatchEvent id="oops" name="Oops">
      <bpmn:errorEventDefinition errorRef="Err"/>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="oops" targetRef="up"/>
    <bpmn:intermediateCatchEvent id="up" name="Escalated">
      <bpmn:escalationEventDefinition escalationRef="Esc"/>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="up" targetRef="review"/>
    <bpmn:userTask id="review"/>
    <bpmn:sequenceFlow id="f4" sourceRef="review" targetRef="e"/>
    <bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_as_written_each_is_an_error_note_saying_it_is_not_valid_bpmn():
    model = bpm.load_bpmn(FILE)
    notes = {n.element: n for n in model.report if n.severity == "error"}
    assert sorted(notes) == ["oops", "up"]
    assert "an error intermediate catch event is not valid BPMN: an error is caught only " \
           "by a boundary event" in notes["oops"].message
    assert "an escalation intermediate catch event is not valid BPMN" in notes["up"].message
    assert all("not supported yet" not in n.message for n in notes.values())
    with pytest.raises(bpm.ModelError, match="'oops'.*not valid BPMN"):
        model.process()


def test_as_written_the_file_is_written_back_with_both_catches():
    xml = bpm.load_bpmn(FILE).to_bpmn()
    again = bpm.load_bpmn(xml)
    assert sorted(n.element for n in again.report if n.severity == "error") == ["oops", "up"]
    assert "errorEventDefinition" in xml and "escalationEventDefinition" in xml


@pytest.mark.parametrize("dehydrate", [True, False])
def test_as_drawn_each_passes_as_a_milestone_with_its_note(dehydrate):
    model = bpm.load_bpmn(FILE, run_as_drawn=True)
    notes = {n.element: n.message for n in model.report}
    for eid in ("oops", "up"):
        assert notes[eid].startswith("as drawn: an ")
        assert notes[eid].endswith("it passes through as a milestone (a none throw event)")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(model.process(as_drawn=True))
    eng.run()
    passed = [f.node for f in eng.facts if f.kind == "node_left"]
    assert passed == ["s", "oops", "up"]
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed"


def test_as_drawn_the_run_survives_a_crash_and_a_rewind(tmp_path):
    p = bpm.load_bpmn(FILE, run_as_drawn=True).process(as_drawn=True)
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(p)
    eng.run()
    eng.store.close()
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[p])
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert eng.instance(inst.id).state == "completed"
    mem = bpm.Engine(keep_facts=None)
    inst = mem.start(p)
    mark = mem.facts[-1].seq
    mem.run()
    first = [f.as_dict() for f in mem.facts]
    mem.rewind(mark)
    mem.run()
    assert [f.as_dict() for f in mem.facts if f.kind != "rewound"] == first
