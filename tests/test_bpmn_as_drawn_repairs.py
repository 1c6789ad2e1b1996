"""Design-review mode: structural defects of a well-formed file (a dangling flow, a flow
across a subprocess's border, a boundary event on no activity of its scope, flows into a
start or boundary event) are left out with a note naming what was left out, and the process
runs to an end; as written each stays the error it was."""

from pathlib import Path

import pytest
from test_bpmn_as_drawn import assumed, diagram, drawn, drive, line

import gobpm_nb as bpm

DATA = Path(__file__).parent / "data" / "drawn"


def refused(body):
    with pytest.raises(bpm.ModelError) as written:
        bpm.load_bpmn(diagram(body)).process()
    return str(written.value)


def completes(model, pid=None):
    """Start the process, complete every task, let time pass: it ends."""
    eng = bpm.Engine()
    inst = eng.start(model.process(pid))
    drive(eng, inst)
    assert eng.instance(inst.id).state == "completed"
    return eng


def test_a_dangling_flow_is_left_out():
    body = ('<startEvent id="s"/><task id="a"/><endEvent id="e"/>' + line("s", "a", "e") +
            '<sequenceFlow id="lost" sourceRef="a" targetRef="gone"/>'
            '<sequenceFlow id="blank" sourceRef="" targetRef="a"/>')
    assert "flow 'lost' is dangling: no element 'gone'" in refused(body)
    model = drawn(body)
    (lost,) = assumed(model, "lost")
    assert lost == "as drawn: sequence flow 'lost' is dangling (no element 'gone'): it is " \
                   "left out"
    assert "as drawn: sequence flow 'blank' is dangling (an empty reference): it is left " \
           "out" in assumed(model, "blank")
    completes(model)
    assert 'id="lost"' in model.process().to_bpmn()  # the file keeps it


def test_a_flow_into_another_pool_is_left_out():
    extra = ('<collaboration id="c"><participant id="P1" processRef="p"/>'
             '<participant id="P2" processRef="q"/></collaboration>'
             '<process id="q"><startEvent id="qs"/><task id="qt"/>'
             + line("qs", "qt") + '</process>')
    body = ('<startEvent id="s"/><task id="a"/><endEvent id="e"/>' + line("s", "a", "e") +
            '<sequenceFlow id="over" sourceRef="a" targetRef="qt"/>')
    model = drawn(body, extra)
    (note,) = assumed(model, "over")
    assert "'qt' is in process 'q', another pool" in note and note.endswith("left out")
    completes(model, "p")


def test_a_flow_across_a_subprocess_border_is_left_out():
    body = ('<startEvent id="s"/><subProcess id="sub"><task id="inner"/></subProcess>'
            '<endEvent id="e"/>' + line("s", "sub", "e") +
            '<sequenceFlow id="into" sourceRef="s" targetRef="inner"/>')
    assert "flow 'into' crosses the border of a subprocess" in refused(body)
    model = drawn(body)
    (note,) = assumed(model, "into")
    assert note.startswith("as drawn: sequence flow 'into' crosses the border of a "
                           "subprocess ('s' is in the process, 'inner' is in subprocess "
                           "'sub'): it is left out")
    eng = completes(model)
    assert "inner" in [f.node for f in eng.facts if f.kind == "node_left"]


@pytest.mark.parametrize("attached, why", [
    ("nowhere", "is attached to no element 'nowhere'"),
    ("", "is attached to an empty reference"),
    ("inner", "is in the process but 'inner' is in subprocess 'sub'"),
])
def test_a_boundary_event_on_no_activity_of_its_scope_is_left_out(attached, why):
    body = ('<startEvent id="s"/><subProcess id="sub"><startEvent id="ss"/><task id="inner"/>'
            + line("ss", "inner") + '</subProcess><endEvent id="e"/>' + line("s", "sub", "e")
            + f'<boundaryEvent id="b" attachedToRef="{attached}"><timerEventDefinition>'
            '<timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>'
            '<task id="late"/>' + line("b", "late"))
    assert "boundaryEvent 'b'" in refused(body)
    model = drawn(body)
    assert f"as drawn: boundaryEvent 'b' {why}: it is left out, with its flows (what only " \
           "it leads to is not reached)" in assumed(model, "b")
    eng = completes(model)
    assert "late" not in [f.node for f in eng.facts if f.kind == "node_left"]


def test_flows_into_a_start_event_and_a_boundary_event_are_left_out():
    body = ('<startEvent id="s"/><userTask id="a"/><endEvent id="e"/>' + line("s", "a", "e")
            + '<boundaryEvent id="b" attachedToRef="a"><timerEventDefinition><timeDuration>'
            'PT1H</timeDuration></timerEventDefinition></boundaryEvent><endEvent id="late"/>'
            + line("b", "late") + '<sequenceFlow id="back" sourceRef="a" targetRef="s"/>'
            '<sequenceFlow id="in" sourceRef="a" targetRef="b"/>')
    assert "start_event 's' has incoming flows" in refused(body) or \
        "startEvent 's' has incoming flows" in refused(body)
    model = drawn(body)
    assert assumed(model, "s") == ["as drawn: startEvent 's' has incoming flows ('back'): "
                                   "they are left out (a start event begins its scope)"]
    (note,) = assumed(model, "b")
    assert note.startswith("as drawn: boundaryEvent 'b' has incoming flows ('in'): they are "
                           "left out")
    completes(model)


