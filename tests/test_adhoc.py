"""Ad-hoc subprocesses: the inner elements with no incoming flow run when a collection (on
entry) or a person (``Engine.activate``) activates them; a completion condition, checked
after each inner track ends, may end the subprocess early (cancelling what still runs, or
waiting for it); a sequential one runs one element at a time."""

import pytest
from conftest import recover, snapshot

import gobpm_nb as bpm


def note(name):
    return lambda d: {"done": d.get("done", []) + [name]}


def work(collection=None, completion=None, cancel_remaining=True, ordering="Parallel",
         pid="adhoc"):
    """start -> ad-hoc "work" [script a, user task b, script c -> script c2 (a flow inside),
    user task d] -> user task "after" -> end."""
    p = bpm.Process(pid)
    p.start("s")
    with p.adhoc_subprocess("work", collection=collection, completion=completion,
                            cancel_remaining=cancel_remaining, ordering=ordering) as w:
        w.script_task("a", fn=note("a"))
        w.user_task("b")
        w.script_task("c", fn=note("c"))
        w.script_task("c2", fn=note("c2"))
        w.user_task("d")
        w.flow("c", "c2")
    p.user_task("after")
    p.end("e")
    p.flow("s", "work", "after", "e")
    return p


def facts(eng, kind):
    return [f.details for f in eng.facts if f.kind == kind]


def tasks(eng):
    return [t.node for t in eng.tasks()]


def finish(eng, inst):
    """Complete the task after the subprocess; the instance ends."""
    (t,) = [t for t in eng.tasks() if t.instance == inst.id and t.node == "after"]
    eng.complete_task(t.id)
    eng.run()
    assert inst.state == "completed"


def test_a_collection_activates_its_elements_on_entry_and_flows_inside_go_on():
    """The collection's elements run; c's flow to c2 is followed; with no completion
    condition the subprocess completes after the last one (Camunda 8) and goes on."""
    eng = bpm.Engine()
    inst = eng.start(work("todo"), data={"todo": ["a", "c"]})
    eng.run()
    assert sorted(inst.data["done"]) == ["a", "c", "c2"]
    assert facts(eng, "adhoc_activated") == [{"element": "a", "by": "collection"},
                                             {"element": "c", "by": "collection"}]
    assert tasks(eng) == ["after"]
    finish(eng, inst)


