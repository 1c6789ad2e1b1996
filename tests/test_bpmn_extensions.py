"""Vendor extensions read into the model: worker topics (Camunda 8 and 7), assignees,
message correlation keys (Zeebe subscriptions, standard correlation properties) and our own
payload fields; an expression where a constant is needed is reported, not guessed."""

import pytest

import gobpm_nb as bpm

HEAD = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
        'xmlns:activiti="http://activiti.org/bpmn" '
        'xmlns:flowable="http://flowable.org/bpmn" '
        'xmlns:gobpm="urn:gobpm-nb:bpmn:1" id="d" targetNamespace="http://example.com">')


def one_node(node, roots=""):
    """A document: start -> ``node`` (whose id is ``x``) -> end, plus root elements."""
    return (HEAD + roots + '<process id="p" isExecutable="true"><startEvent id="s"/>'
            + node + '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="x"/>'
            '<sequenceFlow id="f2" sourceRef="x" targetRef="e"/></process></definitions>')


def element(node, roots=""):
    """The model element ``x`` and the report of the one-node document."""
    model = bpm.load_bpmn(one_node(node, roots))
    return model.processes["p"].elements[1], model.report


def message(key_xml="", name="paid"):
    ext = f"<extensionElements>{key_xml}</extensionElements>" if key_xml else ""
    return f'<message id="M" name="{name}">{ext}</message>'


@pytest.mark.parametrize("node, topic", [
    ('<serviceTask id="x"><extensionElements><zeebe:taskDefinition type="charge"/>'
     '</extensionElements></serviceTask>', "charge"),
    ('<serviceTask id="x"><extensionElements><zeebe:taskDefinition type="=&quot;charge&quot;"/>'
     '</extensionElements></serviceTask>', "charge"),
    ('<serviceTask id="x" camunda:type="external" camunda:topic="rating"/>', "rating"),
    ('<serviceTask id="x" activiti:type="external" activiti:topic="old"/>', "old"),
    ('<sendTask id="x"><extensionElements><zeebe:taskDefinition type="mail"/>'
     '</extensionElements></sendTask>', "mail"),
    ('<businessRuleTask id="x"><extensionElements><zeebe:taskDefinition type="dmn"/>'
     '</extensionElements></businessRuleTask>', "dmn"),
])
def test_worker_jobs_come_from_zeebe_or_camunda_external_tasks(node, topic):
    """A task definition or an external task makes a worker job on its topic."""
    e, report = element(node)
    assert (e.kind, e.topic, e.fn) == ("service_task", topic, None)
    assert report == []


@pytest.mark.parametrize("node, why", [
    ('<serviceTask id="x"><extensionElements><zeebe:taskDefinition type=""/>'
     '</extensionElements></serviceTask>', "job type '' is an expression or empty"),
    ('<serviceTask id="x"><extensionElements><zeebe:taskDefinition type="=sum(k)"/>'
     '</extensionElements></serviceTask>', "job type '=sum(k)' (FEEL) does not translate"),
    ('<serviceTask id="x" camunda:type="external"/>', "camunda:topic is missing"),
])
def test_a_job_topic_that_is_not_a_constant_is_an_error(node, why):
    """A job needs a topic: a missing one, or an expression that does not translate, is an
    error note."""
    _, report = element(node)
    assert [(n.severity, n.element) for n in report] == [("error", "x")]
    assert why in report[0].message


def test_a_java_service_task_passes_through_with_a_warning_naming_its_class():
    """camunda:class is Java: the task passes data through and the warning says so."""
    e, report = element('<serviceTask id="x" camunda:class="com.acme.Charge"/>')
    assert (e.kind, e.topic, callable(e.fn)) == ("service_task", None, True)
    assert "camunda:class 'com.acme.Charge' is not run" in report[0].message
    assert "p.set_function('x', fn)" in report[0].message


@pytest.mark.parametrize("node, assignee, warned", [
    ('<userTask id="x"><extensionElements><zeebe:assignmentDefinition assignee="alice"/>'
     '</extensionElements></userTask>', "alice", False),
    ('<userTask id="x"><extensionElements><zeebe:assignmentDefinition '
     'assignee="=&quot;alice&quot;"/></extensionElements></userTask>', "alice", False),
    ('<userTask id="x"><extensionElements><zeebe:assignmentDefinition assignee="=owner"/>'
     '</extensionElements></userTask>', "=owner", True),
    ('<userTask id="x" camunda:assignee="bob"/>', "bob", False),
    ('<userTask id="x" camunda:assignee="${owner}"/>', "${owner}", True),
    ('<userTask id="x"/>', None, False),
])
def test_assignees_from_zeebe_or_camunda(node, assignee, warned):
    """A constant assignee is the task's; an expression is kept as text with a warning."""
    e, report = element(node)
    assert (e.kind, e.assignee) == ("user_task", assignee)
    assert [n.severity for n in report] == (["warning"] if warned else [])


