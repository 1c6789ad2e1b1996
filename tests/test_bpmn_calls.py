"""Call activities and the start events that create instances, in BPMN files: read from what
plain BPMN, Camunda 8 (zeebe) and Camunda 7 write; what the engine cannot do (a renaming or
computing mapping, a dynamic call) named by element; written as valid BPMN 2.0 that reads back
the same; run end to end from one file."""

import pytest
from bpmn_shapes import BPMN_DIR, NS, c14n
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn.schema import schema

ZEEBE_NS = "http://camunda.org/schema/zeebe/1.0"
CAMUNDA_NS = "http://camunda.org/schema/1.0/bpmn"
HEAD = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xmlns:zeebe="{ZEEBE_NS}" xmlns:camunda="{CAMUNDA_NS}" '
        'xmlns:modeler="http://camunda.org/schema/modeler/1.0" '
        'xmlns:gobpm="urn:gobpm-nb:bpmn:1" id="d" targetNamespace="http://example.com"{attrs}>')


def one_node(node, roots="", attrs=""):
    """A document: start -> ``node`` (id ``x``) -> end, plus root elements."""
    return (HEAD.format(attrs=attrs) + roots + '<process id="p" isExecutable="true">'
            '<startEvent id="s"/>' + node + '<endEvent id="e"/>'
            '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')


def call(attrs="", ext=""):
    """A call activity ``x`` with these attributes and extension elements."""
    inner = f"<extensionElements>{ext}</extensionElements>" if ext else ""
    return f'<callActivity id="x" {attrs}>{inner}</callActivity>'


def zeebe(process="billing", flags="", inputs=(), outputs=()):
    mapping = "".join(f'<zeebe:input source="={n}" target="{n}"/>' for n in inputs) + \
        "".join(f'<zeebe:output source="={n}" target="{n}"/>' for n in outputs)
    io = f"<zeebe:ioMapping>{mapping}</zeebe:ioMapping>" if mapping else ""
    return f'<zeebe:calledElement processId="{process}" {flags}/>' + io


def read(node, roots="", attrs=""):
    """The element ``x`` of the validated definition, and the import's notes."""
    model = bpm.load_bpmn(one_node(node, roots, attrs))
    return model.process().definition().nodes["x"], model.report


def fields(e):
    return (e.kind, e.process, e.version, e.inputs, e.outputs)


# -- reading call activities --------------------------------------------------------------

@pytest.mark.parametrize("node, expected", [
    (call('calledElement="billing"'), ("billing", None, None, None)),
    (call('xmlns:tns="http://example.com" calledElement="tns:billing"'),
     ("billing", None, None, None)),
    (call(ext=zeebe(flags='propagateAllChildVariables="false"', inputs=["amount"],
                    outputs=["invoice"])), ("billing", None, ("amount",), ("invoice",))),
    (call(ext=zeebe(flags='propagateAllChildVariables="true"')),
     ("billing", None, None, None)),
    (call(ext=zeebe()), ("billing", None, None, None)),
    (call(ext=zeebe(flags='propagateAllChildVariables="false"')),
     ("billing", None, None, ())),
    (call(ext=zeebe(flags='propagateAllParentVariables="false"')),
     ("billing", None, (), None)),
    (call(ext=zeebe(process="=&quot;billing&quot;")), ("billing", None, None, None)),
    (call(ext=zeebe(inputs=["a", "b"], outputs=["c"])), ("billing", None, ("a", "b"), ("c",))),
])
def test_plain_bpmn_and_camunda_8_call_activities(node, expected):
    """calledElement, or zeebe:calledElement processId (a FEEL string literal too); the
    zeebe:ioMapping fields that keep their name are the inputs and outputs; with none, the
    propagation flags say every field (their default) or none ('false')."""
    x, report = read(node)
    assert fields(x) == ("call_activity",) + expected
    assert report == []


@pytest.mark.parametrize("node, expected", [
    (call('calledElement="billing" camunda:calledElementBinding="version" '
          'camunda:calledElementVersion="2"',
          '<camunda:in variables="all"/><camunda:out variables="all"/>'),
     ("billing", 2, None, None)),
    (call('calledElement="billing" camunda:calledElementBinding="latest"',
          '<camunda:in source="amount" target="amount"/>'
          '<camunda:out source="invoice" target="invoice"/>'),
     ("billing", None, ("amount",), ("invoice",))),
    (call('calledElement="billing"', '<camunda:in variables="all"/>'),
     ("billing", None, None, ())),
    (call('camunda:calledElement="billing"'), ("billing", None, (), ())),
    (call('calledElement="billing"', '<gobpm:calledElement version="3"/>'),
     ("billing", 3, None, None)),
])
def test_camunda_7_call_activities_and_our_own_version(node, expected):
    """camunda:calledElementBinding='version' pins camunda:calledElementVersion ('latest':
    the newest); camunda:in / camunda:out pass every field (variables='all') or the fields
    named; a direction with no mapping passes nothing, as in Camunda 7; gobpm:calledElement
    carries a pinned version Camunda 8 cannot say."""
    x, report = read(node)
    assert fields(x) == ("call_activity",) + expected
    assert report == []


