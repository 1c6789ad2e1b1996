"""User tasks, worker jobs, script and inline service tasks."""

import pytest
from conftest import ended_at, kinds, snapshot

import gobpm_nb as bpm
from gobpm_nb.engine.state import incident
from gobpm_nb.engine.state.values import json_copy


def review():
    p = bpm.Process("review")
    p.start("s")
    p.user_task("check", "Check the order", assignee="bob")
    p.end("e")
    p.flow("s", "check", "e")
    return p


def test_a_user_task_waits_in_the_inbox_until_completed():
    """The task shows in the inbox with a deterministic id; its outputs merge into the data."""
    eng = bpm.Engine()
    inst = eng.start(review(), {"n": 1})
    eng.run()
    (task,) = eng.tasks()
    assert (task.id, task.node, task.name, task.assignee) == ("i1:check:1", "check",
                                                               "Check the order", "bob")
    eng.complete_task(task.id, {"ok": True})
    assert eng.tasks() == []
    eng.run()
    assert inst.state == "completed" and inst.data == {"n": 1, "ok": True}
    assert kinds(eng).count("task_completed") == 1


@pytest.mark.parametrize("task_id, message", [("nope", "unknown task 'nope'"),
                                              ("i1:check:1", "already completed")])
def test_completing_an_unknown_or_completed_task_is_refused(task_id, message):
    """An unknown or already completed task id raises EngineError naming it; nothing changes."""
    eng = bpm.Engine()
    eng.start(review())
    eng.run()
    eng.start(review())
    eng.run()
    eng.complete_task("i1:check:1")
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=message):
        eng.complete_task(task_id, {"x": 1})
    assert snapshot(eng) == before


def test_task_outputs_must_be_json():
    """Outputs that are not a dict of JSON values are refused and the task stays open."""
    eng = bpm.Engine()
    eng.start(review())
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match="outputs of task"):
        eng.complete_task("i1:check:1", {"x": {1, 2}})
    assert snapshot(eng) == before


def worker(boundary=False):
    p = bpm.Process("charge")
    p.start("s")
    p.service_task("charge", topic="payments")
    if boundary:
        p.error_boundary("declined", attached_to="charge", error="DECLINED")
        p.end("refused")
        p.flow("declined", "refused")
    p.end("e")
    p.flow("s", "charge", "e")
    return p


def test_worker_jobs_are_fetched_locked_and_completed():
    """fetch_jobs locks open jobs of a topic; complete_job merges outputs and moves on."""
    eng = bpm.Engine()
    inst = eng.start(worker(), {"sum": 5})
    eng.run()
    (job,) = eng.fetch_jobs("payments", worker="w1")
    assert (job.id, job.topic, job.worker, job.data) == ("i1:charge:1", "payments", "w1",
                                                         {"sum": 5})
    assert eng.fetch_jobs("payments", worker="w2") == []
    eng.complete_job(job.id, {"receipt": "r-1"})
    eng.run()
    assert inst.state == "completed" and inst.data["receipt"] == "r-1"


def test_a_failed_job_goes_to_its_matching_error_boundary():
    """fail_job with an error code caught by an error boundary follows the boundary."""
    eng = bpm.Engine()
    inst = eng.start(worker(boundary=True))
    eng.run()
    (job,) = eng.fetch_jobs("payments", worker="w1")
    eng.fail_job(job.id, "DECLINED")
    eng.run()
    assert ended_at(inst) == ["refused"]


def test_a_failed_job_with_no_boundary_fails_the_instance():
    """An uncaught job failure is an incident and the instance fails."""
    eng = bpm.Engine()
    inst = eng.start(worker())
    eng.run()
    (job,) = eng.fetch_jobs("payments", worker="w1")
    eng.fail_job(job.id, "BOOM")
    eng.run()
    assert inst.state == "failed"
    assert [f.details.get("error") for f in eng.facts if f.kind == "incident"] == ["BOOM"]


@pytest.mark.parametrize("call, message", [
    (lambda e: e.fail_job("nope", "X"), "unknown job 'nope'"),
    (lambda e: e.complete_job("nope"), "unknown job 'nope'"),
    (lambda e: e.complete_job("i1:charge:1"), "not fetched"),
])
def test_unknown_or_unfetched_jobs_are_refused(call, message):
    """Failing an unknown job or completing one nobody fetched raises and changes nothing."""
    eng = bpm.Engine()
    eng.start(worker())
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=message):
        call(eng)
    assert snapshot(eng) == before


def test_script_and_inline_service_tasks_get_a_copy_and_merge_what_they_return():
    """A callable sees a copy of the data; the dict it returns is merged in."""
    def script(data):
        data["sneaky"] = True
        return {"doubled": data["n"] * 2}

    p = bpm.Process("calc")
    p.start("s")
    p.script_task("double", fn=script)
    p.service_task("tag", fn=lambda d: {"tag": "x"})
    p.end("e")
    p.flow("s", "double", "tag", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"n": 4})
    eng.run()
    assert inst.data == {"n": 4, "doubled": 8, "tag": "x"}


def test_what_a_script_returns_is_copied_once_and_later_changes_to_it_change_nothing(
        monkeypatch):
    """The returned dict is checked and copied once (what the tape keeps is what is merged);
    the function changing it afterwards reaches neither the data nor a replay."""
    kept = {"items": [1, 2]}
    p = bpm.Process("calc")
    p.start("s")
    p.script_task("give", fn=lambda d: kept)
    p.end("e")
    p.flow("s", "give", "e")
    copies = []
    monkeypatch.setattr(incident, "json_copy",
                        lambda value, where: copies.append(where) or json_copy(value, where))
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert copies == ["data"]
    kept["items"].append(3)
    assert inst.data == {"items": [1, 2]}
    eng.rewind(0)
    eng.replay()
    assert inst.data == {"items": [1, 2]}


def failing(boundary):
    def boom(data):
        raise ValueError("bad")

    p = bpm.Process("fail")
    p.start("s")
    p.script_task("work", fn=boom)
    if boundary:
        p.error_boundary("caught", attached_to="work", error=boundary)
        p.end("handled")
        p.flow("caught", "handled")
    p.end("e")
    p.flow("s", "work", "e")
    return p


def test_an_exception_in_a_callable_goes_to_a_matching_error_boundary():
    """An exception whose class name matches an error boundary follows the boundary."""
    eng = bpm.Engine()
    inst = eng.start(failing("ValueError"))
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["handled"]
    work, fork = inst.tracks
    assert work.state == "cancelled" and fork.parents == (work.id,)


def test_an_uncaught_exception_fails_the_instance_with_an_incident():
    """No matching boundary: an incident names the task and the error, the instance fails."""
    eng = bpm.Engine()
    inst = eng.start(failing("KeyError"))
    eng.run()
    assert inst.state == "failed"
    f = [f for f in eng.facts if f.kind == "incident"][0]
    assert f.node == "work" and f.details["error"] == "ValueError"
    assert eng.stats()["coroutines"] == 0


def test_a_callable_returning_something_else_than_a_dict_is_an_incident():
    """A script returning a list fails its instance with a cause naming the type."""
    p = bpm.Process("bad")
    p.start("s")
    p.script_task("work", fn=lambda d: [1])
    p.end("e")
    p.flow("s", "work", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed"
    assert "list" in [f for f in eng.facts if f.kind == "incident"][0].details["cause"]
