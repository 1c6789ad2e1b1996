"""Every element the builder supports, read from a small BPMN file: it imports, runs on the
engine to its end state, and exports (file back, and written afresh) to the same model."""

import pytest
from bpmn_shapes import BPMN_DIR, c14n, elements, flows

import gobpm_nb as bpm

FILES = ["tasks", "camunda7", "messages", "signals", "timers", "gateways", "errors",
         "terminate", "conditional", "correlation"]


def load(name):
    return bpm.load_bpmn(BPMN_DIR / f"{name}.bpmn")


def left(eng, inst):
    """The nodes an instance left, in order."""
    return [f.node for f in eng.facts if f.kind == "node_left" and f.instance == inst.id]


def ended_at(inst):
    return sorted(t.node for t in inst.tracks if t.state == "completed")


@pytest.mark.parametrize("name", FILES)
def test_each_element_file_imports_with_no_error(name):
    """Each file's executable process imports with no error note and validates."""
    model = load(name)
    assert [n for n in model.report if n.severity == "error"] == []
    assert model.process().validate()


@pytest.mark.parametrize("name", FILES)
def test_each_element_file_exports_back_unchanged(name):
    """to_bpmn gives the file back: the same canonical XML, and it re-imports the same."""
    model = load(name)
    text = model.to_bpmn()
    assert c14n(text) == c14n((BPMN_DIR / f"{name}.bpmn").read_bytes())
    again = bpm.load_bpmn(text).process()
    assert elements(again) == elements(model.process())
    assert flows(again) == flows(model.process())


@pytest.mark.parametrize("name", FILES)
def test_each_element_file_written_afresh_reimports_the_same_model(name):
    """The imported process written as a new file (the builder's export) reads back with
    the same elements, fields and flows (flows compared by their ends)."""
    p = load(name).process()
    p.origin = None  # forget the file: write it as a process built in Python
    again = bpm.load_bpmn(p.to_bpmn())
    assert [n for n in again.report if n.severity == "error"] == []
    assert elements(again.process()) == elements(p)
    assert flows(again.process(), ids=False) == flows(p, ids=False)


def test_tasks_run_plain_manual_script_job_user_and_milestone():
    """Plain, manual and script tasks pass through (a script runs its attached function),
    the worker job and the assigned user task wait, the milestone passes: completed."""
    p = bpm.Process.from_bpmn(BPMN_DIR / "tasks.bpmn")
    p.set_function("total", lambda d: {"total": d["price"] * d["qty"]})
    eng = bpm.Engine()
    inst = eng.start(p, data={"price": 3, "qty": 4})
    eng.run()
    jobs = eng.fetch_jobs("charge")
    assert [(j.topic, j.node) for j in jobs] == [("charge", "charge")]
    eng.complete_job(jobs[0].id, {"charged": True})
    eng.run()
    assert [(t.node, t.assignee) for t in eng.tasks()] == [("approve", "alice")]
    eng.complete_task(eng.tasks()[0].id, {"ok": True})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"price": 3, "qty": 4, "total": 12, "charged": True, "ok": True}
    assert left(eng, inst) == ["start", "check", "pack", "total", "charge", "approve",
                               "milestone", "end"]


def test_an_imported_script_task_without_a_function_passes_data_through():
    """With no function attached, the script task changes nothing and the data is kept."""
    eng = bpm.Engine()
    inst = eng.start(load("tasks").process(), data={"price": 3})
    eng.run()
    eng.complete_job(eng.fetch_jobs("charge")[0].id)
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert (inst.state, inst.data) == ("completed", {"price": 3})


@pytest.mark.parametrize("data, end", [({"score": 80, "blocked": False}, "high"),
                                       ({"score": 80, "blocked": True}, "low"),
                                       ({"score": 10, "blocked": False}, "low")])
def test_camunda7_external_task_juel_condition_and_default_flow(data, end):
    """The external task is a job on its topic; the JUEL condition picks the review, else
    the default flow; the review goes to camunda:assignee."""
    eng = bpm.Engine()
    inst = eng.start(load("camunda7").process())
    eng.run()
    eng.complete_job(eng.fetch_jobs("rating")[0].id, data)
    eng.run()
    if end == "high":
        assert [t.assignee for t in eng.tasks()] == ["bob"]
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    assert inst.state == "completed" and ended_at(inst) == [end]


def test_messages_send_receive_throw_catch_and_a_non_interrupting_boundary():
    """The receive task waits on its key; the message boundary fires without interrupting;
    the payment wakes it, the receipt is published with its payload, the ack ends it."""
    eng = bpm.Engine()
    inst = eng.start(load("messages").process(), data={"orderId": "o-1", "amount": 5})
    eng.run()
    assert [(h.node, h.keys) for h in eng.holders()] == [("wait_paid", ("paid", "o-1")),
                                                         ("reminder", ("remind", "o-1"))]
    eng.publish_message("remind", key="o-1")
    eng.run()
    assert ended_at(inst) == ["reminded"]
    eng.publish_message("paid", key="o-2")
    eng.publish_message("paid", key="o-1", payload={"paid": True})
    eng.run()
    eng.publish_message("ack", key="o-1")
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["done", "reminded"]
    assert inst.data["paid"] is True
    sent = [f.details["message"] for f in eng.facts
            if f.kind in ("message_dropped", "message_buffered", "message_correlated")]
    assert "ping" in sent and "receipt" in sent


