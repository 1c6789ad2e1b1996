"""Subprocesses, event subprocesses and the elements that came with them (triggered starts,
escalation, link events, the inclusive gateway) in BPMN files: each read from the XML that
Camunda 8 (zeebe) and Camunda 7 write into the builder element it stands for; a process built
with all of them written as valid, nested BPMN 2.0 with expanded subprocess shapes, and read
back the same; what is wrong in a file named by element."""

import os
import subprocess
import sys

import pytest
from bpmn_shapes import MIWG_DIR, NS, c14n, diagram, elements, flows
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn.drawing import drawing
from gobpm_nb.bpmn.names import FLOW_ELEMENTS
from gobpm_nb.bpmn.schema import schema

DOC = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
             xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
             id="d" targetNamespace="http://example.com">
{roots}
<process id="p" isExecutable="true">
  <startEvent id="s"/>
  <userTask id="t"/>
  <endEvent id="e"/>
  <sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
  <sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
  {body}
</process>
</definitions>
"""

ZEEBE_MESSAGE = ('<message id="M" name="cancel"><extensionElements>'
                 '<zeebe:subscription correlationKey="=orderId"/></extensionElements></message>')
STANDARD_MESSAGE = ('<message id="M" name="cancel"/><correlationProperty id="cp">'
                    '<correlationPropertyRetrievalExpression messageRef="M">'
                    '<messagePath>orderId</messagePath></correlationPropertyRetrievalExpression>'
                    '</correlationProperty>')
ROOTS = ('<signal id="S" name="stop"/><error id="Err" name="Boom" errorCode="BOOM"/>'
         '<escalation id="Esc" name="late" escalationCode="LATE"/>'
         '<escalation id="EscNamed" name="overdue"/>')


def load(body, roots=""):
    return bpm.load_bpmn(DOC.format(body=body, roots=roots))


def node(body, id, roots=""):
    """The element ``id`` of the process read from ``body``, and the import's notes."""
    model = load(body, roots)
    return model.processes["p"].definition().nodes[id], model.report


def event_subprocess(start, inside=""):
    """An event subprocess ``ev`` of the process, started by ``start`` (id ``es``)."""
    return (f'<subProcess id="ev" triggeredByEvent="true">{start}{inside}<endEvent id="ee"/>'
            '<sequenceFlow id="fe" sourceRef="es" targetRef="ee"/></subProcess>')


def errors(model):
    return [(n.element, n.message) for n in model.report if n.severity == "error"]


# -- reading -----------------------------------------------------------------------------

SUBPROCESS = """
  <boundaryEvent id="late" attachedToRef="t"><timerEventDefinition>
    <timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
  <subProcess id="sp" name="Handle">
    <incoming>f3</incoming>
    <startEvent id="ss"/>
    <serviceTask id="work"><extensionElements><zeebe:taskDefinition type="work"/>
      </extensionElements></serviceTask>
    <subProcess id="inner">
      <startEvent id="is"/><endEvent id="ie"/>
      <sequenceFlow id="fi" sourceRef="is" targetRef="ie"/>
    </subProcess>
    <endEvent id="se"/>
    <sequenceFlow id="fs1" sourceRef="ss" targetRef="work"/>
    <sequenceFlow id="fs2" sourceRef="work" targetRef="inner"/>
    <sequenceFlow id="fs3" sourceRef="inner" targetRef="se"/>
  </subProcess>
  <endEvent id="le"/>
  <sequenceFlow id="f3" sourceRef="late" targetRef="sp"/>
  <sequenceFlow id="f4" sourceRef="sp" targetRef="le"/>
"""


def test_a_subprocess_reads_its_children_and_inner_flows_into_its_scope():
    """Everything inside a subProcess is within it (a nested one within that), its flows
    are flows of the process in document order, depth first, and each subprocess starts at
    its own start event."""
    model = load(SUBPROCESS)
    assert model.report == []
    d = model.process().definition()
    within = {i: (n.kind, n.within) for i, n in d.nodes.items()}
    assert within["sp"] == ("subprocess", None)
    assert [within[i] for i in ("ss", "work", "inner", "se")] == \
        [("start", "sp"), ("service_task", "sp"), ("subprocess", "sp"), ("end", "sp")]
    assert within["is"] == ("start", "inner") and within["ie"] == ("end", "inner")
    assert [f.id for f in d.flows] == ["f1", "f2", "fi", "fs1", "fs2", "fs3", "f3", "f4"]
    assert dict(d.inner_start) == {"sp": "ss", "inner": "is"}


