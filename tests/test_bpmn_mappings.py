"""Variable mappings read from files (``zeebe:ioMapping``, ``camunda:inputOutput``) and the
FEEL built-in functions and paths a file's expressions use."""

from datetime import timedelta
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.bpmn.expressions import translate
from gobpm_nb.model.expr import Expr

HEAD = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" '
        'targetNamespace="http://example.com">')
HOUR = timedelta(hours=1)
C92 = Path(__file__).parent / "data" / "miwg_extra" / "C.9.2.bpmn"


def one_node(node):
    """start -> ``node`` (id ``x``) -> end."""
    return (HEAD + '<process id="p" isExecutable="true"><startEvent id="s"/>' + node
            + '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')


CONNECTOR = one_node(
    '<serviceTask id="x"><extensionElements><zeebe:taskDefinition type="http"/>'
    '<zeebe:ioMapping>'
    '<zeebe:input source="GET" target="method"/>'
    '<zeebe:input source="=order.lines[1].sku" target="query.sku"/>'
    '<zeebe:input source="={{secrets.API_KEY}}" target="authentication.token"/>'
    '<zeebe:input source="={q: order.id, appid: secrets.KEY}" target="queryParameters"/>'
    '<zeebe:input source="={id: order.id, tags: [1, 2]}" target="body"/>'
    '<zeebe:output source="=response.status = 200" target="found"/>'
    '<zeebe:output source="=if is defined(response.body) then response.body else null" '
    'target="body"/>'
    '</zeebe:ioMapping></extensionElements></serviceTask>')


def test_a_connector_task_runs_with_what_translates_and_warns_of_the_rest():
    """Plain values, FEEL paths (an index from 1) and dotted targets are mapped; a secret
    placeholder, also in a context literal, is a warning naming the target left out (never
    invented), and the process runs as written."""
    model = bpm.load_bpmn(CONNECTOR)
    warned = sorted(n.message for n in model.report)
    assert [n.severity for n in model.report] == ["warning", "warning"]
    assert "zeebe:input 'authentication.token' of serviceTask 'x' is not mapped" in warned[0]
    assert "connector secret" in warned[0]
    assert "zeebe:input 'queryParameters' of serviceTask 'x' is not mapped" in warned[1]
    assert "connector secret" in warned[1]
    eng = bpm.Engine()
    inst = eng.start(model.process(), {"order": {"id": 7, "lines": [{"sku": "A1"}]}})
    eng.run()
    (job,) = eng.fetch_jobs("http", "w")
    assert job.data == {"order": {"id": 7, "lines": [{"sku": "A1"}]}, "method": "GET",
                        "query": {"sku": "A1"}, "body": {"id": 7, "tags": [1, 2]}}
    eng.complete_job(job.id, {"response": {"status": 200, "body": "..."}})
    eng.run()
    assert inst.data == {"order": {"id": 7, "lines": [{"sku": "A1"}]}, "found": True,
                         "body": "..."}


def test_the_file_keeps_its_mappings_when_written_back():
    model = bpm.load_bpmn(CONNECTOR)
    again = bpm.load_bpmn(model.process().to_bpmn())
    assert again.process().definition().signature == \
        model.process().definition().signature
    assert "{{secrets.API_KEY}}" in model.process().to_bpmn()


def test_camunda_7_parameters_read_constants_juel_lists_and_maps():
    """Camunda 7: a parameter's text is a constant, ``${...}`` JUEL, a list or a map of
    those; a script is a warning naming the parameter, not mapped."""
    model = bpm.load_bpmn(one_node(
        '<userTask id="x"><extensionElements><camunda:inputOutput>'
        '<camunda:inputParameter name="greeting">Hello</camunda:inputParameter>'
        '<camunda:inputParameter name="tags"><camunda:list><camunda:value>a</camunda:value>'
        '<camunda:value>${n}</camunda:value></camunda:list></camunda:inputParameter>'
        '<camunda:inputParameter name="shape"><camunda:map><camunda:entry key="k">v'
        '</camunda:entry></camunda:map></camunda:inputParameter>'
        '<camunda:inputParameter name="calc"><camunda:script scriptFormat="groovy">1+1'
        '</camunda:script></camunda:inputParameter>'
        '<camunda:outputParameter name="echo">${greeting}</camunda:outputParameter>'
        '<camunda:outputParameter name="all">${tags}</camunda:outputParameter>'
        '</camunda:inputOutput></extensionElements></userTask>'))
    [note] = model.report
    assert note.severity == "warning"
    assert note.message.startswith("camunda:inputParameter 'calc' of userTask 'x' is not "
                                   "mapped: camunda:script is not run")
    eng = bpm.Engine()
    inst = eng.start(model.process(), {"n": 2})
    eng.run()
    (task,) = eng.tasks()
    eng.complete_task(task.id, {"other": 1})
    eng.run()
    assert inst.data == {"n": 2, "echo": "Hello", "all": ["a", 2]}


