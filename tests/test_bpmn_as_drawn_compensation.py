"""Design-review mode: compensation and transactions drawn in a way the engine cannot run
are read as what does the same when nothing is compensated or cancelled, each with a note."""

import pytest
from test_bpmn_as_drawn import assumed, diagram, line

import gobpm_nb as bpm

TASK = '<startEvent id="s"/><task id="a"/><endEvent id="e"/>' + line("s", "a", "e")


def both(body):
    """The process as written (its ModelError) and as drawn (the model)."""
    with pytest.raises(bpm.ModelError) as written:
        bpm.load_bpmn(diagram(body)).process()
    return str(written.value), bpm.load_bpmn(diagram(body), run_as_drawn=True)


def completes(model):
    """Whether an instance of the drawn process runs to its end."""
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    return inst.state == "completed"


def test_a_compensation_boundary_without_a_handler_stands_in():
    """No association to a handler: nothing compensates it; it stands in, with a note."""
    body = TASK + ('<boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/>'
                   '</boundaryEvent>')
    written, model = both(body)
    assert "needs an association to its handler" in written
    (note,) = assumed(model, "b")
    assert "no association to its handler" in note and completes(model)


def test_a_compensation_handler_not_marked_for_compensation_stands_in():
    """The association leads to a task without isForCompensation: the boundary stands in."""
    body = TASK + ('<boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/>'
                   '</boundaryEvent><task id="undo"/>'
                   '<association id="as" sourceRef="b" targetRef="undo"/>')
    written, model = both(body)
    assert "is not an activity with for_compensation=True" in written
    assert any("'undo' is not an activity of its scope" in n for n in assumed(model, "b"))


def test_a_cancel_end_outside_a_transaction_is_a_plain_end():
    """A cancel end event in the process: nothing to cancel, it ends as a plain end."""
    body = ('<startEvent id="s"/><endEvent id="c"><cancelEventDefinition/></endEvent>'
            + line("s", "c"))
    written, model = both(body)
    assert "is not directly inside a transaction" in written
    (note,) = assumed(model, "c")
    assert "plain end event" in note and completes(model)


def test_a_cancel_boundary_on_a_task_stands_in():
    """A cancel boundary attached to a task, not a transaction, stands in."""
    body = TASK + '<boundaryEvent id="b" attachedToRef="a"><cancelEventDefinition/></boundaryEvent>'
    written, model = both(body)
    assert "not a transaction" in written
    assert any("not a transaction: nothing cancels it" in n for n in assumed(model, "b"))
    assert completes(model)


def test_a_compensation_throw_naming_an_activity_without_handler_is_a_milestone():
    """It names an activity with no handler: nothing to compensate; the track passes."""
    body = ('<startEvent id="s"/><task id="a"/><intermediateThrowEvent id="t">'
            '<compensateEventDefinition activityRef="a"/></intermediateThrowEvent>'
            '<endEvent id="e"/>' + line("s", "a", "t", "e"))
    written, model = both(body)
    assert "which is not an activity of its scope" in written
    (note,) = assumed(model, "t")
    assert "milestone" in note and completes(model)


def test_a_compensation_event_subprocess_of_the_process_stands_in():
    """A compensation event subprocess directly in the process is never compensated."""
    body = TASK + ('<subProcess id="es" triggeredByEvent="true"><startEvent id="cs">'
                   '<compensateEventDefinition/></startEvent><endEvent id="ce"/>'
                   + line("cs", "ce") + '</subProcess>')
    written, model = both(body)
    assert "belongs in a subprocess" in written
    assert any("nothing compensates the process" in n for n in assumed(model, "cs"))
    assert completes(model)


def test_compensation_that_runs_as_written_is_read_the_same_as_drawn():
    """A handler marked for compensation, and a throw naming its activity: no note."""
    body = ('<startEvent id="s"/><task id="a"/><intermediateThrowEvent id="t">'
            '<compensateEventDefinition activityRef="a"/></intermediateThrowEvent>'
            '<endEvent id="e"/>' + line("s", "a", "t", "e")
            + '<boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/>'
            '</boundaryEvent><task id="undo" isForCompensation="true"/>'
            '<association id="as" sourceRef="b" targetRef="undo"/>')
    assert bpm.load_bpmn(diagram(body)).process()
    model = bpm.load_bpmn(diagram(body), run_as_drawn=True)
    assert not assumed(model, "b") and not assumed(model, "t") and completes(model)


def test_a_cancel_end_in_a_transaction_without_a_cancel_boundary_is_a_plain_end():
    """Nothing leaves the transaction when it is cancelled: the cancel end is a plain end,
    and the process goes on after the transaction."""
    body = ('<startEvent id="s"/><transaction id="tx"><startEvent id="ts"/><endEvent id="c">'
            '<cancelEventDefinition/></endEvent>' + line("ts", "c") + '</transaction>'
            '<endEvent id="e"/>' + line("s", "tx", "e"))
    written, model = both(body)
    assert "has a cancel end event but no cancel boundary" in written
    (note,) = assumed(model, "c")
    assert "no cancel boundary" in note and "plain end event" in note and completes(model)


def test_a_second_compensation_boundary_on_one_activity_stands_in():
    """Two compensation boundaries on 'a', each with a handler: the first compensates it,
    the second stands in (it waits for the signal its name names)."""
    body = TASK + ''.join(
        f'<boundaryEvent id="{b}" attachedToRef="a"><compensateEventDefinition/>'
        f'</boundaryEvent><task id="undo_{b}" isForCompensation="true"/>'
        for b in ("b1", "b2")) + ''.join(
        f'<association id="as_{b}" associationDirection="One" sourceRef="{b}" '
        f'targetRef="undo_{b}"/>' for b in ("b1", "b2"))
    written, model = both(body)
    assert "'a' has two compensation boundaries" in written
    assert not assumed(model, "b1")
    (note,) = assumed(model, "b2")
    assert "compensation boundary already, 'b1'" in note and completes(model)
