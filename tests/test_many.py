"""Multi-instance activities: parallel and sequential, over a collection or a cardinality,
with a completion condition and an output collection — each inner instance held on its own."""

import json

import pytest
from conftest import ended_at, left

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


def test_a_hundred_parallel_reviews_waiting_on_user_tasks_let_the_instance_dehydrate():
    eng = bpm.Engine()
    inst = eng.start(reviews(), {"reviewers": [f"r{n}" for n in range(100)]})
    eng.run()
    assert inst.residency == "dehydrated" and len(eng.holders()) == 100
    dehydrated = [f for f in eng.facts if f.kind == "dehydrated"][-1]
    assert dehydrated.details["waits"] == 100 and dehydrated.details["coroutines"] == 0
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


def test_a_cardinality_given_as_a_plain_count_runs_that_many_and_round_trips():
    """``cardinality=3`` is three inner instances (it was a validation problem: "neither a
    string nor a callable"), in Python and after to_bpmn and back."""
    p = bpm.Process("count3")
    p.start("s")
    p.script_task("count", fn=lambda d: {"n": d["loopCounter"]})
    p.multi_instance("count", cardinality=3, output_collection="ns", output_element="n")
    p.end("e")
    p.flow("s", "count", "e")
    read = bpm.Process.from_bpmn(p.to_bpmn())
    read.set_function("count", lambda d: {"n": d["loopCounter"]})
    for proc in (p, read):
        eng = bpm.Engine()
        inst = eng.start(proc)
        eng.run()
        assert inst.state == "completed" and inst.data["ns"] == [1, 2, 3]


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


# -- what an item throws reaches the boundaries of the whole activity ------------------------
class Refused(Exception):
    code = "E"


def refuse(d):
    raise Refused()


def thrower(how, sequential=False, user=False, interrupting=True):
    """Subprocess ``sp`` over ``xs``: the item whose ``x`` is ``bad`` raises ``E`` (an error
    end, a script exception, an escalation end or throw), after its user task if ``user``; a
    boundary on ``sp`` catches it and goes to ``handled``."""
    p = bpm.Process("batch")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.exclusive_gateway("g", default="z")
        sp.end("z")
        if how == "error":
            sp.end("boom", error="E")
        elif how == "script":
            sp.script_task("boom", fn=refuse)
            sp.flow("boom", "z")
        elif how == "escalation":
            sp.end("boom", escalation="E")
        else:  # an escalation thrown on the way: the item goes on
            sp.escalation_throw("boom", escalation="E")
            sp.flow("boom", "z")
        if user:
            sp.user_task("u")
            sp.flow("a", "u", "g")
        else:
            sp.flow("a", "g")
        sp.flow("g", "z")
        sp.flow("g", "boom", condition="x == bad")
    p.multi_instance("sp", sequential=sequential, collection="xs", element="x")
    if how in ("error", "script"):
        p.error_boundary("caught", attached_to="sp", error="E")
    else:
        p.escalation_boundary("caught", attached_to="sp", escalation="E",
                              interrupting=interrupting)
    p.end("done")
    p.end("handled")
    p.flow("s", "sp", "done")
    if interrupting:
        p.flow("caught", "handled")
    else:  # a path that takes a while
        p.flow("caught", p.user_task("follow"), "handled")
    return p


def settled(eng, inst):
    """The instance ended with nothing left behind: no hold, no task, no live track (a
    dehydrated track only where a continuation took over from it)."""
    assert inst.state == "completed" and inst.residency == "finished"
    assert eng.holders() == [] and eng.tasks() == []
    continued = {p for t in inst.tracks if t.origin == "continuation" for p in t.parents}
    assert [t.id for t in inst.tracks if t.state in ("ready", "running", "waiting")
            or (t.state == "dehydrated" and t.id not in continued)] == []