@pytest.mark.parametrize("name, pid, left_out", [
    ("invalid_process_xsd_error.bpmn20.xml", None, "flow1"),
    ("endErrorEventWithOutParameters.bpmn", None, "subFlow1"),
    ("MultiInstanceTest.testNestedParallelSubProcessWithTimer.bpmn20.xml", None, "timer"),
    ("BIC-Cloud-Design-6.2.0-C.2.0-export.bpmn",
     "process_UUID_f0fe6a13-0665-4266-8edc-ec60e97cf509",
     "UUID_9064bafc-819c-47fb-b4ff-6511e6144c2d"),
])
def test_real_files_with_such_defects_run_as_drawn(name, pid, left_out):
    path = DATA / name
    with pytest.raises(bpm.ModelError):
        bpm.load_bpmn(path).process(pid)
    model = bpm.load_bpmn(path, run_as_drawn=True)
    assert any("left out" in n for n in assumed(model, left_out))
    completes(model, pid)


def test_a_start_event_with_a_trigger_in_a_plain_subprocess_is_its_plain_start():
    sub = ('<subProcess id="sub"><startEvent id="ss"><timerEventDefinition><timeDuration>'
           'PT1H</timeDuration></timerEventDefinition></startEvent><task id="inner"/>'
           '<endEvent id="se"/>' + line("ss", "inner", "se") + '</subProcess>')
    body = '<startEvent id="s"/>' + sub + '<endEvent id="e"/>' + line("s", "sub", "e")
    written = refused(body)
    assert "'ss' is in subprocess 'sub': a start event with a trigger belongs in an event " \
           "subprocess" in written and "subProcess 'sub' has 0 plain start events" in written
    model = drawn(body)
    assert assumed(model, "ss") == [
        "as drawn: startEvent 'ss' is in subprocess 'sub': a start event with a trigger "
        "belongs in an event subprocess; it stands as a plain start of that subprocess (its "
        "timer trigger is not waited for)"]
    eng = completes(model)
    assert "inner" in [f.node for f in eng.facts if f.kind == "node_left"]


def test_a_subprocess_with_several_plain_starts_starts_where_a_person_chooses():
    """A message start (now plain) and a plain start in one subprocess: as for any scope
    with several plain starts, a person chooses where it starts."""
    sub = ('<subProcess id="sub"><startEvent id="byMail"><messageEventDefinition/>'
           '</startEvent><startEvent id="byHand"/><task id="a"/><task id="b"/>'
           '<endEvent id="se"/>' + line("byMail", "a", "se") + line("byHand", "b", "se")
           + '</subProcess>')
    body = '<startEvent id="s"/>' + sub + '<endEvent id="e"/>' + line("s", "sub", "e")
    assert "'byMail' is in subprocess 'sub': a start event with a trigger" in refused(body)
    model = drawn(body)
    (note,) = assumed(model, "sub")
    assert note.startswith("as drawn: subProcess 'sub' has 2 plain start events: an "
                           "instance starts at a decision, where a person chooses one")
    for choose, taken in ((0, "a"), (1, "b")):
        eng = bpm.Engine()
        inst = eng.start(model.process())
        drive(eng, inst, choose)
        assert eng.instance(inst.id).state == "completed"
        passed = [f.node for f in eng.facts if f.kind == "node_left"]
        assert taken in passed and {"a", "b"} - {taken} - set(passed)


def test_a_real_file_with_a_triggered_start_in_a_subprocess_runs_as_drawn():
    """Flowable's invalidProcess: a message start in a plain subprocess (and a dangling
    flow, a flow across a border, a boundary on an unknown element)."""
    path = DATA / "invalidProcess.bpmn20.xml"
    with pytest.raises(bpm.ModelError, match="a start event with a trigger belongs"):
        bpm.load_bpmn(path).process()
    model = bpm.load_bpmn(path, run_as_drawn=True)
    assert any("stands as a plain start" in n
               for n in assumed(model, "subprocessStartEvent3"))
    completes(model)


def test_an_ad_hoc_subprocess_holding_only_its_loop_completes_at_once():
    body = ('<startEvent id="s"/><adHocSubProcess id="ah"><multiInstanceLoopCharacteristics '
            'id="mi" isSequential="true"/></adHocSubProcess><endEvent id="e"/>'
            + line("s", "ah", "e"))
    assert "'ah' has no element to activate" in refused(body)
    model = drawn(body)
    assert any(n.startswith("as drawn: an ad-hoc subprocess with nothing inside to activate")
               and "passes through as a task that does nothing" in n
               for n in assumed(model, "ah"))
    completes(model)