@pytest.mark.parametrize("roots, start, kind, interrupting, fields", [
    (ZEEBE_MESSAGE, '<startEvent id="es" isInterrupting="false">'
                    '<messageEventDefinition messageRef="M"/></startEvent>',
     "message_start", False, {"message": "cancel", "key": "orderId"}),
    (STANDARD_MESSAGE, '<startEvent id="es"><messageEventDefinition messageRef="M"/>'
                       '</startEvent>',
     "message_start", True, {"message": "cancel", "key": "orderId"}),
    ("", '<startEvent id="es" isInterrupting="false"><timerEventDefinition>'
         '<timeDuration xsi:type="tFormalExpression">="PT5M"</timeDuration>'
         '</timerEventDefinition></startEvent>',
     "timer_start", False, {"timer": ("duration", "PT5M")}),
    ("", '<startEvent id="es"><timerEventDefinition><timeCycle xsi:type="tFormalExpression">'
         'R3/PT10M</timeCycle></timerEventDefinition></startEvent>',
     "timer_start", True, {"timer": ("cycle", "R3/PT10M")}),
    (ROOTS, '<startEvent id="es" isInterrupting="false">'
            '<signalEventDefinition signalRef="S"/></startEvent>',
     "signal_start", False, {"signal": "stop"}),
    (ROOTS, '<startEvent id="es"><errorEventDefinition errorRef="Err" '
            'camunda:errorCodeVariable="code"/></startEvent>',
     "error_start", True, {"error": "BOOM"}),
    ("", '<startEvent id="es"><errorEventDefinition/></startEvent>',
     "error_start", True, {"error": None}),
    (ROOTS, '<startEvent id="es" isInterrupting="false"><escalationEventDefinition '
            'escalationRef="Esc" camunda:escalationCodeVariable="code"/></startEvent>',
     "escalation_start", False, {"escalation": "LATE"}),
    (ROOTS, '<startEvent id="es"><escalationEventDefinition escalationRef="EscNamed"/>'
            '</startEvent>',
     "escalation_start", True, {"escalation": "overdue"}),
    ("", '<startEvent id="es"><escalationEventDefinition/></startEvent>',
     "escalation_start", True, {"escalation": None}),
])
def test_an_event_subprocess_start_takes_its_trigger_and_interrupting_flag(
        roots, start, kind, interrupting, fields):
    """triggeredByEvent makes an event subprocess; its start event is the triggered start of
    its definition (message key from zeebe:subscription or a correlationProperty, timer
    text from a FEEL literal or plain, error and escalation codes from their root element,
    else the name; none catches all), isInterrupting defaulting to true."""
    model = load(event_subprocess(start), roots)
    assert errors(model) == []
    d = model.process().definition()
    assert (d.nodes["ev"].kind, d.nodes["ev"].within) == ("event_subprocess", None)
    es = d.nodes["es"]
    assert (es.kind, es.within, es.interrupting) == (kind, "ev", interrupting)
    got = {}
    for name in fields:
        value = getattr(es, name)
        got[name] = value.field if name == "key" else \
            (value.kind, value.text) if name == "timer" else value
    assert got == fields
    assert list(d.event_starts[""]) == ["es"]


def test_an_error_start_always_interrupts_and_says_so():
    """isInterrupting='false' on an error start event is ignored, with a warning."""
    es, report = node(event_subprocess('<startEvent id="es" isInterrupting="false">'
                                       '<errorEventDefinition/></startEvent>'), "es")
    assert (es.kind, es.interrupting) == ("error_start", True)
    assert [(n.severity, n.element) for n in report] == [("warning", "es")]


def test_a_message_start_of_the_process_starts_instances_and_needs_no_key():
    """A message start event of the process itself is a message start that creates
    instances: no note, and no correlation key (its message's zeebe:subscription is for the
    catches that share the message)."""
    body = DOC.format(roots=ZEEBE_MESSAGE, body="").replace(
        '<startEvent id="s"/>',
        '<startEvent id="s"><messageEventDefinition messageRef="M"/></startEvent>')
    model = bpm.load_bpmn(body)
    d = model.process().definition()
    assert (d.nodes["s"].kind, d.nodes["s"].message, d.nodes["s"].key) == \
        ("message_start", "cancel", None)
    assert (d.start, d.instance_starts) == ("", ("s",))
    assert model.report == []


