"""Standard loops (BPMN 2.0 ``standardLoopCharacteristics``): an activity runs again while its
condition holds, tested after each run or also before the first, at most ``maximum`` times;
each run is a track of origin ``loop`` under the activity's body, as an inner instance of a
sequential multi-instance activity is."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import left
from recovery_processes import retries

import gobpm_nb as bpm

SCENARIOS = Path(__file__).parent / "scenarios"
ENV = {"PATH": "", "PYTHONPATH": os.pathsep.join([str(SCENARIOS),
                                                   str(Path(bpm.__file__).parent.parent)])}


def counting(condition="attempts < 3", test_before=False, maximum=None):
    """A script task ``try`` that counts ``attempts`` and notes each run's ``loopCounter``."""
    p = bpm.Process("counting")
    p.start("s")
    p.script_task("try", fn=lambda d: {"attempts": d["attempts"] + 1,
                                       "runs": [*d["runs"], d["loopCounter"]]})
    p.loop("try", condition=condition, test_before=test_before, maximum=maximum)
    p.end("e")
    p.flow("s", "try", "e")
    return p


def ran(attempts=0, **options):
    eng = bpm.Engine()
    inst = eng.start(counting(**options), {"attempts": attempts, "runs": []})
    eng.run()
    ended = [f.details for f in eng.facts if f.kind == "loop_ended"]
    return eng, inst, ended


def test_a_loop_tested_before_whose_condition_is_false_runs_zero_times():
    """testBefore with a condition that does not hold: the task never runs and the instance
    goes straight on, saying the loop ended after 0 runs."""
    eng, inst, ended = ran(attempts=5, test_before=True)
    assert inst.state == "completed" and inst.data["runs"] == []
    assert left(eng, inst) == ["s", "try", "e"]
    assert ended == [{"iterations": 0, "reason": "condition"}]
    assert not any(t.origin == "loop" for t in inst.tracks)


def test_a_loop_tested_after_runs_once_even_when_its_condition_is_false():
    """testBefore false (the default): the condition is tested after each run, so the task
    runs once though the condition never held."""
    _, inst, ended = ran(attempts=5)
    assert inst.data["runs"] == [1] and ended == [{"iterations": 1, "reason": "condition"}]


def test_a_loop_runs_until_its_condition_fails_each_run_seeing_its_number():
    """`attempts < 3` from 0: three runs, numbered 1, 2, 3 by loopCounter, one track each."""
    eng, inst, ended = ran()
    assert inst.state == "completed" and inst.data == {"attempts": 3, "runs": [1, 2, 3]}
    assert ended == [{"iterations": 3, "reason": "condition"}]
    runs = [t for t in inst.tracks if t.origin == "loop"]
    assert len(runs) == 3 and {t.state for t in runs} == {"completed"}
    assert left(eng, inst) == ["s", "try", "try", "try", "try", "e"]  # three runs, the body


def test_a_loop_stops_at_its_maximum():
    """A condition that always holds and loopMaximum 4: four runs, ended by the maximum."""
    _, inst, ended = ran(condition="True", maximum=4)
    assert inst.data["runs"] == [1, 2, 3, 4] and ended == [{"iterations": 4,
                                                              "reason": "maximum"}]
    _, inst, ended = ran(condition=None, maximum=2, test_before=True)
    assert inst.data["runs"] == [1, 2] and ended == [{"iterations": 2, "reason": "maximum"}]


def test_the_condition_sees_the_runs_done_and_may_be_a_python_callable():
    """A callable condition is given the data and ``loopCounter`` (the runs done so far)."""
    seen = []

    def again(d):
        seen.append(d["loopCounter"])
        return d["loopCounter"] < 2

    _, inst, ended = ran(condition=again, test_before=True)
    assert seen == [0, 1, 2] and inst.data["runs"] == [1, 2]
    assert ended == [{"iterations": 2, "reason": "condition"}]


def asking(boundary=False):
    p = bpm.Process("asking")
    p.start("s")
    p.user_task("ask")
    p.loop("ask", condition="not approved", maximum=5)
    p.end("e")
    p.flow("s", "ask", "e")
    if boundary:
        p.timer_boundary("late", attached_to="ask", duration="P2D")
        p.end("late_end")
        p.flow("late", "late_end")
    return p


def test_a_loop_on_a_user_task_dehydrates_between_runs_and_a_completion_wakes_it():
    """Each run's task lets the instance dehydrate; completing it wakes the instance, which
    starts the next run (a new task) and dehydrates again, until the answer is yes."""
    eng = bpm.Engine()
    inst = eng.start(asking(), {"approved": False})
    eng.run()
    for n in (1, 2):
        assert inst.residency == "dehydrated" and eng.stats()["coroutines"] == 0
        (task,) = eng.tasks()
        assert task.id == f"{inst.id}:ask:{n}"
        eng.complete_task(task.id, {"approved": n == 2})
        eng.run()
    assert inst.state == "completed" and eng.holders() == []
    kinds = [f.kind for f in eng.facts if f.kind in ("dehydrated", "hydrated", "loop_ended")]
    assert kinds == ["dehydrated", "hydrated", "dehydrated", "hydrated", "loop_ended"]


