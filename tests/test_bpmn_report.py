"""The import report: every problem at once, each naming its element, tag and source line;
a process runs only when none of its error notes touch it."""

import pytest
from bpmn_shapes import BPMN_DIR

import gobpm_nb as bpm
from gobpm_nb.bpmn import Note

UNSUPPORTED = BPMN_DIR / "unsupported.bpmn"
REFUSALS = BPMN_DIR / "refusals.bpmn"


def line_of(path, text):
    """The first line of ``path`` that contains ``text`` (1-based)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(text)


@pytest.mark.parametrize("element, tag, reason", [
    ("tx", "transaction", "subprocess 'tx' has 0 plain start events"),
    ("oops", "intermediateCatchEvent", "an error intermediate catch event is not valid BPMN"),
])
def test_each_unsupported_element_is_an_error_note_at_its_line(element, tag, reason):
    """An element the engine cannot run yet is one error note: its id, tag, line, why."""
    notes = [n for n in bpm.load_bpmn(UNSUPPORTED).report if n.element == element]
    assert len(notes) == 1, notes
    assert notes[0].severity == "error" and notes[0].tag == tag and reason in notes[0].message
    assert notes[0].line == line_of(UNSUPPORTED, f'id="{element}"')


def test_the_subprocess_inclusive_gateway_escalation_and_link_events_import_silently():
    """What the file also holds and the engine now runs (a subprocess and what is in it, a
    call activity, an inclusive gateway, escalation throw and end events, a link, a
    multi-instance task) gets no note."""
    model = bpm.load_bpmn(UNSUPPORTED)
    named = {n.element for n in model.report}
    assert named.isdisjoint({"sub", "sub_start", "sub_end", "call", "inc", "escalate",
                             "link_out", "link_in", "esc_end", "each"})
    (call,) = [e for e in model.processes["unsupported"].elements if e.id == "call"]
    # zeebe:calledElement processId="other" propagateAllChildVariables="false"
    assert (call.kind, call.process, call.version, call.inputs, call.outputs) == \
        ("call_activity", "other", None, None, ())
    kinds = {e.id: (e.kind, e.within) for e in model.processes["unsupported"].elements}
    assert kinds["sub_start"] == ("start", "sub") and kinds["inc"][0] == "inclusive_gateway"
    assert (kinds["escalate"][0], kinds["link_out"][0], kinds["link_in"][0]) == \
        ("escalation_throw", "link_throw", "link_catch")
    (each,) = [e for e in model.processes["unsupported"].elements if e.id == "each"]
    assert each.kind == "script_task"  # a plain task passes through, once per item
    assert (each.many.collection.describe(), each.many.element) == ("items", "item")


def test_data_are_warnings_and_lanes_annotations_and_inner_elements_are_silent():
    """Data objects and stores are kept with a warning; lanes, annotations, associations
    and what lies inside a subprocess get no note of their own."""
    report = bpm.load_bpmn(UNSUPPORTED).report
    warnings = [(n.element, n.tag) for n in report if n.severity == "warning"]
    assert warnings == [("db", "dataStoreReference"), ("doc", "dataObjectReference"),
                        ("invoice", "dataObject")]
    named = {n.element for n in report}
    assert named.isdisjoint({"lanes", "lane_a", "note", "note_link", "comp_link", "sub_start",
                             "sub_end", "u_in", "book", "pool", "collab"})
    assert len(report) == 5


def test_a_compensation_boundary_and_its_handler_import_silently():
    """The compensation boundary, its association and the handler marked isForCompensation
    are read as the engine runs them: no note."""
    model = bpm.load_bpmn(UNSUPPORTED)
    assert {"undo_b", "undo"}.isdisjoint({n.element for n in model.report})
    elements = {e.id: e for e in model.processes["unsupported"].elements}
    assert (elements["undo_b"].kind, elements["undo_b"].handler) == \
        ("compensation_boundary", "undo")
    assert elements["undo"].for_compensation is True


def test_a_process_with_unsupported_elements_is_refused_listing_every_one():
    """process() raises one ModelError whose problems are the error notes (the empty
    transaction, the error intermediate catch), each with its line; validate() on the imported
    process refuses it as well."""
    model = bpm.load_bpmn(UNSUPPORTED)
    with pytest.raises(bpm.ModelError) as info:
        model.process()
    assert len(info.value.problems) == 2
    line = line_of(UNSUPPORTED, 'id="tx"')
    assert info.value.problems[0].startswith(f"process 'unsupported': line {line}: "
                                             "subprocess 'tx'")
    with pytest.raises(bpm.ModelError):
        model.processes["unsupported"].validate()


@pytest.mark.parametrize("element, tag, marker, fragment", [
    ("Message_dotted", "message", 'correlationKey="=orders[item.id = 1]"',
     "correlation key '=orders[item.id = 1]' (FEEL) does not translate: it reads [item"),
    ("computed_property", "correlationProperty", "<bpmn:messagePath>",
     "is not a plain field name"),
    ("gw", "exclusiveGateway", 'id="gw"', "default 'r_missing' names no sequence flow"),
    ("wait_ghost", "receiveTask", 'id="wait_ghost"',
     "messageRef 'Message_ghost' names no <message>"),
    ("orphan", "boundaryEvent", 'id="orphan"', "duration 'PT1X' is not an ISO 8601 duration"),
    ("orphan", "boundaryEvent", 'id="orphan"', "attached to unknown element 'nowhere'"),
    ("lonely", "task", 'id="lonely"', "not valid BPMN 2.0 XML"),
    ("r_feel", "sequenceFlow", "=sum(items)", "it calls 'sum'"),
    ("r_juel", "sequenceFlow", "${order.total", "it calls 'total' on 'order'"),
    ("r_js", "sequenceFlow", 'language="javascript"', "is written in 'javascript'"),
    ("r7", "sequenceFlow", 'id="r7"', "flow 'r7' is dangling: no element 'ghost'"),
])
def test_refusals_name_the_element_the_line_and_the_reason(element, tag, marker, fragment):
    """Untranslatable expressions, unresolved references, bad timers, schema errors and
    dangling flows: each an error note, at its line."""
    notes = [n for n in bpm.load_bpmn(REFUSALS).report
             if n.element == element and fragment in n.message]
    assert len(notes) == 1, bpm.load_bpmn(REFUSALS).report
    assert (notes[0].severity, notes[0].tag, notes[0].line) == \
        ("error", tag, line_of(REFUSALS, marker))


def test_an_unreachable_node_is_a_warning_note_at_its_line():
    """An element no start reaches is a warning note naming it, at its line (it never
    runs; the rest of the process may)."""
    notes = [n for n in bpm.load_bpmn(REFUSALS).report
             if n.element == "lonely" and "unreachable" in n.message]
    assert [(n.severity, n.tag, n.line, n.message) for n in notes] == [
        ("warning", "task", line_of(REFUSALS, 'id="lonely"'),
         "task 'lonely' is unreachable from the start event")]


def test_the_report_is_in_line_order_and_collects_everything_at_once():
    """One load reports all thirteen problems of the file, sorted by line."""
    report = bpm.load_bpmn(REFUSALS).report
    assert len(report) == 13
    assert [n.line for n in report] == sorted(n.line for n in report)
    assert all(isinstance(n, Note) for n in report)


def test_a_note_reads_as_line_tag_element_and_message():
    """str(note) starts with its line and names the element once."""
    note = Note("error", "gw", "exclusiveGateway", 18, "default 'x' names nothing")
    assert str(note) == "line 18: exclusiveGateway 'gw': default 'x' names nothing"
    named = Note("error", "gw", "exclusiveGateway", 18, "exclusiveGateway 'gw' is odd")
    assert str(named) == "line 18: exclusiveGateway 'gw' is odd"


DOC = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
             targetNamespace="http://example.com">
{body}
</definitions>
"""