@pytest.mark.parametrize("body, kind, fields", [
    ('<endEvent id="x"><escalationEventDefinition escalationRef="Esc"/></endEvent>'
     '<sequenceFlow id="fx" sourceRef="t" targetRef="x"/>',
     "end", {"escalation": "LATE", "error": None, "terminate": False}),
    ('<intermediateThrowEvent id="x"><escalationEventDefinition escalationRef="EscNamed"/>'
     '</intermediateThrowEvent><endEvent id="y"/>'
     '<sequenceFlow id="fx" sourceRef="t" targetRef="x"/>'
     '<sequenceFlow id="fy" sourceRef="x" targetRef="y"/>',
     "escalation_throw", {"escalation": "overdue"}),
    ('<intermediateThrowEvent id="x"><linkEventDefinition name="B"/>'
     '</intermediateThrowEvent><intermediateCatchEvent id="c"><linkEventDefinition name="B"/>'
     '</intermediateCatchEvent><endEvent id="y"/>'
     '<sequenceFlow id="fx" sourceRef="t" targetRef="x"/>'
     '<sequenceFlow id="fy" sourceRef="c" targetRef="y"/>', "link_throw", {"link": "B"}),
    ('<intermediateThrowEvent id="th"><linkEventDefinition name="B"/>'
     '</intermediateThrowEvent><intermediateCatchEvent id="x"><linkEventDefinition name="B"/>'
     '</intermediateCatchEvent><endEvent id="y"/>'
     '<sequenceFlow id="ft" sourceRef="t" targetRef="th"/>'
     '<sequenceFlow id="fy" sourceRef="x" targetRef="y"/>', "link_catch", {"link": "B"}),
])
def test_escalation_and_link_events_read_their_code_and_name(body, kind, fields):
    """An escalation end or throw event raises its escalation's code (else its name); a
    link event goes by its definition's name, and a throw goes to the catch of its name."""
    x, report = node(body, "x", ROOTS)
    assert report == []
    assert x.kind == kind
    assert {name: getattr(x, name) for name in fields} == fields
    links = load(body, ROOTS).process().definition().links
    assert dict(links) == ({"x": "c"} if kind == "link_throw" else
                           {"th": "x"} if kind == "link_catch" else {})


@pytest.mark.parametrize("cancel, escalation, interrupting, code", [
    ("", 'escalationRef="Esc"', True, "LATE"),
    ('cancelActivity="false"', "", False, None),
])
def test_an_escalation_boundary_on_a_subprocess_reads_cancel_activity_and_its_code(
        cancel, escalation, interrupting, code):
    """cancelActivity='false' makes it non-interrupting; without an escalationRef it
    catches every escalation."""
    body = SUBPROCESS + (f'<boundaryEvent id="b" attachedToRef="sp" {cancel}>'
                         f'<escalationEventDefinition {escalation}/></boundaryEvent>'
                         '<endEvent id="be"/><sequenceFlow id="fb" sourceRef="b" '
                         'targetRef="be"/>')
    b, report = node(body, "b", ROOTS)
    assert report == []
    assert (b.kind, b.attached_to, b.interrupting, b.escalation) == \
        ("escalation_boundary", "sp", interrupting, code)


@pytest.mark.parametrize("conditions", [
    ('<conditionExpression xsi:type="tFormalExpression">=amount &gt; 100'
     '</conditionExpression>', "amount > 100"),
    ('<conditionExpression xsi:type="tFormalExpression">${amount &gt; 100}'
     '</conditionExpression>', "amount > 100"),
])
def test_an_inclusive_gateway_reads_its_default_flow_as_the_flows_target(conditions):
    """default names a flow; the builder keeps the node it goes to, as for an exclusive
    gateway; conditions read as FEEL (Camunda 8) or JUEL (Camunda 7)."""
    xml, condition = conditions
    body = ('<inclusiveGateway id="g" default="fa"/><endEvent id="a"/><endEvent id="b"/>'
            '<sequenceFlow id="fg" sourceRef="t" targetRef="g"/>'
            '<sequenceFlow id="fa" sourceRef="g" targetRef="a"/>'
            f'<sequenceFlow id="fb" sourceRef="g" targetRef="b">{xml}</sequenceFlow>')
    model = load(body)
    assert errors(model) == []
    d = model.process().definition()
    assert (d.nodes["g"].kind, d.nodes["g"].default) == ("inclusive_gateway", "a")
    assert [f.condition.describe() if f.condition else None for f in d.outgoing["g"]] == \
        [None, condition]