def test_signals_throw_catch_and_an_interrupting_boundary():
    """The throw broadcasts 'started'; 'go' moves the catch on; 'stop' interrupts the work."""
    eng = bpm.Engine()
    inst = eng.start(load("signals").process())
    eng.run()
    assert [f.details["signal"] for f in eng.facts if f.kind == "signal_broadcast"] == \
        ["started"]
    eng.broadcast_signal("go")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["work"]
    eng.broadcast_signal("stop")
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["stopped"]
    assert eng.tasks() == []


def test_timers_duration_cycle_and_interrupting_boundaries():
    """An hour's wait, then the task: the cycle nags at 8 h and 16 h, the 24 h boundary
    escalates and cancels the task."""
    eng = bpm.Engine()
    inst = eng.start(load("timers").process())
    eng.advance("PT1H")
    assert [t.node for t in eng.tasks()] == ["approve"]
    eng.advance("PT25H")
    assert inst.state == "completed"
    assert ended_at(inst) == ["escalated", "nagged", "nagged"]


def test_timers_date_catch_waits_until_its_date():
    """Completing the task in time leads to the timeDate catch, which fires on the 5th."""
    eng = bpm.Engine()
    inst = eng.start(load("timers").process())
    eng.advance("PT2H")
    eng.complete_task(eng.tasks()[0].id)
    eng.advance("P2D")
    assert inst.state == "active"
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["done"]
    assert eng.now.isoformat() == "2026-01-05T00:00:00+00:00"


@pytest.mark.parametrize("data, trigger, end", [
    ({"amount": 500, "vip": False}, None, "big"),
    ({"amount": 50, "vip": False}, None, "small"),
    ({"amount": 50, "vip": True, "orderId": "o-1"}, "timer", "timed_out"),
    ({"amount": 50, "vip": True, "orderId": "o-1"}, "message", "cancelled"),
])
def test_gateways_parallel_exclusive_with_default_and_event_based(data, trigger, end):
    """Split and join, then the exclusive gateway's FEEL conditions or its default; a vip
    waits in the event-based race that the timer or the message wins."""
    eng = bpm.Engine()
    inst = eng.start(load("gateways").process(), data=data)
    eng.run(until="2026-01-01T00:30:00Z")
    if trigger == "message":
        eng.publish_message("cancel", key="o-1")
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == [end]


def test_errors_boundary_catches_the_failed_job():
    """A job failed with DECLINED is caught by the error boundary that names it."""
    eng = bpm.Engine()
    inst = eng.start(load("errors").process())
    eng.run()
    eng.fail_job(eng.fetch_jobs("charge")[0].id, "DECLINED")
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["refused"]


def test_errors_end_event_throws_its_code_and_fails_the_instance():
    """Nothing catches the error end event's FATAL: the instance fails naming it."""
    eng = bpm.Engine()
    inst = eng.start(load("errors").process())
    eng.run()
    eng.complete_job(eng.fetch_jobs("charge")[0].id, {"total": 5000})
    eng.run()
    assert inst.state == "failed"
    assert [f.details.get("error") for f in eng.facts if f.kind == "instance_failed"] == \
        ["FATAL"]


def test_terminate_end_event_ends_the_instance():
    """The terminate end ends the whole instance; the waiting user task goes with it."""
    eng = bpm.Engine()
    inst = eng.start(load("terminate").process())
    eng.run()
    assert inst.state == "terminated" and eng.tasks() == []


def test_conditional_catch_and_boundary_fire_on_data():
    """Data set by one task fires the conditional catch (FEEL) and the interrupting
    conditional boundary (JUEL) on the other task."""
    eng = bpm.Engine()
    inst = eng.start(load("conditional").process(), data={"ready": False, "urgent": False})
    eng.run()
    decide = next(t for t in eng.tasks() if t.node == "decide")
    eng.complete_task(decide.id, {"ready": True, "urgent": True})
    eng.run()
    assert inst.state == "completed"
    assert ended_at(inst) == ["decided", "ready_end", "rushed"]


def test_standard_correlation_property_keys_the_receive_task():
    """A correlationProperty whose messagePath is a plain field is the receive task's key."""
    p = load("correlation").process()
    assert p.elements[1].key.field == "orderId"
    eng = bpm.Engine()
    inst = eng.start(p, data={"orderId": "A7"})
    eng.run()
    eng.publish_message("paid", key="B9")
    eng.run()
    assert inst.state == "active"
    eng.publish_message("paid", key="A7")
    eng.run()
    assert inst.state == "completed"


def test_set_function_refuses_what_is_not_a_script_or_service_task():
    """set_function names the element and what it is when it cannot attach a function."""
    p = load("tasks").process()
    with pytest.raises(bpm.ModelError, match="'approve' is a user_task"):
        p.set_function("approve", lambda d: None)
    with pytest.raises(bpm.ModelError, match="no element 'ghost'"):
        p.set_function("ghost", lambda d: None)
    with pytest.raises(bpm.ModelError, match="not callable"):
        p.set_function("total", "print")


def test_set_function_turns_a_worker_job_into_an_inline_service():
    """A service task given a function runs it inline instead of waiting for a worker."""
    p = load("errors").process()
    p.set_function("charge", lambda d: {"total": 10})
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["paid"]
