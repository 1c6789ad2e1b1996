"""Exclusive, parallel and event-based gateways."""

from conftest import ended_at, kinds, left

import gobpm_nb as bpm


def exclusive(default=True):
    p = bpm.Process("route")
    p.start("s")
    p.exclusive_gateway("gw", default="small" if default else None)
    p.end("big")
    p.end("medium")
    p.end("small")
    p.flow("s", "gw")
    p.flow("gw", "big", condition="amount > 1000")
    p.flow("gw", "medium", condition=lambda d: d["amount"] > 100)
    p.flow("gw", "small")
    return p


def test_exclusive_gateway_takes_the_first_true_condition_in_flow_order():
    """Conditions are tried in flow order; the first that holds wins."""
    eng = bpm.Engine()
    a = eng.start(exclusive(), {"amount": 5000})
    b = eng.start(exclusive(), {"amount": 500})
    eng.run()
    assert ended_at(a) == ["big"] and ended_at(b) == ["medium"]


def test_exclusive_gateway_falls_back_to_the_default_flow():
    """With no condition true, the default flow is taken."""
    eng = bpm.Engine()
    c = eng.start(exclusive(), {"amount": 5})
    eng.run()
    assert ended_at(c) == ["small"]


def test_exclusive_gateway_with_no_match_and_no_default_fails_with_an_incident():
    """No true condition and no default: the instance fails and an incident names the gateway."""
    p = bpm.Process("route")
    p.start("s")
    p.exclusive_gateway("gw")
    p.end("big")
    p.flow("s", "gw")
    p.flow("gw", "big", condition="amount > 1000")
    eng = bpm.Engine()
    inst = eng.start(p, {"amount": 5})
    eng.run()
    assert inst.state == "failed"
    incident = [f for f in eng.facts if f.kind == "incident"]
    assert incident[0].node == "gw" and "no condition holds" in incident[0].details["cause"]
    assert eng.stats()["coroutines"] == 0


def parallel():
    p = bpm.Process("par")
    p.start("s")
    p.parallel_gateway("fork")
    p.timer_catch("a", duration="PT1H")
    p.timer_catch("b", duration="PT2H")
    p.script_task("c", fn=lambda d: {"c": 1})
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "fork")
    for x in "abc":
        p.flow("fork", x, "join")
    p.flow("join", "e")
    return p


def test_parallel_fork_gives_children_with_the_parent_as_lineage():
    """A fork: the parent takes the first flow; each other flow gets a child track."""
    eng = bpm.Engine(dehydrate=False)  # resident: the lineage has no continuation forks
    inst = eng.start(parallel())
    eng.advance("PT30M")
    t1, t2, t3 = inst.tracks
    assert (t1.node, t2.node) == ("a", "b")
    assert t2.parents == ("t1",) and t3.parents == ("t1",)
    assert t2.origin == "fork" == t3.origin


def test_parallel_join_merges_every_arriving_track():
    """The join waits for every branch; arrivals end merged; the continuation names them all."""
    eng = bpm.Engine(dehydrate=False)
    inst = eng.start(parallel())
    eng.advance("PT90M")
    assert inst.state == "active"
    eng.run()
    assert inst.state == "completed"
    tracks = {t.id: t for t in inst.tracks}
    joined = [t for t in tracks.values() if t.origin == "join"][0]
    assert sorted(joined.parents) == ["t1", "t2", "t3"]
    assert all(tracks[p].state == "merged" for p in joined.parents)
    assert joined.state == "completed" and joined.node == "e"
    assert inst.data == {"c": 1}


def ebg():
    p = bpm.Process("race")
    p.start("s")
    p.event_gateway("gw")
    p.message_catch("paid", message="payment", key="order")
    p.timer_catch("timeout", duration="PT1H")
    p.end("ok")
    p.end("late")
    p.flow("s", "gw", "paid", "ok")
    p.flow("gw", "timeout", "late")
    return p


def test_event_gateway_first_trigger_wins_and_the_other_arm_is_withdrawn():
    """The message arm wins; the timer arm's hold is withdrawn and never fires."""
    eng = bpm.Engine()
    inst = eng.start(ebg(), {"order": "o-1"})
    eng.run(until="2026-01-01T00:10:00Z")
    assert sorted(h.kind for h in eng.holders()) == ["message", "timer"]
    assert eng.publish_message("payment", key="o-1", payload={"sum": 10}) == "i1"
    eng.run()
    assert ended_at(inst) == ["ok"] and inst.data["sum"] == 10
    assert "timer_fired" not in kinds(eng)
    reasons = {f.node: f.details["reason"] for f in eng.facts if f.kind == "wait_released"}
    assert reasons == {"paid": "fired", "timeout": "withdrawn"}
    assert left(eng, inst) == ["s", "gw", "paid", "ok"]


def test_event_gateway_timer_wins_when_no_message_comes():
    """With no message the timer arm fires and the message subscription is withdrawn."""
    eng = bpm.Engine()
    inst = eng.start(ebg(), {"order": "o-1"})
    eng.run()
    assert ended_at(inst) == ["late"]
    assert eng.publish_message("payment", key="o-1") is None
    assert eng.facts[-1].kind == "message_dropped"


def test_event_gateway_conditional_arm_fires_when_data_changes():
    """A conditional arm wins when a data change makes it true."""
    p = bpm.Process("race")
    p.start("s")
    p.parallel_gateway("fork")
    p.event_gateway("gw")
    p.conditional_catch("flag", condition="ready == True")
    p.timer_catch("timeout", duration="PT2H")
    p.timer_catch("pause", duration="PT1H")
    p.script_task("set", fn=lambda d: {"ready": True})
    p.end("by_flag")
    p.end("late")
    p.end("e2")
    p.flow("s", "fork", "gw", "flag", "by_flag")
    p.flow("gw", "timeout", "late")
    p.flow("fork", "pause", "set", "e2")
    eng = bpm.Engine()
    inst = eng.start(p, {"ready": False})
    eng.run()
    assert sorted(ended_at(inst)) == ["by_flag", "e2"]
    assert "timer_fired" in kinds(eng)
    assert [f.node for f in eng.facts if f.kind == "timer_fired"] == ["pause"]
