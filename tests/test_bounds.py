"""Bounds that turn a model that would run forever into an incident: a loop with no wait
(``max_steps_without_wait``: steps counted along a track's lineage since it last waited) and
a call activity that calls without end (``max_call_depth``). Before issue 21 (#4, #5)
``run()`` never returned on either."""

from pathlib import Path

import pytest

import gobpm_nb as bpm

EXTRA = Path(__file__).parent / "data" / "miwg_extra"


def spinning(name="spin"):
    """s -> gw; gw's first flow (no condition) -> work -> gw; gw -[never]-> e."""
    p = bpm.Process(name)
    p.start("s")
    p.exclusive_gateway("gw")
    p.script_task("work", fn=lambda d: None)
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "work", "gw")
    p.flow("gw", "e", condition="n > 1000000")
    return p


def counting(rounds_field="rounds"):
    """s -> gw; gw -[n >= rounds]-> e, default -> bump (n + 1) -> gw: a loop with no wait
    that ends by its own condition."""
    p = bpm.Process("counting")
    p.start("s")
    p.exclusive_gateway("gw", default="bump")
    p.script_task("bump", fn=lambda d: {"n": d["n"] + 1})
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "e", condition=f"n >= {rounds_field}")
    p.flow("gw", "bump", "gw")
    return p


def incidents(eng):
    return [f for f in eng.facts if f.kind == "incident"]


@pytest.mark.parametrize("until", [None, "2026-01-02T00:00:00Z"])
def test_a_loop_with_no_wait_fails_its_instance_naming_the_loop_and_run_returns(until):
    """The spinning instance fails with an incident naming the loop's nodes; an instance
    beside it goes on to its end."""
    waiting = bpm.Process("waiting")
    waiting.start("s")
    waiting.timer_catch("t", duration="PT1H")
    waiting.end("e")
    waiting.flow("s", "t", "e")
    eng = bpm.Engine()
    spin = eng.start(spinning())
    other = eng.start(waiting)
    eng.run(until=until)
    assert spin.state == "failed" and other.state == "completed"
    (incident,) = incidents(eng)
    assert incident.instance == spin.id
    assert incident.details["loop"] in (["gw", "work"], ["work", "gw"])
    assert incident.details["limit"] == 10_000
    assert "max_steps_without_wait" in incident.details["cause"]
    failed = [f for f in eng.facts if f.kind == "instance_failed"]
    assert [f.details["loop"] for f in failed] == [incident.details["loop"]]
    entered = sum(f.kind == "node_entered" and f.instance == spin.id for f in eng.facts)
    assert 10_000 < entered <= 10_003


def test_the_bound_on_steps_without_a_wait_is_an_engine_option():
    """A loop of 600 rounds at one instant (1,203 steps with its start and end) fails
    under a bound of 1,000 and ends under 2,000; a low bound stops a spin sooner."""
    eng = bpm.Engine(max_steps_without_wait=1000)
    inst = eng.start(counting(), {"n": 0, "rounds": 600})
    eng.run()
    assert inst.state == "failed" and incidents(eng)[0].details["loop"] in (
        ["gw", "bump"], ["bump", "gw"])
    eng = bpm.Engine(max_steps_without_wait=2000)
    inst = eng.start(counting(), {"n": 0, "rounds": 600})
    eng.run()
    assert inst.state == "completed" and inst.data["n"] == 600
    eng = bpm.Engine(max_steps_without_wait=40)
    inst = eng.start(spinning())
    eng.run()
    assert inst.state == "failed"
    assert sum(f.kind == "node_entered" for f in eng.facts) <= 43


