"""The inclusive gateway: split by every condition that holds (the default when none does),
join by the BPMN 2.0.2 rule — it waits only for tokens that can still reach it."""

import pytest
from conftest import ended_at

import gobpm_nb as bpm


def review(first="PT1H", second="PT3H"):
    """s -> split -(a)-> wait_a -> join, -(b)-> wait_b -> join, default -> none -> join."""
    p = bpm.Process("review")
    p.start("s")
    p.inclusive_gateway("split", default="none")
    p.timer_catch("wait_a", duration=first)
    p.timer_catch("wait_b", duration=second)
    p.script_task("none", fn=lambda d: {"nothing": True})
    p.inclusive_gateway("join")
    p.script_task("after", fn=lambda d: {"joined_at": d.get("joined_at", 0) + 1})
    p.end("done")
    p.flow("s", "split")
    p.flow("split", "wait_a", condition="a")
    p.flow("split", "wait_b", condition="b")
    p.flow("split", "none")
    p.flow("wait_a", "join")
    p.flow("wait_b", "join")
    p.flow("none", "join")
    p.flow("join", "after", "done")
    return p


@pytest.mark.parametrize("a,b,ended", [
    (True, True, 3 * 3600), (True, False, 3600), (False, True, 3 * 3600), (False, False, 0)])
@pytest.mark.parametrize("dehydrate", [False, True])
def test_the_split_takes_what_holds_and_the_join_waits_for_exactly_those(a, b, ended,
                                                                          dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    start = eng.now
    inst = eng.start(review(), {"a": a, "b": b})
    eng.run()
    assert inst.state == "completed" and inst.data["joined_at"] == 1
    assert ended_at(inst) == ["done"]
    finished = [f.at for f in eng.facts if f.kind == "instance_completed"][0]
    assert (finished - start).total_seconds() == ended
    assert ("nothing" in inst.data) == (not a and not b)


def test_no_condition_and_no_default_is_an_incident():
    p = bpm.Process("none")
    p.start("s")
    p.inclusive_gateway("split")
    p.end("x")
    p.end("y")
    p.flow("s", "split")
    p.flow("split", "x", condition="n > 1")
    p.flow("split", "y", condition="n > 2")
    eng = bpm.Engine()
    inst = eng.start(p, {"n": 0})
    eng.run()
    assert inst.state == "failed"
    assert [f.details["cause"] for f in eng.facts if f.kind == "incident"] == [
        "no condition holds and there is no default flow"]


def test_a_branch_that_leaves_by_an_error_boundary_does_not_hold_the_join():
    """Camunda #19460's pattern: one branch's task fails into an error boundary whose path
    ends without reaching the join; the join fires for the branch that arrived."""
    def fail(data):
        raise RuntimeError("down")

    p = bpm.Process("p19460")
    p.start("s")
    p.inclusive_gateway("split")
    p.timer_catch("slow", duration="PT1H")
    p.service_task("call", topic="remote")
    p.error_boundary("failed", attached_to="call")
    p.end("gave_up")
    p.inclusive_gateway("join")
    p.end("done")
    p.flow("s", "split")
    p.flow("split", "slow", "join")
    p.flow("split", "call", "join")
    p.flow("failed", "gave_up")
    p.flow("join", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "active"  # waits for the job, which could still reach the join
    job = eng.fetch_jobs("remote", "w")[0]
    eng.fail_job(job.id, "down")
    eng.run()
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["done", "gave_up"]


def test_the_join_fires_when_a_token_upstream_takes_a_path_away_from_it():
    """A token that could reach the join holds it; once an exclusive gateway sends that token
    elsewhere, the join fires at the next quiet point."""
    p = bpm.Process("away")
    p.start("s")
    p.inclusive_gateway("split")
    p.user_task("decide")
    p.exclusive_gateway("route", default="elsewhere")
    p.end("elsewhere")
    p.user_task("quick")
    p.inclusive_gateway("join")
    p.end("done")
    p.flow("s", "split")
    p.flow("split", "decide", "route")
    p.flow("route", "join", condition="go")
    p.flow("route", "elsewhere")
    p.flow("split", "quick", "join")
    p.flow("join", "done")
    eng = bpm.Engine()
    inst = eng.start(p, {"go": False})
    eng.run()
    by_node = {t.node: t.id for t in eng.tasks()}
    eng.complete_task(by_node_id(eng, "quick"))
    eng.run()
    assert inst.state == "active" and ended_at(inst) == []  # decide could still reach it
    eng.complete_task(by_node_id(eng, "decide"))
    eng.run()
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["done", "elsewhere"]
    assert by_node


def by_node_id(eng, node):
    return [t.id for t in eng.tasks() if t.node == node][0]


def test_an_inclusive_join_inside_a_subprocess_is_kept_per_scope_and_checkpointed():
    p = bpm.Process("scoped_join")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("a")
        sp.inclusive_gateway("split")
        sp.user_task("one")
        sp.user_task("two")
        sp.inclusive_gateway("join")
        sp.end("z")
        sp.flow("a", "split")
        sp.flow("split", "one", "join")
        sp.flow("split", "two", "join")
        sp.flow("join", "z")
    p.end("done")
    p.flow("s", "sp", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    eng.complete_task(by_node_id(eng, "one"))
    eng.run()
    host = [t for t in inst.tracks if t.node == "sp"][0]
    assert list(eng.checkpoint(inst.id)["joins"]) == [f"join@{host.id}"]
    assert inst.residency == "dehydrated"
    eng.complete_task(by_node_id(eng, "two"))
    eng.run()
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["done", "z"]


def test_an_inclusive_default_must_be_an_outgoing_target():
    p = bpm.Process("bad")
    p.start("s")
    p.inclusive_gateway("g", default="nowhere")
    p.end("e")
    p.flow("s", "g", "e")
    with pytest.raises(bpm.ModelError, match="default 'nowhere'"):
        p.definition()