def entered(eng, inst, node):
    return sum(1 for f in eng.facts if f.kind == "node_entered" and f.instance == inst.id
               and f.node == node)


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("sequential", [False, True])
@pytest.mark.parametrize("how", ["error", "script", "escalation"])
def test_an_item_that_throws_cancels_the_whole_multi_instance_subprocess(how, sequential,
                                                                          dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(thrower(how, sequential), {"xs": [1], "bad": 1})
    eng.run()
    settled(eng, inst)
    assert entered(eng, inst, "handled") == 1 and entered(eng, inst, "done") == 0


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("sequential", [False, True])
@pytest.mark.parametrize("how", ["error", "script", "escalation"])
def test_an_item_that_throws_withdraws_the_user_tasks_of_the_other_items(how, sequential,
                                                                         dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(thrower(how, sequential, user=True), {"xs": [1, 2, 3], "bad": 2})
    eng.run()
    assert len(eng.tasks()) == (1 if sequential else 3)
    if sequential:
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    eng.complete_task(eng.tasks()[-1 if sequential else 1].id)  # item 2's task
    eng.run()
    settled(eng, inst)
    assert entered(eng, inst, "handled") == 1 and entered(eng, inst, "done") == 0
    assert left(eng, inst).count("u") == (2 if sequential else 1)  # no other task finished


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("sequential", [False, True])
def test_a_non_interrupting_escalation_from_an_item_lets_every_item_finish(sequential,
                                                                            dehydrate):
    """The escalation's path is the activity's, not the item's: it outlives the items."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(thrower("throw", sequential, user=True, interrupting=False),
                     {"xs": [1, 2, 3], "bad": 2})
    eng.run()
    while [t for t in eng.tasks() if t.node == "u"]:
        eng.complete_task([t for t in eng.tasks() if t.node == "u"][0].id)
        eng.run()
    assert [t.node for t in eng.tasks()] == ["follow"] and inst.state == "active"
    assert entered(eng, inst, "done") == 1 and ended_at(inst).count("z") == 3
    (fork,) = [t for t in inst.tracks if t.origin == "boundary"]
    assert fork.parents == ("t1",)  # forked over the body (the track that entered it)
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    settled(eng, inst)
    assert entered(eng, inst, "handled") == 1 and left(eng, inst).count("u") == 3


def test_an_item_that_throws_after_a_restart_cancels_the_whole_activity(tmp_path):
    db = tmp_path / "thrown.db"
    p = thrower("error", user=True)
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(p, {"xs": [1, 2, 3], "bad": 2})
    eng.run()
    assert inst.residency == "dehydrated"
    eng.store.close()  # the engine stops here, its store lets go of the file
    del eng
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[p])
    inst = eng.instance(inst.id)
    eng.complete_task(eng.tasks()[1].id)
    eng.run()
    settled(eng, inst)
    assert entered(eng, inst, "handled") == 1


# -- completing many items costs the same per item however many there are -------------------
def many_tasks(subprocess):
    p = bpm.Process("wide")
    p.start("s")
    if subprocess:
        with p.subprocess("each") as sp:
            sp.flow(sp.start("a"), sp.user_task("u"), sp.end("z"))
        p.multi_instance("each", collection="xs", element="x")
    else:
        p.user_task("each")
        p.multi_instance("each", collection="xs", element="x", output_collection="ys",
                         output_element="y")
    p.end("e")
    p.flow("s", "each", "e")
    return p


def looks(monkeypatch, act):
    """How many times the engine read a track's state or a hold's track while ``act()``
    ran: the tracks and holds it looked through."""
    from gobpm_nb.engine.state.holders import Hold
    from gobpm_nb.engine.state.records import Track

    count = [0]
    state, track = Track.state, Hold.track

    def read_state(tr):
        count[0] += 1
        return state.__get__(tr)

    def read_track(hold):
        count[0] += 1
        return track.__get__(hold)

    with monkeypatch.context() as m:
        m.setattr(Track, "state", property(read_state, state.__set__))
        m.setattr(Hold, "track", property(read_track))
        act()
    return count[0]


def looks_while_completing(monkeypatch, n, subprocess, dehydrate):
    """The looks while every task of an ``n``-item multi-instance activity is completed and
    the instance ends."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(many_tasks(subprocess), {"xs": list(range(n))})
    eng.run()
    tasks = eng.tasks()

    def complete_all():
        for t in tasks:
            eng.complete_task(t.id, {"y": 1})
        eng.run()

    seen = looks(monkeypatch, complete_all)
    assert inst.state == "completed" and eng.holders() == []
    return seen


def looks_while_cancelling(monkeypatch, n, subprocess, dehydrate):
    """The looks while a timer boundary cancels an ``n``-item multi-instance activity."""
    p = many_tasks(subprocess)
    p.timer_boundary("late", attached_to="each", duration="PT1H")
    p.flow("late", p.end("gave_up"))
    eng = bpm.Engine(dehydrate=dehydrate, min_dehydrate_wait="PT1M")
    inst = eng.start(p, {"xs": list(range(n))})
    eng.run(until=eng.now)
    seen = looks(monkeypatch, lambda: eng.advance("PT2H"))
    assert inst.state == "completed" and ended_at(inst) == ["gave_up"]
    assert eng.holders() == [] and eng.tasks() == []
    return seen


@pytest.mark.slow  # 150 and 600 items, four ways
@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("subprocess", [False, True])
def test_completing_a_multi_instance_activity_costs_the_same_per_item_at_any_size(
        monkeypatch, subprocess, dehydrate):
    """Four times the items, about four times the work (it was sixteen: each completion
    looked through every track and hold of the instance)."""
    small = looks_while_completing(monkeypatch, 150, subprocess, dehydrate)
    large = looks_while_completing(monkeypatch, 600, subprocess, dehydrate)
    assert large < 6 * small, (small, large)


@pytest.mark.slow  # 150 and 600 items, four ways
@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("subprocess", [False, True])
def test_cancelling_a_multi_instance_activity_costs_the_same_per_item_at_any_size(
        monkeypatch, subprocess, dehydrate):
    """A boundary cancelling every item: four times the items, about four times the work
    (it was sixteen: each item's withdrawal looked through every hold of the instance)."""
    small = looks_while_cancelling(monkeypatch, 150, subprocess, dehydrate)
    large = looks_while_cancelling(monkeypatch, 600, subprocess, dehydrate)
    assert large < 6 * small, (small, large)


@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_boundary_withdraws_the_waits_of_every_inner_instance_at_once(dehydrate):
    """Two inner receive tasks and an interrupting boundary of the multi-instance activity
    wait for one message: the first message interrupts the activity, and at that instant
    the inner waits are withdrawn too, so a second message at the same instant reaches
    nobody (dropped, and said so) instead of being taken by a wait about to be cancelled."""
    p = bpm.Process("mi")
    p.start("s")
    p.receive_task("r", message="m", key="id")
    p.multi_instance("r", cardinality="2")
    p.message_boundary("stop", attached_to="r", message="m", key="id")
    p.end("done")
    p.end("stopped")
    p.flow("s", "r", "done")
    p.flow("stop", "stopped")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p, {"id": 7})
    eng.run(until=eng.now)
    assert sorted(h.node for h in eng.holders()) == ["r", "r", "stop"]
    assert eng.publish_message("m", key=7) == inst.id
    # every inner wait is gone at once; the boundary's own hold, if the instance was
    # dehydrated, is waking until the wake (the next scheduler event) hands it over
    assert [(h.node, h.state) for h in eng.holders()] == (
        [("stop", "waking")] if dehydrate else [])
    assert eng.publish_message("m", key=7) is None
    eng.run(until=eng.now)
    assert inst.state == "completed" and "stopped" in ended_at(inst)
    assert [f.kind for f in eng.facts if f.kind.startswith("message_")] == [
        "message_correlated", "message_dropped"]


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_completion_accepted_for_an_item_the_completion_condition_cancels_is_dropped(dehydrate):
    """Two items' tasks completed in one go, the first meeting the completion condition:
    the second item is cancelled before its completion runs, which is dropped (its outputs
    never merged), resident or dehydrated alike; the instance completes (a wake once
    crashed on the cancelled track)."""
    p = bpm.Process("first_wins")
    p.start("s")
    p.user_task("vote")
    p.end("e")
    p.flow("s", "vote", "e")
    p.multi_instance("vote", cardinality=5, completion="numberOfCompletedInstances >= 1")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p)
    eng.run()
    first, second = eng.tasks()[:2]
    eng.complete_task(first.id, {"a": 1})
    eng.complete_task(second.id, {"b": 2})
    eng.run()
    assert inst.state == "completed" and inst.data == {"a": 1}
    done = [f.details["task"] for f in eng.facts if f.kind == "task_completed"]
    assert done == [first.id]