def test_a_loop_through_a_timer_is_not_a_loop_with_no_wait():
    """A loop through a one-second timer enters its nodes many times, each round after its
    wait: no incident however low the bound."""
    p = bpm.Process("ticking")
    p.start("s")
    p.exclusive_gateway("gw", default="tick")
    p.script_task("tick", fn=lambda d: {"n": d["n"] + 1})
    p.timer_catch("wait", duration="PT1S")
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "e", condition="n >= 50")
    p.flow("gw", "tick", "wait", "gw")
    eng = bpm.Engine(max_steps_without_wait=5)
    inst = eng.start(p, {"n": 0})
    eng.run()
    assert inst.state == "completed" and inst.data["n"] == 50


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_loop_through_a_user_task_completed_at_one_instant_is_not_a_loop(dehydrate):
    """A user completing a task in a loop many times without moving the clock is not a
    spin: the task is a wait, with dehydration on and off."""
    p = bpm.Process("review_loop")
    p.start("s")
    p.user_task("review")
    p.exclusive_gateway("gw", default="review")
    p.end("e")
    p.flow("s", "review", "gw")
    p.flow("gw", "e", condition="done")
    p.flow("gw", "review")
    eng = bpm.Engine(max_steps_without_wait=5, dehydrate=dehydrate)
    inst = eng.start(p, {"done": False})
    eng.run()
    for i in range(20):
        (task,) = eng.tasks()
        eng.complete_task(task.id, {"done": i == 19})
        eng.run()
    assert inst.state == "completed" and incidents(eng) == []


def test_a_wide_multi_instance_at_one_instant_is_not_a_loop():
    """40 inner instances of a three-node subprocess, all at one instant, enter some 200
    nodes in one instance: far past a bound of 50, yet each inner instance's lineage takes
    a handful of steps, so the instance completes with no incident (and so does a parallel
    fork as wide)."""
    p = bpm.Process("wide")
    p.start("s")
    with p.subprocess("each") as sp:
        sp.script_task("note", fn=lambda d: {"seen": d["item"]})
        sp.flow(sp.start("a"), "note", sp.end("z"))
    p.multi_instance("each", collection="items", element="item", output_collection="out",
                     output_element="seen")
    p.end("e")
    p.flow("s", "each", "e")
    eng = bpm.Engine(max_steps_without_wait=50)
    inst = eng.start(p, {"items": list(range(40))})
    eng.run()
    assert inst.state == "completed" and inst.data["out"] == list(range(40))
    assert incidents(eng) == []
    assert sum(f.kind == "node_entered" for f in eng.facts) > 150
    fan = bpm.Process("fan")
    fan.start("s")
    fan.parallel_gateway("fork")
    fan.parallel_gateway("join")
    fan.end("e")
    fan.flow("s", "fork")
    for i in range(40):
        fan.script_task(f"w{i}", fn=lambda d: None)
        fan.flow("fork", f"w{i}", "join")
    fan.flow("join", "e")
    inst = eng.start(fan)
    eng.run()
    assert inst.state == "completed" and incidents(eng) == []


@pytest.mark.parametrize("through", ["fork", "join"])
def test_a_loop_that_forks_each_round_is_still_caught(through):
    """Each round forks at a parallel gateway: the back edge is taken by the forked child
    (the other track ends), or both tracks meet at a parallel join whose continuing track
    is a new one. A track goes on from its parent's steps, so the loop is caught all the
    same, naming its nodes."""
    p = bpm.Process("forking")
    p.start("s")
    p.exclusive_gateway("gw", default="fork")
    p.parallel_gateway("fork")
    p.script_task("work", fn=lambda d: None)
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "e", condition="n > 1000000")
    p.flow("gw", "fork")
    if through == "fork":
        p.end("side")
        p.flow("fork", "side")  # the track itself ends; its forked child loops
        p.flow("fork", "work", "gw")
    else:
        p.script_task("other", fn=lambda d: None)
        p.parallel_gateway("join")
        p.flow("fork", "work", "join")
        p.flow("fork", "other", "join")
        p.flow("join", "gw")
    eng = bpm.Engine(max_steps_without_wait=50)
    inst = eng.start(p, {"n": 0})
    eng.run()
    assert inst.state == "failed"
    (incident,) = incidents(eng)
    assert {"gw", "fork", "work"} <= set(incident.details["loop"])
    assert sum(f.kind == "node_entered" for f in eng.facts) < 200


