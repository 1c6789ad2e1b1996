"""Compensation and transactions in BPMN files: read, written and read back the same, with
their diagram; a file from a modeler runs."""

import sys
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.model import elements as el

sys.path.insert(0, str(Path(__file__).parent))
from test_compensation import nested, trip  # noqa: E402
from test_transactions import shop  # noqa: E402


def shape(p):
    """What a round trip must keep: each element's kind, scope and compensation fields, and
    the flows."""
    out = []
    for e in p.elements:
        out.append((e.id, e.kind, e.within, e.for_compensation,
                    getattr(e, "handler", None), getattr(e, "ref", None),
                    getattr(e, "attached_to", None)))
    return sorted(out), sorted((f.source, f.target) for f in p.flows)


def test_compensation_boundaries_handlers_and_throws_survive_a_round_trip():
    """A compensation boundary with its association, a handler marked isForCompensation and
    a throw with an activityRef read back as they were written."""
    p = trip([], throw_ref="flight")
    xml = p.to_bpmn()
    assert 'isForCompensation="true"' in xml and "<bpmn:association" in xml
    assert 'activityRef="flight"' in xml and "Association_undo_flight_di" in xml
    back = bpm.Process.from_bpmn(xml)
    assert shape(back) == shape(p)
    assert back.to_bpmn() == xml


def test_a_compensation_event_subprocess_and_an_end_survive_a_round_trip():
    """A compensation start in an event subprocess and compensation throws read back."""
    p = nested([], True)
    back = bpm.Process.from_bpmn(p.to_bpmn())
    assert shape(back) == shape(p)
    assert isinstance(back.definition().nodes["cs"], el.CompensationStart)


def test_a_transaction_with_its_cancel_end_and_boundary_survives_a_round_trip():
    """A transaction, its cancel end event and its cancel boundary read back."""
    p = shop([])
    xml = p.to_bpmn()
    assert "<bpmn:transaction" in xml and "<bpmn:cancelEventDefinition/>" in xml
    back = bpm.Process.from_bpmn(xml)
    assert shape(back) == shape(p)


MODELER = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="refund" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:task id="pay"><bpmn:incoming>f1</bpmn:incoming><bpmn:outgoing>f2</bpmn:outgoing>
    </bpmn:task>
    <bpmn:boundaryEvent id="b" attachedToRef="pay">
      <bpmn:compensateEventDefinition/>
    </bpmn:boundaryEvent>
    <bpmn:userTask id="give_back" isForCompensation="true"/>
    <bpmn:endEvent id="e"><bpmn:incoming>f2</bpmn:incoming>
      <bpmn:compensateEventDefinition activityRef="pay" waitForCompletion="true"/>
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="pay"/>
    <bpmn:sequenceFlow id="f2" sourceRef="pay" targetRef="e"/>
    <bpmn:association id="a" associationDirection="One" sourceRef="b" targetRef="give_back"/>
  </bpmn:process>
</bpmn:definitions>
"""


def test_a_modelers_compensation_runs():
    """A file's compensation end runs the user task its association names, then ends."""
    p = bpm.Process.from_bpmn(MODELER)
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert [t.node for t in eng.tasks()] == ["give_back"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed"


def test_a_compensation_boundary_without_an_association_is_an_error_note():
    """Without an association to its handler, the boundary is refused, named."""
    text = MODELER.replace(
        '<bpmn:association id="a" associationDirection="One" sourceRef="b" '
        'targetRef="give_back"/>', "")
    with pytest.raises(bpm.ModelError, match="association to its handler"):
        bpm.Process.from_bpmn(text)


def test_the_process_view_draws_compensation_markers():
    """The view shows the compensation glyph on boundaries and throws and marks handlers."""
    from gobpm_nb.observe.projections import definition_graph
    nodes, _ = definition_graph(trip([]).definition())
    by_id = {n.id: n for n in nodes}
    assert by_id["cancel_car"].many == "◀◀ for compensation"
    assert by_id["undo_car"].detail == "handler cancel_car"
    assert by_id["undo"].detail == "compensate all"
