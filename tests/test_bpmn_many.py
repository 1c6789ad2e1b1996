"""Multi-instance activities in BPMN files: read from what Camunda 8 (zeebe), Camunda 7 and
plain BPMN write, run as the engine's multi-instance; written as valid BPMN 2.0 that reads
back the same; what does not translate, or sits on an element that cannot repeat, is an error
note naming the element."""

import dataclasses

import pytest
from bpmn_shapes import NS
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn.schema import schema
from gobpm_nb.model.expr import Expr

DOC = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
             xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
             id="d" targetNamespace="http://example.com">
<message id="M" name="go"><extensionElements>
  <zeebe:subscription correlationKey="=orderId"/></extensionElements></message>
<process id="p" isExecutable="true">
  <startEvent id="s"/>
  {node}
  <endEvent id="e"/>
  <sequenceFlow id="f1" sourceRef="s" targetRef="x"/>
  <sequenceFlow id="f2" sourceRef="x" targetRef="e"/>
</process>
</definitions>
"""

ZEEBE = ('<zeebe:loopCharacteristics inputCollection="=reviewers" inputElement="reviewer" '
         'outputCollection="votes" outputElement="=vote"/>')


def loop(inner="", attrs=""):
    return f"<multiInstanceLoopCharacteristics{attrs}>{inner}</multiInstanceLoopCharacteristics>"


def zeebe(extra="", attrs=""):
    return loop(f"<extensionElements>{ZEEBE}</extensionElements>{extra}", attrs)


def load(node):
    return bpm.load_bpmn(DOC.format(node=node))


def many_of(node):
    """The multi-instance fields of ``x`` read from ``node``, expressions as text; and the
    report."""
    model = load(node)
    m = model.processes["p"].definition().nodes["x"].many
    text = {f.name: getattr(m, f.name) for f in dataclasses.fields(m)}
    return {k: v.describe() if isinstance(v, Expr) else v for k, v in text.items()}, \
        model.report


def fields(sequential=False, collection=None, element=None, cardinality=None,
           completion=None, output_collection=None, output_element=None):
    return {"sequential": sequential, "collection": collection, "element": element,
            "cardinality": cardinality, "completion": completion,
            "output_collection": output_collection, "output_element": output_element}


def errors(model):
    return [(n.element, n.message) for n in model.report if n.severity == "error"]


# -- reading -----------------------------------------------------------------------------

@pytest.mark.parametrize("node, expected", [
    ('<userTask id="x">' + zeebe("<completionCondition>=numberOfCompletedInstances &gt;= 2"
                                 "</completionCondition>") + '</userTask>',
     fields(collection="reviewers", element="reviewer", output_collection="votes",
            output_element="vote", completion="numberOfCompletedInstances >= 2")),
    ('<userTask id="x">' + loop("<completionCondition>${nrOfCompletedInstances >= 2}"
                                "</completionCondition>",
                                ' camunda:collection="${reviewers}" '
                                'camunda:elementVariable="reviewer"') + '</userTask>',
     fields(collection="reviewers", element="reviewer",
            completion="nrOfCompletedInstances >= 2")),
    ('<serviceTask id="x" camunda:type="external" camunda:topic="mail">'
     + loop(attrs=' camunda:collection="reviewers" camunda:elementVariable="reviewer"')
     + '</serviceTask>', fields(collection="reviewers", element="reviewer")),
    ('<userTask id="x">' + loop("<loopCardinality>${3}</loopCardinality>") + '</userTask>',
     fields(cardinality="3")),
    ('<task id="x">' + loop("<loopCardinality>3</loopCardinality>") + '</task>',
     fields(cardinality="3")),
    ('<receiveTask id="x" messageRef="M">' + loop(
        '<loopCardinality xsi:type="tFormalExpression">n</loopCardinality>',
        ' isSequential="true"') + '</receiveTask>', fields(sequential=True, cardinality="n")),
    ('<userTask id="x">' + zeebe(attrs=' isSequential="true"') + '</userTask>',
     fields(sequential=True, collection="reviewers", element="reviewer",
            output_collection="votes", output_element="vote")),
])
def test_each_form_of_multi_instance_reads_into_the_builder_fields(node, expected):
    """Camunda 8's zeebe:loopCharacteristics and FEEL, Camunda 7's camunda:collection (an
    expression or a plain name) and JUEL, plain loopCardinality, isSequential: each gives the
    fields p.multi_instance would, with no note."""
    got, report = many_of(node)
    assert report == [] and got == expected


def test_reviewers_in_a_camunda_7_file_run_one_inner_instance_each():
    """camunda:collection and camunda:elementVariable: each inner instance of an imported
    script task sees its item and loop counter (given a function in Python)."""
    seen = []
    p = bpm.Process.from_bpmn(DOC.format(node='<scriptTask id="x">' + loop(
        attrs=' isSequential="true" camunda:collection="reviewers" '
              'camunda:elementVariable="reviewer"') + '</scriptTask>'))
    p.set_function("x", lambda d: seen.append((d["reviewer"], d["loopCounter"])) or {})
    eng = bpm.Engine()
    inst = eng.start(p, {"reviewers": ["ann", "bob"]})
    eng.run()
    assert inst.state == "completed" and seen == [("ann", 1), ("bob", 2)]


def test_a_cardinality_read_from_a_file_makes_that_many_tasks():
    """<loopCardinality>${3}</loopCardinality> on a user task: three tasks at once."""
    p = bpm.Process.from_bpmn(DOC.format(node='<userTask id="x">' + loop(
        "<loopCardinality>${3}</loopCardinality>") + "</userTask>"))
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert [t.node for t in eng.tasks()] == ["x"] * 3
    for t in eng.tasks():
        eng.complete_task(t.id)
        eng.run()
    assert inst.state == "completed"


def test_a_sequential_task_read_from_a_file_offers_one_task_at_a_time():
    """isSequential='true': the next inner instance starts when the one before completes;
    the output collection is in item order."""
    p = bpm.Process.from_bpmn(DOC.format(
        node='<userTask id="x">' + zeebe(attrs=' isSequential="true"') + '</userTask>'))
    eng = bpm.Engine()
    inst = eng.start(p, {"reviewers": ["ann", "bob", "cy"]})
    eng.run()
    for vote in ("a", "b", "c"):
        (task,) = eng.tasks()
        eng.complete_task(task.id, {"vote": vote})
        eng.run()
    assert inst.state == "completed" and inst.data["votes"] == ["a", "b", "c"]


SUBPROCESS = ('<subProcess id="x">' + zeebe() + '<startEvent id="xs"/><userTask id="vote"/>'
              '<endEvent id="xe"/><sequenceFlow id="g1" sourceRef="xs" targetRef="vote"/>'
              '<sequenceFlow id="g2" sourceRef="vote" targetRef="xe"/></subProcess>')


def test_a_multi_instance_subprocess_runs_its_inside_once_per_item():
    """A subprocess with zeebe:loopCharacteristics: one inner run (and one task) per
    reviewer; what each run leaves in ``vote`` is collected."""
    model = load(SUBPROCESS)
    assert model.report == []
    eng = bpm.Engine()
    inst = eng.start(model.process(), {"reviewers": ["ann", "bob"]})
    eng.run()
    tasks = eng.tasks()
    assert [t.node for t in tasks] == ["vote", "vote"]
    eng.complete_task(tasks[1].id, {"vote": "no"})
    eng.complete_task(tasks[0].id, {"vote": "yes"})
    eng.run()
    assert inst.state == "completed" and inst.data["votes"] == ["yes", "no"]


def test_a_multi_instance_task_inside_a_subprocess_is_read_in_its_scope():
    """Multi-instance works at any depth: a task inside a subprocess."""
    node = ('<subProcess id="x"><startEvent id="xs"/><userTask id="t">' + zeebe()
            + '</userTask><endEvent id="xe"/><sequenceFlow id="g1" sourceRef="xs" '
            'targetRef="t"/><sequenceFlow id="g2" sourceRef="t" targetRef="xe"/></subProcess>')
    model = load(node)
    t = model.processes["p"].definition().nodes["t"]
    assert model.report == [] and t.within == "x" and t.many.collection.describe() == \
        "reviewers"


# -- what is refused ---------------------------------------------------------------------

@pytest.mark.parametrize("node, fragment", [
    ('<userTask id="x">' + loop("<completionCondition>${nrOfCompletedInstances % 2 == 1}"
                                "</completionCondition>",
                                ' camunda:collection="reviewers"') + '</userTask>',
     "completion condition '${nrOfCompletedInstances % 2 == 1}' (JUEL) does not "
     "translate: it takes a remainder"),
    ('<userTask id="x">' + loop('<extensionElements><zeebe:loopCharacteristics '
                                'inputCollection="=order.items[x &gt; 1]"/>'
                                '</extensionElements>')
     + '</userTask>', "input collection '=order.items[x > 1]' (FEEL) does not translate: "
                      "it reads [x from"),
    ('<userTask id="x">' + loop('<extensionElements><zeebe:loopCharacteristics '
                                'inputCollection="=xs" inputElement="=x"/>'
                                '</extensionElements>') + '</userTask>',
     "input element '=x' is not a variable name"),
    ('<userTask id="x">' + loop('<loopCardinality xsi:type="tFormalExpression" '
                                'language="javascript">3</loopCardinality>')
     + '</userTask>', "loop cardinality '3' is written in 'javascript'"),
    ('<userTask id="x">' + loop() + '</userTask>',
     "gives neither an input collection (zeebe:loopCharacteristics inputCollection, "
     "camunda:collection) nor a loopCardinality"),
    ('<userTask id="x">' + loop('<loopDataInputRef>my.items</loopDataInputRef>')
     + '</userTask>', "<loopDataInputRef> 'my.items' is not a variable name"),
    ('<userTask id="x">' + zeebe('<complexBehaviorDefinition id="cb"><condition>true'
                                 '</condition></complexBehaviorDefinition>') + '</userTask>',
     "complexBehaviorDefinition is not supported"),
])
def test_what_does_not_translate_is_an_error_note_on_the_element(node, fragment):
    """One error note on the activity saying what does not translate; the process is
    refused with it."""
    model = load(node)
    assert [e for e, _ in errors(model)] == ["x"], model.report
    assert fragment in errors(model)[0][1] and "multi-instance 'x'" in errors(model)[0][1]
    assert model.report[0].tag == "userTask"
    with pytest.raises(bpm.ModelError, match="multi-instance 'x'"):
        model.process()


@pytest.mark.parametrize("node, tag, others", [
    ('<businessRuleTask id="x">' + zeebe() + '</businessRuleTask>', "businessRuleTask",
     ["business rule tasks (decisions) are not supported"]),
    ('<sendTask id="x" messageRef="M">' + zeebe() + '</sendTask>', "sendTask", []),
    ('<subProcess id="x" triggeredByEvent="true">' + zeebe() + '<startEvent id="xs">'
     '<messageEventDefinition messageRef="M"/></startEvent></subProcess>', "subProcess", []),
])
def test_multi_instance_on_an_element_that_cannot_repeat_keeps_its_refusal(node, tag, others):
    """A business rule task (a placeholder), a send task (a message throw), an event
    subprocess: the loop is an error note on the element, as before."""
    model = load(node)
    messages = [m for e, m in errors(model) if e == "x"]
    assert "multiInstanceLoopCharacteristics on 'x' is not supported yet: the activity " \
           "would run once" in messages
    assert all(any(o in m for m in messages) for o in others)
    assert {n.tag for n in model.report if n.element == "x"} == {tag}
    with pytest.raises(bpm.ModelError, match="multiInstanceLoopCharacteristics on 'x'"):
        model.process()


def test_a_collection_and_a_cardinality_together_are_refused_by_validation():
    """Both given: the builder's own check, as an error note on the element."""
    model = load('<userTask id="x">' + zeebe("<loopCardinality>3</loopCardinality>")
                 + '</userTask>')
    assert [(e, "exactly one of collection or cardinality" in m) for e, m in errors(model)] \
        == [("x", True)]