@pytest.mark.parametrize("xml, tag, reason", [
    ('<intermediateCatchEvent id="x"><escalationEventDefinition/></intermediateCatchEvent>',
     "intermediateCatchEvent", "an escalation intermediate catch event is not valid BPMN"),
    ('<subProcess id="x"><standardLoopCharacteristics/><startEvent id="xs"/>'
     '<endEvent id="xe"/><sequenceFlow id="fx" sourceRef="xs" targetRef="xe"/></subProcess>',
     "subProcess", "standard loop 'x' has neither a loopCondition nor a loopMaximum"),
    ('<subProcess id="x"><startEvent id="xs"><messageEventDefinition messageRef="M"/>'
     '<conditionalEventDefinition><condition>=late</condition></conditionalEventDefinition>'
     '</startEvent><endEvent id="xe"/>'
     '<sequenceFlow id="fx" sourceRef="xs" targetRef="xe"/></subProcess>',
     "startEvent", "are supported only on a catch, a boundary or an event subprocess's"),
])
def test_what_is_still_not_supported_is_refused_naming_the_reason(xml, tag, reason):
    """Escalation catches, a standard loop that would run
    for ever (a loop marker with no condition and no maximum) and a start event with a
    message and a condition stay refused: one error note each, on the element (a subprocess
    whose start is such a placeholder gets no note of its own)."""
    body = xml + ('<endEvent id="after"/><sequenceFlow id="fx1" sourceRef="t" targetRef="x"/>'
                  '<sequenceFlow id="fx2" sourceRef="x" targetRef="after"/>')
    model = load(body, ZEEBE_MESSAGE + ROOTS)
    element = "xs" if tag == "startEvent" else "x"
    assert [(n.element, n.tag) for n in model.report if n.severity == "error"] == \
        [(element, tag)]
    assert reason in model.report[0].message
    with pytest.raises(bpm.ModelError, match=reason.split(";")[0]):
        model.process()


@pytest.mark.parametrize("interrupting, attribute", [(True, ""),
                                                     (False, ' isInterrupting="false"')])
def test_a_conditional_start_of_an_event_subprocess_is_read(interrupting, attribute):
    """Its condition (FEEL) and isInterrupting are read: no note, and the process runs."""
    model = load(event_subprocess(f'<startEvent id="es"{attribute}><conditionalEventDefinition>'
                                  '<condition xsi:type="tFormalExpression">=late</condition>'
                                  '</conditionalEventDefinition></startEvent>'))
    assert model.report == []
    start = model.process().definition().nodes["es"]
    assert (start.kind, start.interrupting, start.condition.describe()) == \
        ("conditional_start", interrupting, "late")


def test_a_placeholder_inside_a_subprocess_is_within_it():
    """What cannot run inside a subprocess (an error catch) is a placeholder in that
    scope: refused with its own reason, nothing else reported."""
    body = ('<subProcess id="sp"><startEvent id="ss"/><task id="tx"/>'
            '<intermediateCatchEvent id="undo"><errorEventDefinition/>'
            '</intermediateCatchEvent><endEvent id="se"/>'
            '<sequenceFlow id="a" sourceRef="ss" targetRef="tx"/>'
            '<sequenceFlow id="c" sourceRef="tx" targetRef="undo"/>'
            '<sequenceFlow id="b" sourceRef="undo" targetRef="se"/></subProcess>'
            '<sequenceFlow id="f0" sourceRef="t" targetRef="sp"/>'
            '<sequenceFlow id="f9" sourceRef="sp" targetRef="e"/>')
    model = load(body)
    assert [(n.element, n.tag) for n in model.report] == [("undo", "intermediateCatchEvent")]
    kinds = {e.id: (e.kind, e.within) for e in model.processes["p"].elements}
    assert kinds["undo"] == ("unsupported", "sp")