def around(via, waits):
    """s -> gw; gw -[n >= rounds]-> e, default -> a subprocess or a call activity (its
    inside: a script, then a user task when it ``waits``) -> bump -> gw."""
    inner = bpm.Process("inner")
    p = bpm.Process("around")
    p.start("s")
    p.exclusive_gateway("gw", default="body")
    p.script_task("bump", fn=lambda d: {"n": d["n"] + 1})
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "e", condition="n >= rounds")
    if via == "subprocess":
        with p.subprocess("body") as sp:
            sp.script_task("note", fn=lambda d: None)
            nodes = [sp.start("a"), "note"] + ([sp.user_task("ask")] if waits else [])
            sp.flow(*nodes, sp.end("z"))
    else:
        p.call_activity("body", process="inner", outputs=[])
        inner.start("a")
        inner.script_task("note", fn=lambda d: None)
        nodes = ["a", "note"] + ([inner.user_task("ask")] if waits else [])
        inner.flow(*nodes, inner.end("z"))
    p.flow("gw", "body", "bump", "gw")
    return p, inner


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("via", ["subprocess", "call"])
def test_a_loop_through_a_subprocess_or_a_call_is_caught_unless_its_inside_waits(via,
                                                                                 dehydrate):
    """The steps inside a subprocess or a called instance count on the loop's lineage: a
    loop through one that never waits fails with an incident; one whose inside waits on a
    user task runs its 30 rounds under a bound of 20, as many as the user completes, with
    dehydration on and off."""
    p, inner = around(via, waits=False)
    eng = bpm.Engine(max_steps_without_wait=20, dehydrate=dehydrate)
    if via == "call":
        eng.deploy(inner)
    inst = eng.start(p, {"n": 0, "rounds": 1000})
    eng.run()
    assert inst.state == "failed" and "body" in incidents(eng)[0].details["loop"]
    p, inner = around(via, waits=True)
    eng = bpm.Engine(max_steps_without_wait=20, dehydrate=dehydrate)
    if via == "call":
        eng.deploy(inner)
    inst = eng.start(p, {"n": 0, "rounds": 30})
    eng.run()
    while eng.tasks():
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    assert inst.state == "completed" and inst.data["n"] == 30 and incidents(eng) == []


def ping_pong():
    """ping sends, pong answers, ``rounds`` times at one instant: every answer is a wait."""
    ping = bpm.Process("ping")
    ping.start("s")
    ping.exclusive_gateway("gw", default="send")
    ping.message_throw("send", message="ping", key="k")
    ping.message_catch("back", message="pong", key="k")
    ping.script_task("bump", fn=lambda d: {"n": d["n"] + 1})
    ping.end("e")
    ping.flow("s", "gw")
    ping.flow("gw", "e", condition="n >= rounds")
    ping.flow("gw", "send", "back", "bump", "gw")
    pong = bpm.Process("pong")
    pong.start("s")
    pong.exclusive_gateway("gw")
    pong.message_catch("hear", message="ping", key="k")
    pong.message_throw("answer", message="pong", key="k")
    pong.flow("s", "gw", "hear", "answer", "gw")
    return ping, pong


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_message_ping_pong_at_one_instant_completes_with_dehydration_on_and_off(dehydrate):
    """30 rounds of messages between two instances at one virtual instant, under a bound
    of 5: each message caught is a wait, so neither instance is in a loop with no wait,
    whether the instances dehydrate between messages or not."""
    ping, pong = ping_pong()
    eng = bpm.Engine(max_steps_without_wait=5, dehydrate=dehydrate)
    answering = eng.start(pong, {"k": 1})
    eng.run()
    asking = eng.start(ping, {"k": 1, "n": 0, "rounds": 30})
    eng.run()
    assert incidents(eng) == []
    assert asking.state == "completed" and asking.data["n"] == 30
    assert answering.state == "active"


@pytest.mark.parametrize("option", ["max_steps_without_wait", "max_call_depth"])
@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True, None])
def test_a_bound_that_is_not_a_positive_count_is_refused(option, bad):
    with pytest.raises(bpm.EngineError, match=option):
        bpm.Engine(**{option: bad})


def test_recover_takes_the_bounds(tmp_path):
    """A recovered engine keeps its bounds as options: a spin still fails there."""
    store = bpm.SQLiteStore(str(tmp_path / "run.db"))
    eng = bpm.Engine(store=store)
    eng.deploy(spinning())
    store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(str(tmp_path / "run.db")),
                              processes=[spinning()], max_steps_without_wait=30,
                              max_call_depth=2)
    inst = eng2.start(spinning())
    eng2.run()
    assert inst.state == "failed" and incidents(eng2)[0].details["limit"] == 30


