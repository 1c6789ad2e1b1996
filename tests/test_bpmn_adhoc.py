"""Ad-hoc subprocesses in BPMN files: ``<adHocSubProcess>`` with ``ordering``,
``cancelRemainingInstances``, ``completionCondition`` and Camunda 8's ``zeebe:adHoc
activeElementsCollection``, read, run, and written back as valid BPMN 2.0 with its diagram;
in design-review mode one whose collection cannot be read is run by a person's choices."""

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
  <adHocSubProcess id="work"{attrs}>
    {ext}
    <userTask id="check"/>
    <task id="draft"/>
    <task id="send"/>
    <sequenceFlow id="f_in" sourceRef="draft" targetRef="send"/>
    {completion}
  </adHocSubProcess>
  <endEvent id="e"/>
  <sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
  <sequenceFlow id="f2" sourceRef="work" targetRef="e"/>
</process>
</definitions>
"""


def doc(attrs="", collection=None, completion=None):
    ext = "" if collection is None else \
        f'<extensionElements><zeebe:adHoc activeElementsCollection="{collection}"/>' \
        "</extensionElements>"
    cond = "" if completion is None else \
        f'<completionCondition xsi:type="tFormalExpression">{completion}</completionCondition>'
    return DOC.format(attrs=attrs, ext=ext, completion=cond)


def errors(model):
    return [n.message for n in model.report if n.severity == "error"]


def valid(xml):
    text = xml.decode() if isinstance(xml, bytes) else xml
    tree = etree.fromstring(text.encode()).getroottree()
    assert schema().validate(tree), schema().error_log
    return tree


def test_a_camunda_8_adhoc_subprocess_is_read_and_runs_its_collection():
    """zeebe:adHoc's FEEL collection activates draft (then send, by its flow) and check;
    the FEEL completion condition, once it holds, cancels check."""
    model = bpm.load_bpmn(doc(' cancelRemainingInstances="true"', "=todo", "=sent"))
    assert errors(model) == []
    p = model.process()
    (work,) = [e for e in p.elements if e.id == "work"]
    assert (work.collection.source, work.completion.source, work.cancel_remaining,
            work.sequential) == ("todo", "sent", True, False)
    p.set_function("send", lambda d: {"sent": True})
    eng = bpm.Engine()
    inst = eng.start(p, data={"todo": ["check", "draft"]})
    eng.run()
    assert inst.state == "completed" and inst.data["sent"] is True
    assert [t.state for t in inst.tracks if t.node == "check"] == ["cancelled"]


def test_without_a_collection_a_person_activates_the_elements_of_a_file():
    """As written, an ad-hoc subprocess with no collection waits for a person."""
    model = bpm.load_bpmn(doc(' ordering="Sequential"'))
    assert errors(model) == []
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    (view,) = eng.adhocs()
    assert view.elements == ("check", "draft")  # send has an incoming flow
    eng.activate(inst.id, "work", "draft")
    eng.run()
    assert inst.state == "completed"
    assert [f.node for f in eng.facts if f.kind == "node_left"][-3:] == ["send", "work", "e"]


def test_a_built_adhoc_subprocess_is_written_as_valid_bpmn_and_read_back_the_same():
    """ordering, cancelRemainingInstances, the collection (FEEL) and the completion condition
    (our own language where FEEL has no spelling) are written and read back; the diagram has
    the subprocess expanded with its inner shapes; the file validates."""
    p = bpm.Process("trip")
    p.start("s")
    with p.adhoc_subprocess("work", collection="todo", completion="len(done) >= 2",
                            cancel_remaining=False, ordering="Sequential") as w:
        w.user_task("a")
        w.user_task("b")
    p.end("e")
    p.flow("s", "work", "e")
    xml = p.to_bpmn()
    tree = valid(xml)
    ns = {"b": "http://www.omg.org/spec/BPMN/20100524/MODEL",
          "di": "http://www.omg.org/spec/BPMN/20100524/DI",
          "z": "http://camunda.org/schema/zeebe/1.0"}
    (node,) = tree.findall(".//b:adHocSubProcess", ns)
    assert (node.get("ordering"), node.get("cancelRemainingInstances")) == \
        ("Sequential", "false")
    assert node.find(".//z:adHoc", ns).get("activeElementsCollection") == "=todo"
    assert etree.QName(node[-1]).localname == "completionCondition"
    shape = tree.find(".//di:BPMNShape[@bpmnElement='work']", ns)
    assert shape.get("isExpanded") == "true"
    assert {s.get("bpmnElement") for s in tree.findall(".//di:BPMNShape", ns)} >= {"a", "b"}
    back = bpm.Process.from_bpmn(xml)
    (work,) = [e for e in back.elements if e.id == "work"]
    (orig,) = [e for e in p.elements if e.id == "work"]
    assert (work.collection.source, work.completion.source, work.cancel_remaining,
            work.sequential) == (orig.collection.source, orig.completion.source, False, True)
    assert back.to_bpmn() == bpm.Process.from_bpmn(back.to_bpmn()).to_bpmn()


def test_a_read_adhoc_subprocess_is_written_as_it_was_read():
    text = doc(' ordering="Parallel"', "=todo", "=sent")
    model = bpm.load_bpmn(text)
    out = model.to_bpmn()
    valid(out)
    again = bpm.load_bpmn(out)
    assert errors(again) == []
    (work,) = [e for e in again.process().elements if e.id == "work"]
    assert (work.collection.source, work.completion.source) == ("todo", "sent")


def test_a_collection_that_does_not_translate_is_an_error_as_written():
    model = bpm.load_bpmn(doc("", "=some function(x, y)"))
    assert any("active elements collection" in m for m in errors(model))


def test_as_drawn_an_unreadable_adhoc_subprocess_is_run_by_a_persons_choices():
    """Design-review mode: the collection and condition that do not translate are left out,
    with as-drawn notes; a person activates the elements."""
    model = bpm.load_bpmn(doc("", "=some function(x, y)", "=other thing(z)"),
                          run_as_drawn=True)
    assert errors(model) == []
    notes = [n.message for n in model.report if n.message.startswith("as drawn:")]
    assert any("a person activates its elements" in m for m in notes)
    assert any("completion condition" in m for m in notes)
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.activate(inst.id, "work", "check")
    eng.run()
    (task,) = eng.tasks()
    eng.complete_task(task.id)
    eng.run()
    assert inst.state == "completed"


def test_a_multi_instance_adhoc_subprocess_runs_one_per_item_from_a_file():
    """multiInstanceLoopCharacteristics on the ad-hoc subprocess: each inner instance waits
    for its own activation (``track=``)."""
    loop = '<multiInstanceLoopCharacteristics><extensionElements>' \
           '<zeebe:loopCharacteristics inputCollection="=orders" inputElement="order"/>' \
           '</extensionElements></multiInstanceLoopCharacteristics>'
    text = doc().replace("<userTask id=\"check\"/>", loop + "<userTask id=\"check\"/>")
    model = bpm.load_bpmn(text)
    assert errors(model) == []
    eng = bpm.Engine()
    inst = eng.start(model.process(), data={"orders": [1, 2]})
    eng.run()
    views = eng.adhocs()
    assert len(views) == 2
    for v in views:
        eng.activate(inst.id, "work", "draft", track=v.track)
        eng.run()
    assert inst.state == "completed"


def test_an_empty_adhoc_subprocess_is_refused_as_written_and_passes_through_as_drawn():
    """Nothing to activate: validation refuses it naming it; in design-review mode (drawn
    collapsed) it passes through as a task that does nothing, with an as-drawn note."""
    text = doc().replace('<userTask id="check"/>', "").replace('<task id="draft"/>', "")
    text = text.replace('<task id="send"/>', "").replace(
        '<sequenceFlow id="f_in" sourceRef="draft" targetRef="send"/>', "")
    with pytest.raises(bpm.ModelError, match="'work' has no element to activate"):
        bpm.load_bpmn(text).process()
    model = bpm.load_bpmn(text, run_as_drawn=True)
    assert any(n.element == "work" and n.message.startswith("as drawn:") for n in model.report)
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert inst.state == "completed"


def test_an_adhoc_subprocess_drawn_with_a_start_event_runs_as_a_plain_one_as_drawn():
    """A start event inside an ad-hoc subprocess is refused as written (its elements are
    activated, not started); drawn so, the diagram reads as a plain subprocess run from its
    start event, with an as-drawn note."""
    text = doc().replace('<userTask id="check"/>', '<startEvent id="inner"/><userTask id="check"/>'
                         '<endEvent id="inner_end"/>'
                         '<sequenceFlow id="f_s" sourceRef="inner" targetRef="check"/>'
                         '<sequenceFlow id="f_c" sourceRef="check" targetRef="draft"/>'
                         '<sequenceFlow id="f_e" sourceRef="send" targetRef="inner_end"/>')
    with pytest.raises(bpm.ModelError, match="an ad-hoc subprocess has no start event"):
        bpm.load_bpmn(text).process()
    model = bpm.load_bpmn(text, run_as_drawn=True)
    assert any(n.element == "work" and "runs as a plain subprocess" in n.message
               for n in model.report)
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed"
    assert [f.node for f in eng.facts if f.kind == "node_left" and f.node in
            ("check", "draft", "send")] == ["check", "draft", "send"]
