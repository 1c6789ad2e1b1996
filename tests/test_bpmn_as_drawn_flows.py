"""Design-review mode: flows, boundary events and links written where the engine does not
read them as they stand, though the diagram leaves no doubt what they join; and what is
left out (a flow between pools) is named exactly."""

import pytest
from test_bpmn_as_drawn import assumed, diagram, drawn, line

import gobpm_nb as bpm


def refused(body, extra=""):
    """The process as written: its ModelError's text."""
    with pytest.raises(bpm.ModelError) as written:
        bpm.load_bpmn(diagram(body, extra)).process()
    return str(written.value)


def run(model, signals=()):
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    for signal in signals:
        eng.broadcast_signal(signal)
        eng.run()
    return eng, inst


def test_a_parallel_split_whose_two_arms_meet_at_once_carries_two_tokens():
    """Two flows from a split to its join (an export of a diagram drawn half way): the
    second passes through a milestone; the join waits for both."""
    body = ('<startEvent id="s"/><parallelGateway id="fork"/><parallelGateway id="join"/>'
            '<endEvent id="e"/>' + line("s", "fork") +
            '<sequenceFlow id="f1" sourceRef="fork" targetRef="join"/>'
            '<sequenceFlow id="f2" sourceRef="fork" targetRef="join"/>' + line("join", "e"))
    written = bpm.load_bpmn(diagram(body))  # valid BPMN: as written too, with a warning
    (warning,) = [n.message for n in written.report if n.element == "f2"]
    assert "as 'f1' does" in warning and "milestone 'f2_via'" in warning
    model = drawn(body)
    (note,) = assumed(model, "f2")
    for m in (written, model):
        eng, inst = run(m)
        assert inst.state == "completed"
        passed = [f.node for f in eng.facts if f.kind == "node_left"]
        assert passed.count("join") == 1 and "f2_via" in passed


def test_a_default_flow_to_the_task_a_condition_also_leads_to_stays_the_default():
    """A conditional flow and the default flow of an exclusive gateway both lead to 'a':
    with the condition false the default is taken (through its milestone)."""
    body = ('<startEvent id="s"/><exclusiveGateway id="g" default="dflt"/><task id="a"/>'
            '<endEvent id="e"/>' + line("s", "g") +
            '<sequenceFlow id="c" sourceRef="g" targetRef="a"><conditionExpression>'
            'amount &gt; 10</conditionExpression></sequenceFlow>'
            '<sequenceFlow id="dflt" sourceRef="g" targetRef="a"/>' + line("a", "e"))
    model = drawn(body)
    assert assumed(model, "dflt")
    for amount, via in ((5, True), (50, False)):
        eng = bpm.Engine()
        inst = eng.start(model.process(), {"amount": amount})
        eng.run()
        passed = [f.node for f in eng.facts if f.kind == "node_left"]
        assert inst.state == "completed" and ("dflt_via" in passed) is via


def test_a_flow_written_twice_is_read_once():
    """The same flow in the subprocess and again in the process (one id, the same ends)."""
    body = ('<startEvent id="s"/><subProcess id="sub"><startEvent id="ss"/><task id="t"/>'
            '<endEvent id="se"/><sequenceFlow id="in" sourceRef="ss" targetRef="t"/>'
            + line("t", "se") + '</subProcess><endEvent id="e"/>' + line("s", "sub", "e")
            + '<sequenceFlow id="in" sourceRef="ss" targetRef="t"/>')
    model = drawn(body)
    assert any("written twice" in n for n in assumed(model, "in"))
    assert run(model)[1].state == "completed"


def test_a_flow_written_in_the_process_but_joining_a_subprocess_inside_is_read_there():
    """An export that writes a subprocess's inner flows at the process level."""
    body = ('<startEvent id="s"/><subProcess id="sub"><startEvent id="ss"/><task id="t"/>'
            '<endEvent id="se"/></subProcess><endEvent id="e"/>' + line("s", "sub", "e")
            + line("ss", "t", "se"))
    assert "is written in the process but joins elements of subprocess 'sub'" in \
        refused(body)
    model = drawn(body)
    (note,) = assumed(model, "ss-t")
    assert note.endswith("it is read as a flow of subprocess 'sub'")
    assert run(model)[1].state == "completed"