def test_a_default_that_names_no_flow_is_ignored():
    body = ('<startEvent id="s"/><exclusiveGateway id="g" default="nothing"/><task id="a"/>'
            '<endEvent id="e"/>' + line("s", "g", "a", "e"))
    assert "default 'nothing' names no sequence flow of this process (an unresolved " \
           "reference)" in refused(body)
    model = drawn(body)
    assert "as drawn: default 'nothing' names no sequence flow of this process (an " \
           "unresolved reference); it is ignored: no flow is the default" in assumed(model, "g")
    completes(model)


def test_an_instantiating_event_gateway_with_a_flow_in_is_a_plain_one():
    body = ('<startEvent id="s"/><eventBasedGateway id="g" instantiate="true"/>'
            '<intermediateCatchEvent id="wait"><timerEventDefinition><timeDuration>PT1H'
            '</timeDuration></timerEventDefinition></intermediateCatchEvent><endEvent id="e"/>'
            + line("s", "g", "wait", "e"))
    assert "eventBasedGateway 'g' instantiates: it may have no incoming flow" in refused(body)
    model = drawn(body)
    assert assumed(model, "g") == [
        "as drawn: eventBasedGateway 'g' instantiates, but flows lead into it: it stands as a "
        "plain (exclusive) event-based gateway, which creates no instance"]
    completes(model)


def test_a_link_catch_with_flows_in_and_a_second_catch_of_its_link():
    link = '<linkEventDefinition name="L"/>'
    body = ('<startEvent id="s"/><intermediateThrowEvent id="go">' + link +
            '</intermediateThrowEvent><intermediateCatchEvent id="c1">' + link +
            '</intermediateCatchEvent><intermediateCatchEvent id="c2">' + link +
            '</intermediateCatchEvent><task id="a"/><task id="b"/><endEvent id="e"/>'
            + line("s", "go") + line("c1", "a", "e") + line("c2", "b", "e")
            + '<sequenceFlow id="into" sourceRef="a" targetRef="c1"/>')
    written = refused(body)
    assert "link 'L' has 2 catch events ['c1', 'c2'] in one scope" in written
    model = drawn(body)
    assert assumed(model, "c1") == [
        "as drawn: intermediateCatchEvent 'c1' has incoming flows ('into'): they are left "
        "out (a link catch is entered only by its link's throw)"]
    assert assumed(model, "c2") == [
        "as drawn: link 'L' has another catch event in this scope, 'c1', first in the file: "
        "a throw goes there; 'c2' passes as a milestone no throw reaches"]
    eng = completes(model)
    passed = [f.node for f in eng.facts if f.kind == "node_left"]
    assert "a" in passed and "b" not in passed


@pytest.mark.parametrize("name, pid, element, said", [
    ("Cardanit-4.9.1-C.8.1-roundtrip.bpmn", "VacationRequestProcess",
     "_42367c5f-d084-44ee-90c7-960d1ab02a3b", "it is ignored: no flow is the default"),
    ("Aeneis-5.7.89.2400-C.1.0-export.bpmn", "_cde33741-865b-4d7f-ae79-90c736dd7294",
     "_cde33741-865b-4d7f-ae79-90c736dd7294_7c2ce83a-6c4a-458c-be6f-748583923c60",
     "it stands as a plain (exclusive) event-based gateway"),
    ("BIC-Cloud-Design-6.2.0-B.2.0-roundtrip.bpmn",
     "process_UUID_b21476f5-1544-4e8c-9272-5eb8ec4d76e8",
     "UUID_9c72ffaa-07da-4176-8d04-1cc75c629c93", "passes as a milestone no throw reaches"),
])
def test_real_files_with_the_rest_of_the_defects_validate_as_drawn(name, pid, element, said):
    """Each starts by a message or waits for a worker's job: validated and deployed here."""
    path = DATA / name
    with pytest.raises(bpm.ModelError):
        bpm.load_bpmn(path).process(pid)
    model = bpm.load_bpmn(path, run_as_drawn=True)
    assert any(said in n for n in assumed(model, element))
    bpm.Engine().deploy(model.process(pid))


def test_leave_out_takes_elements_and_flows_out_and_refuses_an_unknown_id():
    p = bpm.Process("p")
    p.start("s")
    p.throw("a")
    p.end("e")
    p.throw("spare")
    p.flow("s", "a", "e")
    with pytest.raises(bpm.ModelError, match="has no element or flow 'nope'"):
        p.leave_out("spare", "nope")
    assert "spare" in p.definition().nodes  # nothing was left out
    p.leave_out("spare")
    assert "spare" not in p.definition().nodes
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert eng.instance(inst.id).state == "completed"