def test_a_file_made_for_camunda_7_passes_nothing_a_mapping_does_not_name():
    """modeler:executionPlatform='Camunda Platform': a bare calledElement passes no field
    in or out, as Camunda 7 does; the same element elsewhere passes all of them."""
    platform = ' modeler:executionPlatform="Camunda Platform"'
    x, _ = read(call('calledElement="billing"'), attrs=platform)
    assert (x.inputs, x.outputs) == ((), ())
    x, _ = read(call('calledElement="billing"'))
    assert (x.inputs, x.outputs) == (None, None)


@pytest.mark.parametrize("node, where, fragment", [
    (call('calledElement="billing" camunda:calledElementBinding="deployment"'), "x",
     "camunda:calledElementBinding 'deployment' is read as 'latest'"),
    (call('calledElement="billing" camunda:calledElementBinding="versionTag" '
          'camunda:calledElementVersionTag="v1"'), "x",
     "camunda:calledElementBinding 'versionTag' is read as 'latest'"),
    (call(ext=zeebe(flags='bindingType="deployment"')), "x",
     "bindingType 'deployment' is read as 'latest'"),
    (call('calledElement="other"', zeebe()), "x",
     "calledElement 'other' differs from zeebe:calledElement processId 'billing'"),
    (call('calledElement="billing"', '<camunda:in businessKey="#{key}"/>'), "x",
     "camunda:in businessKey is ignored"),
])
def test_what_is_approximated_is_a_warning_and_the_newest_version_is_called(node, where,
                                                                             fragment):
    """A deployment or version-tag binding, a calledElement that disagrees with zeebe's
    processId, a business key: one warning on the call activity; it still runs."""
    x, report = read(node)
    assert x.version is None and x.process == "billing"
    assert [(n.severity, n.element, n.tag) for n in report] == \
        [("warning", where, "callActivity")]
    assert fragment in report[0].message


@pytest.mark.parametrize("node, fragment", [
    (call(ext='<zeebe:calledElement processId="billing"/><zeebe:ioMapping>'
              '<zeebe:input source="=order.id" target="order.id"/></zeebe:ioMapping>'),
     "zeebe:input target 'order.id' is not a field name"),
    (call(ext=zeebe(process="=kind")),
     "process id '=kind' is an expression: dynamic calls are not supported"),
    (call('calledElement="${kind}"'),
     "process id '${kind}' is an expression: dynamic calls are not supported"),
    (call(), "names no process to call (no calledElement, no zeebe:calledElement processId)"),
    (call('camunda:caseRef="claims"'), "it calls a CMMN case (camunda:caseRef)"),
    (call('calledElement="billing" camunda:calledElementBinding="version" '
          'camunda:calledElementVersion="${v}"'), "version '${v}' is not a version number"),
    (call('calledElement="billing"', '<gobpm:calledElement version="0"/>'),
     "version '0' is not a version number"),
])
def test_what_the_engine_cannot_call_is_one_error_note_on_the_call_activity(node, fragment):
    """A mapped target that is no field name, a dynamic process id, no process, a CMMN
    case, a version that is not a number: one error note, naming the call activity (besides
    the schema's, for '${kind}', which is no QName); the process is refused with it."""
    model = bpm.load_bpmn(one_node(node))
    errors = [n for n in model.report if n.severity == "error"
              and not n.message.startswith("not valid BPMN 2.0 XML")]
    assert [(n.element, n.tag) for n in errors] == [("x", "callActivity")], model.report
    assert fragment in errors[0].message and "call activity 'x'" in errors[0].message
    with pytest.raises(bpm.ModelError, match="call activity 'x'"):
        model.process()


def test_a_call_to_a_global_task_of_the_file_is_refused():
    """calledElement naming a <globalTask> of the same file: only a process can be called."""
    model = bpm.load_bpmn(one_node(call('calledElement="gt"'), '<globalTask id="gt"/>'))
    assert [(n.severity, n.element) for n in model.report] == [("error", "x")]
    assert "calls <globalTask> 'gt': only a process can be called" in model.report[0].message