def process(pid, executable, *, broken=False):
    """A small process; ``broken`` gives it an error intermediate catch (not valid BPMN)."""
    middle = ('<intermediateCatchEvent id="{p}_g"><errorEventDefinition/>'
              '</intermediateCatchEvent>') if broken else '<task id="{p}_g"/>'
    return (f'<process id="{pid}" isExecutable="{str(executable).lower()}">'
            f'<startEvent id="{pid}_s"/>{middle.format(p=pid)}<endEvent id="{pid}_e"/>'
            f'<sequenceFlow id="{pid}_f1" sourceRef="{pid}_s" targetRef="{pid}_g"/>'
            f'<sequenceFlow id="{pid}_f2" sourceRef="{pid}_g" targetRef="{pid}_e"/>'
            '</process>')


def test_a_sound_process_runs_beside_a_broken_one():
    """Errors of one process do not touch another: the sound one is returned and runs."""
    model = bpm.load_bpmn(DOC.format(body=process("good", True) +
                                     process("bad", False, broken=True)))
    assert [n.element for n in model.errors("bad")] == ["bad_g"]
    assert model.errors("good") == []
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert inst.state == "completed"


def test_choosing_the_process_to_run():
    """process() is the one executable process, or the only process; with two executable
    ones, or none among several, it asks for an id; an unknown id names the ones there."""
    two = bpm.load_bpmn(DOC.format(body=process("a", True) + process("b", True)))
    with pytest.raises(bpm.ModelError, match=r"2 executable processes \['a', 'b'\]"):
        two.process()
    assert two.process("b").id == "b"
    none = bpm.load_bpmn(DOC.format(body=process("a", False) + process("b", False)))
    with pytest.raises(bpm.ModelError, match="no executable process; name one of"):
        none.process()
    with pytest.raises(bpm.ModelError, match=r"no process 'c'; it has \['a', 'b'\]"):
        none.process("c")
    lone = bpm.load_bpmn(DOC.format(body=process("a", False)))
    assert lone.process().id == "a"
    assert [n.severity for n in lone.report] == ["warning"]
    assert "not marked executable" in lone.report[0].message