def test_standard_data_references_and_behaviours_beside_a_vendor_collection_are_warnings():
    """loopDataInputRef/inputDataItem beside zeebe's inputCollection, and a behavior other
    than All, are ignored with a warning each: the task still runs over the collection."""
    model = load('<userTask id="x">' + zeebe(
        '<loopDataInputRef>items</loopDataInputRef><inputDataItem id="item"/>',
        ' behavior="One"') + '</userTask>')
    assert [(n.severity, n.element) for n in model.report] == [("warning", "x")] * 3
    assert [m.message.partition(" is ignored")[0] for m in model.report] == [
        "multi-instance 'x': <loopDataInputRef>", "multi-instance 'x': <inputDataItem>",
        "multi-instance 'x': behavior 'One'"]
    assert model.process().definition().nodes["x"].many.collection.describe() == "reviewers"


# -- writing ---------------------------------------------------------------------------

def built():
    """Every multi-instance form built in Python: parallel over a collection with an output
    and a completion, sequential over a cardinality, and expressions with no FEEL spelling."""
    p = bpm.Process("reviews", name="Reviews")
    p.start("s")
    p.user_task("review", assignee="ann")
    p.multi_instance("review", collection="reviewers", element="reviewer",
                     output_collection="votes", output_element="vote",
                     completion="numberOfCompletedInstances >= 2 or vote == 'veto'")
    with p.subprocess("each") as sp:
        sp.user_task("check")
        sp.flow(sp.start("a"), "check", sp.end("z"))
    p.multi_instance("each", sequential=True, cardinality="len(reviewers) + 1")
    p.service_task("notify", topic="mail")
    p.multi_instance("notify", collection="reviewers[:2]", element="who",
                     output_collection="sent", output_element="{'to': who}")
    p.end("done")
    p.flow("s", "review", "each", "notify", "done")
    return p.validate()