def test_an_interrupting_boundary_on_a_loop_ends_the_run_in_progress():
    """The boundary is armed over the whole loop: when it fires, the current run's task is
    withdrawn and no further run starts."""
    eng = bpm.Engine()
    inst = eng.start(asking(boundary=True), {"approved": False})
    eng.advance("PT1H")
    eng.complete_task(eng.tasks()[0].id, {"approved": False})
    eng.advance("PT1H")
    assert [t.id for t in eng.tasks()] == [f"{inst.id}:ask:2"]
    eng.advance("P3D")
    assert inst.state == "completed" and left(eng, inst)[-1] == "late_end"
    assert eng.tasks() == [] and eng.holders() == []
    assert not [f for f in eng.facts if f.kind == "loop_ended"]


@pytest.mark.parametrize("when", ["between", "inside"])
def test_a_loop_recovers_after_a_crash_at_the_run_it_had_reached(tmp_path, when):
    """A process dies mid-loop on SQLite (between commands, or inside the second run's
    script): the recovered instance waits on the second run's task and ends after two runs,
    its count right."""
    db = tmp_path / "loop.db"
    out = subprocess.run([sys.executable, str(SCENARIOS / "crash_loop.py"), str(db), when],
                         capture_output=True, text=True, env=ENV)
    if when == "between":
        assert out.stdout == "dehydrated ['i1:check:2']\n"
    else:
        assert out.stdout == ""  # it died inside the command
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[retries()])
    inst = eng.instance("i1")
    assert [t.id for t in eng.tasks()] == ["i1:check:2"] and inst.data["n"] == 2
    assert inst.residency == "dehydrated"
    eng.complete_task("i1:check:2", {"ok": True})
    eng.run()
    assert inst.state == "completed" and inst.data == {"n": 2, "ok": True}
    assert [f.details for f in eng.facts if f.kind == "loop_ended"] == [
        {"iterations": 2, "reason": "condition"}]
    eng.store.close()


def test_a_loop_on_a_subprocess_runs_the_whole_subprocess_each_time():
    """Each run opens the subprocess anew (its start, its script, its task); the condition
    is read after the last track inside has ended."""
    eng = bpm.Engine()
    inst = eng.start(retries(), {"n": 0, "ok": False})
    eng.run()
    for ok in (False, False, True):
        eng.complete_task(eng.tasks()[0].id, {"ok": ok})
        eng.run()
    assert inst.state == "completed" and inst.data["n"] == 3
    assert left(eng, inst).count("count") == 3 and left(eng, inst).count("attempt") == 4


def test_a_loop_with_no_wait_and_no_end_is_caught_by_the_step_bound():
    """A condition that always holds over a script task, no maximum: the runs count toward
    ``max_steps_without_wait``, and the instance fails with an incident naming the loop."""
    eng = bpm.Engine(max_steps_without_wait=50)
    inst = eng.start(counting(condition="True"), {"attempts": 0, "runs": []})
    eng.run()
    assert inst.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.details["loop"] == ["try"]


def test_bad_loops_are_refused():
    """A loop with neither a condition nor a maximum, a negative maximum, a loop on a
    gateway, and a loop on a multi-instance task are validation problems naming them."""
    p = bpm.Process("bad")
    p.start("s")
    p.user_task("a")
    p.user_task("b")
    p.user_task("c")
    p.exclusive_gateway("g", default="e")
    p.end("e")
    p.flow("s", "a", "b", "c", "g", "e")
    p.loop("a")
    p.loop("b", condition="x", maximum=-1)
    p.multi_instance("c", cardinality=2)
    p.loop("c", condition="x")
    p.loop("g", condition="x")
    with pytest.raises(bpm.ModelError) as err:
        p.definition()
    assert sorted(err.value.problems) == sorted([
        "loop 'a' has neither a condition nor a maximum: it would run for ever",
        "loop 'b': maximum -1 is not a count",
        "user_task 'c' is multi-instance: it cannot also be a standard loop",
        "exclusive_gateway 'g' cannot loop (only tasks, subprocesses and call activities)"])
    with pytest.raises(bpm.ModelError, match="no element 'nope'"):
        p.loop("nope", condition="x")


def test_an_error_raised_in_a_run_reaches_the_boundary_of_the_loop():
    """The second run's script raises: the loop's error boundary catches it and no third run
    starts."""
    class Refused(Exception):
        code = "BAD"

    def attempt(d):
        if d["loopCounter"] == 2:
            raise Refused()
        return {"n": d.get("n", 0) + 1}

    p = bpm.Process("refused")
    p.start("s")
    p.script_task("t", fn=attempt)
    p.loop("t", maximum=5)
    p.error_boundary("caught", attached_to="t", error="BAD")
    p.end("ok")
    p.end("bad")
    p.flow("s", "t", "ok")
    p.flow("caught", "bad")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert inst.state == "completed" and left(eng, inst)[-1] == "bad"
    assert inst.data == {"n": 1} and "ok" not in left(eng, inst)


def test_a_loop_inside_a_multi_instance_subprocess_writes_to_its_inner_instance():
    """Each inner instance loops twice over its own item; the outputs come back per item."""
    p = bpm.Process("nested")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.flow(sp.start("a"), sp.script_task(
            "add", fn=lambda d: {"c": d.get("c", 0) + d["item"]}), sp.end("z"))
    p.loop("add", condition="loopCounter < 2")
    p.multi_instance("sp", collection="items", element="item", output_collection="cs",
                     output_element="c")
    p.end("e")
    p.flow("s", "sp", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"items": [1, 10]})
    eng.run()
    assert inst.state == "completed" and inst.data == {"items": [1, 10], "cs": [2, 20]}