def test_a_document_that_is_not_bpmn_is_an_error_note():
    """A well-formed file whose root is not BPMN <definitions> is reported, not run."""
    model = bpm.load_bpmn('<?xml version="1.0"?>\n<html><body/></html>')
    assert [(n.severity, n.tag, n.line) for n in model.report] == [("error", "html", 2)]
    assert model.processes == {}
    with pytest.raises(bpm.ModelError):
        model.process()


def test_a_schema_error_alone_keeps_its_process_from_running():
    """A process whose only fault is a schema error is refused by process() and by its own
    validate(), naming the attribute."""
    body = process("p", True).replace('<task id="p_g"/>', '<task id="p_g" startQuantity="x"/>')
    model = bpm.load_bpmn(DOC.format(body=body))
    assert [(n.severity, n.element) for n in model.report] == [("error", "p_g")]
    assert "startQuantity" in model.report[0].message
    with pytest.raises(bpm.ModelError, match="startQuantity"):
        model.process()
    with pytest.raises(bpm.ModelError, match="startQuantity"):
        model.processes["p"].validate()


ONE = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
       'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" '
       'targetNamespace="http://example.com">{roots}\n<process id="p" isExecutable="true">'
       '\n{body}\n</process></definitions>')


def test_a_note_on_an_unknown_element_names_the_element_not_its_process():
    """<fooTask id="x"> in a process: its notes name 'x' (tag fooTask) and its name; they
    used to name the process."""
    body = ('<startEvent id="s"/>\n<fooTask id="x" name="Foo"/>\n<endEvent id="e"/>\n'
            '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>\n'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/>')
    report = bpm.load_bpmn(ONE.format(roots="", body=body)).report
    assert report and all((n.element, n.tag, n.name, n.line, n.process) ==
                          ("x", "fooTask", "Foo", 4, "p") for n in report), report


def test_notes_name_elements_by_their_tag_in_the_file_not_the_engine_kind():
    """An unreachable <task> is "task 'lonely' is unreachable", not "script_task 'lonely'";
    a condition in the safe syntax that does not compile names its sequenceFlow once."""
    body = ('<startEvent id="s"/>\n<task id="lonely"/>\n<endEvent id="e"/>\n'
            '<sequenceFlow id="f1" sourceRef="s" targetRef="e"><conditionExpression '
            'language="urn:gobpm-nb:safe-expression">a +</conditionExpression>'
            '</sequenceFlow>')
    messages = [str(n) for n in bpm.load_bpmn(ONE.format(roots="", body=body)).report]
    assert "line 4: task 'lonely' is unreachable from the start event" in messages
    assert not any("script_task" in m for m in messages), messages
    assert any(m.startswith("line 6: sequenceFlow 'f1': condition: expression 'a +' does not "
                            "parse") for m in messages), messages


def test_no_note_is_given_twice():
    """A message whose correlation key does not translate, named by two receive tasks, is
    one note (it was one per task); an id used three times is one 'duplicate id' note."""
    roots = ('<message id="M" name="paid"><extensionElements><zeebe:subscription '
             'correlationKey="=order.id[0]"/></extensionElements></message>')
    body = ('<startEvent id="s"/>\n<receiveTask id="r1" messageRef="M"/>\n'
            '<receiveTask id="r2" messageRef="M"/>\n<endEvent id="e"/>\n'
            '<task id="d"/>\n<task id="d"/>\n<task id="d"/>\n'
            '<sequenceFlow id="f1" sourceRef="s" targetRef="r1"/>\n'
            '<sequenceFlow id="f2" sourceRef="r1" targetRef="r2"/>\n'
            '<sequenceFlow id="f3" sourceRef="r2" targetRef="e"/>')
    report = bpm.load_bpmn(ONE.format(roots=roots, body=body)).report
    assert len(report) == len(set(report)), report
    assert sum("correlation key '=order.id[0]'" in n.message for n in report) == 1
    assert sum(n.message == "duplicate id 'd'" for n in report) == 1
    assert all(n.process == "p" for n in report)


def test_a_note_is_still_a_five_field_note_to_old_code():
    """name and process were added at the end, with defaults: old constructions still work."""
    note = Note("error", "x", "task", 3, "why")
    assert note == ("error", "x", "task", 3, "why", None, None)
    assert str(note) == "line 3: task 'x': why"