# -- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("body, element, fragment", [
    ('<subProcess id="ev" triggeredByEvent="true"><endEvent id="ee"/></subProcess>',
     "ev", "subProcess 'ev' needs exactly one start event"),
    ('<subProcess id="ev" triggeredByEvent="true"><startEvent id="es"/><endEvent id="ee"/>'
     '<sequenceFlow id="fe" sourceRef="es" targetRef="ee"/></subProcess>',
     "ev", "it has 1 without a trigger"),
    ('<intermediateThrowEvent id="go"><linkEventDefinition name="nowhere"/>'
     '</intermediateThrowEvent><sequenceFlow id="fg" sourceRef="t" targetRef="go"/>',
     "go", "no link catch named 'nowhere' in its scope"),
    ('<subProcess id="sp"><startEvent id="ss"/><userTask id="u"/></subProcess>'
     '<sequenceFlow id="in" sourceRef="ss" targetRef="u"/>'
     '<sequenceFlow id="out" sourceRef="u" targetRef="e"/>'
     '<sequenceFlow id="f0" sourceRef="t" targetRef="sp"/>',
     "out", "flow 'out' crosses the border of a subprocess"),
    ('<subProcess id="sp"><startEvent id="ss"/><endEvent id="se"/>'
     '<sequenceFlow id="fs" sourceRef="ss" targetRef="se"/>'
     '<sequenceFlow id="wrong" sourceRef="t" targetRef="e2"/></subProcess>'
     '<endEvent id="e2"/><sequenceFlow id="f0" sourceRef="s" targetRef="sp"/>',
     "wrong", "sequence flow 'wrong' is written in subprocess 'sp' but joins elements of "
              "the process"),
    ('<subProcess id="sp"><startEvent id="ss"><signalEventDefinition signalRef="S"/>'
     '</startEvent><endEvent id="se"/><sequenceFlow id="fs" sourceRef="ss" targetRef="se"/>'
     '</subProcess><sequenceFlow id="f0" sourceRef="t" targetRef="sp"/>',
     "ss", "a start event with a trigger belongs in an event subprocess"),
    ('<intermediateThrowEvent id="raise"><escalationEventDefinition/>'
     '</intermediateThrowEvent><sequenceFlow id="fr" sourceRef="t" targetRef="raise"/>'
     '<endEvent id="re"/><sequenceFlow id="fre" sourceRef="raise" targetRef="re"/>',
     "raise", "no escalationRef"),
    ('<boundaryEvent id="b" attachedToRef="t"><escalationEventDefinition/></boundaryEvent>'
     '<endEvent id="be"/><sequenceFlow id="fb" sourceRef="b" targetRef="be"/>',
     "b", "only a subprocess raises escalations"),
])
def test_a_scope_that_is_wrong_in_the_file_is_an_error_note_naming_the_element(
        body, element, fragment):
    """An event subprocess without a (triggered) start, a link throw with no catch, a flow
    across a subprocess's border or written in the wrong scope, a triggered start in a plain
    subprocess, an escalation throw raising nothing, an escalation boundary on a task: an
    error note on the element, and process() refuses."""
    model = load(body, ROOTS)
    found = [n for n in model.report if n.severity == "error" and fragment in n.message]
    assert [n.element for n in found] == [element], model.report
    assert found[0].line is not None
    with pytest.raises(bpm.ModelError, match=fragment.split("'")[0]):
        model.process()


def test_a_flow_across_a_border_built_in_python_is_refused_naming_it():
    """The builder refuses the same crossing, naming the flow and both scopes."""
    p = bpm.Process("p")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("ss")
        sp.end("se")
    p.end("e")
    p.flow("s", "sp", "e")
    p.flow("ss", "e", id="across")
    with pytest.raises(bpm.ModelError, match="flow 'across' crosses the border"):
        p.validate()


# -- writing -----------------------------------------------------------------------------