def test_the_miwg_reference_with_mappings_runs_as_written():
    """MIWG C.9.2 (Camunda 8): its user task's input mappings are run, the one that calls
    ``string join`` is a warning; what the task maps in is never in the instance data."""
    model = bpm.load_bpmn(C92)
    mapped = [n for n in model.report if "zeebe:input" in n.message]
    assert [(n.severity, n.element) for n in mapped] == [
        ("warning", "UserTask_DecideOnApplication")]
    assert "'risksText'" in mapped[0].message and "string join" in mapped[0].message
    eng = bpm.Engine()
    keys = {"documentReferenceId": "d1", "fraudSuspectedId": "f1"}  # its event subprocesses'
    data = {"applicant": {"age": 30, "name": "Ann"}, "risks": ["r1"], **keys}
    inst = eng.start(model.process("ManualCheck"), data)
    eng.run(until=eng.now + HOUR)  # before its timers
    (task,) = eng.tasks()
    eng.complete_task(task.id, {"approved": True})
    eng.run(until=eng.now + HOUR)  # before its timers
    assert inst.state == "completed"
    assert inst.data == {**data, "approved": True}
    missing = eng.start(model.process("ManualCheck"), keys)
    eng.run(until=eng.now + HOUR)  # before its timers
    assert missing.state == "failed" and eng.tasks() == []


@pytest.mark.parametrize("feel, data, expected", [
    ("=is defined(done)", {"done": None}, True),
    ("=not(is defined(done))", {}, True),
    ("=is defined(order.id)", {"order": {}}, False),
    ('=matches(route, "SALES", "i")', {"route": "to sales"}, True),
    ('=matches(route, "^LEGAL|ENGINEERING$")', {"route": "SALES"}, False),
    ('=not (list contains(["merge", "close"], m.action))', {"m": {"action": "open"}}, True),
    ("=list contains([1, 2], n)", {"n": True}, False),
    ("=count(items) > 1", {"items": [1, 2]}, True),
    ('=string length(name) = 3 and contains(name, "n")', {"name": "Ann"}, True),
    ('=starts with(s, "a") and ends with(s, "z")', {"s": "abz"}, True),
    ('=upper case(s) = "AB" and lower case(s) = "ab"', {"s": "aB"}, True),
    ("=items[2].n = 5", {"items": [{"n": 1}, {"n": 5}]}, True),
    ('=if is defined(host) then host = "h" else false', {"host": "h"}, True),
    ('=if is defined(host) then host = "h" else false', {}, False),
    ('=(if flag then 1 else 2) = 2', {"flag": "yes"}, True),  # not true: the else branch
    ('=if a then false else if b then true else false', {"a": None, "b": True}, True),
])
def test_feel_functions_and_paths_translate_to_what_feel_answers(feel, data, expected):
    assert Expr(translate(feel))(data) is expected


@pytest.mark.parametrize("feel, why", [
    ("=sum(xs) > 1", "it calls 'sum'"),
    ("=count(a, b) > 1", "count(...) takes 1 arguments, not 2"),
    ('=matches(s, p)', "matches(...) takes its pattern and flags as strings"),
    ('=matches(s, "a", "q")', "flag 'q' is not made of i, s, m, x"),
    ('=matches(s, "(a")', "is not a regular expression"),
    ('=matches(s, "\\\\p{L}")', "uses what FEEL and Python read differently"),
    ("=is defined(f(x))", "it calls 'f'"),
    ("=items[0] = 1", "it reads [0 from 'items'"),
    ("=if a then b", "it ends too early"),
    ("=if a else b", "its if has no then"),
])
def test_feel_calls_that_do_not_map_faithfully_are_refused(feel, why):
    with pytest.raises(bpm.ModelError, match="does not translate") as info:
        translate(feel)
    assert why in str(info.value)


def test_a_feel_function_given_null_stops_the_instance_rather_than_guess():
    """``not(contains(x, "a"))`` with x null is null in FEEL (the flow is not taken); here
    the condition raises and the instance stops with an incident naming it, so it never
    goes the way ``not`` of a guessed value would send it."""
    p = bpm.Process("p")
    p.start("s")
    p.exclusive_gateway("g")
    p.end("yes")
    p.end("no")
    p.flow("s", "g")
    p.flow("g", "yes", condition=translate('=not(contains(x, "a"))'))
    p.flow("g", "no", condition=translate('=contains(x, "a")'))
    eng = bpm.Engine()
    inst = eng.start(p, {"x": None})
    eng.run()
    assert inst.state == "failed"
    (fact,) = [f for f in eng.facts if f.kind == "incident"]
    assert fact.node == "g" and "TypeError" in fact.details["cause"]