def loops_of(xml):
    root = etree.fromstring(xml.encode())
    return {n.getparent().get("id"): n for n in root.iterfind(
        ".//bpmn:multiInstanceLoopCharacteristics", NS)}


def test_a_built_process_reads_back_with_the_same_signature():
    """Built in Python, written, read back: no note, the same signature and the same
    multi-instance fields."""
    p = built()
    model = bpm.load_bpmn(p.to_bpmn())
    assert model.report == []
    q = model.process()
    assert q.definition().signature == p.definition().signature
    for node in ("review", "each", "notify"):
        a, b = p.definition().nodes[node].many, q.definition().nodes[node].many
        assert repr(a) == repr(b)


def test_the_written_loops_are_valid_bpmn_20_in_camunda_8_form():
    """The file validates against the XSD; a collection travels as zeebe FEEL, a cardinality
    and a completion as formal expressions, what has no FEEL spelling in gobpm's own
    element with its language."""
    xml = built().to_bpmn()
    assert schema().validate(etree.fromstring(xml.encode()).getroottree()), \
        schema().error_log
    found = loops_of(xml)
    z = "{http://camunda.org/schema/zeebe/1.0}loopCharacteristics"
    review = found["review"]
    assert review.get("isSequential") == "false"
    assert dict(review.find(f"bpmn:extensionElements/{z}", NS).attrib) == {
        "inputCollection": "=reviewers", "inputElement": "reviewer",
        "outputCollection": "votes", "outputElement": "=vote"}
    assert review.find("bpmn:completionCondition", NS).text == \
        '=numberOfCompletedInstances >= 2 or vote = "veto"'
    each = found["each"]
    assert each.get("isSequential") == "true"
    assert each.find("bpmn:loopCardinality", NS).get("language") == \
        "urn:gobpm-nb:safe-expression"
    own = found["notify"].find("bpmn:extensionElements", NS)
    assert [(c.tag.rpartition("}")[2], c.get("language"), c.text) for c in own] == [
        ("loopCharacteristics", None, None),
        ("inputCollection", "urn:gobpm-nb:safe-expression", "reviewers[:2]"),
        ("outputElement", "urn:gobpm-nb:safe-expression", "{'to': who}")]
    # after incoming and outgoing, where the schema puts an activity's loop
    assert [c.tag.rpartition("}")[2] for c in found["review"].getparent()][-1] == \
        "multiInstanceLoopCharacteristics"


