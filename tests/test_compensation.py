"""Compensation: handlers of completed activities run in reverse order of completion, within
their scope, with the data as each activity completed; across dehydration and a crash."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gobpm_nb as bpm

SCENARIOS = Path(__file__).parent / "scenarios"
ENV = {"PATH": "", "PYTHONPATH": os.pathsep.join([str(SCENARIOS),
                                                   str(Path(bpm.__file__).parent.parent)])}
sys.path.insert(0, str(SCENARIOS))
import recovery_processes  # noqa: E402


def booking(p, name, ran):
    """A script task ``name`` that books, and its handler ``cancel_<name>`` that notes what
    it saw in ``ran`` and cancels."""
    p.script_task(name, fn=lambda d: {name: "booked", "last": name})

    def cancel(d):
        ran.append((name, d.get(name), d.get("last")))
        return {name: "cancelled"}
    p.compensation_boundary(f"undo_{name}", attached_to=name, handler=f"cancel_{name}")
    p.script_task(f"cancel_{name}", fn=cancel, for_compensation=True)


def compensated(eng):
    return [f.node for f in eng.facts if f.kind == "compensated"]


def trip(ran, throw_ref=None):
    p = bpm.Process("trip")
    p.start("s")
    for name in ("hotel", "flight", "car"):
        booking(p, name, ran)
    p.compensation_throw("undo", activity=throw_ref)
    p.script_task("after", fn=lambda d: {"after": True})
    p.end("e")
    p.flow("s", "hotel", "flight", "car", "undo", "after", "e")
    return p.validate()


def test_three_completed_activities_are_compensated_latest_first():
    """A throw without an activity runs every completed activity's handler, the latest
    first, and goes on only when they are done."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(trip(ran), {})
    eng.run()
    assert [r[0] for r in ran] == ["car", "flight", "hotel"]
    assert compensated(eng) == ["car", "flight", "hotel"]
    assert inst.state == "completed" and inst.data["after"] is True
    assert inst.data["hotel"] == inst.data["flight"] == inst.data["car"] == "cancelled"
    assert [f.details["handler"] for f in eng.facts if f.kind == "compensation_started"] == [
        "cancel_car", "cancel_flight", "cancel_hotel"]


def test_a_throw_with_an_activity_compensates_that_activity_only():
    """``activity=`` runs that activity's handler and no other."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(trip(ran, throw_ref="flight"), {})
    eng.run()
    assert [r[0] for r in ran] == ["flight"]
    assert inst.data["flight"] == "cancelled" and inst.data["hotel"] == "booked"


def test_the_handler_sees_the_data_as_the_activity_completed():
    """Each handler reads its activity's snapshot over the current data: ``last`` is what
    it was when that activity completed, not what the data says now."""
    ran = []
    eng = bpm.Engine()
    eng.start(trip(ran), {})
    eng.run()
    assert ran == [("car", "booked", "car"), ("flight", "booked", "flight"),
                   ("hotel", "booked", "hotel")]


def test_an_activity_not_completed_is_not_compensated():
    """A task still waiting when the other branch compensates has no handler run."""
    ran = []
    p = bpm.Process("half")
    p.start("s")
    p.parallel_gateway("fork")
    booking(p, "hotel", ran)
    p.user_task("approve")
    p.compensation_boundary("undo_approve", attached_to="approve", handler="unapprove")
    p.script_task("unapprove", fn=lambda d: ran.append(("approve",)) or {},
                  for_compensation=True)
    p.compensation_throw("undo")
    p.end("e1")
    p.end("e2")
    p.flow("s", "fork", "hotel", "undo", "e1")
    p.flow("fork", "approve", "e2")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert [r[0] for r in ran] == ["hotel"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and [r[0] for r in ran] == ["hotel"]


def test_an_inner_throw_does_not_compensate_an_activity_of_an_outer_scope():
    """A throw inside a subprocess compensates what completed inside it, not before it."""
    ran = []
    p = bpm.Process("scoped")
    p.start("s")
    booking(p, "hotel", ran)
    with p.subprocess("sub") as sp:
        sp.start("ss")
        booking(sp, "flight", ran)
        sp.compensation_throw("undo_inner")
        sp.end("se")
        sp.flow("ss", "flight", "undo_inner", "se")
    p.end("e")
    p.flow("s", "hotel", "sub", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert [r[0] for r in ran] == ["flight"]
    assert inst.data["hotel"] == "booked" and inst.state == "completed"


def nested(ran, with_event_subprocess):
    p = bpm.Process("nested")
    p.start("s")
    with p.subprocess("sub") as sp:
        sp.start("ss")
        booking(sp, "hotel", ran)
        booking(sp, "flight", ran)
        sp.end("se")
        sp.flow("ss", "hotel", "flight", "se")
        if with_event_subprocess:
            with sp.event_subprocess("on_undo") as ev:
                ev.compensation_start("cs")
                ev.script_task("notify", fn=lambda d: ran.append(("notify",)) or {})
                ev.compensation_throw("inner_undo")
                ev.end("ce")
                ev.flow("cs", "notify", "inner_undo", "ce")
    p.compensation_throw("undo")
    p.end("e")
    p.flow("s", "sub", "undo", "e")
    return p.validate()


def test_a_subprocess_is_compensated_by_its_inner_activities_latest_first():
    """Without a compensation event subprocess, compensating a completed subprocess runs
    its inner activities' handlers in reverse order."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(nested(ran, False), {})
    eng.run()
    assert [r[0] for r in ran] == ["flight", "hotel"] and inst.state == "completed"


