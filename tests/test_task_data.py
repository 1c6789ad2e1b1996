"""``Engine.task_data``: what an open user task sees, for the person who completes it: the
instance data under the task's inputs, its subprocess's inputs and its multi-instance
element variable; read from the checkpoint while the instance is away, never waking it."""

import pytest
from conftest import recover

import gobpm_nb as bpm


def reviews():
    """One review task per reviewer (a parallel multi-instance, element ``reviewer``)."""
    p = bpm.Process("reviews")
    p.start("s")
    p.user_task("review")
    p.multi_instance("review", collection="reviewers", element="reviewer",
                     output_collection="votes", output_element="vote")
    p.end("done")
    p.flow("s", "review", "done")
    return p


def approval():
    """A subprocess with an input, around a user task with inputs of its own."""
    p = bpm.Process("approval")
    p.start("s")
    with p.subprocess("handle") as sp:
        sp.start("hs")
        sp.user_task("approve")
        sp.end("he")
        sp.flow("hs", "approve", "he")
    p.mapping("handle", inputs={"limit": "order['total'] * 2"})
    p.mapping("approve", inputs={"form": "'approval'", "total": "order['total']"},
              outputs={"approved": "ok"})
    p.end("e")
    p.flow("s", "handle", "e")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_each_review_task_shows_whose_review_it_is(dehydrate):
    """Three tasks at one node: only their data tells the reviewers apart. The element
    variable is the task's own, never the instance's."""
    eng = bpm.Engine(dehydrate=dehydrate, min_dehydrate_wait="PT0S")
    inst = eng.start(reviews(), {"reviewers": ["ann", "bob", "cy"]})
    eng.run()
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    data = [eng.task_data(t.id) for t in eng.tasks()]
    assert sorted((d["reviewer"], d["loopCounter"]) for d in data) == \
        [("ann", 1), ("bob", 2), ("cy", 3)]
    assert all(d["reviewers"] == ["ann", "bob", "cy"] for d in data)
    seen = {eng.task_data(t.id)["reviewer"]: t.id for t in eng.tasks()}
    assert "reviewer" not in inst.data
    for name, tid in seen.items():
        eng.complete_task(tid, {"vote": name.upper()})
        eng.run()
    assert inst.state == "completed" and inst.data["votes"] == ["ANN", "BOB", "CY"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_task_sees_its_inputs_and_its_subprocess_inputs_which_never_reach_the_data(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate, min_dehydrate_wait="PT0S")
    inst = eng.start(approval(), {"order": {"total": 5}})
    eng.run()
    (task,) = eng.tasks()
    assert eng.task_data(task.id) == {"order": {"total": 5}, "limit": 10, "form": "approval",
                                      "total": 5}
    assert inst.data == {"order": {"total": 5}}
    eng.complete_task(task.id, {"ok": True})
    eng.run()
    assert inst.state == "completed" and inst.data == {"order": {"total": 5}, "approved": True}


def test_reading_a_dehydrated_task_wakes_nothing_and_changes_nothing():
    """Read from the checkpoint: the instance stays away, no fact, no event, no command;
    what the caller does to the copy it got changes nothing."""
    eng = bpm.Engine(min_dehydrate_wait="PT0S")
    inst = eng.start(approval(), {"order": {"total": 5}})
    eng.run()
    (task,) = eng.tasks()
    before = (inst.residency, eng.stats(), len(eng.history()), eng.checkpoint(inst.id))
    got = eng.task_data(task.id)
    got["order"]["total"] = 99
    got["limit"] = 0
    assert before == (inst.residency, eng.stats(), len(eng.history()), eng.checkpoint(inst.id))
    assert inst.residency == "dehydrated"
    assert eng.task_data(task.id)["order"] == {"total": 5}


def test_a_resident_tasks_data_is_a_copy():
    eng = bpm.Engine(dehydrate=False)
    inst = eng.start(approval(), {"order": {"total": 5}})
    eng.run()
    (task,) = eng.tasks()
    eng.task_data(task.id)["order"]["total"] = 99
    assert inst.data == {"order": {"total": 5}}
    assert eng.task_data(task.id)["total"] == 5


def test_a_task_read_after_restart_recovery(tmp_path):
    """The store alone: a recovered engine shows the same data for the same task id."""
    path = tmp_path / "r.db"
    eng = bpm.Engine(bpm.SQLiteStore(path), min_dehydrate_wait="PT0S")
    eng.start(reviews(), {"reviewers": ["ann", "bob"]})
    eng.run()
    before = {t.id: eng.task_data(t.id) for t in eng.tasks()}
    eng.store.close()
    again = recover(path, reviews())
    assert {t.id: again.task_data(t.id) for t in again.tasks()} == before
    again.store.close()


def test_a_completed_unknown_or_odd_task_id_is_an_engine_error_naming_it():
    eng = bpm.Engine()
    eng.start(approval(), {"order": {"total": 5}})
    eng.run()
    (task,) = eng.tasks()
    eng.complete_task(task.id, {"ok": True})
    with pytest.raises(bpm.EngineError, match=f"task '{task.id}' is already completed"):
        eng.task_data(task.id)
    with pytest.raises(bpm.EngineError, match="unknown task 'nope'"):
        eng.task_data("nope")
    for odd in (None, 7, ["a"]):
        with pytest.raises(bpm.EngineError, match="unknown task"):
            eng.task_data(odd)


def test_one_instances_tasks():
    """``tasks(instance)``: the open tasks of one instance; an unknown one is an
    EngineError naming it, as for ``holders(instance)``."""
    eng = bpm.Engine()
    a = eng.start(reviews(), {"reviewers": ["ann", "bob"]})
    b = eng.start(approval(), {"order": {"total": 5}})
    eng.run()
    assert [t.node for t in eng.tasks(a.id)] == ["review", "review"]
    assert [t.node for t in eng.tasks(b.id)] == ["approve"]
    assert eng.tasks() == eng.tasks(a.id) + eng.tasks(b.id)
    with pytest.raises(bpm.EngineError, match="unknown instance 'i9'"):
        eng.tasks("i9")
