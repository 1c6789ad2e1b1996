"""Standard loops and multi-instance call activities in BPMN files: read from
``standardLoopCharacteristics`` (``testBefore``, ``loopMaximum``, ``loopCondition``) and
``multiInstanceLoopCharacteristics`` on a ``callActivity``, run, and written back as valid
BPMN 2.0 with their diagram, reading back the same."""

import pytest
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn.schema import schema

DOC = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
             xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
             id="d" targetNamespace="http://example.com">
<process id="p" isExecutable="true">
  <startEvent id="s"/>
  {node}
  <endEvent id="e"/>
  <sequenceFlow id="f1" sourceRef="s" targetRef="x"/>
  <sequenceFlow id="f2" sourceRef="x" targetRef="e"/>
</process>
</definitions>
"""

BPMN_NS = "{http://www.omg.org/spec/BPMN/20100524/MODEL}"


def standard(attrs="", condition=None):
    inner = ("" if condition is None else
             f'<loopCondition xsi:type="tFormalExpression">{condition}</loopCondition>')
    return f"<standardLoopCharacteristics{attrs}>{inner}</standardLoopCharacteristics>"


def load(node):
    return bpm.load_bpmn(DOC.format(node=node))


def errors(model):
    return [(n.element, n.message) for n in model.report if n.severity == "error"]


def valid(xml):
    tree = etree.fromstring(xml.encode()).getroottree()
    assert schema().validate(tree), schema().error_log
    return tree


@pytest.mark.parametrize("attrs, condition, expected", [
    (' testBefore="true" loopMaximum="5"', "=attempts &lt; 3", ("attempts < 3", True, 5)),
    ("", "${attempts &lt; 3 &amp;&amp; !done}", ("attempts < 3 and not done", False, None)),
    (' loopMaximum="2"', None, (None, False, 2)),
])
def test_a_standard_loop_is_read_from_its_attributes_and_condition(attrs, condition,
                                                                     expected):
    """FEEL and JUEL conditions are translated, testBefore and loopMaximum read; a loop with
    a maximum needs no condition."""
    model = load('<userTask id="x">' + standard(attrs, condition) + "</userTask>")
    assert model.report == []
    loop = model.process().definition().nodes["x"].loop
    got = (loop.condition.describe() if loop.condition else None, loop.test_before,
           loop.maximum)
    assert got == expected


@pytest.mark.parametrize("node, fragment", [
    ('<task id="x">' + standard() + "</task>",
     "standard loop 'x' has neither a loopCondition nor a loopMaximum: it would run for ever"),
    ('<task id="x">' + standard(' loopMaximum="many"', "=true") + "</task>",
     "standard loop 'x': loopMaximum 'many' is not a count"),
    ('<task id="x">' + standard("", "=sum(xs) &gt; 2") + "</task>",
     "standard loop 'x': loop condition"),
    ('<businessRuleTask id="x">' + standard("", "=true") + "</businessRuleTask>",
     "standardLoopCharacteristics on 'x' is not supported yet: the activity would run once"),
])
def test_a_standard_loop_that_cannot_run_is_an_error_note_on_its_activity(node, fragment):
    """A loop with neither a condition nor a maximum (a modeler's bare loop marker), a
    maximum that is not a count, a condition that does not translate, a loop on an element
    that cannot repeat: an error note on the activity, and the process is refused."""
    model = load(node)
    assert [e for e, m in errors(model) if fragment in m] == ["x"], model.report
    with pytest.raises(bpm.ModelError):
        model.process()


def test_a_loop_read_from_a_file_runs():
    """A task looping while ``attempts < 3`` (FEEL), its function attached in Python, runs
    three times."""
    model = load('<scriptTask id="x">' + standard("", "=attempts &lt; 3") + "</scriptTask>")
    p = model.process()
    p.set_function("x", lambda d: {"attempts": d["attempts"] + 1})
    eng = bpm.Engine()
    inst = eng.start(p, {"attempts": 0})
    eng.run()
    assert inst.state == "completed" and inst.data == {"attempts": 3}


def built():
    """A loop on a user task (tested before, capped), on a subprocess (a callable
    condition, written with its language), and a multi-instance call activity."""
    p = bpm.Process("loops")
    p.start("s")
    p.user_task("ask")
    p.loop("ask", condition="not approved", test_before=True, maximum=3)
    with p.subprocess("attempt") as sp:
        sp.flow(sp.start("a"), sp.user_task("check"), sp.end("z"))
    p.loop("attempt", condition="tries < 2")
    p.call_activity("bill", process="billing", outputs=["invoice"])
    p.multi_instance("bill", sequential=True, collection="items", element="item",
                     output_collection="invoices", output_element="invoice")
    p.end("e")
    p.flow("s", "ask", "attempt", "bill", "e")
    return p


def test_a_process_with_loops_round_trips_through_bpmn_with_its_diagram():
    """Written, the file is valid BPMN 2.0 with a shape for every activity; read back, the
    loops and the multi-instance call are the same (the same signature)."""
    p = built()
    xml = p.to_bpmn()
    tree = valid(xml)
    ask = tree.find(f".//{BPMN_NS}userTask[@id='ask']")
    (loop,) = ask.findall(f"{BPMN_NS}standardLoopCharacteristics")
    assert dict(loop.attrib) == {"testBefore": "true", "loopMaximum": "3"}
    assert loop.find(f"{BPMN_NS}loopCondition").text == "=not(approved)"  # FEEL
    bill = tree.find(f".//{BPMN_NS}callActivity[@id='bill']")
    assert bill[-1].tag == f"{BPMN_NS}multiInstanceLoopCharacteristics"
    shapes = {s.get("bpmnElement") for s in tree.iter()
              if s.tag.endswith("BPMNShape")}
    assert {"ask", "attempt", "bill"} <= shapes
    back = bpm.Process.from_bpmn(xml)
    assert back.definition().signature == p.definition().signature
    assert back.to_bpmn() == xml


def test_a_callable_loop_condition_is_written_with_its_language_and_refused_back():
    """A Python condition cannot travel in a file: it is written as its description with
    gobpm's callable language, and reading it back is an error note asking for Python."""
    p = built()
    p.loop("attempt", condition=lambda d: d["tries"] < 2)
    model = bpm.load_bpmn(p.to_bpmn())
    assert [e for e, m in errors(model) if "Python callable" in m] == ["attempt"]


def test_an_imported_loop_is_written_back_as_read_and_one_added_is_written():
    """A file's standard loop comes back byte for byte; a loop given in Python to another
    element read from the file is written in its place, and the file stays valid."""
    text = DOC.format(node='<userTask id="x">' + standard(' testBefore="true"', "=n &lt; 2")
                      + '</userTask><userTask id="y"/>'
                      '<sequenceFlow id="f3" sourceRef="s" targetRef="y"/>'
                      '<sequenceFlow id="f4" sourceRef="y" targetRef="e"/>')
    model = bpm.load_bpmn(text)
    assert model.to_bpmn().replace("'", '"').split("<process")[1] == \
        text.split("<process")[1]
    model.processes["p"].loop("y", condition="m < 3", maximum=4)
    out = model.to_bpmn()
    tree = valid(out)
    (written,) = tree.find(f".//{BPMN_NS}userTask[@id='y']")
    assert written.tag == f"{BPMN_NS}standardLoopCharacteristics"
    assert written.get("loopMaximum") == "4"
    again = bpm.load_bpmn(out).process().definition().nodes
    assert again["x"].loop.test_before and again["y"].loop.maximum == 4
