"""Activiti's and Flowable's own ways of naming what the BPMN leaves out: a message event's
``messageExpression`` and ``correlationKey``, a send task that is a mail task; and a message
wait that nothing names, which Flowable refuses."""

from pathlib import Path

import pytest

import gobpm_nb as bpm

DATA = Path(__file__).parent / "data" / "listeners"
HEAD = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:activiti="http://activiti.org/bpmn" '
        'xmlns:flowable="http://flowable.org/bpmn" id="d" targetNamespace="http://x">')


def doc(middle):
    """start -> ``middle`` (whose id is ``x``) -> end, in process ``p``."""
    return (HEAD + '<process id="p" isExecutable="true"><startEvent id="s"/>' + middle
            + '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')


def catch(definition):
    return f'<intermediateCatchEvent id="x">{definition}</intermediateCatchEvent>'


def test_a_fixed_message_expression_is_the_message_and_its_correlation_key_the_key():
    """``activiti:messageExpression="paid"`` names the message as Activiti reads it, and its
    ``activiti:correlationKey="${order}"`` is the key: only the instance whose ``order``
    matches continues."""
    model = bpm.load_bpmn(doc(catch(
        '<messageEventDefinition activiti:messageExpression="paid" '
        'activiti:correlationKey="${order}"/>')))
    assert model.report == []
    eng = bpm.Engine()
    process = model.process()
    one, two = eng.start(process, {"order": 1}), eng.start(process, {"order": 2})
    eng.run()
    eng.publish_message("paid", key=2)
    eng.run()
    assert (one.state, two.state) == ("active", "completed")


def test_a_message_expression_without_a_key_correlates_by_name_with_a_warning():
    model = bpm.load_bpmn(doc(catch(
        '<messageEventDefinition flowable:messageExpression="paid"/>')))
    [note] = model.report
    assert note.severity == "warning" and "correlated by its name alone" in note.message
    eng = bpm.Engine()
    instance = eng.start(model.process())
    eng.run()
    eng.publish_message("paid")
    eng.run()
    assert instance.state == "completed"


def test_a_message_expression_that_is_an_expression_is_an_error_naming_it():
    """Activiti and Flowable evaluate ``${name}`` when the event is armed; the engine waits
    for fixed names only: an error, never a guessed name."""
    model = bpm.load_bpmn(doc(catch(
        '<messageEventDefinition flowable:messageExpression="${which}"/>')))
    [note] = model.report
    assert note.severity == "error"
    assert note.message.startswith("flowable:messageExpression '${which}' is an expression")
    with pytest.raises(bpm.ModelError, match="messageExpression"):
        model.process()


def test_a_message_wait_that_nothing_names_is_an_error_saying_flowable_refuses_it():
    model = bpm.load_bpmn(doc(catch('<messageEventDefinition/>')))
    [note] = model.report
    assert note.severity == "error"
    assert "nothing can correlate to it (Flowable refuses such a wait when the process is " \
           "deployed)" in note.message


@pytest.mark.parametrize("attr", ['activiti:type="mail"', 'flowable:type="mail"'])
def test_a_mail_send_task_passes_through_with_a_warning(attr):
    """A send task of type mail is the vendor's mail service, not a message throw: the
    engine sends no mail and passes the data through, saying so."""
    model = bpm.load_bpmn(doc(f'<sendTask id="x" {attr}/>'))
    [note] = model.report
    assert note.severity == "warning"
    assert "the engine sends no mail" in note.message
    eng = bpm.Engine()
    instance = eng.start(model.process(), {"a": 1})
    eng.run()
    assert instance.state == "completed" and eng.instance_data(instance.id) == {"a": 1}


def test_real_activiti_files_a_boundary_by_message_expression_and_a_mail_task():
    model = bpm.load_bpmn(DATA / "ProcessRuntimeBPMNMessageIT.testBoundaryMessageExpression"
                                 ".bpmn20.xml")
    assert model.errors("testBoundaryMessageExpression") == []
    eng = bpm.Engine()
    process = model.process()
    one, two = (eng.start(process, {"correlationKey": k}) for k in ("a", "b"))
    eng.run()
    eng.publish_message("int-boundary-message", key="b")
    eng.run()
    assert (one.state, two.state) == ("active", "completed")
    assert [(t.instance, t.node) for t in eng.tasks()] == [(one.id, "Task_1is7525")]

    mail = bpm.load_bpmn(DATA / "EmailSendTaskTest.testCcAndBcc.bpmn20.xml")
    assert any("'sendMail' is the vendor's 'mail' task" in n.message for n in mail.report)
    eng = bpm.Engine()
    instance = eng.start(mail.process())
    eng.run()
    assert instance.state == "completed"
    assert 'activiti:type="mail"' in mail.to_bpmn()


def test_a_boundary_with_no_event_definition_never_fires_and_the_rest_runs():
    """BPMN gives a boundary with no definition no trigger: a warning saying it never fires;
    the activity it is attached to runs and leaves by its own flow."""
    body = ('<startEvent id="s"/><userTask id="x"/><boundaryEvent id="b" attachedToRef="x"/>'
            '<userTask id="after"/><endEvent id="e"/>'
            '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/>'
            '<sequenceFlow id="f3" sourceRef="b" targetRef="after"/>'
            '<sequenceFlow id="f4" sourceRef="after" targetRef="e"/>')
    model = bpm.load_bpmn(HEAD + f'<process id="p" isExecutable="true">{body}</process>'
                          '</definitions>')
    [note] = model.report
    assert (note.severity, note.element) == ("warning", "b")
    assert "it never fires" in note.message
    eng = bpm.Engine()
    instance = eng.start(model.process(), {"a": 1})
    eng.run()
    eng.complete_task(eng.tasks()[0].id, {"a": 2})
    eng.run()
    assert instance.state == "completed"
    assert "after" not in [f.node for f in eng.facts]


def test_an_intermediate_catch_with_no_trigger_is_an_error_saying_why():
    """Not valid BPMN 2.0: whether it would wait or pass is not guessed."""
    model = bpm.load_bpmn(doc('<intermediateCatchEvent id="x"/>'))
    [note] = model.errors("p")
    assert "an intermediate catch with none is not valid BPMN 2.0" in note.message
    vendor = bpm.load_bpmn(doc('<intermediateCatchEvent id="x"><extensionElements>'
                               '<flowable:eventType>order</flowable:eventType>'
                               '</extensionElements></intermediateCatchEvent>'))
    [note] = vendor.errors("p")
    assert "its trigger (flowable:eventType 'order') is the vendor's own" in note.message


def test_flowables_variable_listener_boundary_never_fires_in_a_real_file():
    model = bpm.load_bpmn(DATA / "VariableListenerEventTest.boundaryVariableListener"
                                 ".bpmn20.xml")
    [warning] = [n for n in model.report if n.element == "variableListenerEvent"]
    assert "(flowable:variableListenerEventDefinition 'var1')" in warning.message
    eng = bpm.Engine()
    instance = eng.start(model.process(), {"var1": 1})
    eng.run()
    eng.complete_task(eng.tasks()[0].id, {"var1": 2})  # Flowable's would fire here
    eng.run()
    assert instance.state == "completed" and eng.tasks() == []
    assert "variableListenerEventDefinition" in model.to_bpmn()