def test_a_subprocess_with_a_compensation_event_subprocess_runs_it_instead():
    """The compensation event subprocess runs; its own throw compensates the inner
    activities."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(nested(ran, True), {})
    eng.run()
    assert [r[0] for r in ran] == ["notify", "flight", "hotel"]
    assert compensated(eng) == ["flight", "hotel", "sub"] and inst.state == "completed"


def test_each_completed_inner_instance_of_a_multi_instance_task_is_compensated():
    """A multi-instance task leaves one record per inner instance: each handler sees its
    item, the last completed first."""
    seen = []
    p = bpm.Process("many")
    p.start("s")
    p.script_task("book", fn=lambda d: {})
    p.multi_instance("book", collection="rooms", element="room", sequential=True)
    p.compensation_boundary("undo_book", attached_to="book", handler="unbook")
    p.script_task("unbook", fn=lambda d: seen.append(d["room"]) or {}, for_compensation=True)
    p.end("e", compensate=True)
    p.flow("s", "book", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"rooms": [1, 2, 3]})
    eng.run()
    assert seen == [3, 2, 1] and inst.state == "completed"


def waiting_handler():
    p = bpm.Process("refunds")
    p.start("s")
    p.script_task("pay", fn=lambda d: {"paid": 10})
    p.compensation_boundary("undo_pay", attached_to="pay", handler="refund")
    p.user_task("refund", for_compensation=True)
    p.end("e", compensate="pay")
    p.flow("s", "pay", "e")
    return p


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_handler_that_is_a_user_task_waits_and_lets_the_instance_dehydrate(dehydrate):
    """The compensation end waits on the refund task; with dehydration on the instance
    dehydrates meanwhile; completing the task ends the instance either way."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(waiting_handler(), {})
    eng.run()
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    assert [t.node for t in eng.tasks()] == ["refund"]
    assert inst.checkpoint()["tracks"][0]["wait"]["kind"] == "compensate"
    eng.complete_task(eng.tasks()[0].id, {"refunded": True})
    eng.run()
    assert inst.state == "completed" and inst.data == {"paid": 10, "refunded": True}
    assert compensated(eng) == ["pay"]


def test_the_records_are_in_the_checkpoint_and_survive_dehydration():
    """A completed compensable activity's record is kept while the instance is dehydrated
    later, and its handler still runs after the wake with what it saw."""
    ran = []
    p = bpm.Process("later")
    p.start("s")
    booking(p, "hotel", ran)
    p.user_task("decide")
    p.compensation_throw("undo")
    p.end("e")
    p.flow("s", "hotel", "decide", "undo", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert inst.residency == "dehydrated"
    assert [r["node"] for r in inst.checkpoint()["compensable"][""]] == ["hotel"]
    eng.complete_task(eng.tasks()[0].id, {"last": "decided"})
    eng.run()
    assert ran == [("hotel", "booked", "hotel")] and inst.state == "completed"


def test_a_checkpoint_without_records_has_no_compensable_field():
    """A process without compensation writes the checkpoint it always did."""
    p = bpm.Process("plain")
    p.start("s")
    p.user_task("t")
    p.end("e")
    p.flow("s", "t", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert "compensable" not in inst.checkpoint()


@pytest.mark.parametrize("when", ["between", "inside"])
def test_a_compensation_recovers_after_a_crash(tmp_path, when):
    """A process dies mid-compensation on SQLite (waiting on the refund task, or inside the
    next handler's script): the recovered instance finishes the compensation."""
    db = tmp_path / "undo.db"
    out = subprocess.run([sys.executable, str(SCENARIOS / "crash_compensation.py"), str(db),
                          when], capture_output=True, text=True, env=ENV)
    assert out.stdout == "dehydrated ['i1:refund:1']\n", out.stderr
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[recovery_processes.undo_trip()])
    inst = eng.instance("i1")
    if when == "between":
        assert inst.residency == "dehydrated"
        eng.complete_task("i1:refund:1", {"refunded": True})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"booked": False, "paid": True, "refunded": True}
    eng.store.close()


def test_the_builder_refuses_a_handler_that_is_not_for_compensation():
    """A compensation boundary must name an activity marked ``for_compensation``."""
    p = bpm.Process("bad")
    p.start("s")
    p.script_task("a", fn=lambda d: {})
    p.script_task("h", fn=lambda d: {})
    p.compensation_boundary("b", attached_to="a", handler="h")
    p.end("e")
    p.flow("s", "a", "e")
    with pytest.raises(bpm.ModelError, match="for_compensation"):
        p.validate()