def test_a_call_activity_takes_boundaries_and_multi_instance():
    """An error boundary on a call activity is read, and so is a multi-instance loop on it
    (one child per inner instance)."""
    node = (call('calledElement="billing"') + '<boundaryEvent id="b" attachedToRef="x">'
            '<errorEventDefinition/></boundaryEvent><endEvent id="be"/>'
            '<sequenceFlow id="fb" sourceRef="b" targetRef="be"/>')
    model = bpm.load_bpmn(one_node(node))
    assert model.report == []
    assert model.process().definition().boundaries["x"][0].kind == "error_boundary"
    looped = call('calledElement="billing"').replace(
        "</callActivity>", '<multiInstanceLoopCharacteristics><loopCardinality>3'
                           '</loopCardinality></multiInstanceLoopCharacteristics></callActivity>')
    model = bpm.load_bpmn(one_node(looped))
    assert model.report == []
    many = model.process().definition().nodes["x"].many
    assert many is not None and many.cardinality.describe() == "3"


# -- reading the start events that create instances ----------------------------------------

def starting(definition, roots="", attrs=""):
    """A document whose process starts at ``s`` (with ``definition`` inside it)."""
    return (HEAD.format(attrs="") + roots + '<process id="p" isExecutable="true">'
            f'<startEvent id="s"{attrs}>{definition}</startEvent><userTask id="t"/>'
            '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="t"/>'
            '<sequenceFlow id="f2" sourceRef="t" targetRef="e"/></process></definitions>')


KEYED_MESSAGE = ('<message id="M" name="order_placed"><extensionElements>'
                 '<zeebe:subscription correlationKey="=order.id"/></extensionElements>'
                 '</message>')


@pytest.mark.parametrize("definition, roots, kind, field, value", [
    ('<messageEventDefinition messageRef="M"/>', '<message id="M" name="order_placed"/>',
     "message_start", "message", "order_placed"),
    ('<messageEventDefinition messageRef="M"/>', KEYED_MESSAGE,
     "message_start", "key", None),
    ('<timerEventDefinition><timeCycle>R/PT1H</timeCycle></timerEventDefinition>', "",
     "timer_start", "timer", ("cycle", "R/PT1H")),
    ('<timerEventDefinition><timeDate>="2026-01-01T04:00:00Z"</timeDate>'
     '</timerEventDefinition>', "", "timer_start", "timer",
     ("date", "2026-01-01T04:00:00Z")),
    ('<signalEventDefinition signalRef="S"/>', '<signal id="S" name="launch"/>',
     "signal_start", "signal", "launch"),
])
def test_a_triggered_start_of_the_process_creates_instances(definition, roots, kind, field,
                                                            value):
    """A message, timer or signal start event of the process itself is the builder's
    triggered start (no plain start left; no note): a message start needs no correlation
    key, so its message's key (even one that does not translate) is not read."""
    model = bpm.load_bpmn(starting(definition, roots))
    assert model.report == []
    d = model.process().definition()
    s = d.nodes["s"]
    got = getattr(s, field)
    got = (got.kind, got.text) if field == "timer" else got
    assert (s.kind, s.interrupting, got) == (kind, True, value)
    assert (d.start, d.instance_starts) == ("", ("s",))


def test_is_interrupting_false_on_a_start_of_the_process_is_ignored_with_a_warning():
    model = bpm.load_bpmn(starting('<signalEventDefinition signalRef="S"/>',
                                   '<signal id="S" name="launch"/>',
                                   ' isInterrupting="false"'))
    assert [(n.severity, n.element) for n in model.report] == [("warning", "s")]
    assert model.process().definition().nodes["s"].interrupting is True


@pytest.mark.parametrize("definition, fragment", [
    ('<conditionalEventDefinition><condition xsi:type="tFormalExpression"></condition>'
     '</conditionalEventDefinition>', "startEvent 's' has no condition"),
    ("<messageEventDefinition/>", "no messageRef"),
    ('<timerEventDefinition><timeDate/></timerEventDefinition>',
     "date '' is not an ISO 8601 date-time"),
])
def test_a_start_that_cannot_create_instances_is_one_error_note(definition, fragment):
    """A conditional start of the process with no condition, a message start naming no
    message, a timer start with no time: one error note on the start event; the process is
    refused."""
    model = bpm.load_bpmn(starting(definition))
    assert [(n.severity, n.element, n.tag) for n in model.report] == \
        [("error", "s", "startEvent")]
    assert fragment in model.report[0].message
    with pytest.raises(bpm.ModelError):
        model.process()