def test_a_boundary_written_inside_the_subprocess_it_is_attached_to_is_on_its_border():
    """The boundary is written in 'sub' and its flow leads to the process: it is read in the
    process, on the border of 'sub'; it fires on the signal its name names."""
    body = ('<startEvent id="s"/><subProcess id="sub"><startEvent id="ss"/><userTask id="t"/>'
            '<endEvent id="se"/>' + line("ss", "t", "se") +
            '<boundaryEvent id="b" name="Stop" attachedToRef="sub"><signalEventDefinition/>'
            '</boundaryEvent><sequenceFlow id="out" sourceRef="b" targetRef="stopped"/>'
            '</subProcess><endEvent id="e"/><endEvent id="stopped"/>' + line("s", "sub", "e"))
    assert "boundaryEvent 'b' is in subprocess 'sub' but 'sub' is in the process" in \
        refused(body)
    model = drawn(body)
    assert any("read on the border of 'sub'" in n for n in assumed(model, "b"))
    eng, inst = run(model, signals=["Stop"])
    assert inst.state == "completed" and [t.node for t in inst.tracks
                                          if t.state == "completed"] == ["stopped"]


def test_a_boundary_whose_flow_leaves_its_subprocess_by_the_side_is_left_out():
    """Attached to a task inside 'sub', written in the process, leading to the process:
    moved to the task's scope its flow would cross the subprocess's border, so it is left
    out with its flow (refused as written); the task runs without it."""
    body = ('<startEvent id="s"/><subProcess id="sub"><startEvent id="ss"/><userTask id="t"/>'
            '<endEvent id="se"/>' + line("ss", "t", "se") + '</subProcess><endEvent id="e"/>'
            '<boundaryEvent id="b" attachedToRef="t"><timerEventDefinition><timeDuration>'
            'PT1H</timeDuration></timerEventDefinition></boundaryEvent>'
            '<endEvent id="late"/>' + line("s", "sub", "e") + line("b", "late"))
    assert "'b' is in the process but 't' is in subprocess" in refused(body)
    model = drawn(body)
    assert "as drawn: boundaryEvent 'b' is in the process but 't' is in subprocess 'sub': it " \
           "is left out, with its flows (what only it leads to is not reached)" \
           in assumed(model, "b")
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    (task,) = eng.tasks()
    eng.complete_task(task.id)
    eng.run()
    assert eng.instance(inst.id).state == "completed"


def test_an_event_based_gateway_without_a_flow_out_ends_its_track():
    body = '<startEvent id="s"/><eventBasedGateway id="g"/>' + line("s", "g")
    model = drawn(body)
    assert any("has no outgoing flow: it is an exclusive gateway" in n
               for n in assumed(model, "g"))
    assert run(model)[1].state == "completed"


def test_a_link_throw_goes_to_the_only_catch_no_throw_names():
    """Throw 'Go to B' and catch 'B' (names meant to match); unnamed links pair too."""
    for throw, catch in (('name="Go to B"><linkEventDefinition name="Go to B"/>',
                          'name="B"><linkEventDefinition name="B"/>'),
                         ('><linkEventDefinition/>', '><linkEventDefinition/>')):
        body = (f'<startEvent id="s"/><intermediateThrowEvent id="go" {throw}'
                f'</intermediateThrowEvent><intermediateCatchEvent id="to" {catch}'
                '</intermediateCatchEvent><endEvent id="e"/>' + line("s", "go")
                + line("to", "e"))
        refused(body)
        model = drawn(body)
        assert any("the only link catch there that no throw names" in n
                   for n in assumed(model, "go"))
        assert run(model)[1].state == "completed"