def test_a_person_activates_elements_and_it_completes_when_the_last_one_ends():
    """No collection: the subprocess waits for a person; what the person activates runs,
    and when nothing runs inside any more it completes."""
    eng = bpm.Engine()
    inst = eng.start(work())
    eng.run()
    (view,) = eng.adhocs()
    assert (view.instance, view.adhoc, view.elements) == (inst.id, "work", ("a", "b", "c", "d"))
    assert [h.kind for h in eng.holders(inst.id)] == ["decision"]
    assert eng.decisions() == []  # not a decision gateway's
    eng.activate(inst.id, "work", "b")
    eng.run()
    eng.activate(inst.id, "work", "c")  # while b waits
    eng.run()
    assert inst.data["done"] == ["c", "c2"] and tasks(eng) == ["b"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert tasks(eng) == ["after"] and eng.adhocs() == []
    assert [d["by"] for d in facts(eng, "adhoc_activated")] == ["person", "person"]
    finish(eng, inst)


def test_an_element_can_be_activated_again():
    """An activatable element may run several times."""
    eng = bpm.Engine()
    inst = eng.start(work(completion="len(done) >= 2"))
    eng.run()
    eng.activate(inst.id, "work", "a")
    eng.run()
    eng.activate(inst.id, "work", "a")
    eng.run()
    assert inst.data["done"] == ["a", "a"] and tasks(eng) == ["after"]


def test_an_empty_collection_activates_nothing_and_waits_for_a_person():
    """Camunda 8: an empty list activates nothing; the subprocess stays, a person may act."""
    eng = bpm.Engine()
    inst = eng.start(work("todo"), data={"todo": []})
    eng.run()
    assert inst.state == "active" and tasks(eng) == []
    assert [v.adhoc for v in eng.adhocs()] == ["work"]
    eng.activate(inst.id, "work", "a")
    eng.run()
    assert inst.data["done"] == ["a"] and tasks(eng) == ["after"]


def test_a_completion_condition_that_holds_cancels_what_still_runs():
    """After c2 completes, the condition holds: b and d (still waiting) are cancelled, their
    tasks withdrawn, and the subprocess goes on."""
    eng = bpm.Engine()
    inst = eng.start(work("todo", completion="'c2' in done"), data={"todo": ["b", "d", "c"]})
    eng.run()
    assert tasks(eng) == ["after"]
    assert facts(eng, "adhoc_condition_held") == [{"running": 2, "cancel": True}]
    states = {t.node: t.state for t in inst.tracks if t.node in ("b", "d")}
    assert states == {"b": "cancelled", "d": "cancelled"}
    finish(eng, inst)


def test_a_completion_condition_without_cancelling_waits_for_what_still_runs():
    """cancel_remaining=False: when the condition holds no element can be activated any
    more, and the subprocess completes once b and d have ended."""
    eng = bpm.Engine()
    inst = eng.start(work("todo", completion="'c2' in done", cancel_remaining=False),
                     data={"todo": ["b", "d", "c"]})
    eng.run()
    assert sorted(tasks(eng)) == ["b", "d"] and eng.adhocs() == []
    with pytest.raises(bpm.EngineError, match="waits for no activation now"):
        eng.activate(inst.id, "work", "a")
    for t in list(eng.tasks()):
        eng.complete_task(t.id)
        eng.run()
    assert tasks(eng) == ["after"]
    finish(eng, inst)


def test_a_completion_condition_that_does_not_hold_keeps_it_waiting_for_a_person():
    """All activated elements done, the condition false: it waits (held), not completes."""
    eng = bpm.Engine()
    inst = eng.start(work("todo", completion="len(done) >= 3"), data={"todo": ["a"]})
    eng.run()
    assert inst.state == "active" and [v.adhoc for v in eng.adhocs()] == ["work"]
    eng.activate(inst.id, "work", "c")
    eng.run()
    assert inst.data["done"] == ["a", "c", "c2"] and tasks(eng) == ["after"]


def test_sequential_ordering_runs_the_collection_one_element_at_a_time():
    """The second element starts only when the first (a user task) has ended."""
    eng = bpm.Engine()
    inst = eng.start(work("todo", ordering="Sequential"), data={"todo": ["b", "a", "c"]})
    eng.run()
    assert tasks(eng) == ["b"] and "done" not in inst.data
    assert eng.adhocs() == []  # busy: no person's activation meanwhile
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.data["done"] == ["a", "c", "c2"] and tasks(eng) == ["after"]


def test_sequential_ordering_refuses_a_second_activation_while_one_runs():
    eng = bpm.Engine()
    inst = eng.start(work(ordering="Sequential", completion="False"))
    eng.run()
    eng.activate(inst.id, "work", "b")
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match="waits for no activation now"):
        eng.activate(inst.id, "work", "a")
    assert snapshot(eng) == before
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    eng.activate(inst.id, "work", "a")  # free again
    eng.run()
    assert inst.data["done"] == ["a"] and inst.state == "active"


@pytest.mark.parametrize("call, named", [
    (lambda eng: eng.activate("i9", "work", "a"), "unknown instance 'i9'"),
    (lambda eng: eng.activate("i1", "nope", "a"), "'nope' is not an ad-hoc subprocess"),
    (lambda eng: eng.activate("i1", "work", "zz"), "'zz' is not an activatable element .* "
                                                   "a, b, c, d"),
    (lambda eng: eng.activate("i1", "work", "c2"), "'c2' is not an activatable element"),
    (lambda eng: eng.activate("i1", "work", "a", track="t7"), "no activation now on track"),
    (lambda eng: eng.activate("i2", "work", "a"), "of instance 'i2' waits for no activation"),
])
def test_a_bad_activation_names_what_is_wrong_and_changes_nothing(call, named):
    eng = bpm.Engine()
    eng.start(work())
    eng.start(work("todo"), data={"todo": ["b"]})
    eng.run()
    eng.complete_task(eng.tasks()[0].id)  # i2's b: its subprocess completes
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=named):
        call(eng)
    assert snapshot(eng) == before


def test_an_activation_is_taken_once_until_the_engine_runs_it():
    """A second activation before the first has run is refused: it is on its way."""
    eng = bpm.Engine()
    inst = eng.start(work())
    eng.run()
    eng.activate(inst.id, "work", "b")
    with pytest.raises(bpm.EngineError, match="waits for no activation now"):
        eng.activate(inst.id, "work", "d")
    eng.step()
    eng.activate(inst.id, "work", "d")
    eng.run()
    assert sorted(tasks(eng)) == ["b", "d"]


@pytest.mark.parametrize("todo, named", [
    ("'a'", "is a str, not a list of element ids"),
    (["c2"], "names 'c2', not an activatable element of 'work'"),
])
def test_a_collection_that_is_not_a_list_of_activatable_ids_is_an_incident(todo, named):
    eng = bpm.Engine()
    inst = eng.start(work("todo" if isinstance(todo, list) else todo), data={"todo": todo})
    eng.run()
    assert inst.state == "failed"
    (failed,) = facts(eng, "instance_failed")
    assert named in failed["cause"] or named in str(failed)