# -- writing -------------------------------------------------------------------------------

def built():
    """A process with a call activity of each kind and every start that creates instances."""
    p = bpm.Process("order", name="Order")
    p.start("s")
    p.message_start("by_message", message="order_placed")
    p.timer_start("by_timer", cycle="R3/PT1H")
    p.signal_start("by_signal", signal="launch")
    p.call_activity("bill", "Bill", process="billing", version=2, inputs=["amount"],
                    outputs=["invoice"])
    p.call_activity("ship", process="shipping")
    p.call_activity("note", process="notes", inputs=[], outputs=[])
    p.error_boundary("refused", attached_to="bill", error="NO")
    p.end("e")
    p.end("handled")
    p.flow("s", "bill", "ship", "note", "e")
    p.flow("by_message", "bill")
    p.flow("by_timer", "bill")
    p.flow("by_signal", "bill")
    p.flow("refused", "handled")
    return p


def parsed(text):
    return etree.fromstring(text.encode())


def test_a_built_process_with_calls_and_triggered_starts_reads_back_the_same():
    """Written and read back: no note, the same signature; the file is valid BPMN 2.0."""
    p = built()
    text = p.to_bpmn()
    assert schema().validate(parsed(text).getroottree()), schema().error_log
    model = bpm.load_bpmn(text)
    assert model.report == []
    q = model.process()
    assert q.definition().signature == p.definition().signature
    assert fields(q.definition().nodes["note"]) == ("call_activity", "notes", None, (), ())


def test_a_call_activity_is_written_with_zeebe_extensions_and_our_version():
    """calledElement and zeebe:calledElement (propagation flags), one zeebe:input/output per
    field; a pinned version, with no Camunda 7 namespace in the file, as gobpm:calledElement;
    triggered starts reference a <message> (no key) and a <signal>, a timer its cycle."""
    root = parsed(built().to_bpmn())

    def at(id):
        return root.find(f".//*[@id='{id}']")

    bill = at("bill")
    assert bill.tag == f"{{{NS['bpmn']}}}callActivity" and bill.get("calledElement") == \
        "billing"
    called = bill.find(f".//{{{ZEEBE_NS}}}calledElement")
    assert dict(called.attrib) == {"processId": "billing",
                                   "propagateAllChildVariables": "false",
                                   "propagateAllParentVariables": "false"}
    io = [(m.tag.rpartition("}")[2], m.get("source"), m.get("target"))
          for m in bill.find(f".//{{{ZEEBE_NS}}}ioMapping")]
    assert io == [("input", "=amount", "amount"), ("output", "=invoice", "invoice")]
    assert bill.find(".//{urn:gobpm-nb:bpmn:1}calledElement").get("version") == "2"
    assert not any(CAMUNDA_NS in str(a) for a in bill.attrib)
    ship = at("ship").find(f".//{{{ZEEBE_NS}}}calledElement")
    assert dict(ship.attrib) == {"processId": "shipping", "propagateAllChildVariables": "true"}
    assert at("ship").find(f".//{{{ZEEBE_NS}}}ioMapping") is None
    message = at(at("by_message").find("bpmn:messageEventDefinition", NS).get("messageRef"))
    assert message.get("name") == "order_placed" and len(message) == 0
    signal = at(at("by_signal").find("bpmn:signalEventDefinition", NS).get("signalRef"))
    assert signal.get("name") == "launch"
    assert at("by_timer").find(".//bpmn:timeCycle", NS).text == "R3/PT1H"


CAMUNDA_7 = (HEAD.format(attrs="") + '<process id="p" isExecutable="true">'
             '<startEvent id="s"/><callActivity id="x" calledElement="billing" '
             'camunda:calledElementBinding="version" camunda:calledElementVersion="4">'
             '<extensionElements><camunda:in variables="all"/>'
             '<camunda:out source="invoice" target="invoice"/></extensionElements>'
             '</callActivity><endEvent id="e"/>'
             '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
             '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')