def test_a_gateway_whose_always_taken_flow_loops_with_no_wait_is_noted_at_import():
    """The report warns on the gateway, naming its flow and the loop; a loop through a user
    task is not noted."""
    model = bpm.load_bpmn(counting().to_bpmn())
    (note,) = [n for n in model.report if "nothing on the way waits" in n.message]
    assert note.severity == "warning" and note.element == "gw"
    assert "default flow" in note.message and "'bump'" in note.message
    p = bpm.Process("waits")
    p.start("s")
    p.exclusive_gateway("gw", default="ask")
    p.user_task("ask")
    p.end("e")
    p.flow("s", "gw")
    p.flow("gw", "e", condition="done")
    p.flow("gw", "ask", "gw")
    assert [n for n in bpm.load_bpmn(p.to_bpmn()).report
            if "nothing on the way waits" in n.message] == []


def test_miwg_c20_checkout_loop_is_noted_at_import_and_fails_with_an_incident_naming_it():
    """MIWG C.2.0's checkout retries payment through two exclusive gateways whose first
    flows have no condition, with nothing on the loop that waits: the report warns on both
    gateways, and a run fails the instance with an incident naming the same three nodes,
    and returns."""
    pay, accepted, retry = ("_2f24e6da-b44f-4e30-8d85-fd35fd56e209",
                            "_bb4a73bd-2291-4494-8677-5560d4842f79",
                            "_29a5e7c6-e54e-4c61-ba35-59ae446a3462")
    model = bpm.load_bpmn(EXTRA / "C.2.0.bpmn")
    warned = [n for n in model.report if "nothing on the way waits" in n.message]
    assert [n.element for n in warned] == [retry, accepted]
    assert all(pay in n.message for n in warned)
    eng = bpm.Engine()
    inst = eng.start(model.process("WFP-Page_1-3"))
    eng.run()
    assert inst.state == "failed"
    (incident,) = incidents(eng)
    assert sorted(incident.details["loop"]) == sorted([pay, accepted, retry])


# -- call depth ---------------------------------------------------------------------------
def self_calling():
    p = bpm.Process("selfcall")
    p.start("s")
    p.call_activity("again", process="selfcall")
    p.end("e")
    p.flow("s", "again", "e")
    return p


@pytest.mark.parametrize("depth", [None, 5])
def test_a_process_that_calls_itself_stops_at_the_call_depth_naming_the_chain(depth):
    """Each call nests one deeper; the call that would pass the bound is an incident whose
    fact names the chain of processes, every caller fails in turn, and run() returns."""
    eng = bpm.Engine() if depth is None else bpm.Engine(max_call_depth=depth)
    limit = 100 if depth is None else depth
    root = eng.start(self_calling())
    eng.run()
    assert root.state == "failed"
    assert len(eng.instances()) == limit + 1
    assert all(i.state == "failed" for i in eng.instances())
    chained = [f for f in incidents(eng) if "chain" in f.details]
    assert len(chained) == 1
    assert chained[0].details["chain"] == ["selfcall"] * (limit + 2)
    assert chained[0].details["limit"] == limit
    assert "max_call_depth" in chained[0].details["cause"]


def countdown():
    """n > 0: n - 1, then call itself; else end. A recursion that stops by its data."""
    p = bpm.Process("countdown")
    p.start("s")
    p.exclusive_gateway("more", default="done")
    p.script_task("less", fn=lambda d: {"n": d["n"] - 1, "calls": d.get("calls", 0) + 1})
    p.call_activity("deeper", process="countdown")
    p.end("done")
    p.end("back")
    p.flow("s", "more")
    p.flow("more", "less", condition="n > 0")
    p.flow("less", "deeper", "back")
    p.flow("more", "done")
    return p


def test_a_recursion_of_depth_three_with_a_stop_condition_runs_within_the_bound():
    eng = bpm.Engine(max_call_depth=3)
    root = eng.start(countdown(), {"n": 3})
    eng.run()
    assert root.state == "completed" and root.data["n"] == 0 and root.data["calls"] == 3
    assert len(eng.instances()) == 4 and incidents(eng) == []
    eng = bpm.Engine(max_call_depth=2)
    root = eng.start(countdown(), {"n": 3})
    eng.run()
    assert root.state == "failed"
    (chained,) = [f for f in incidents(eng) if "chain" in f.details]
    assert chained.details["chain"] == ["countdown"] * 4