def test_validate_refuses_an_adhoc_subprocess_with_a_start_or_nothing_to_activate():
    p = bpm.Process("bad")
    p.start("s")
    with p.adhoc_subprocess("x", ordering="Sideways") as x:
        x.start("inner")
        x.script_task("t", fn=note("t"))
        x.flow("inner", "t")
    p.flow("s", "x")
    with pytest.raises(bpm.ModelError) as err:
        p.validate()
    text = str(err.value)
    assert "start 'inner' is in ad-hoc subprocess 'x'" in text
    assert "ordering 'Sideways'" in text


def run_through(eng, inst):
    """Activate b and c, complete b: the same node completions whatever the residency."""
    eng.run()
    eng.activate(inst.id, "work", "b")
    eng.run()
    eng.activate(inst.id, "work", "c")
    eng.run()
    eng.complete_task([t for t in eng.tasks() if t.node == "b"][0].id)
    eng.run()
    finish(eng, inst)
    return [f.node for f in eng.facts if f.kind == "node_left" and f.instance == inst.id]


def test_dehydration_on_and_off_give_the_same_run():
    """Waiting for a person, and for b with the person's hold, the instance dehydrates; the
    node completions are the same as resident throughout."""
    on, off = bpm.Engine(), bpm.Engine(dehydrate=False)
    a, b = on.start(work()), off.start(work())
    on.run()
    assert a.residency == "dehydrated"
    assert run_through(on, a) == run_through(off, b)
    hydrated = [d["outcome"] for d in facts(on, "hydrated")]
    assert "resumed" in hydrated  # the activation resumes the subprocess's track in place
    assert facts(off, "dehydrated") == []


def test_waiting_and_an_accepted_activation_survive_a_crash(tmp_path):
    """On SQLite: an ad-hoc subprocess waiting for a person, and one whose activation was
    accepted but not run, come back after a crash and run as they would have."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(work())
    eng.start(work())
    eng.run()
    eng.activate("i2", "work", "b")
    eng.store.close()  # the crash: i2's activation accepted, not yet run
    eng = recover(db, work())
    eng.run()
    assert [(t.instance, t.node) for t in eng.tasks()] == [("i2", "b")]
    assert [v.instance for v in eng.adhocs()] == ["i1", "i2"]  # b runs, i2 may take more
    eng.activate("i1", "work", "a")
    eng.run()
    eng.store.close()
    eng = recover(db, work())
    assert eng.instance("i1").data["done"] == ["a"]
    assert sorted((t.instance, t.node) for t in eng.tasks()) == [("i1", "after"), ("i2", "b")]


def test_an_activation_can_be_rewound_and_made_otherwise_and_replayed():
    """Rewind to before the activation, activate another element: it runs instead. Replay
    what the rewind went back over: the same facts."""
    eng = bpm.Engine()
    inst = eng.start(work())
    eng.run()
    mark = eng.facts[-1].seq
    eng.activate(inst.id, "work", "a")
    eng.run()
    first = [f.as_dict() for f in eng.facts]
    eng.rewind(mark)
    assert [v.adhoc for v in eng.adhocs()] == ["work"] and "done" not in inst.data
    eng.replay()
    assert [f.as_dict() for f in eng.facts] == first
    eng.rewind(mark)
    eng.activate(inst.id, "work", "c")
    eng.run()
    assert inst.data["done"] == ["c", "c2"]


def test_a_boundary_on_an_adhoc_subprocess_stays_armed_across_activations():
    """Activating an element leaves the subprocess's timer boundary armed; when it fires it
    cancels what runs inside."""
    p = work()
    p.timer_boundary("late", attached_to="work", duration="PT1H")
    p.end("too_late")
    p.flow("late", "too_late")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run(until="2026-01-01T00:10:00Z")
    eng.activate(inst.id, "work", "b")
    eng.run(until="2026-01-01T00:20:00Z")
    assert sorted(h.kind for h in eng.holders(inst.id)) == ["decision", "task", "timer"]
    eng.run()
    assert inst.state == "completed" and tasks(eng) == []
    assert [t.node for t in inst.tracks if t.state == "completed"][-1] == "too_late"


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_track_that_ends_while_an_activation_is_on_its_way_does_not_complete_it(dehydrate):
    """b's completion and d's activation are both accepted before the engine runs: b ends
    first, with d's activation pending (delivered, or waiting for the wake), so the
    subprocess waits for d instead of completing."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(work())
    eng.run()
    eng.activate(inst.id, "work", "b")
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.activate(inst.id, "work", "d")
    eng.run()
    assert tasks(eng) == ["d"] and inst.state == "active"
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert tasks(eng) == ["after"]
