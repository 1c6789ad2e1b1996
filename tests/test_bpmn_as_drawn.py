"""Design-review mode: ``load_bpmn(path, run_as_drawn=True)`` runs a diagram that has no
execution details, and its report says each thing the run assumes ("as drawn: ...").

The small diagrams here are written as a non-executable modeller exports them: BPMN 2.0
only, no vendor extension. The MIWG reference models (tests/data/miwg and its ``more/``
folder, CC BY 3.0, see their README) are the larger ones."""

import pytest
from bpmn_shapes import MIWG_DIR
from conftest import ended_at

import gobpm_nb as bpm

MIWG_FILES = sorted([*MIWG_DIR.glob("*.bpmn"), *(MIWG_DIR / "more").glob("*.bpmn")])


def diagram(body, extra=""):
    """A modeller's export of one process holding ``body`` (``extra``: root elements)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="defs"
    targetNamespace="http://example.com/review">
  {extra}
  <process id="p" isExecutable="false">
    {body}
  </process>
</definitions>"""


def line(*ids):
    """Sequence flows along a chain of ids (``a->b``)."""
    return "".join(f'<sequenceFlow id="{a}-{b}" sourceRef="{a}" targetRef="{b}"/>'
                   for a, b in zip(ids, ids[1:], strict=False))


def drawn(body, extra=""):
    return bpm.load_bpmn(diagram(body, extra), run_as_drawn=True)


def assumed(model, element):
    """The messages of the notes saying what the run assumes about ``element``."""
    return [n.message for n in model.report
            if n.element == element and n.message.startswith("as drawn: ")]


def drive(eng, inst, choose=0, rounds=6):
    """Complete every task, take the ``choose``-th flow at every decision, let time pass."""
    for _ in range(rounds):
        eng.run()
        for task in [t for t in eng.tasks() if t.instance == inst.id]:
            eng.complete_task(task.id)
        for d in eng.decisions(inst.id):
            eng.decide(inst.id, d.flows[min(choose, len(d.flows) - 1)][0], d.track)
        eng.advance("P1D")
    eng.run()


def test_a_message_event_without_message_ref_waits_for_the_message_its_name_names():
    """As drawn it waits for 'Payment received', correlated by that name alone, and the
    report says so; as written only an event without a name cannot run."""
    body = ('<startEvent id="s"/><intermediateCatchEvent id="paid" name="Payment received">'
            '<messageEventDefinition/></intermediateCatchEvent><endEvent id="e"/>'
            + line("s", "paid", "e"))
    with pytest.raises(bpm.ModelError, match="no messageRef and no name"):
        bpm.load_bpmn(diagram(body.replace(' name="Payment received"', ''))).process()
    model = drawn(body)
    (note,) = assumed(model, "paid")
    assert "'Payment received'" in note and "name alone" in note
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert eng.publish_message("Payment received") == inst.id
    eng.run()
    assert inst.state == "completed"


def test_a_message_without_a_correlation_key_reaches_the_first_instance_waiting():
    """A <message> with no key: a message published without one reaches the waits in the
    order they were armed."""
    model = drawn('<startEvent id="s"/><receiveTask id="r" messageRef="m"/><endEvent id="e"/>'
                  + line("s", "r", "e"), '<message id="m" name="go"/>')
    assert any("no correlation key" in n for n in assumed(model, "r"))
    eng = bpm.Engine()
    first, second = eng.start(model.process()), eng.start(model.process())
    eng.run()
    assert eng.publish_message("go") == first.id
    assert eng.publish_message("go") == second.id


def test_no_key_is_a_model_option_and_no_key_given_is_still_refused():
    """``key=bpm.NO_KEY`` makes a message wait correlated by name alone; leaving key out is
    still a problem validate() names."""
    p = bpm.Process("wait")
    p.start("s")
    p.message_catch("c", message="go", key=bpm.NO_KEY)
    p.end("e")
    p.flow("s", "c", "e")
    eng = bpm.Engine()
    inst = eng.start(p.validate())
    eng.run()
    assert eng.publish_message("go", key="someone") is None  # a key: not this wait's
    assert eng.publish_message("go") == inst.id
    q = bpm.Process("keyless")
    q.start("s")
    q.message_catch("c", message="go")
    q.flow("s", "c")
    with pytest.raises(bpm.ModelError, match="has no correlation key"):
        q.validate()


