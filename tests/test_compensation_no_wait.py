"""A compensation throw or end that does not wait for its handlers (BPMN
``waitForCompletion="false"``): it goes on at once while they run, one after another, in a
track of their own at the throw."""

from __future__ import annotations

import pytest
from conftest import left, recover

import gobpm_nb as bpm


def trip(wait=False, end=False, pid="trip"):
    """s -> hotel, flight (scripts, each with a user-task handler refund_<x>) -> undo
    (compensation throw, not waiting) -> next (user task) -> e; or an end that compensates."""
    p = bpm.Process(pid)
    p.start("s")
    for name in ("hotel", "flight"):
        p.script_task(name, fn=lambda d, n=name: {n: "booked"})
        p.compensation_boundary(f"undo_{name}", attached_to=name, handler=f"refund_{name}")
        p.user_task(f"refund_{name}", assignee="clerk", for_compensation=True)
    if end:
        p.end("undo", compensate=True, wait=wait)
        p.flow("s", "hotel", "flight", "undo")
    else:
        p.compensation_throw("undo", wait=wait)
        p.user_task("next", assignee="x")
        p.end("e")
        p.flow("s", "hotel", "flight", "undo", "next", "e")
    return p


def nodes_of_tasks(eng):
    return sorted(t.node for t in eng.tasks())


def finish(eng, node):
    (task,) = [t for t in eng.tasks() if t.node == node]
    eng.complete_task(task.id)
    eng.run()


@pytest.mark.parametrize("dehydrate", [True, False])
def test_the_throw_goes_on_at_once_while_the_handlers_run_one_after_another(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(trip())
    eng.run()
    assert nodes_of_tasks(eng) == ["next", "refund_flight"]  # latest first, and at once
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    finish(eng, "next")
    assert inst.state == "active"  # the handlers still run: the instance waits for them
    finish(eng, "refund_flight")
    assert nodes_of_tasks(eng) == ["refund_hotel"]
    finish(eng, "refund_hotel")
    assert inst.state == "completed"
    assert [f.node for f in eng.facts if f.kind == "compensated"] == ["flight", "hotel"]
    host = [t for t in inst.tracks if t.node == "undo" and t.origin == "compensation"]
    assert len(host) == 1 and host[0].state == "completed"


def test_waiting_is_still_the_default():
    eng = bpm.Engine()
    eng.start(trip(wait=True))
    eng.run()
    assert nodes_of_tasks(eng) == ["refund_flight"]


@pytest.mark.parametrize("dehydrate", [True, False])
def test_an_end_that_does_not_wait_ends_its_track_at_once(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(trip(end=True))
    eng.run()
    assert nodes_of_tasks(eng) == ["refund_flight"]
    first = next(t for t in inst.tracks if t.id == "t1")
    assert first.state == "completed" and "undo" in left(eng, inst)
    finish(eng, "refund_flight")
    finish(eng, "refund_hotel")
    assert inst.state == "completed"


def test_nothing_to_compensate_goes_on_without_a_track():
    p = bpm.Process("none")
    p.start("s")
    p.compensation_throw("undo", wait=False)
    p.end("e")
    p.flow("s", "undo", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed" and len(inst.tracks) == 1


def test_a_wait_that_is_not_a_bool_is_refused():
    p = bpm.Process("bad")
    p.start("s")
    p.compensation_throw("undo", wait="no")
    p.end("e", wait=False)
    p.flow("s", "undo", "e")
    with pytest.raises(bpm.ModelError) as err:
        p.validate()
    assert "'undo': wait= is True or False, not 'no'" in str(err.value)
    assert "end event 'e': wait= is only for a compensation end" in str(err.value)


def test_the_handlers_and_the_track_gone_on_survive_a_crash_on_sqlite(tmp_path):
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(trip())
    eng.run()
    finish(eng, "refund_flight")
    eng.store.close()  # the crash: refund_hotel and next wait
    eng = recover(db, trip())
    assert nodes_of_tasks(eng) == ["next", "refund_hotel"]
    finish(eng, "refund_hotel")
    assert eng.instance(inst.id).state == "active"
    finish(eng, "next")
    assert eng.instance(inst.id).state == "completed"
    assert [f.node for f in eng.facts if f.kind == "compensated"] == ["hotel"]


def test_rewind_to_before_the_throw_and_replay_gives_the_same_facts():
    p = trip()
    eng = bpm.Engine(keep_facts=None)
    eng.start(p)
    eng.run()
    mark = eng.facts[-1].seq
    tasks = {t.node: t.id for t in eng.tasks()}
    eng.complete_task(tasks["next"])
    eng.run()
    finish(eng, "refund_flight")
    finish(eng, "refund_hotel")
    first = [f.as_dict() for f in eng.facts]
    eng.rewind(mark)
    assert nodes_of_tasks(eng) == ["next", "refund_flight"]
    eng.complete_task(tasks["next"])
    eng.run()
    finish(eng, "refund_flight")
    finish(eng, "refund_hotel")
    assert [f.as_dict() for f in eng.facts if f.kind != "rewound"] == first


@pytest.mark.parametrize("end", [False, True])
def test_wait_for_completion_false_survives_a_bpmn_round_trip(end):
    xml = trip(end=end).to_bpmn()
    assert 'waitForCompletion="false"' in xml
    back = bpm.Process.from_bpmn(xml)
    assert back.to_bpmn() == xml
    model = bpm.load_bpmn(xml)
    assert not [n for n in model.report if n.element == "undo"]
    eng = bpm.Engine()
    eng.start(back)
    eng.run()
    expected = ["refund_flight"] if end else ["next", "refund_flight"]
    assert nodes_of_tasks(eng) == expected
    assert 'waitForCompletion' not in trip(wait=True).to_bpmn()