def test_a_correlation_key_may_be_a_path():
    model = bpm.load_bpmn(
        HEAD + '<message id="M" name="paid"><extensionElements><zeebe:subscription '
        'correlationKey="=order.id"/></extensionElements></message>'
        '<process id="p" isExecutable="true"><startEvent id="s"/>'
        '<receiveTask id="x" messageRef="M"/><endEvent id="e"/>'
        '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
        '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')
    assert model.report == []
    eng = bpm.Engine()
    inst = eng.start(model.process(), {"order": {"id": "o1"}})
    eng.run()
    assert eng.publish_message("paid", "o1") == inst.id
    eng.run()
    assert inst.state == "completed"


def test_a_design_review_does_not_run_mappings_and_says_so():
    model = bpm.load_bpmn(CONNECTOR, run_as_drawn=True)
    assumed = [n for n in model.report if "zeebe:ioMapping" in n.message]
    assert [(n.severity, n.element) for n in assumed] == [("warning", "x")]
    assert "is not run in a design review" in assumed[0].message
    assert model.process().definition().nodes["x"].io is None


def test_a_process_built_in_python_writes_its_mappings_and_reads_them_back():
    """Sources FEEL can say go into ``zeebe:ioMapping``; an element with one it cannot
    (a path, written here as ``order['id']``) into our own ``gobpm:ioMapping``: read back,
    the process is the same version."""
    p = bpm.Process("p")
    p.start("s")
    p.service_task("plain", topic="a")
    p.service_task("pathy", topic="b")
    p.end("e")
    p.flow("s", "plain", "pathy", "e")
    p.mapping("plain", inputs={"method": "'GET'", "n": "count"}, outputs={"ok": "status == 1"})
    p.mapping("pathy", inputs={"id": "order['id']"}, outputs={"box.size": "size"})
    text = p.to_bpmn()
    assert '<zeebe:input source="=&quot;GET&quot;" target="method"/>' in text
    assert "<gobpm:ioMapping>" in text
    again = bpm.load_bpmn(text)
    assert again.report == []
    assert again.process().definition().signature == p.definition().signature


def doubler():
    """The called process: it doubles 'n' into 'twice'."""
    p = bpm.Process("billing")
    p.start("s")
    p.script_task("calc", fn=lambda data: {"twice": data["n"] * 2, "extra": 1})
    p.end("e")
    p.flow("s", "calc", "e")
    return p


@pytest.mark.parametrize("ext", [
    '<zeebe:calledElement processId="billing"/><zeebe:ioMapping>'
    '<zeebe:input source="=order.qty" target="n"/><zeebe:input source="=tag" target="tag"/>'
    '<zeebe:output source="=twice" target="result"/>'
    '<zeebe:output source="=sum(xs)" target="total"/></zeebe:ioMapping>',
    '<camunda:in source="qty" target="n"/><camunda:in sourceExpression="${tag}" '
    'target="tag"/><camunda:out source="twice" target="result"/>',
], ids=["camunda 8", "camunda 7"])
def test_a_call_activity_renames_and_computes_what_it_passes(ext):
    """A call activity's mapping that renames or computes runs as a variable mapping: the
    child gets the mapped fields, the caller gets only the outputs, read from what the
    child returned (one Camunda 8 output that does not translate is a warning)."""
    seven = "camunda:in" in ext
    attrs = ' calledElement="billing"' if seven else ""
    model = bpm.load_bpmn(one_node(f'<callActivity id="x"{attrs}><extensionElements>{ext}'
                                   '</extensionElements></callActivity>'))
    assert [n.severity for n in model.report] == ([] if seven else ["warning"])
    eng = bpm.Engine()
    eng.deploy(doubler())
    data = {"qty": 4} if seven else {"order": {"qty": 4}}
    inst = eng.start(model.process(), {**data, "tag": "t"})
    eng.run()
    (child,) = [i for i in eng.instances() if i.id != inst.id]
    assert child.data == {"n": 4, "tag": "t", "twice": 8, "extra": 1}
    assert inst.state == "completed"
    assert inst.data == {**data, "tag": "t", "result": 8}


def test_a_job_type_written_as_feel_is_the_topic_its_value_gives():
    """``zeebe:taskDefinition type="=kind"``: the job's topic is the value of ``kind`` as
    the job is created (written back the same); a value that is no topic is an incident."""
    model = bpm.load_bpmn(one_node('<serviceTask id="x"><extensionElements>'
                                   '<zeebe:taskDefinition type="=kind"/></extensionElements>'
                                   '</serviceTask>'))
    assert model.report == []
    process = model.process()
    assert process.definition().nodes["x"].topic_from.source == "kind"
    eng = bpm.Engine()
    inst = eng.start(process, {"kind": "validate"})
    eng.run()
    (job,) = eng.fetch_jobs("validate", "w")
    eng.complete_job(job.id)
    eng.run()
    assert inst.state == "completed"
    bad = eng.start(process, {"kind": 3})
    eng.run()
    assert bad.state == "failed"
    p = bpm.Process("p")
    p.start("s")
    p.service_task("x", topic_from="kind")
    p.end("e")
    p.flow("s", "x", "e")
    again = bpm.load_bpmn(p.to_bpmn())
    assert again.process().definition().signature == p.definition().signature