@pytest.mark.parametrize("key_xml, field", [
    ('<zeebe:subscription correlationKey="=orderId"/>', "orderId"),
    ('<zeebe:subscription correlationKey="= orderId"/>', "orderId"),
    ('<zeebe:subscription correlationKey="orderId"/>', "orderId"),
])
def test_zeebe_subscription_keys_the_message_wait(key_xml, field):
    """The message's Zeebe correlation key names the data field the wait correlates on."""
    e, report = element('<receiveTask id="x" messageRef="M"/>', message(key_xml))
    assert (e.kind, e.message, e.key.field) == ("receive_task", "paid", field)
    assert report == []


def test_a_standard_correlation_property_with_a_plain_field_keys_the_wait():
    """correlationProperty -> correlationPropertyRetrievalExpression(messageRef) ->
    messagePath: a plain field is the key (FEEL's = prefix allowed)."""
    prop = ('<correlationProperty id="cp"><correlationPropertyRetrievalExpression '
            'messageRef="M"><messagePath>=orderId</messagePath>'
            '</correlationPropertyRetrievalExpression></correlationProperty>')
    e, report = element('<receiveTask id="x" messageRef="M"/>', message() + prop)
    assert e.key.field == "orderId" and report == []


def test_a_message_wait_without_any_key_correlates_by_name_with_a_warning():
    """A message wait whose message has no key correlates by the name alone (as Camunda 7's
    correlateMessage(name) does): the key is NO_KEY, and a warning says so."""
    e, report = element('<receiveTask id="x" messageRef="M"/>', message())
    assert e.key.source == bpm.NO_KEY
    assert [(n.severity, n.element) for n in report] == [("warning", "x")]
    assert "no correlation key, correlated by its name alone" in report[0].message


def test_message_names_come_from_the_message_element():
    """The engine matches the <message>'s name (its id when it has none)."""
    e, _ = element('<intermediateCatchEvent id="x"><messageEventDefinition messageRef="M"/>'
                   '</intermediateCatchEvent>',
                   message('<zeebe:subscription correlationKey="=k"/>', name="order paid"))
    assert (e.kind, e.message) == ("message_catch", "order paid")


def test_payload_fields_of_a_throw_come_from_gobpm_payload():
    """gobpm:payload fields="a b" are the fields a message throw sends."""
    e, report = element('<intermediateThrowEvent id="x"><extensionElements>'
                        '<gobpm:payload fields="total orderId"/></extensionElements>'
                        '<messageEventDefinition messageRef="M"/></intermediateThrowEvent>',
                        message())
    assert (e.kind, e.message, e.payload) == ("message_throw", "paid", ("total", "orderId"))
    assert report == []


@pytest.mark.parametrize("node, kind", [
    ("<task id='x'/>", "script_task"),
    ("<manualTask id='x'/>", "script_task"),
    ("<intermediateThrowEvent id='x'/>", "none_throw"),
    ("<sendTask id='x' messageRef='M'/>", "message_throw"),
])
def test_how_tasks_without_work_map(node, kind):
    """A plain task and a manual task pass through (a script task with no function), so does
    a none throw event (a milestone); a send task publishes its message."""
    e, report = element(node, message())
    assert e.kind == kind
    assert report == []


def extended(tag, ext, inner=""):
    """Node ``x`` of kind ``tag`` carrying ``ext`` in its extensionElements."""
    return f'<{tag} id="x"><extensionElements>{ext}</extensionElements>{inner}</{tag}>'


JOB = '<zeebe:taskDefinition type="charge"/>'
NOT_RUN = {
    # a call activity's camunda:inputOutput (its mappings are camunda:in/out)
    "camunda:inputOutput on a call activity": (
        '<callActivity id="x" calledElement="c"><extensionElements><camunda:inputOutput>'
        '<camunda:inputParameter name="a">1</camunda:inputParameter></camunda:inputOutput>'
        '</extensionElements></callActivity>',
        "camunda:inputOutput on callActivity 'x' is not run"),
}