def test_an_imported_file_written_back_keeps_its_loop_xml():
    """A Camunda 7 loop read and written back is the same XML, even after a multi-instance
    element is added to the process (written with its own loop, still valid)."""
    text = DOC.format(node='<userTask id="x">' + loop(
        "<completionCondition>${nrOfCompletedInstances >= 2}</completionCondition>",
        ' camunda:collection="${reviewers}" camunda:elementVariable="reviewer"')
        + "</userTask>")
    model = bpm.load_bpmn(text)
    model.processes["p"].user_task("extra")
    model.processes["p"].multi_instance("extra", cardinality="2")
    out = model.to_bpmn()
    before, after = loops_of(text)["x"], loops_of(out)["x"]
    assert etree.tostring(after, method="c14n") == etree.tostring(before, method="c14n")
    assert "extra" in loops_of(out)  # the new element has its own loop
    assert schema().validate(etree.fromstring(out.encode()).getroottree()), schema().error_log


# -- end to end ----------------------------------------------------------------------

REVIEWS = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="Definitions_1"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="reviews" isExecutable="true">
    <bpmn:startEvent id="start"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:userTask id="review" name="Review">
      <bpmn:incoming>f1</bpmn:incoming>
      <bpmn:outgoing>f2</bpmn:outgoing>
      <bpmn:multiInstanceLoopCharacteristics>
        <bpmn:extensionElements>
          <zeebe:loopCharacteristics inputCollection="=reviewers" inputElement="reviewer"
                                     outputCollection="votes" outputElement="=vote" />
        </bpmn:extensionElements>
      </bpmn:multiInstanceLoopCharacteristics>
    </bpmn:userTask>
    <bpmn:endEvent id="end"><bpmn:incoming>f2</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="review" />
    <bpmn:sequenceFlow id="f2" sourceRef="review" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>
"""


def test_a_file_with_parallel_reviews_runs_to_its_output_collection():
    """Read, started over three reviewers, the three tasks completed out of order: the
    votes are collected in reviewer order and the instance completes."""
    p = bpm.Process.from_bpmn(REVIEWS)
    eng = bpm.Engine()
    inst = eng.start(p, {"reviewers": ["ann", "bob", "cy"]})
    eng.run()
    tasks = eng.tasks()
    assert [t.node for t in tasks] == ["review"] * 3
    for task, vote in zip(reversed(tasks), ("no", "yes", "maybe"), strict=True):
        eng.complete_task(task.id, {"vote": vote})
        eng.run()
    assert inst.state == "completed"
    assert inst.data == {"reviewers": ["ann", "bob", "cy"], "votes": ["maybe", "yes", "no"]}
