"""BPMN 2.0's item-aware multi-instance data (loopDataInputRef, inputDataItem,
loopDataOutputRef, outputDataItem) read onto the engine's collection, element and output,
as SpiffWorkflow and Flowable write them; Flowable's own loop attributes."""

from pathlib import Path

import gobpm_nb as bpm

FLOWABLE = Path(__file__).parent / "data" / "flowable"

DOC = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:flowable="http://flowable.org/bpmn" id="d" targetNamespace="t">
  <process id="p" isExecutable="true">
    {objects}
    <startEvent id="s"/>
    <scriptTask id="x">
      <multiInstanceLoopCharacteristics isSequential="true"{attrs}>{loop}
      </multiInstanceLoopCharacteristics>
    </scriptTask>
    <endEvent id="e"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="x"/>
    <sequenceFlow id="f2" sourceRef="x" targetRef="e"/>
  </process>
</definitions>"""

ITEM_AWARE = """
        <loopDataInputRef>items</loopDataInputRef>
        <loopDataOutputRef>results</loopDataOutputRef>
        <inputDataItem id="item" name="an item"/>
        <outputDataItem id="result" name="a result"/>"""


def load(loop, objects="", attrs=""):
    return bpm.load_bpmn(DOC.format(loop=loop, objects=objects, attrs=attrs))


def run_over(model, data, answer):
    """Start ``p`` on ``data``, the script task answering ``answer(item)`` for each item it
    sees (the items seen, in order, are returned)."""
    seen = []

    def script(d):
        seen.append(d.get("item"))
        return answer(d.get("item"))

    p = model.process("p")
    p.set_function("x", script)
    eng = bpm.Engine()
    inst = eng.start(p, data)
    eng.run()
    return inst, seen


def test_item_aware_data_runs_over_the_collection_and_collects_each_output():
    model = load(ITEM_AWARE)
    assert [n for n in model.report if n.severity == "error"] == []
    many = model.process("p").definition().nodes["x"].many
    assert (many.collection.describe(), many.element, many.output_collection,
            many.output_element.describe()) == ("items", "item", "results", "result")
    inst, seen = run_over(model, {"items": [1, 2, 3]}, lambda i: {"result": i * 10})
    assert seen == [1, 2, 3]
    assert inst.state == "completed" and inst.data["results"] == [10, 20, 30]


def test_an_output_item_an_inner_instance_does_not_set_is_an_incident():
    """As SpiffWorkflow ("Expected an output item"): nothing is invented."""
    inst, _ = run_over(load(ITEM_AWARE), {"items": [1]}, lambda i: {})
    assert inst.state == "failed"


def test_a_reference_to_a_data_object_reads_the_data_objects_field():
    objects = ('<dataObject id="orders"/>'
               '<dataObjectReference id="orders_ref" dataObjectRef="orders"/>')
    loop = ITEM_AWARE.replace(">items<", ">orders_ref<")
    model = load(loop, objects)
    assert model.process("p").definition().nodes["x"].many.collection.describe() == "orders"


def test_with_a_cardinality_the_input_item_is_a_warning_and_an_output_alone_collects_nothing():
    loop = ('<loopCardinality>2</loopCardinality><loopDataOutputRef>results'
            '</loopDataOutputRef><inputDataItem id="item"/>')
    model = load(loop)
    warnings = [n.message for n in model.report if n.severity == "warning"]
    assert any("<inputDataItem> is not set" in w for w in warnings)
    assert any("<loopDataOutputRef> alone collects nothing" in w for w in warnings)
    many = model.process("p").definition().nodes["x"].many
    assert many.element is None and many.output_collection is None


def test_flowable_collection_and_element_variable_attributes():
    model = load("", attrs=' flowable:collection="items" flowable:elementVariable="item"')
    inst, seen = run_over(model, {"items": ["a", "b"]}, lambda i: {})
    assert seen == ["a", "b"] and inst.state == "completed"


def test_flowable_sequential_user_tasks_over_loop_data_input_run_as_written():
    """Flowable's own test file: inputDataItem has only a name, which is the field; one
    user task per item of taskUserList, one after the other."""
    model = bpm.load_bpmn(FLOWABLE / "MultiInstanceTest.sequentialUserTasksWithCollection"
                                     ".bpmn20.xml")
    p = model.process("miSequentialUserTasks")
    assert p.definition().nodes["miTasks"].many.element == "taskUser"
    eng = bpm.Engine()
    inst = eng.start(p, {"taskUserList": ["kermit", "gonzo"]})
    eng.advance("PT1M")  # well before the 2 h boundary
    done = 0
    while eng.tasks():
        (task,) = [t for t in eng.tasks() if t.node == "miTasks"]
        eng.complete_task(task.id, {})
        eng.advance("PT1M")
        done += 1
    assert done == 2 and inst.state == "completed"


def test_an_element_variable_beside_a_cardinality_is_a_warning_not_a_refusal():
    """Flowable's (and Camunda 7's) elementVariable with a loopCardinality and no collection:
    those engines set no item, so nothing is set here either; it runs its cardinality."""
    model = load("<loopCardinality>2</loopCardinality>",
                 attrs=' flowable:elementVariable="item"')
    (note,) = [n for n in model.report if "elementVariable" in n.message]
    assert note.severity == "warning" and "is not set" in note.message
    inst, seen = run_over(model, {}, lambda i: {})
    assert seen == [None, None] and inst.state == "completed"
