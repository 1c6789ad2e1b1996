"""Multi-instance activities: parallel and sequential, over a collection or a cardinality,
with a completion condition and an output collection — each inner instance held on its own."""

import json

import pytest
from conftest import ended_at

import gobpm_nb as bpm


def reviews(sequential=False, completion=None, boundary=None):
    p = bpm.Process("reviews")
    p.start("s")
    p.user_task("review")
    p.multi_instance("review", sequential=sequential, collection="reviewers",
                     element="reviewer", output_collection="votes", output_element="vote",
                     completion=completion)
    p.end("done")
    p.flow("s", "review", "done")
    if boundary:
        p.timer_boundary("late", attached_to="review", duration=boundary)
        p.end("late_end")
        p.flow("late", "late_end")
    return p


def vote_all(eng, value=lambda t: 1):
    for t in eng.tasks():
        eng.complete_task(t.id, {"vote": value(t)})
        eng.run()


@pytest.mark.parametrize("dehydrate", [False, True])
def test_parallel_reviews_end_early_when_the_completion_condition_holds(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(reviews(completion="numberOfCompletedInstances >= 2"),
                     {"reviewers": ["ann", "bob", "cy"]})
    eng.run()
    assert [t.node for t in eng.tasks()] == ["review"] * 3
    tasks = eng.tasks()
    eng.complete_task(tasks[2].id, {"vote": "no"})
    eng.run()
    eng.complete_task(tasks[0].id, {"vote": "yes"})
    eng.run()
    assert inst.state == "completed" and eng.tasks() == [] and eng.holders() == []
    assert inst.data["votes"] == ["yes", None, "no"]  # item order, not completion order
    assert "vote" not in inst.data  # an inner instance's writes stay its own
    cancelled = [t for t in inst.tracks if t.state == "cancelled"]
    assert len(cancelled) == 1 and cancelled[0].origin == "many"  # bob's, never completed


def test_a_hundred_parallel_reviews_waiting_on_user_tasks_release_the_instance():
    eng = bpm.Engine()
    inst = eng.start(reviews(), {"reviewers": [f"r{n}" for n in range(100)]})
    eng.run()
    assert inst.residency == "dehydrated" and len(eng.holders()) == 100
    released = [f for f in eng.facts if f.kind == "dehydrated"][-1]
    assert released.details["waits"] == 100 and released.details["coroutines"] == 0
    vote_all(eng, lambda t: int(t.id.rsplit(":", 1)[1]))
    assert inst.state == "completed" and inst.data["votes"] == list(range(1, 101))


def test_sequential_instances_run_one_at_a_time_in_item_order():
    seen = []
    p = bpm.Process("seq")
    p.start("s")
    p.end("e")
    with p.subprocess("each") as sp:
        sp.script_task("note", fn=lambda d: seen.append((d["item"], d["loopCounter"])) or {})
        sp.user_task("check")
        sp.flow(sp.start("a"), "note", "check", sp.end("z"))
    p.multi_instance("each", sequential=True, collection="items", element="item")
    p.flow("s", "each", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"items": ["x", "y", "z"]})
    eng.run()
    for expected in range(3):
        assert len(eng.tasks()) == 1 and len(seen) == expected + 1
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    assert seen == [("x", 1), ("y", 2), ("z", 3)] and inst.state == "completed"


def test_a_cardinality_and_an_empty_collection():
    p = bpm.Process("card")
    p.start("s")
    p.script_task("count", fn=lambda d: {"n": d["loopCounter"] * 10})
    p.multi_instance("count", cardinality="k", output_collection="ns", output_element="n")
    p.end("e")
    p.flow("s", "count", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"k": 3})
    empty = eng.start(p, {"k": 0})
    eng.run()
    assert inst.data == {"k": 3, "ns": [10, 20, 30]}
    assert empty.data == {"k": 0, "ns": []} and empty.state == "completed"


@pytest.mark.parametrize("data,cause", [
    ({"reviewers": "ann"}, "is a str, not a list"),
    ({}, "names missing field"),
])
def test_a_collection_that_is_not_a_list_is_an_incident(data, cause):
    eng = bpm.Engine()
    inst = eng.start(reviews(), data)
    eng.run()
    assert inst.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "review" and cause in incident.details["cause"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_boundary_on_a_multi_instance_activity_cancels_every_inner_instance(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(reviews(boundary="PT1H"), {"reviewers": ["a", "b"]})
    eng.advance("PT10M")
    assert sorted(h.kind for h in eng.holders()) == ["task", "task", "timer"]
    eng.complete_task(eng.tasks()[0].id, {"vote": 1})
    eng.advance("PT2H")
    assert inst.state == "completed" and ended_at(inst)[-1] == "late_end"
    assert eng.tasks() == [] and eng.holders() == []
    assert "votes" not in inst.data


def test_an_error_in_an_inner_instance_reaches_the_boundary_of_the_activity():
    class Bad(Exception):
        code = "BAD"

    def check(d):
        if d["item"] == 2:
            raise Bad()
        return {}

    p = bpm.Process("err")
    p.start("s")
    p.script_task("check", fn=check)
    p.multi_instance("check", collection="items", element="item")
    p.error_boundary("failed", attached_to="check", error="BAD")
    p.end("ok")
    p.end("bad")
    p.flow("s", "check", "ok")
    p.flow("failed", "bad")
    eng = bpm.Engine()
    inst = eng.start(p, {"items": [1, 2, 3]})
    eng.run()
    assert inst.state == "completed" and ended_at(inst)[-1] == "bad" and "ok" not in \
        ended_at(inst)


@pytest.mark.parametrize("crash", [False, True])
def test_inner_instances_are_checkpointed_and_recovered(tmp_path, crash):
    db = tmp_path / "m.db"
    p = reviews(sequential=True)
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(p, {"reviewers": ["a", "b", "c"]})
    eng.run()
    eng.complete_task(eng.tasks()[0].id, {"vote": "first"})
    eng.run()
    doc = eng.checkpoint(inst.id)
    body, current = doc["tracks"]
    assert body["wait"]["kind"] == "many" and body["wait"]["done"] == 1
    assert body["wait"]["items"] == ["a", "b", "c"] and body["wait"]["outputs"][0] == "first"
    assert current["locals"] == {"loopCounter": 2, "reviewer": "b"}
    json.dumps(doc)
    if crash:
        eng.store.close()
        del eng
        eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[p])
        inst = eng.instance(inst.id)
    vote_all(eng, lambda t: "second")
    vote_all(eng, lambda t: "third")
    assert inst.state == "completed" and inst.data["votes"] == ["first", "second", "third"]


def test_bad_multi_instance_models_are_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.user_task("t")
    p.exclusive_gateway("g", default="e")
    p.end("e")
    p.flow("s", "t", "g", "e")
    p.multi_instance("t", collection="xs", cardinality="3", output_collection="out")
    p.multi_instance("g", cardinality="2")
    with pytest.raises(bpm.ModelError) as err:
        p.definition()
    text = "\n".join(err.value.problems)
    assert "exactly one of collection or cardinality" in text
    assert "both output_collection and output_element" in text
    assert "exclusive_gateway 'g' cannot be multi-instance" in text
    with pytest.raises(bpm.ModelError, match="no element 'nope'"):
        p.multi_instance("nope", cardinality="1")
