"""As written, a file SpiffWorkflow parses runs here too where the gap was not a semantic
one: each acceptance is a documented choice with a warning note, never a silent guess."""

import pytest
from conftest import ended_at

import gobpm_nb as bpm

ACTIVITI = "http://activiti.org/bpmn"


def doc(body, extra=""):
    """One executable process holding ``body`` (``extra``: root elements)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:activiti="{ACTIVITI}" id="defs" targetNamespace="http://example.com/t">
  {extra}
  <process id="p" isExecutable="true">{body}</process>
</definitions>""".encode()


def line(*ids):
    """Sequence flows along a chain of ids."""
    return "".join(f'<sequenceFlow id="{a}-{b}" sourceRef="{a}" targetRef="{b}"/>'
                   for a, b in zip(ids, ids[1:], strict=False))


def warnings(model):
    return [(n.element, n.message) for n in model.report if n.severity == "warning"]


def ran(model, *messages):
    """Start the process, publish each message by name alone, and return the instance."""
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    for name in messages:
        assert eng.publish_message(name) == inst.id
        eng.run()
    return inst


def test_a_message_without_a_correlation_key_is_correlated_by_its_name():
    """A catch whose <message> has no key waits with NO_KEY (Camunda 7's
    correlateMessage(name)), and a warning says so."""
    model = bpm.load_bpmn(doc('<startEvent id="s"/><intermediateCatchEvent id="c">'
                              '<messageEventDefinition messageRef="m"/></intermediateCatchEvent>'
                              '<endEvent id="e"/>' + line("s", "c", "e"),
                              '<message id="m" name="paid"/>'))
    assert model.processes["p"].elements[1].key.source == bpm.NO_KEY
    ((element, message),) = warnings(model)
    assert element == "c" and "'paid' has no correlation key" in message
    assert ran(model, "paid").state == "completed"


def test_a_named_message_event_without_message_ref_is_the_message_its_name_names():
    """No messageRef: the event's name is the message (as SpiffWorkflow reads it), with a
    warning; without a name it is still an error."""
    body = ('<startEvent id="s"/><intermediateCatchEvent id="c" name="Order paid">'
            '<messageEventDefinition/></intermediateCatchEvent><endEvent id="e"/>'
            + line("s", "c", "e"))
    model = bpm.load_bpmn(doc(body))
    ((element, message),) = warnings(model)
    assert "no messageRef: it is the message 'Order paid' (its name)" in message
    assert ran(model, "Order paid").state == "completed"
    with pytest.raises(bpm.ModelError, match="no messageRef and no name"):
        bpm.load_bpmn(doc(body.replace(' name="Order paid"', ""))).process()


def test_a_receive_task_without_message_or_name_waits_for_its_id():
    """Activiti's plain wait state: a receive task with neither messageRef nor name waits
    for the message its id names."""
    model = bpm.load_bpmn(doc('<startEvent id="s"/><receiveTask id="wait"/><endEvent id="e"/>'
                              + line("s", "wait", "e")))
    assert any("'wait' (its id)" in m for _, m in warnings(model))
    assert ran(model, "wait").state == "completed"


def test_an_empty_listener_is_a_warning_and_one_with_code_a_warning_naming_it():
    """A listener that names no class, expression, delegate or script does nothing: a
    warning; one with a class is not run: a warning naming the class, and the process runs."""
    task = ('<startEvent id="s"/><userTask id="u"><extensionElements>{}</extensionElements>'
            '</userTask><endEvent id="e"/>' + line("s", "u", "e"))
    empty = bpm.load_bpmn(doc(task.format('<activiti:taskListener event="create"/>')))
    assert empty.process() and "does nothing" in warnings(empty)[0][1]
    coded = bpm.load_bpmn(doc(task.format('<activiti:taskListener event="create" '
                                          'class="com.acme.Audit"/>')))
    assert coded.errors("p") == [] and coded.process()
    assert "is not run (event 'create', class 'com.acme.Audit')" in warnings(coded)[0][1]


@pytest.mark.parametrize("condition, data, target", [
    ("${order.price &lt;= 100}", {"order": {"price": 50}}, "cheap"),
    ("${order.price &lt;= 100}", {"order": {"price": 500}}, "dear"),
    ("${orders[1].price &lt;= 100}", {"orders": [{"price": 500}, {"price": 5}]}, "cheap"),
])
def test_a_juel_path_reads_the_field_of_the_data(condition, data, target):
    """``order.price`` reads the dict's field, ``orders[1]`` the list's item (from 0, as
    JUEL counts)."""
    body = ('<startEvent id="s"/><exclusiveGateway id="g" default="g-dear"/>'
            '<endEvent id="cheap"/><endEvent id="dear"/>' + line("s", "g")
            + '<sequenceFlow id="g-cheap" sourceRef="g" targetRef="cheap"><conditionExpression>'
            f'{condition}</conditionExpression></sequenceFlow>'
            '<sequenceFlow id="g-dear" sourceRef="g" targetRef="dear"/>')
    eng = bpm.Engine()
    inst = eng.start(bpm.load_bpmn(doc(body)).process(), data=data)
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == [target]