def test_a_flow_to_another_pool_is_named_as_such():
    """A sequence flow to an element of another process (pool) is refused as written; as
    drawn it is left out, and the note says where the element is."""
    other = ('<process id="q"><task id="far"/></process>'
             '<collaboration id="c"><participant id="pp" processRef="p"/>'
             '<participant id="pq" processRef="q"/></collaboration>')
    body = '<startEvent id="s"/>' + line("s", "far")
    with pytest.raises(bpm.ModelError, match="'far' is in process 'q'"):
        bpm.load_bpmn(diagram(body, other)).process("p")
    model = bpm.load_bpmn(diagram(body, other), run_as_drawn=True)
    assert "as drawn: sequence flow 's-far' is dangling ('far' is in process 'q', another " \
           "pool: only a message flow joins two pools): it is left out" in assumed(model, "s-far")
    eng = bpm.Engine()
    inst = eng.start(model.process("p"))
    eng.run()
    assert inst.state == "completed"


def test_an_event_subprocess_with_two_start_events_opens_on_the_first_then_a_person_chooses():
    """Two start events (a signal, a message) each lead to their own task: it opens on the
    first's signal, and a person chooses which start event's path it takes."""
    body = ('<startEvent id="s"/><userTask id="work"/><endEvent id="e"/>'
            + line("s", "work", "e") +
            '<subProcess id="esp" triggeredByEvent="true">'
            '<startEvent id="bySignal" isInterrupting="false"><signalEventDefinition '
            'signalRef="sig"/></startEvent><userTask id="a"/><endEvent id="ea"/>'
            '<startEvent id="byMessage" isInterrupting="false"><messageEventDefinition '
            'messageRef="m"/></startEvent><userTask id="b"/><endEvent id="eb"/>'
            + line("bySignal", "a", "ea") + line("byMessage", "b", "eb") + '</subProcess>')
    extra = '<signal id="sig" name="Audit"/><message id="m" name="Review"/>'
    assert "needs exactly one start event" in refused(body, extra)
    model = drawn(body, extra)
    (note,) = assumed(model, "esp")
    assert "has 2 start events" in note and "opens on the first's, 'bySignal'" in note
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.broadcast_signal("Audit")
    eng.run()
    (decision,) = eng.decisions(inst.id)
    eng.decide(inst.id, "byMessage", decision.track)
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["b", "work"]


def test_a_condition_on_a_flow_out_of_a_parallel_gateway_is_not_read():
    """A parallel gateway takes every flow; as drawn its flows' conditions are ignored."""
    body = ('<startEvent id="s"/><parallelGateway id="fork"/><task id="a"/><task id="b"/>'
            '<parallelGateway id="join"/><endEvent id="e"/>' + line("s", "fork") +
            '<sequenceFlow id="fa" sourceRef="fork" targetRef="a"><conditionExpression>'
            'x &gt; 1</conditionExpression></sequenceFlow>' + line("fork", "b")
            + line("a", "join") + line("b", "join", "e"))
    assert "flow 'fa' may not carry a condition" in refused(body)
    model = drawn(body)
    assert any("its condition is not read" in n for n in assumed(model, "fa"))
    assert run(model)[1].state == "completed"


def test_a_multi_instance_with_a_collection_and_a_cardinality_runs_its_cardinality():
    """Both given (camunda:collection and loopCardinality): the cardinality, as Camunda 7."""
    body = ('<startEvent id="s"/><task id="t"><multiInstanceLoopCharacteristics '
            'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" camunda:collection="items" '
            'camunda:elementVariable="item"><loopCardinality>3</loopCardinality>'
            '</multiInstanceLoopCharacteristics></task><endEvent id="e"/>' + line("s", "t", "e"))
    assert "needs exactly one of collection or cardinality" in refused(body)
    model = drawn(body)
    assert any("runs its cardinality" in n for n in assumed(model, "t"))
    eng, inst = run(model)
    runs = [f for f in eng.facts if f.kind == "node_left" and f.node == "t"]
    assert inst.state == "completed" and len(runs) == 4  # three inner runs and the whole


