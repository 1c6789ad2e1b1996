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


def parallel_then_inclusive_join():
    """start -> parallel fork -> user tasks a, b -> inclusive join -> end."""
    p = bpm.Process("pj")
    p.start("s")
    p.parallel_gateway("fork")
    p.user_task("a")
    p.user_task("b")
    p.inclusive_gateway("join")
    p.end("end")
    p.flow("s", "fork")
    p.flow("fork", "a", "join")
    p.flow("fork", "b", "join")
    p.flow("join", "end")
    return p


def entered(eng, node):
    return [f.node for f in eng.facts if f.kind == "node_entered" and f.node == node]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_sibling_tasks_completed_back_to_back_pass_the_inclusive_join_once(dehydrate):
    """Issue 21 #3: a track that left its task and stands at the join, not yet parked there,
    still holds the join: completing both tasks before ``run()`` enters ``end`` once."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(parallel_then_inclusive_join())
    eng.run()
    for task in eng.tasks():
        eng.complete_task(task.id)
    eng.run()
    assert inst.state == "completed"
    assert entered(eng, "end") == ["end"]
    assert [t.state for t in inst.tracks].count("merged") == 2


def nested_inclusive():
    """start -> inclusive split -> (a -> inner split -> c, d -> inner join) and b -> outer
    join -> end: four user tasks, two nested inclusive fork/join pairs."""
    p = bpm.Process("nested")
    p.start("s")
    p.inclusive_gateway("split")
    p.user_task("a")
    p.inclusive_gateway("inner_split")
    p.user_task("c")
    p.user_task("d")
    p.inclusive_gateway("inner_join")
    p.user_task("b")
    p.inclusive_gateway("join")
    p.end("end")
    p.flow("s", "split")
    p.flow("split", "a", "inner_split")
    p.flow("inner_split", "c", "inner_join")
    p.flow("inner_split", "d", "inner_join")
    p.flow("inner_join", "join")
    p.flow("split", "b", "join")
    p.flow("join", "end")
    return p


def orders(names, before):
    """Every order of ``names`` in which each name comes after the names ``before`` it."""
    if not names:
        yield []
        return
    for n in names:
        if all(m not in names for m in before.get(n, ())):
            for rest in orders([m for m in names if m != n], before):
                yield [n, *rest]


def complete_in(order, dehydrate, run_between):
    """Complete the tasks of one ``nested_inclusive`` instance in ``order``: back to back
    (``run()`` only when the next task is not open yet), or with ``run()`` between each."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(nested_inclusive())
    eng.run()
    for node in order:
        open_ = [t.id for t in eng.tasks() if t.node == node]
        if not open_:
            eng.run()
            open_ = [t.id for t in eng.tasks() if t.node == node]
        eng.complete_task(open_[0])
        if run_between:
            eng.run()
    eng.run()
    nodes = [f.node for f in eng.facts if f.kind == "node_left"]  # its node completions
    completed = [f.node for f in eng.facts if f.kind == "task_completed"]
    return inst, sorted(nodes), completed


@pytest.mark.parametrize("dehydrate", [False, True])
def test_every_completion_order_of_nested_inclusive_joins_ends_once(dehydrate):
    """Issue 21 #3 as a property: in every order the four tasks can be completed, back to
    back or with ``run()`` between, the instance ends once with the same node completions."""
    every = list(orders(["a", "b", "c", "d"], {"c": ["a"], "d": ["a"]}))
    assert len(every) == 8
    for order in every:
        inst, nodes, completed = complete_in(order, dehydrate, run_between=False)
        assert inst.state == "completed", order
        assert nodes.count("end") == nodes.count("join") == 1, order
        assert [t for t in inst.tracks if t.state in ("ready", "running", "waiting")] == []
        stepwise = complete_in(order, dehydrate, run_between=True)
        assert stepwise[0].state == "completed"
        assert (nodes, completed) == stepwise[1:], order