def test_a_signal_or_message_throw_without_a_reference_uses_its_name():
    """A signal throw and a message end with no reference send what their names say."""
    model = drawn('<startEvent id="s"/><intermediateThrowEvent id="t" name="Alarm">'
                  '<signalEventDefinition/></intermediateThrowEvent>'
                  '<endEvent id="e" name="Shipped"><messageEventDefinition/></endEvent>'
                  + line("s", "t", "e"))
    eng = bpm.Engine()
    eng.start(model.process())
    eng.run()
    sent = {(f.kind, f.details.get("signal") or f.details.get("message")) for f in eng.facts
            if f.kind in ("signal_broadcast", "message_dropped")}
    assert sent == {("signal_broadcast", "Alarm"), ("message_dropped", "Shipped")}
    assert assumed(model, "t") and assumed(model, "e")


def test_tasks_without_an_implementation_and_a_business_rule_task_pass_through():
    """A service task with no implementation and a business rule task (which the engine does
    not run) pass; the rule task's note says it stands in as a task that does nothing."""
    model = drawn('<startEvent id="s"/><serviceTask id="svc"/><businessRuleTask id="rule"/>'
                  '<endEvent id="e"/>' + line("s", "svc", "rule", "e"))
    assert any("does nothing" in n for n in assumed(model, "rule"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert ended_at(inst) == ["e"]


GATEWAY = ('<startEvent id="s"/><exclusiveGateway id="ok" name="OK?"/>'
           '<userTask id="ship"/><userTask id="fix"/><endEvent id="shipped"/>'
           '<endEvent id="fixed"/>' + line("s", "ok") +
           '<sequenceFlow id="yes" sourceRef="ok" targetRef="ship"/>'
           '<sequenceFlow id="no" sourceRef="ok" targetRef="fix"{cond}/>'
           + line("ship", "shipped") + line("fix", "fixed"))


def test_a_gateway_whose_flows_have_no_condition_is_a_decision_a_person_takes():
    """The track waits at the gateway; eng.decide sends it down the flow chosen."""
    model = drawn(GATEWAY.format(cond=""))
    assert any("it is a decision" in n for n in assumed(model, "ok"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert [d.gateway for d in eng.decisions()] == ["ok"]
    eng.decide(inst.id, "fix")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["fix"]


def test_a_condition_the_engine_cannot_read_makes_its_gateway_a_decision():
    """A JUEL condition calling a method is an error as written; as drawn it is not read and
    the gateway decides."""
    body = GATEWAY.replace('<sequenceFlow id="no" sourceRef="ok" targetRef="fix"{cond}/>',
                           '<sequenceFlow id="no" sourceRef="ok" targetRef="fix">'
                           '<conditionExpression>${order.isLate()}</conditionExpression>'
                           '</sequenceFlow>')
    assert bpm.load_bpmn(diagram(body)).errors("p")
    model = drawn(body)
    assert any("its gateway decides" in n for n in assumed(model, "no"))
    eng = bpm.Engine()
    eng.start(model.process())
    eng.run()
    assert [d.gateway for d in eng.decisions()] == ["ok"]


INCLUSIVE = ('<startEvent id="s"/><inclusiveGateway id="ok" name="Which?"/>'
             '<userTask id="ship"/><userTask id="fix"/><inclusiveGateway id="both"/>'
             '<endEvent id="done"/>' + line("s", "ok") +
             '<sequenceFlow id="yes" sourceRef="ok" targetRef="ship"/>'
             '<sequenceFlow id="no" sourceRef="ok" targetRef="fix"/>'
             + line("ship", "both") + line("fix", "both") + line("both", "done"))


def test_an_inclusive_gateway_as_drawn_lets_the_person_pick_several_flows():
    """An inclusive gateway without conditions is a decision of one or more flows: both
    taken, both tasks run, and the inclusive join after them fires once."""
    model = drawn(INCLUSIVE)
    assert any("one or more flows" in n for n in assumed(model, "ok"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    (view,) = eng.decisions()
    assert view.several
    eng.decide(inst.id, ["fix", "yes"])
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["fix", "ship"]
    for task in eng.tasks():
        eng.complete_task(task.id)
    eng.run()
    assert ended_at(inst) == ["done"]


def test_a_decision_as_drawn_can_be_rewound_and_made_the_other_way():
    """Rewind to before the choice, choose the other flow: the instance ends the other way."""
    eng = bpm.Engine()
    inst = eng.start(drawn(GATEWAY.format(cond="")).process())
    eng.run()
    mark = eng.facts[-1].seq
    eng.decide(inst.id, "yes")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["ship"]
    eng.rewind(mark)
    eng.decide(inst.id, "no")
    drive(eng, inst)
    assert ended_at(inst) == ["fixed"]


def test_a_process_without_a_start_event_starts_at_every_node_without_incoming_flow():
    """BPMN 2.0's implicit start: both tasks nothing leads to start, together."""
    model = drawn('<userTask id="a"/><userTask id="b"/><endEvent id="e1"/><endEvent id="e2"/>'
                  + line("a", "e1") + line("b", "e2"))
    assert any("implicit start" in n for n in assumed(model, "p"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["a", "b"]
    drive(eng, inst)
    assert inst.state == "completed"


def test_a_subprocess_drawn_collapsed_and_empty_starts_and_ends_at_once():
    """An empty subprocess has nothing to run: as drawn, the token passes through it."""
    body = '<startEvent id="s"/><subProcess id="sub"/><endEvent id="e"/>' + line("s", "sub", "e")
    assert bpm.load_bpmn(diagram(body)).errors("p")
    model = drawn(body)
    assert any("starts and ends at once" in n for n in assumed(model, "sub"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert inst.state == "completed"


def test_a_timer_without_a_definition_waits_for_nothing():
    """A timer event with no timeDuration, timeDate or timeCycle fires at once (PT0S)."""
    model = drawn('<startEvent id="s"/><intermediateCatchEvent id="t" name="Wait">'
                  '<timerEventDefinition/></intermediateCatchEvent><endEvent id="e"/>'
                  + line("s", "t", "e"))
    assert any("PT0S" in n for n in assumed(model, "t"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.advance("PT0S")
    eng.run()
    assert inst.state == "completed"


def test_a_call_activity_that_names_no_process_passes():
    """With no calledElement there is nothing to call: the token passes through it."""
    model = drawn('<startEvent id="s"/><callActivity id="call"/><endEvent id="e"/>'
                  + line("s", "call", "e"))
    assert any("names no process to call" in n for n in assumed(model, "call"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    assert inst.state == "completed"


def test_several_plain_start_events_let_the_person_choose_where_an_instance_starts():
    """Two start events: an instance waits at a decision between them."""
    model = drawn('<startEvent id="web"/><startEvent id="phone"/><userTask id="take"/>'
                  '<endEvent id="e"/>' + line("web", "take", "e") + line("phone", "take"))
    assert any("2 plain start events" in n for n in assumed(model, "p"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.decide(inst.id, "phone")
    drive(eng, inst)
    assert inst.state == "completed"
    assert "phone" in {f.node for f in eng.facts} and "web" not in {f.node for f in eng.facts}


def test_a_conditional_start_the_engine_cannot_read_is_one_of_the_starts_to_choose():
    """A conditional start whose condition is not read stands for a plain start: beside
    another plain start, the person chooses between the two (MIWG B.2.0 draws this); a
    readable one stays a conditional start, and the other start is the only plain one."""
    unread = ('<startEvent id="hot"><conditionalEventDefinition><condition>'
              'temperature is rising</condition></conditionalEventDefinition></startEvent>')
    model = drawn('<startEvent id="web"/>' + unread + '<userTask id="take"/><endEvent id="e"/>'
                  + line("web", "take", "e") + line("hot", "take"))
    assert any("2 plain start events" in n for n in assumed(model, "p"))
    eng = bpm.Engine()
    inst = eng.start(model.process())
    eng.run()
    eng.decide(inst.id, "hot")
    drive(eng, inst)
    assert inst.state == "completed"
    read = drawn('<startEvent id="web"/><startEvent id="hot"><conditionalEventDefinition>'
                 '<condition>temperature &gt; 30</condition></conditionalEventDefinition>'
                 '</startEvent><userTask id="take"/><endEvent id="e"/>'
                 + line("web", "take", "e") + line("hot", "take"))
    assert not any("plain start events" in n for n in assumed(read, "p"))
    assert eng.start_on_conditions({"temperature": 31}, read.process()) != []


def test_model_process_as_drawn_reads_the_file_in_design_review_mode():
    """``model.process(id, as_drawn=True)`` on a model read as written gives the process as
    drawn; the drawn model's report holds the assumptions."""
    model = bpm.load_bpmn(diagram(GATEWAY.format(cond="")))
    p = model.process("p", as_drawn=True)
    assert p.definition().nodes["ok"].decision is not None
    assert model.drawn().report is not model.report
    assert assumed(model.drawn(), "ok") and not assumed(model, "ok")


def test_to_bpmn_of_a_model_read_as_drawn_writes_what_was_read():
    """The assumptions (added start events, decisions, stand-ins) are not written: the file
    comes back as it was, and read as written it is refused for the same reasons."""
    text = diagram('<userTask id="a"/><exclusiveGateway id="g"/><endEvent id="e1"/>'
                   '<endEvent id="e2"/><businessRuleTask id="r"/>'
                   + line("a", "g", "e1") + line("g", "r", "e2"))
    written, drawn_model = bpm.load_bpmn(text), bpm.load_bpmn(text, run_as_drawn=True)
    assert drawn_model.to_bpmn() == written.to_bpmn()
    again = bpm.load_bpmn(drawn_model.to_bpmn())
    assert [n.message for n in again.errors("p")] == [n.message for n in written.errors("p")]
    assert "as drawn" not in drawn_model.processes["p"].to_bpmn()


def test_a_miwg_model_with_default_flows_on_activities_runs_to_its_end_as_drawn():
    """MIWG A.2.1 (default flows on activities) runs as written; as drawn it reaches its end
    once the person has decided at its gateway."""
    path, pid = MIWG_DIR / "A.2.1.bpmn", "_To9ZoTOCEeSknpIVFCxNIQ"
    assert not bpm.load_bpmn(path).errors(pid)
    model = bpm.load_bpmn(path, run_as_drawn=True)
    eng = bpm.Engine()
    inst = eng.start(model.process(pid))
    drive(eng, inst)
    assert inst.state == "completed"
    assert any(f.kind == "decision_made" for f in eng.facts)


def _runnable(model):
    return [(pid, model.process(pid)) for pid in model.processes]


def _begin(eng, p):
    """A new instance: by eng.start(), or by the first trigger of its start events."""
    d = p.definition()
    if d.start:
        return eng.start(p)
    node = d.nodes[d.instance_starts[0]]
    if getattr(node, "message", None):
        iid = eng.publish_message(node.message)
    elif getattr(node, "signal", None):
        eng.broadcast_signal(node.signal)
        iid = None
    else:
        eng.advance("P400D")
        iid = None
    eng.run()
    return eng.instance(iid) if iid else None


@pytest.mark.parametrize("path", MIWG_FILES, ids=lambda p: p.stem)
def test_every_miwg_model_runs_in_design_review_mode(path):
    """Every process of every MIWG reference model is returned by process(); each starts and
    runs a few rounds of tasks, decisions and time without an exception."""
    model = bpm.load_bpmn(path, run_as_drawn=True)
    for _pid, p in _runnable(model):
        eng = bpm.Engine()
        for _, other in _runnable(model):
            if other is not p:
                eng.deploy(other)
        inst = _begin(eng, p)
        if inst is not None:
            drive(eng, inst, rounds=4)


def test_a_miwg_process_that_runs_as_written_and_needs_no_assumption_runs_the_same():
    """Where design-review mode assumes nothing about a process, its facts are the same as
    written (what it does assume, its notes say)."""
    compared = []
    for path in MIWG_FILES:
        written, as_drawn = bpm.load_bpmn(path), bpm.load_bpmn(path, run_as_drawn=True)
        touched = {n.process for n in as_drawn.report if n.message.startswith("as drawn: ")}
        for pid in written.processes:
            if written.errors(pid) or pid in touched:
                continue
            runs = []
            for model in (written, as_drawn):
                eng = bpm.Engine()
                inst = _begin(eng, model.process(pid))
                if inst is not None:
                    drive(eng, inst, rounds=3)
                runs.append([(f.kind, f.instance, f.track, f.node, f.details)
                             for f in eng.facts])
            assert runs[0] == runs[1], f"{path.stem} {pid}"
            compared.append(pid)
    assert len(compared) >= 5


def test_a_process_timer_start_naming_a_field_waits_for_nothing_as_drawn():
    """A Visio export's timer start whose date is a name (``_undefined``): as written it is
    an expression no deployment can evaluate (no data yet), an error naming it; as drawn
    the timer waits for nothing, said as an assumption, and the process runs to its end."""
    body = ('<startEvent id="s"><timerEventDefinition><timeDate>_undefined</timeDate>'
            '</timerEventDefinition></startEvent><task id="t"/><endEvent id="e"/>'
            + line("s", "t", "e"))
    written = bpm.load_bpmn(diagram(body.replace('isExecutable="false"', "")))
    assert any("names field" in n.message and "no instance data" in n.message
               for n in written.errors("p"))
    model = drawn(body)
    assert any("_undefined" in m and "waits for nothing" in m for m in assumed(model, "s"))
    eng = bpm.Engine(start="2026-01-05T09:00:00")
    eng.deploy(model.process("p"))
    eng.run()
    assert [i.state for i in eng.instances()] == ["completed"]


def test_a_file_without_a_target_namespace_runs_as_written_with_a_warning():
    """BPMN 2.0's schema requires ``targetNamespace`` on ``<definitions>`` (Modelio leaves
    it out); nothing in a run reads it, so as written the process runs, and a warning says
    the file is not valid."""
    text = diagram('<startEvent id="s"/><endEvent id="e"/>' + line("s", "e")).replace(
        '\n    targetNamespace="http://example.com/review"', "")
    model = bpm.load_bpmn(text)
    assert not model.errors("p")
    assert any("targetNamespace" in n.message and n.severity == "warning"
               for n in model.report)
    eng = bpm.Engine()
    eng.start(model.process("p"))
    eng.run()
    assert [i.state for i in eng.instances()] == ["completed"]