def test_a_boundary_on_an_event_subprocess_is_not_armed():
    """The engine gives an event subprocess no border: the boundary is a milestone nothing
    reaches; the rest runs."""
    body = ('<startEvent id="s"/><task id="t"/><endEvent id="e"/>' + line("s", "t", "e") +
            '<subProcess id="esp" triggeredByEvent="true"><startEvent id="es">'
            '<signalEventDefinition signalRef="sig"/></startEvent><endEvent id="ee"/>'
            + line("es", "ee") + '</subProcess><boundaryEvent id="b" attachedToRef="esp">'
            '<timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition>'
            '</boundaryEvent><endEvent id="late"/>' + line("b", "late"))
    extra = '<signal id="sig" name="Audit"/>'
    assert "a event_subprocess, not an activity" in refused(body, extra)
    model = drawn(body, extra)
    assert any("it is not armed" in n for n in assumed(model, "b"))
    assert run(model)[1].state == "completed"


def test_a_send_task_as_compensation_handler_passes_through():
    body = ('<startEvent id="s"/><task id="a"/><endEvent id="e"/>' + line("s", "a", "e") +
            '<boundaryEvent id="b" attachedToRef="a"><compensateEventDefinition/>'
            '</boundaryEvent><sendTask id="notify" isForCompensation="true" messageRef="m"/>'
            '<association id="as" associationDirection="One" sourceRef="b" '
            'targetRef="notify"/>')
    extra = '<message id="m" name="Sorry"/>'
    assert "it cannot be a compensation handler" in refused(body, extra)
    model = drawn(body, extra)
    assert any("is a compensation handler" in n for n in assumed(model, "notify"))
    assert run(model)[1].state == "completed"


def test_an_output_element_the_engine_cannot_read_collects_nothing():
    """A Camunda 8 loop whose output element calls a FEEL function the engine does not
    read: nothing is collected."""
    body = ('<startEvent id="s"/><task id="t"><extensionElements/>'
            '<multiInstanceLoopCharacteristics><extensionElements>'
            '<zeebe:loopCharacteristics xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" '
            'inputCollection="=items" inputElement="item" outputCollection="out" '
            'outputElement="=sum(item)"/></extensionElements>'
            '</multiInstanceLoopCharacteristics></task><endEvent id="e"/>' + line("s", "t", "e"))
    refused(body)
    model = drawn(body)
    assert any("nothing is collected" in n for n in assumed(model, "t"))
    eng = bpm.Engine()
    inst = eng.start(model.process(), {"items": [1, 2]})
    eng.run()
    assert inst.state == "completed" and "out" not in inst.data


def test_an_event_subprocess_without_an_id_runs_as_written():
    """BPMN's ids are optional and no flow names an event subprocess: it is read under a
    made-up id, with a warning, and its message start interrupts the process."""
    body = ('<startEvent id="s"/><userTask id="work"/><endEvent id="e"/>'
            + line("s", "work", "e") + '<subProcess triggeredByEvent="true">'
            '<startEvent id="es"><messageEventDefinition messageRef="m"/></startEvent>'
            '<endEvent id="ee"/>' + line("es", "ee") + '</subProcess>')
    model = bpm.load_bpmn(diagram(body, '<message id="m" name="Cancel"/>'))
    assert any("read as 'p_eventSubProcess'" in n.message for n in model.report)
    eng, inst = run(model)
    eng.publish_message("Cancel")
    eng.run()
    assert inst.state == "completed" and not eng.tasks()


def test_an_event_subprocess_marked_for_compensation_starts_on_its_trigger():
    """bpmn-js lets a modeller mark an event subprocess isForCompensation; it starts on its
    own trigger, so as drawn the mark is not read."""
    body = ('<startEvent id="s"/><task id="t"/><endEvent id="e"/>' + line("s", "t", "e") +
            '<subProcess id="esp" triggeredByEvent="true" isForCompensation="true">'
            '<startEvent id="es"><signalEventDefinition signalRef="sig"/></startEvent>'
            '<endEvent id="ee"/>' + line("es", "ee") + '</subProcess>')
    extra = '<signal id="sig" name="Audit"/>'
    assert "cannot be a compensation handler" in refused(body, extra)
    model = drawn(body, extra)
    assert any("the mark is not read" in n for n in assumed(model, "esp"))
    assert run(model)[1].state == "completed"