BUILD = """
import gobpm_nb as bpm

def scoped():
    p = bpm.Process("scoped", name="Every scope")
    p.start("start")
    with p.subprocess("handle", "Handle the order") as sp:
        sp.start("h_start")
        sp.user_task("pick", assignee="ann")
        sp.timer_boundary("slow", attached_to="pick", duration="PT1H", interrupting=False)
        sp.escalation_throw("tell", escalation="LATE")
        sp.inclusive_gateway("split", default="pack")
        sp.service_task("pack", topic="packing")
        sp.user_task("gift")
        sp.inclusive_gateway("join")
        sp.link_throw("jump", link="done")
        sp.link_catch("landed", link="done")
        sp.end("h_end")
        sp.end("h_slow")
        with sp.subprocess("check", "Check") as inner:
            inner.start("c_start")
            inner.user_task("verify")
            inner.end("c_end")
            inner.flow("c_start", "verify", "c_end")
        sp.flow("h_start", "pick", "tell", "split", "pack", "join", "check", "jump")
        sp.flow("split", "gift", condition="wrap == True")
        sp.flow("gift", "join")
        sp.flow("landed", "h_end")
        sp.flow("slow", "h_slow")
        with sp.event_subprocess("cancel", "Cancel") as ev:
            ev.message_start("cancelled", message="cancel", key="orderId", interrupting=False)
            ev.end("c_done")
            ev.flow("cancelled", "c_done")
        with sp.event_subprocess("overdue") as ev:
            ev.timer_start("tick", cycle="R3/PT10M", interrupting=False)
            ev.end("o_done", escalation="OVERDUE")
            ev.flow("tick", "o_done")
        with sp.event_subprocess("watch") as ev:
            ev.escalation_start("seen", escalation="OVERDUE", interrupting=False)
            ev.end("w_done")
            ev.flow("seen", "w_done")
    p.escalation_boundary("late", attached_to="handle", escalation="LATE", interrupting=False)
    p.escalation_boundary("any", attached_to="handle")
    p.end("done")
    p.end("noted")
    p.end("escalated", escalation="ESCALATED")
    p.flow("start", "handle", "done")
    p.flow("late", "noted")
    p.flow("any", "escalated")
    with p.event_subprocess("failure") as ev:
        ev.error_start("failed", error="BOOM")
        ev.end("f_done", terminate=True)
        ev.flow("failed", "f_done")
    with p.event_subprocess("stop") as ev:
        ev.signal_start("stopped", signal="stop", interrupting=False)
        ev.end("s_done")
        ev.flow("stopped", "s_done")
    with p.event_subprocess("catch_all") as ev:
        ev.error_start("anything")
        ev.end("a_done", error="AGAIN")
        ev.flow("anything", "a_done")
    return p
"""


def scoped():
    ns = {}
    exec(compile(BUILD, "<scoped>", "exec"), ns)
    return ns["scoped"]().validate()


def parsed(text):
    return etree.fromstring(text.encode())


def test_a_process_with_every_scope_element_reads_back_with_the_same_signature():
    """Built in Python, written, read back: the same signature, elements (kinds, fields,
    scopes) and flows, and no note."""
    p = scoped()
    model = bpm.load_bpmn(p.to_bpmn())
    assert model.report == []
    q = model.process()
    assert q.definition().signature == p.definition().signature
    assert elements(q) == elements(p)
    assert flows(q, ids=False) == flows(p, ids=False)


def test_the_export_is_valid_bpmn_20():
    """The written file validates against the OMG XSD shipped in the package."""
    root = parsed(scoped().to_bpmn())
    assert schema().validate(root.getroottree()), schema().error_log


def test_subprocesses_are_nested_with_their_flows_and_event_definitions():
    """Each element and flow is written inside its scope's <subProcess>; event subprocesses
    carry triggeredByEvent, non-interrupting starts isInterrupting='false'; escalations and
    errors are root elements referenced by code; links carry their name; the inclusive
    gateway names its default flow; a message start's key is a zeebe:subscription."""
    root = parsed(scoped().to_bpmn())

    def at(id):
        return root.find(f".//*[@id='{id}']")

    def scope_of(id):
        return at(id).getparent().get("id")

    assert scope_of("handle") == "scoped" and scope_of("pick") == "handle"
    assert scope_of("verify") == "check" and scope_of("cancelled") == "cancel"
    assert scope_of("cancel") == "handle" and scope_of("failure") == "scoped"
    inner_flow = root.find(".//bpmn:sequenceFlow[@sourceRef='c_start']", NS)
    assert inner_flow.getparent().get("id") == "check"
    assert [at(i).get("triggeredByEvent") for i in ("handle", "check", "cancel", "stop")] == \
        [None, None, "true", "true"]
    assert [at(i).get("isInterrupting") for i in ("cancelled", "tick", "seen", "stopped",
                                                   "failed")] == \
        ["false", "false", "false", "false", None]
    escalations = {e.get("escalationCode"): e.get("id")
                   for e in root.iterfind("bpmn:escalation", NS)}
    assert sorted(escalations) == ["ESCALATED", "LATE", "OVERDUE"]
    ref = at("tell").find("bpmn:escalationEventDefinition", NS).get("escalationRef")
    assert ref == escalations["LATE"]
    assert at("any").find("bpmn:escalationEventDefinition", NS).get("escalationRef") is None
    errors_ = {e.get("errorCode") for e in root.iterfind("bpmn:error", NS)}
    assert errors_ == {"BOOM", "AGAIN"}
    assert at("anything").find("bpmn:errorEventDefinition", NS).get("errorRef") is None
    assert [at(i).find("bpmn:linkEventDefinition", NS).get("name")
            for i in ("jump", "landed")] == ["done", "done"]
    default = at("split").get("default")
    assert root.find(f".//bpmn:sequenceFlow[@id='{default}']", NS).get("targetRef") == "pack"
    message = at(at("cancelled").find("bpmn:messageEventDefinition", NS).get("messageRef"))
    sub = message.find(".//{http://camunda.org/schema/zeebe/1.0}subscription")
    assert (message.get("name"), sub.get("correlationKey")) == ("cancel", "=orderId")