LISTENERS = {
    "camunda:executionListener": (
        extended("task", '<camunda:executionListener class="com.acme.Audit" event="start"/>'),
        "camunda:executionListener on task 'x' is not run (event 'start', class "
        "'com.acme.Audit'): the engine calls no code when an element starts, ends or is "
        "taken; the run leaves it out"),
    "activiti:taskListener with fields": (
        extended("userTask", '<activiti:taskListener event="create" delegateExpression='
                 '"${notifier}"><activiti:field name="to" stringValue="a"/><activiti:field '
                 'name="cc" stringValue="b"/></activiti:taskListener>'),
        "activiti:taskListener on userTask 'x' is not run (event 'create', "
        "delegateExpression '${notifier}', 2 fields): the engine calls no code when a user "
        "task is created, assigned or completed"),
    "flowable:taskListener with a script": (
        extended("userTask", '<flowable:taskListener event="complete"><flowable:script '
                 'scriptFormat="groovy">task.setVariable("a", 1)</flowable:script>'
                 '</flowable:taskListener>'),
        "flowable:taskListener on userTask 'x' is not run (event 'complete', a groovy "
        "script)"),
    "zeebe:executionListeners": (
        extended("serviceTask", JOB + '<zeebe:executionListeners><zeebe:executionListener '
                 'eventType="end" type="audit"/><zeebe:executionListener eventType="start" '
                 'type="check"/></zeebe:executionListeners>'),
        "zeebe:executionListeners on serviceTask 'x' is not run (end job 'audit', start job "
        "'check')"),
    "zeebe:taskListeners": (
        extended("userTask", '<zeebe:taskListeners><zeebe:taskListener eventType="complete" '
                 'type="check"/></zeebe:taskListeners>'),
        "zeebe:taskListeners on userTask 'x' is not run (complete job 'check'): the engine "
        "calls no code when a user task is created, assigned or completed"),
}


@pytest.mark.parametrize("node, says", LISTENERS.values(), ids=LISTENERS.keys())
def test_a_listener_is_a_warning_naming_it_the_process_runs_without_it_and_exports_it(
        node, says):
    """A listener calls code the engine does not run: a warning on its element naming the
    kind, the event and the code; the process runs past it, and the export keeps it."""
    model = bpm.load_bpmn(one_node(node))
    [note] = model.report
    assert (note.severity, note.element) == ("warning", "x")
    assert note.message.startswith(says)
    eng = bpm.Engine()
    process = model.process()
    instance = eng.start(process)
    eng.run()
    for task in eng.tasks():
        eng.complete_task(task.id)
    for job in eng.fetch_jobs("charge"):
        eng.complete_job(job.id)
    eng.run()
    assert instance.state == "completed"
    assert says.split(" on ")[0].split(":")[1] in model.to_bpmn()


def test_an_expression_listener_that_sets_a_variable_says_that_is_not_done_either():
    """``${execution.setVariable('done', true)}`` would set a value: the note says it is not
    set, so what reads it meets it missing (an incident), never a guess."""
    [note] = bpm.load_bpmn(one_node(extended(
        "task", '<activiti:executionListener event="end" expression='
                '"${execution.setVariable(\'done\', true)}"/>'))).report
    assert note.severity == "warning"
    assert "(it would set 'done' to true: that is not done either" in note.message


@pytest.mark.parametrize("node, says", NOT_RUN.values(), ids=NOT_RUN.keys())
def test_a_vendor_extension_that_changes_data_or_behaviour_is_an_error_naming_it(node, says):
    """Mappings and listeners the engine does not run are error notes on their element,
    naming the extension (they used to be dropped silently: the process ran without
    them)."""
    model = bpm.load_bpmn(one_node(node))
    [note] = model.report
    assert (note.severity, note.element) == ("error", "x")
    assert note.message.startswith(says)
    with pytest.raises(bpm.ModelError, match="is not run"):
        model.process()


def test_listeners_on_a_flow_or_the_process_are_warnings_too():
    """An execution listener on a sequence flow (taken) or on the process (start, end)."""
    listener = ('<extensionElements><camunda:executionListener event="take" '
                'expression="${audit.log()}"/></extensionElements>')
    doc = one_node('<task id="x"/>').replace(
        '<sequenceFlow id="f1" sourceRef="s" targetRef="x"/>',
        f'<sequenceFlow id="f1" sourceRef="s" targetRef="x">{listener}</sequenceFlow>'
    ).replace('isExecutable="true">', f'isExecutable="true">{listener}')
    model = bpm.load_bpmn(doc)
    assert [(n.severity, n.element, n.message.split(" (")[0]) for n in model.report] == [
        ("warning", "p", "camunda:executionListener on process 'p' is not run"),
        ("warning", "f1", "camunda:executionListener on sequenceFlow 'f1' is not run")]
    assert model.process()


def test_a_call_activity_keeps_reading_its_zeebe_io_mapping():
    """A call activity's same-name mappings are its inputs and outputs, not a refusal."""
    e, report = element(extended("callActivity", '<zeebe:calledElement processId="bill"/>'
                                 '<zeebe:ioMapping><zeebe:input source="=total" '
                                 'target="total"/></zeebe:ioMapping>'))
    assert (e.kind, e.inputs, report) == ("call_activity", ("total",), [])
