"""JUEL's method calls, Flowable's variable functions and arithmetic, translated to the safe
evaluator and run: a gateway, a multi-instance completion condition, a loop cardinality."""

from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.bpmn.expressions import translate
from gobpm_nb.model.expr import Expr

DATA = Path(__file__).parent / "data" / "listeners"


@pytest.mark.parametrize("text, expected", [
    ("${clarified.equals('yes')}", "clarified == 'yes'"),
    ("${!clarified.equals('yes')}", "not clarified == 'yes'"),
    ("${!x.isEmpty()}", "not len(x) == 0"),
    ("${items.size() != 3}", "len(items) != 3"),
    ("${name.length() > 2 && tags.contains('vip')}", "len(name) > 2 and 'vip' in tags"),
    ("${code.startsWith('A')}", "code.startswith('A')"),
    ("${execution.getVariable('var1') != null}", "variable('var1') != None"),
    ("${vars:getOrDefault(myVar, 123) > 100}", "variable('myVar', 123) > 100"),
    ("${var:exists('myVar')}", "defined('myVar')"),
    ("${variables:get(myVar) == 'A'}", "variable('myVar') == 'A'"),
    ("${var:isNotEmpty(myVar)}", "variable('myVar') not in (None, '', [], {})"),
    ("${variables:empty(myVar)}", "variable('myVar') in (None, '', [], {})"),
    ("${var:contains(v, 1, 2)}", "1 in variable('v', ()) and 2 in variable('v', ())"),
    ("${var:containsAny(v, 1, 2)}", "1 in variable('v', ()) or 2 in variable('v', ())"),
    ("${nrOfCompletedInstances/nrOfInstances >= 0.6}",
     "nrOfCompletedInstances / nrOfInstances >= 0.6"),
    ("${a * (b + c) - -d div 2 > 0}", "a * (b + c) - -d / 2 > 0"),
    ("${(a - b) - (c - d) == 0}", "a - b - (c - d) == 0"),
    ("=total * 2 > limit", "total * 2 > limit"),
    ('${customer.prop("age").numberValue() >= 21}', "customer['age'] >= 21"),
])
def test_juel_calls_and_arithmetic_translate(text, expected):
    assert translate(text) == expected


@pytest.mark.parametrize("text, data, answer", [
    ("${execution.getVariable('var1') != null}", {}, False),  # JUEL's null, not an incident
    ("${execution.getVariable('var1') != null}", {"var1": 0}, True),
    ("${vars:getOrDefault(myVar, 123) > 100}", {}, True),
    ("${var:exists('myVar')}", {"myVar": None}, True),
    ("${var:isNotEmpty(myVar)}", {"myVar": 0}, True),  # 0 is not empty in Flowable
    ("${var:isNotEmpty(myVar)}", {"myVar": []}, False),
    ("${variables:empty(myVar)}", {}, True),
    ("${var:contains(v, 1, 2)}", {"v": [1, 3]}, False),
    ("${var:containsAny(v, 1, 2)}", {"v": [1, 3]}, True),
    ("${var:contains(v, 1)}", {}, False),  # Flowable: a missing collection holds nothing
    ("${nrOfCompletedInstances/nrOfInstances >= 0.6}",
     {"nrOfCompletedInstances": 3, "nrOfInstances": 5}, True),
    ("${nrOfCompletedInstances/nrOfInstances >= 0.6}",
     {"nrOfCompletedInstances": 2, "nrOfInstances": 5}, False),  # 0.4, a fraction as JUEL
])
def test_the_translation_answers_as_the_vendor_engine_does(text, data, answer):
    assert Expr(translate(text))(data) is answer


@pytest.mark.parametrize("text, why", [
    ("${a % 2 == 0}", "it takes a remainder"),
    ("${order.isStandard()}", "it calls 'isStandard' on 'order'"),
    ("${variables:base64(v) == 'aA=='}", "it calls variables:base64"),
    ("${execution.getVariable(name) == 1}", "it calls 'getVariable' on 'execution'"),
    ("${customer.prop(age).numberValue() < 21}", "it calls 'prop' on 'customer'"),
    ("${customer.prop('age').elements() < 21}", "it calls 'elements' on "),
])
def test_what_does_not_map_is_still_refused_naming_it(text, why):
    with pytest.raises(bpm.ModelError, match="does not translate") as info:
        translate(text)
    assert why in str(info.value)


def test_a_missing_name_in_a_method_call_is_an_incident_not_a_guess():
    """``${x.equals('a')}`` with no ``x``: JUEL fails to resolve it; the engine's run stops
    with an incident on the gateway, naming the field."""
    with pytest.raises(KeyError):
        Expr(translate("${x.equals('a')}"))({})


def test_a_loop_cardinality_with_arithmetic_runs_that_many_times():
    doc = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
           'targetNamespace="http://x"><process id="p" isExecutable="true">'
           '<startEvent id="s"/><userTask id="x"><multiInstanceLoopCharacteristics '
           'isSequential="false"><loopCardinality>${iterations - 1}</loopCardinality>'
           '</multiInstanceLoopCharacteristics></userTask><endEvent id="e"/>'
           '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
           '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')
    model = bpm.load_bpmn(doc)
    assert model.report == []
    eng = bpm.Engine()
    eng.start(model.process(), {"iterations": 4})
    eng.run()
    assert len(eng.tasks()) == 3


def test_activitis_completion_condition_ends_the_body_at_half_done():
    """Activiti's own test: five parallel tasks, done when ``nrOfCompletedInstances /
    nrOfInstances >= 0.5``: after the third (3/5), the other two are cancelled."""
    model = bpm.load_bpmn(DATA / "MultiInstanceTest.testParallelUserTasksCompletionCondition"
                                 ".bpmn20.xml")
    assert model.errors("miParallelUserTasksCompletionCondition") == []
    eng = bpm.Engine()
    instance = eng.start(model.process())
    eng.run()
    assert len(eng.tasks()) == 5
    for _ in range(2):
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    assert len(eng.tasks()) == 3 and instance.state == "active"
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert eng.tasks() == [] and instance.state == "completed"


@pytest.mark.parametrize("data, task", [({}, "A"), ({"myVar": 5}, "B"), ({"myVar": 500}, "A")])
def test_flowables_get_or_default_chooses_the_branch(data, task):
    """Flowable's own test: ``${vars:getOrDefault(myVar, 123) > 100}`` goes to A when
    ``myVar`` is missing (123) or large, else the default flow to B."""
    model = bpm.load_bpmn(DATA / "VariableExpressionFunctionsTest.testGetVariableOrDefault"
                                 ".bpmn20.xml")
    assert model.errors("testExpressionFunction") == []
    eng = bpm.Engine()
    eng.start(model.process(), data)
    eng.run()
    assert [t.name for t in eng.tasks()] == [task]


@pytest.mark.parametrize("age, task", [(30, "Over 21"), (17, "Under 21")])
def test_camunda_spins_json_property_chooses_the_branch(age, task):
    """Camunda's example: ``${customer.prop("age").numberValue() >= 21}`` reads the field
    ``age`` of the JSON variable ``customer`` (a dict here)."""
    model = bpm.load_bpmn(DATA / "task-form-embedded-json-variables.process.bpmn")
    assert model.errors("customerDataProcess") == []
    eng = bpm.Engine()
    eng.start(model.process(), {"customer": {"name": "Ann", "age": age}})
    eng.run()
    eng.complete_task(eng.tasks()[0].id)  # Approve customer; the service task passes
    eng.run()
    assert [t.name for t in eng.tasks()] == [task]