def boxes():
    p = scoped()
    shapes, edges = diagram(p.to_bpmn())
    box = {i: tuple(int(v) for v in s[2][0]) for i, s in shapes.items()}
    return p, shapes, edges, box


def inside(inner, outer):
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


def test_subprocess_shapes_are_expanded_and_hold_their_children():
    """Every element has a shape; each subprocess and event subprocess is drawn expanded
    and holds the shapes of what is in it (boundary events too) and the edges of its
    flows."""
    p, shapes, edges, box = boxes()
    assert sorted(shapes) == sorted(e.id for e in p.elements)
    scopes = {e.id for e in p.elements if e.kind in ("subprocess", "event_subprocess")}
    assert {i for i, s in shapes.items() if s[1] == "true"} == scopes
    root = parsed(p.to_bpmn())
    for e in p.elements:
        if e.within is not None:
            assert inside(box[e.id], box[e.within]), (e.id, e.within)
    for f in root.iter("{http://www.omg.org/spec/BPMN/20100524/MODEL}sequenceFlow"):
        scope = f.getparent().get("id")
        if scope in scopes:
            for x, y in edges[f.get("id")][1]:
                assert inside((int(x), int(y), 0, 0), box[scope]), f.get("id")


def test_shapes_in_one_scope_do_not_overlap_and_edges_end_on_their_shapes():
    """Siblings (boundary events aside) never overlap; every edge is orthogonal and runs
    from its source's shape to its target's."""
    p, shapes, edges, box = boxes()
    by_scope = {}
    for e in p.elements:
        if e.kind not in ("escalation_boundary", "timer_boundary"):
            by_scope.setdefault(e.within, []).append(e.id)
    for ids in by_scope.values():
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                ax, ay, aw, ah = box[a]
                bx, by, bw, bh = box[b]
                assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay, (a, b)
    root = parsed(p.to_bpmn())
    for f in root.iter("{http://www.omg.org/spec/BPMN/20100524/MODEL}sequenceFlow"):
        points = [(int(x), int(y)) for x, y in edges[f.get("id")][1]]
        assert all(a[0] == b[0] or a[1] == b[1] for a, b in zip(points, points[1:], strict=False))
        for end, point in ((f.get("sourceRef"), points[0]), (f.get("targetRef"), points[-1])):
            x, y, w, h = box[end]
            assert x <= point[0] <= x + w and y <= point[1] <= y + h


@pytest.mark.slow  # fresh interpreters
def test_the_nested_export_is_byte_identical_across_runs_and_hash_seeds():
    """Two exports, and exports in fresh interpreters with other PYTHONHASHSEEDs, agree."""
    text = scoped().to_bpmn()
    assert scoped().to_bpmn() == text
    script = BUILD + "\nimport sys\nsys.stdout.write(scoped().to_bpmn())\n"
    for seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True, timeout=120)
        assert done.stdout == text


def nested_file():
    """A file with a subprocess and its diagram (as this package writes one)."""
    p = bpm.Process("p")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("ss")
        sp.end("se")
        sp.flow("ss", "se", id="fs")
    p.end("e")
    p.flow("s", "sp", id="f1")
    p.flow("sp", "e", id="f2")
    return p.to_bpmn()


NESTED_FILE = nested_file()


def test_the_process_view_drawing_names_the_flows_inside_subprocesses():
    """The viewer's document maps every flow of the definition, those inside subprocesses
    too, to its sequenceFlow, and labels unnamed nodes at any depth with their ids."""
    d = scoped().definition()
    drawn = drawing(d)
    assert drawn.source == "layout"
    assert sorted(drawn.flows) == sorted(f.id for f in d.flows)
    root = parsed(drawn.xml)
    assert root.find(".//*[@id='h_start']").get("name") == "h_start"
    assert root.find(".//*[@id='c_start']").get("name") == "c_start"
    assert root.find(".//*[@id='handle']").get("name") == "Handle the order"