def test_in_a_file_declaring_camunda_7_a_pinned_version_is_written_as_camunda_7_says():
    """A call activity added to an imported file that declares Camunda 7's namespace: its
    version as camunda:calledElementBinding/-Version, no gobpm element; valid; read back."""
    p = bpm.Process.from_bpmn(CAMUNDA_7)
    p.call_activity("again", process="billing", version=2, outputs=["invoice"])
    p.end("e2")
    p.flow("x", "again", "e2")
    text = p.to_bpmn()
    root = parsed(text)
    assert schema().validate(root.getroottree()), schema().error_log
    again = root.find(".//*[@id='again']")
    assert (again.get(f"{{{CAMUNDA_NS}}}calledElementBinding"),
            again.get(f"{{{CAMUNDA_NS}}}calledElementVersion")) == ("version", "2")
    assert again.find(".//{urn:gobpm-nb:bpmn:1}calledElement") is None
    model = bpm.load_bpmn(text)
    assert model.report == []
    d = model.process().definition()
    assert fields(d.nodes["again"]) == ("call_activity", "billing", 2, None, ("invoice",))
    assert fields(d.nodes["x"]) == ("call_activity", "billing", 4, None, ("invoice",))


@pytest.mark.parametrize("text", [
    CAMUNDA_7,
    one_node(call('calledElement="billing"', zeebe(flags='propagateAllChildVariables="false"',
                                                   inputs=["a"], outputs=["b"]))),
    starting('<messageEventDefinition messageRef="M"/>', KEYED_MESSAGE),
    starting('<timerEventDefinition><timeCycle>R/PT1H</timeCycle></timerEventDefinition>'),
])
def test_an_imported_file_with_calls_or_triggered_starts_writes_back_unchanged(text):
    assert c14n(bpm.load_bpmn(text).to_bpmn()) == c14n(text)


# -- running --------------------------------------------------------------------------------

TWO_PROCESSES = (HEAD.format(attrs="") + """
<process id="caller" isExecutable="true">
  <startEvent id="s"/>
  <callActivity id="check" name="Check">
    <extensionElements>
      <zeebe:calledElement processId="callee" propagateAllChildVariables="false"/>
      <zeebe:ioMapping>
        <zeebe:input source="=amount" target="amount"/>
        <zeebe:output source="=score" target="score"/>
      </zeebe:ioMapping>
    </extensionElements>
  </callActivity>
  <endEvent id="e"/>
  <sequenceFlow id="f1" sourceRef="s" targetRef="check"/>
  <sequenceFlow id="f2" sourceRef="check" targetRef="e"/>
</process>
<process id="callee" isExecutable="true">
  <startEvent id="cs"/>
  <userTask id="review"/>
  <endEvent id="ce"/>
  <sequenceFlow id="c1" sourceRef="cs" targetRef="review"/>
  <sequenceFlow id="c2" sourceRef="review" targetRef="ce"/>
</process>
</definitions>""")


def test_a_caller_and_its_callee_read_from_one_file_run_together():
    """The callee deployed, the caller started: the child gets only the inputs; when its
    task completes, only the outputs come back to the caller."""
    model = bpm.load_bpmn(TWO_PROCESSES)
    assert model.report == []
    eng = bpm.Engine()
    eng.deploy(model.process("callee"))
    caller = eng.start(model.process("caller"), {"amount": 21, "other": "x"})
    eng.run()
    (child,) = [i for i in eng.instances() if i.id != caller.id]
    assert child.data == {"amount": 21} and child.parent == caller.id
    (task,) = eng.tasks()
    assert task.node == "review"
    eng.complete_task(task.id, {"score": 42, "noise": 1})
    eng.run()
    assert child.state == "completed" and caller.state == "completed"
    assert caller.data == {"amount": 21, "other": "x", "score": 42}


def test_a_published_message_starts_an_instance_of_a_file_with_a_message_start():
    """Deployed, the file's message start waits for its message; publishing it starts an
    instance with the payload as its data."""
    model = bpm.load_bpmn(starting('<messageEventDefinition messageRef="M"/>',
                                   '<message id="M" name="order_placed"/>'))
    eng = bpm.Engine()
    eng.deploy(model.process())
    iid = eng.publish_message("order_placed", payload={"sku": 7})
    eng.run()
    assert iid is not None and eng.instance(iid).data == {"sku": 7}
    assert [t.node for t in eng.tasks()] == ["t"]


def test_the_unsupported_sample_file_calls_another_process():
    """tests/data/bpmn/unsupported.bpmn's call activity is a call now (Camunda 8, no child
    variables propagated back)."""
    model = bpm.load_bpmn(BPMN_DIR / "unsupported.bpmn")
    (x,) = [e for e in model.processes["unsupported"].elements if e.id == "call"]
    assert fields(x) == ("call_activity", "other", None, None, ())
