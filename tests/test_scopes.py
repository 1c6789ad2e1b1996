"""Embedded subprocesses and event subprocesses: scopes, their boundaries, what is thrown
across them (errors, escalations), terminate ends, link events — resident and dehydrated."""

import json

import pytest
from conftest import ended_at, kinds, left

import gobpm_nb as bpm


def scoped(boundary=None, inner="user", **spec):
    """s -> handle[hs -> work -> he] -> done, with a boundary ``b`` on the subprocess."""
    p = bpm.Process("scoped")
    p.start("s")
    with p.subprocess("handle", "Handle") as sp:
        sp.start("hs")
        if inner == "user":
            sp.user_task("work")
        else:
            sp.timer_catch("work", duration="PT2H")
        sp.end("he")
        sp.flow("hs", "work", "he")
    if boundary is not None:
        getattr(p, f"{boundary}_boundary")("b", attached_to="handle", **spec)
        p.end("side")
        p.flow("b", "side")
    p.end("done")
    p.flow("s", "handle", "done")
    return p


def completed_nodes(eng, inst):
    return [f.node for f in eng.facts if f.instance == inst.id and f.kind == "node_left"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_subprocess_runs_its_inside_and_then_leaves(dehydrate):
    """The running track waits on the subprocess while the track inside runs; when that
    ends, the running track leaves by the subprocess's flow."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(scoped(), {"n": 1})
    eng.run()
    views = {t.node: t for t in inst.tracks}
    assert views["handle"].state == ("dehydrated" if dehydrate else "waiting")
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    assert views["work"].origin == "scope" and views["work"].parents == (views["handle"].id,)
    eng.complete_task(eng.tasks()[0].id, {"packed": True})
    eng.run()
    assert inst.state == "completed" and inst.data == {"n": 1, "packed": True}
    left = completed_nodes(eng, inst)
    assert left.index("he") < left.index("handle") < len(left)
    assert sorted(ended_at(inst)) == ["done", "he"]


def test_data_inside_a_subprocess_is_the_instance_data():
    p = bpm.Process("data")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.script_task("double", fn=lambda d: {"n": d["n"] * 2})
        sp.end("z")
        sp.flow("a", "double", "z")
    p.exclusive_gateway("big", default="small")
    p.end("large")
    p.end("small")
    p.flow("s", "sp", "big")
    p.flow("big", "large", condition="n > 5")
    p.flow("big", "small")
    eng = bpm.Engine()
    inst = eng.start(p, {"n": 3})
    eng.run()
    assert inst.data == {"n": 6} and sorted(ended_at(inst)) == ["large", "z"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_timer_on_a_subprocess_cancels_everything_inside(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(scoped("timer", duration="PT1H"))
    eng.advance("PT10M")
    assert sorted(h.kind for h in eng.holders()) == ["task", "timer"]
    eng.run()
    states = {t.node: t.state for t in inst.tracks}
    assert states["handle"] == "cancelled" and states["work"] == "cancelled"
    assert ended_at(inst) == ["side"] and eng.tasks() == [] and eng.holders() == []
    assert inst.state == "completed"


def test_a_boundary_on_a_subprocess_wakes_a_dehydrated_instance_and_cancels_that_scope():
    """Dehydrated with two tracks inside two subprocesses on parallel branches: a message on
    one subprocess cancels only that one; the other goes on."""
    p = bpm.Process("two")
    p.start("s")
    p.parallel_gateway("fork")
    for name in ("a", "b"):
        with p.subprocess(f"sp_{name}") as sp:
            sp.start(f"{name}0")
            sp.user_task(f"{name}_work")
            sp.end(f"{name}1")
            sp.flow(f"{name}0", f"{name}_work", f"{name}1")
        p.message_boundary(f"stop_{name}", attached_to=f"sp_{name}", message="stop",
                           key=f"'{name}'")
        p.end(f"{name}_stopped")
        p.flow(f"stop_{name}", f"{name}_stopped")
    p.parallel_gateway("join")
    p.end("done")
    p.flow("s", "fork")
    p.flow("fork", "sp_a", "join")
    p.flow("fork", "sp_b", "join")
    p.flow("join", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.residency == "dehydrated" and len(eng.tasks()) == 2
    assert eng.publish_message("stop", key="a") == inst.id
    eng.run()
    states = {t.node: t.state for t in inst.tracks}
    assert states["sp_a"] == "cancelled" and states["a_work"] == "cancelled"
    assert [t.node for t in eng.tasks()] == ["b_work"]
    assert inst.residency == "dehydrated"  # dehydrated again: b still waits
    assert "hydrated" in kinds(eng, inst)


def test_a_non_interrupting_boundary_on_a_subprocess_forks_beside_it():
    eng = bpm.Engine()
    inst = eng.start(scoped("message", message="nudge", key="id", interrupting=False),
                     {"id": 1})
    eng.run()
    eng.publish_message("nudge", key=1)
    eng.run()
    assert ended_at(inst) == ["side"] and len(eng.tasks()) == 1
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert sorted(ended_at(inst)) == ["done", "he", "side"] and eng.holders() == []


def test_nested_subprocesses_are_cancelled_from_the_outside_in():
    p = bpm.Process("nested")
    p.start("s")
    with p.subprocess("outer") as outer:
        outer.start("o0")
        with outer.subprocess("inner") as inner:
            inner.start("i0")
            inner.user_task("deep")
            inner.end("i1")
            inner.flow("i0", "deep", "i1")
        outer.end("o1")
        outer.flow("o0", "inner", "o1")
    p.timer_boundary("late", attached_to="outer", duration="P1D")
    p.end("done")
    p.end("timeout")
    p.flow("s", "outer", "done")
    p.flow("late", "timeout")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT1H")
    assert inst.residency == "dehydrated"
    tracks = {t.node: t for t in inst.tracks}
    assert eng.checkpoint(inst.id)["tracks"][1]["scope"] == tracks["outer"].id
    eng.run()
    states = {t.node: t.state for t in inst.tracks}
    assert [states[n] for n in ("outer", "inner", "deep")] == ["cancelled"] * 3
    assert ended_at(inst) == ["timeout"] and eng.tasks() == [] and inst.state == "completed"


def test_an_error_end_inside_is_caught_by_the_subprocess_error_boundary():
    p = bpm.Process("err")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.parallel_gateway("fork")
        sp.user_task("waiting")
        sp.end("boom", error="E42")
        sp.end("never")
        sp.flow("a", "fork", "boom")
        sp.flow("fork", "waiting", "never")
    p.error_boundary("caught", attached_to="sp", error="E42")
    p.end("done")
    p.end("handled")
    p.flow("s", "sp", "done")
    p.flow("caught", "handled")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["handled"]
    caught = [f for f in eng.facts if f.kind == "error_caught"]
    assert caught[0].details == {"error": "E42", "boundary": "caught"}
    assert eng.tasks() == []


def test_an_error_raised_by_a_task_inside_reaches_the_boundary_of_the_subprocess():
    class Refused(Exception):
        code = "REFUSED"

    def refuse(data):
        raise Refused()

    p = bpm.Process("err2")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.script_task("check", fn=refuse)
        sp.end("z")
        sp.flow("a", "check", "z")
    p.error_boundary("caught", attached_to="sp")
    p.end("done")
    p.end("handled")
    p.flow("s", "sp", "done")
    p.flow("caught", "handled")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert ended_at(inst) == ["handled"]


def test_an_uncaught_error_inside_a_subprocess_is_an_incident():
    p = bpm.Process("err3")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.end("boom", error="E1")
        sp.flow("a", "boom")
    p.error_boundary("other", attached_to="sp", error="E2")
    p.end("done")
    p.end("h")
    p.flow("s", "sp", "done")
    p.flow("other", "h")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed"
    incident = [f for f in eng.facts if f.kind == "incident"][0]
    assert incident.node == "boom" and "E1" in incident.details["cause"]


def test_a_terminate_end_inside_ends_only_the_subprocess():
    p = bpm.Process("term")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.parallel_gateway("fork")
        sp.user_task("slow")
        sp.end("stop", terminate=True)
        sp.end("never")
        sp.flow("a", "fork", "stop")
        sp.flow("fork", "slow", "never")
    p.end("done")
    p.flow("s", "sp", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["done", "stop"]
    assert {t.node: t.state for t in inst.tracks}["slow"] == "cancelled"


# -- event subprocesses ---------------------------------------------------------------------
def with_event_sub(kind, interrupting=True, **spec):
    """s -> work -> done, and an event subprocess ``ev`` [start -> react -> ee] in the process."""
    p = bpm.Process("evsub")
    p.start("s")
    p.user_task("work")
    p.end("done")
    p.flow("s", "work", "done")
    with p.event_subprocess("ev") as ev:
        getattr(ev, f"{kind}_start")("es", **({"interrupting": interrupting}
                                             if kind != "error" else {}), **spec)
        ev.script_task("react", fn=lambda d: {"reacted": d.get("reacted", 0) + 1})
        ev.end("ee")
        ev.flow("es", "react", "ee")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_message_event_subprocess_cancels_the_process(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(with_event_sub("message", message="cancel", key="id"), {"id": 7})
    eng.run()
    held = sorted((h.kind, h.wait_kind, h.node) for h in eng.holders())
    assert held == [("message", "boundary", "es"), ("task", "node", "work")]
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    assert eng.publish_message("cancel", key=7, payload={"why": "customer"}) == inst.id
    eng.run()
    assert inst.state == "completed" and inst.data["why"] == "customer"
    assert inst.data["reacted"] == 1 and eng.tasks() == [] and eng.holders() == []
    states = {t.node: t for t in inst.tracks}
    assert states["work"].state == "cancelled" and states["ev"].origin == "event"


def test_a_non_interrupting_timer_event_subprocess_runs_beside_each_cycle():
    eng = bpm.Engine()
    inst = eng.start(with_event_sub("timer", interrupting=False, cycle="R3/PT1H"))
    eng.advance("PT5H")
    assert inst.data["reacted"] == 3 and len(eng.tasks()) == 1
    assert inst.residency == "dehydrated"
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and eng.holders() == []


def test_the_starts_of_event_subprocesses_go_when_the_process_ends():
    eng = bpm.Engine()
    inst = eng.start(with_event_sub("signal", signal="alarm"))
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and eng.holders() == []
    assert eng.broadcast_signal("alarm") == 0


def test_an_error_event_subprocess_catches_an_error_thrown_in_the_process():
    p2 = bpm.Process("everr")
    p2.start("s")
    p2.end("boom", error="E9")
    p2.flow("s", "boom")
    with p2.event_subprocess("ev") as ev:
        ev.error_start("es", error="E9")
        ev.end("ee")
        ev.flow("es", "ee")
    eng = bpm.Engine()
    inst = eng.start(p2)
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["ev", "ee"]
    assert [f.details for f in eng.facts if f.kind == "error_caught"] == [
        {"error": "E9", "start": "es"}]


def test_an_event_subprocess_in_a_subprocess_is_armed_only_while_it_runs():
    p = bpm.Process("inner_ev")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.user_task("task")
        sp.end("z")
        sp.flow("a", "task", "z")
        with sp.event_subprocess("remind") as ev:
            ev.timer_start("every", cycle="R/PT1H", interrupting=False)
            ev.script_task("nag", fn=lambda d: {"nags": d.get("nags", 0) + 1})
            ev.end("nagged")
            ev.flow("every", "nag", "nagged")
    p.user_task("after")
    p.end("done")
    p.flow("s", "sp", "after", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT2H30M")
    assert inst.data["nags"] == 2
    eng.complete_task(eng.tasks()[0].id)
    eng.advance("PT10H")
    assert inst.data["nags"] == 2  # the reminder went with its subprocess
    assert [h.node for h in eng.holders()] == ["after"]


def test_an_interrupting_event_subprocess_in_a_subprocess_keeps_the_subprocess_boundary():
    p = bpm.Process("inner_int")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.user_task("task")
        sp.end("z")
        sp.flow("a", "task", "z")
        with sp.event_subprocess("rescue") as ev:
            ev.signal_start("help", signal="help")
            ev.user_task("fix")
            ev.end("fixed")
            ev.flow("help", "fix", "fixed")
    p.timer_boundary("deadline", attached_to="sp", duration="P1D")
    p.end("done")
    p.end("late")
    p.flow("s", "sp", "done")
    p.flow("deadline", "late")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT1H")
    eng.broadcast_signal("help")
    eng.advance("PT1H")
    assert [t.node for t in eng.tasks()] == ["fix"]
    assert sorted(h.node for h in eng.holders()) == ["deadline", "fix"]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert sorted(ended_at(inst)) == ["done", "fixed", "rescue"] and eng.holders() == []


# -- escalations and links ------------------------------------------------------------------
def test_an_escalation_caught_without_interrupting_lets_both_go_on():
    p = bpm.Process("esc")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.escalation_throw("raise", escalation="LATE")
        sp.user_task("work")
        sp.end("z")
        sp.flow("a", "raise", "work", "z")
    p.escalation_boundary("heard", attached_to="sp", escalation="LATE", interrupting=False)
    p.end("done")
    p.end("told")
    p.flow("s", "sp", "done")
    p.flow("heard", "told")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert ended_at(inst) == ["told"] and len(eng.tasks()) == 1
    assert [f.details for f in eng.facts if f.kind == "escalation_caught"] == [
        {"escalation": "LATE", "boundary": "heard"}]
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert sorted(ended_at(inst)) == ["done", "told", "z"]


def test_an_escalation_end_reaches_an_escalation_event_subprocess_and_an_uncaught_one_is_said():
    p = bpm.Process("esc2")
    p.start("s")
    p.parallel_gateway("fork")
    p.end("up", escalation="UP")
    p.end("lost", escalation="NOBODY")
    p.flow("s", "fork", "up")
    p.flow("fork", "lost")
    with p.event_subprocess("ev") as ev:
        ev.escalation_start("es", escalation="UP", interrupting=False)
        ev.end("ee")
        ev.flow("es", "ee")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "completed"
    assert sorted(ended_at(inst)) == ["ee", "ev", "lost", "up"]
    assert [f.details for f in eng.facts if f.kind == "escalation_uncaught"] == [
        {"escalation": "NOBODY"}]


def test_a_link_throw_goes_to_its_catch():
    p = bpm.Process("links")
    p.start("s")
    p.script_task("one", fn=lambda d: {"n": d.get("n", 0) + 1})
    p.exclusive_gateway("again", default="out")
    p.link_throw("go", link="loop")
    p.link_catch("back", link="loop")
    p.end("out")
    p.flow("s", "back")
    p.flow("back", "one", "again")
    p.flow("again", "go", condition="n < 3")
    p.flow("again", "out")
    with pytest.raises(bpm.ModelError, match="incoming"):
        p.definition()
    q = bpm.Process("links")
    q.start("s")
    q.script_task("one", fn=lambda d: {"n": d.get("n", 0) + 1})
    q.exclusive_gateway("again", default="out")
    q.link_throw("go", link="loop")
    q.link_catch("back", link="loop")
    q.end("out")
    q.flow("s", "one", "again")
    q.flow("back", "one")
    q.flow("again", "go", condition="n < 3")
    q.flow("again", "out")
    eng = bpm.Engine()
    inst = eng.start(q)
    eng.run()
    assert inst.data == {"n": 3} and ended_at(inst) == ["out"]


# -- bad models -----------------------------------------------------------------------------
def test_bad_scopes_are_refused_naming_each_problem():
    p = bpm.Process("bad")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.user_task("inside")  # no start event
        sp.end("z")
        sp.flow("inside", "z")
    p.event_subprocess("ev")  # no start at all
    with p.subprocess("sp2") as sp2:
        sp2.start("a")
        sp2.message_start("m", message="x", key="k")  # a triggered start in a plain subprocess
        sp2.end("b")
        sp2.flow("a", "b")
        sp2.flow("m", "b")
    p.link_throw("jump", link="nowhere")
    p.end("done")
    p.flow("s", "sp", "sp2", "done")
    p.flow("sp2", "jump")
    p.flow("s", "z")  # crosses the border
    with pytest.raises(bpm.ModelError) as err:
        p.definition()
    text = "\n".join(err.value.problems)
    assert "subprocess 'sp' has 0 plain start events" in text
    assert "event_subprocess 'ev' needs exactly one start event" in text
    assert "'m' is in subprocess 'sp2'" in text
    assert "no link catch named 'nowhere'" in text
    assert "flow 's->z' crosses the border of a subprocess" in text


# -- checkpoints and restart recovery -------------------------------------------------------
def guarded_and_evented():
    """A subprocess with a timer boundary and an inner message event subprocess, in a
    process with its own signal event subprocess."""
    p = bpm.Process("both")
    p.start("s")
    with p.subprocess("handle") as sp:
        sp.start("hs")
        sp.user_task("work")
        sp.end("he")
        sp.flow("hs", "work", "he")
        with sp.event_subprocess("query") as ev:
            ev.message_start("asked", message="ask", key="id", interrupting=False)
            ev.script_task("answer", fn=lambda d: {"answers": d.get("answers", 0) + 1})
            ev.end("answered")
            ev.flow("asked", "answer", "answered")
    p.timer_boundary("late", attached_to="handle", duration="P1D")
    p.end("done")
    p.end("timeout")
    p.flow("s", "handle", "done")
    p.flow("late", "timeout")
    with p.event_subprocess("abort") as ev:
        ev.signal_start("stop", signal="stop")
        ev.end("stopped")
        ev.flow("stop", "stopped")
    return p


def test_the_checkpoint_records_scopes_and_the_process_event_starts(tmp_path):
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "c.db"))
    inst = eng.start(guarded_and_evented(), {"id": 5})
    eng.advance("PT1M")
    doc = eng.checkpoint(inst.id)
    assert doc["events"] == {"stop": {"hold": doc["events"]["stop"]["hold"], "kind": "signal",
                                      "name": "stop"}}
    host, inner = doc["tracks"]
    assert host["node"] == "handle" and host["wait"]["kind"] == "scope"
    assert sorted(host["boundaries"]) == ["asked", "late"]
    assert inner["node"] == "work" and inner["scope"] == host["id"]


@pytest.mark.parametrize("trigger", ["late", "ask", "stop", "task"])
def test_restart_recovery_brings_back_every_scope_and_start(tmp_path, trigger):
    """Crash while dehydrated inside a subprocess; a fresh engine recovers the same holders,
    and each trigger then does what it did before the crash."""
    def scenario(eng, inst_id):
        if trigger == "late":
            eng.advance("P2D")
        elif trigger == "ask":
            eng.publish_message("ask", key=5)
            eng.advance("PT1M")
        elif trigger == "stop":
            eng.broadcast_signal("stop")
            eng.advance("PT1M")
        else:
            eng.complete_task(eng.tasks()[0].id)
            eng.advance("PT1M")
        rec = eng.instance(inst_id)
        return rec.state, sorted(ended_at(rec)), rec.data, sorted(
            (h.kind, h.node) for h in eng.holders())

    p = guarded_and_evented()
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "a.db"))
    inst = eng.start(p, {"id": 5})
    eng.advance("PT1H")
    expected = scenario(eng, inst.id)

    crashed = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "b.db"))
    inst2 = crashed.start(p, {"id": 5})
    crashed.advance("PT1H")
    before = sorted((h.kind, h.wait_kind, h.node, h.deadline) for h in crashed.holders())
    crashed.store.close()
    del crashed
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "b.db"), processes=[p])
    assert sorted((h.kind, h.wait_kind, h.node, h.deadline) for h in eng2.holders()) == before
    assert eng2.instance(inst2.id).residency == "dehydrated"
    assert scenario(eng2, inst2.id) == expected


def test_a_checkpoint_whose_scope_names_no_running_track_fails_only_its_instance(tmp_path):
    db = tmp_path / "bad.db"
    store = bpm.SQLiteStore(db)
    eng = bpm.Engine(store=store)
    p = scoped()
    bad = eng.start(p)
    good = eng.start(p)
    eng.advance("PT1M")
    doc = eng.checkpoint(bad.id)
    doc["tracks"][1]["scope"] = "t9"
    store.put(bad.id, json.dumps(doc).encode())
    store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[p])
    (failed,) = [f for f in eng2.facts if f.kind == "recovery_failed"]
    assert failed.instance == bad.id and failed.details["field"] == "tracks[1].scope"
    assert eng2.instance(good.id).residency == "dehydrated"


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_subprocess_interrupted_while_a_join_inside_waits_wakes_again(dehydrate):
    """One branch inside the subprocess reached its join, the other still waits, when an
    interrupting timer on the subprocess fires: the join's arrivals go with the scope, so
    the dehydrated instance's checkpoint reads back and its next timer wakes it (it once named
    the gone scope, and every wake failed)."""
    p = bpm.Process("joined")
    p.start("s")
    with p.subprocess("sub") as sp:
        sp.start("ss")
        sp.parallel_gateway("fork")
        sp.parallel_gateway("join")
        sp.user_task("work")
        sp.signal_catch("sig", signal="go")
        sp.end("se")
        sp.flow("ss", "fork")
        sp.flow("fork", "work", "join")
        sp.flow("fork", "sig", "join")
        sp.flow("join", "se")
    p.timer_boundary("late", attached_to="sub", duration="PT10M")
    p.timer_catch("cool", duration="PT1H")
    p.end("side")
    p.flow("late", "cool", "side")
    p.end("done")
    p.flow("s", "sub", "done")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p, {})
    eng.run(until=eng.now)
    eng.complete_task(eng.tasks()[0].id, {})
    eng.advance("PT2H")
    assert [f.kind for f in eng.facts if f.kind == "wake_failed"] == []
    assert inst.state == "completed" and ended_at(inst) == ["side"]


def echo_in(scope, first):
    """In ``scope`` (a process or subprocess builder), after ``first``: a message throw
    whose message starts a non-interrupting event subprocess of the same scope (a user
    task), the throw's own path ending at once."""
    scope.message_throw("shout", message="m", key="id")
    scope.end("quiet")
    scope.flow(first, "shout", "quiet")
    with scope.event_subprocess("ev") as ev:
        ev.message_start("heard", message="m", key="id", interrupting=False)
        ev.user_task("answer")
        ev.end("answered")
        ev.flow("heard", "answer", "answered")