def test_an_imported_nested_file_writes_back_unchanged():
    """Read and written with no change, a file with a subprocess is the same document."""
    assert c14n(bpm.load_bpmn(NESTED_FILE).to_bpmn()) == c14n(NESTED_FILE)


def test_what_is_added_inside_an_imported_subprocess_is_written_inside_it():
    """An event subprocess added to an imported subprocess goes into that subProcess, its
    flow inside it, drawn expanded around its inside; the file stays valid and reads back
    with the same elements and flows (in the file's order: the new ones where they are
    nested)."""
    p = bpm.Process.from_bpmn(NESTED_FILE)
    with p.scope("sp").event_subprocess("late") as ev:
        ev.timer_start("tick", duration="PT1H", interrupting=False)
        ev.end("noted")
        ev.flow("tick", "noted")
    text = p.to_bpmn()
    root = parsed(text)
    late = root.find(".//bpmn:subProcess[@id='late']", NS)
    assert late.getparent().get("id") == "sp" and late.get("triggeredByEvent") == "true"
    assert [c.get("id") for c in late] == ["tick", "noted", "Flow_tick_noted"]
    assert schema().validate(root.getroottree()), schema().error_log
    again = bpm.Process.from_bpmn(text)
    assert sorted(elements(again)) == sorted(elements(p))
    assert sorted(flows(again, ids=False)) == sorted(flows(p, ids=False))
    shapes, _ = diagram(text)
    box = {i: tuple(int(v) for v in shapes[i][2][0]) for i in ("late", "tick", "noted")}
    assert shapes["late"][1] == "true"
    assert inside(box["tick"], box["late"]) and inside(box["noted"], box["late"])


# -- the MIWG reference models -----------------------------------------------------------

WITH_SUBPROCESSES = sorted(path.stem for path in MIWG_DIR.glob("*.bpmn")
                           if b"subProcess" in path.read_bytes())
# the reasons a process holding a subprocess may still be refused, none about subprocesses
# being unsupported; an empty (collapsed, contentless) subprocess has no start event to run
OTHER_REASONS = ("has 0 plain start events; give one (it is empty in the file",
                 "no messageRef", "only a process can be called",
                 "is not an ISO 8601 date-time",
                 "message end events are not supported yet", "does not translate",
                 "has no correlation key")


def test_the_miwg_models_with_subprocesses_are_the_expected_four():
    """A.3.0, A.4.0, B.1.0 and C.3.0 hold subprocesses (expanded or collapsed)."""
    assert WITH_SUBPROCESSES == ["A.3.0", "A.4.0", "B.1.0", "C.3.0"]


@pytest.mark.parametrize("name", WITH_SUBPROCESSES)
def test_miwg_subprocesses_import_and_refusals_name_other_reasons(name):
    """Every subProcess of the model is read as a subprocess holding its inner elements;
    no note says subprocesses are unsupported; each error note gives one of the other
    reasons."""
    model = bpm.load_bpmn(MIWG_DIR / f"{name}.bpmn")
    tree = etree.parse(str(MIWG_DIR / f"{name}.bpmn"))
    read = {e.id: e for p in model.processes.values() for e in p.elements}
    for sub in tree.iter("{http://www.omg.org/spec/BPMN/20100524/MODEL}subProcess"):
        assert read[sub.get("id")].kind == "subprocess"
        for child in sub:
            if child.tag.rpartition("}")[2] in FLOW_ELEMENTS - {"sequenceFlow"}:
                assert read[child.get("id")].within == sub.get("id")
    assert not any("subprocesses are not supported" in n.message for n in model.report)
    for note in model.report:
        if note.severity == "error":
            assert any(reason in note.message for reason in OTHER_REASONS), note


def test_miwg_a40s_expanded_subprocesses_make_its_second_process_valid():
    """A.4.0's second process, with two expanded subprocesses, imports with no error and
    validates; each subprocess starts at its own start event."""
    p = bpm.load_bpmn(MIWG_DIR / "A.4.0.bpmn").process("WFP-6-2")
    d = p.definition()
    assert sorted(d.inner_start) == ["_ee35fa2c-dfea-40cf-a469-845b765a7b50",
                                     "_f52b6ad0-4dcc-4053-b696-b924dda01db5"]