def self_echo(where):
    """The echo in a subprocess ``sub`` between s and done (``many``: two instances of it,
    done when one is), or in the process itself."""
    p = bpm.Process("echo")
    p.start("s")
    if where == "process":
        echo_in(p, "s")
        return p
    with p.subprocess("sub") as sp:
        sp.start("ss")
        echo_in(sp, "ss")
    if where == "many":
        p.multi_instance("sub", cardinality="2",
                         completion="numberOfCompletedInstances >= 1")
    p.end("done")
    p.flow("s", "sub", "done")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("where", ["subprocess", "many", "process"])
def test_an_event_subprocess_accepted_as_its_scope_ends_runs_before_the_scope_completes(
        where, dehydrate):
    """The message that starts a non-interrupting event subprocess is accepted at the instant
    the scope's last track ends: the scope is not done until that event subprocess has run
    (its task is open, the instance active); once the task is completed, it completes. (The
    subprocess once left with the event subprocess still running inside it, and a
    multi-instance activity completing by its condition left it running after the end.)"""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(self_echo(where), {"id": 1})
    eng.run(until=eng.now)
    assert inst.state == "active"
    answers = 2 if where == "many" else 1  # one in each instance of the subprocess
    assert [(t.node, t.instance) for t in eng.tasks()] == [("answer", inst.id)] * answers
    assert "done" not in ended_at(inst)
    eng.complete_task(eng.tasks()[0].id)
    eng.run(until=eng.now)
    assert inst.state == "completed" and eng.holders() == []
    order = left(eng, inst)
    assert order[-2:] == (["answered", "ev"] if where == "process" else ["sub", "done"])
    assert order.index("answered") < order.index(order[-1])
