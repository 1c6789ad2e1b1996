"""Decisions at an inclusive gateway: a person takes one or more flows (``Engine.decide``
with a list), a rule takes each flow with its own probability and, when none is drawn, one
by weight (Prosimos' rule for OR gateways); the gateway still joins as an inclusive one."""

import pytest
from conftest import ended_at, left, recover, snapshot

import gobpm_nb as bpm

#: The signature of fanout() without a decision, as signed before inclusive decisions existed
PLAIN = "1f097a22bf7a9410"


def fanout(weights=None, pid="fanout", decide=True):
    """start -> inclusive decision "which" -> user tasks a, b, c -> inclusive join -> end."""
    p = bpm.Process(pid)
    p.start("s")
    p.inclusive_gateway("which")
    for t in "abc":
        p.user_task(t)
    p.inclusive_gateway("join")
    p.end("done")
    p.flow("s", "which")
    for t in "abc":
        p.flow("which", t, id=f"to_{t}", condition="never_read > 0")
        p.flow(t, "join")
    p.flow("join", "done")
    if decide:
        p.decide("which", weights)
    return p


def finish(eng):
    """Complete every task until none is left."""
    eng.run()
    while eng.tasks():
        for task in eng.tasks():
            eng.complete_task(task.id)
        eng.run()


def made(eng):
    return [f.details for f in eng.facts if f.kind == "decision_made"]


def test_a_person_takes_two_flows_and_the_inclusive_join_fires_once():
    """Both chosen flows run (by id and by target, in any order); the join after them
    waits for both and fires once; the fact names the flows in the gateway's order."""
    eng = bpm.Engine()
    inst = eng.start(fanout())
    eng.run()
    assert inst.residency == "dehydrated"
    (view,) = eng.decisions()
    assert view.several and view.flows == (("to_a", "a"), ("to_b", "b"), ("to_c", "c"))
    eng.decide(inst.id, ["c", "to_a"])
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["a", "c"]
    assert made(eng) == [{"flow": "to_a", "flows": ["to_a", "to_c"], "by": "person"}]
    first = next(t for t in eng.tasks() if t.node == "a")
    eng.complete_task(first.id)
    eng.run()
    assert "join" not in left(eng, inst)  # it waits for the other flow taken
    finish(eng)
    assert left(eng, inst).count("join") == 1
    assert ended_at(inst) == ["done"] and inst.state == "completed"


def test_one_flow_at_an_inclusive_decision_is_taken_alone():
    """A single flow (not a list) is a choice of that flow only; the join does not wait
    for the flows not taken."""
    eng = bpm.Engine()
    inst = eng.start(fanout())
    eng.run()
    eng.decide(inst.id, "b")
    finish(eng)
    assert made(eng) == [{"flow": "to_b", "flows": ["to_b"], "by": "person"}]
    assert [n for n in left(eng, inst) if n in "abc"] == ["b"]
    assert ended_at(inst) == ["done"]


def test_an_exclusive_decision_still_shows_one_choice():
    p = bpm.Process("x")
    p.start("s")
    p.exclusive_gateway("g")
    p.end("e1")
    p.end("e2")
    p.flow("s", "g")
    p.flow("g", "e1")
    p.flow("g", "e2")
    p.decide("g")
    eng = bpm.Engine()
    eng.start(p)
    eng.run()
    (view,) = eng.decisions()
    assert view.several is False


@pytest.mark.parametrize("flow, named", [
    ([], "an empty list takes no flow"),
    (["a", "to_a"], "flow 'to_a' is given twice"),
    (["a", "nowhere"], "'nowhere' is not a flow of the decision"),
    ("nowhere", "'nowhere' is not a flow of the decision"),
    ([3], "3 is not a flow"),
    (["e1"], "decision 'g' of instance 'i2' takes one flow .*not a list"),
])
def test_a_bad_choice_names_what_is_wrong_and_changes_nothing(flow, named):
    eng = bpm.Engine()
    eng.start(fanout())
    p = bpm.Process("x")
    p.start("s")
    p.exclusive_gateway("g")
    p.end("e1")
    p.end("e2")
    p.flow("s", "g")
    p.flow("g", "e1")
    p.flow("g", "e2")
    p.decide("g")
    eng.start(p)
    eng.run()
    before = snapshot(eng)
    instance = "i2" if flow == ["e1"] else "i1"
    with pytest.raises(bpm.EngineError, match=named):
        eng.decide(instance, flow)
    assert snapshot(eng) == before


def test_rule_draws_are_reproducible_and_each_flow_is_taken_near_its_probability():
    """One seed draws the same flows twice, another seed others; over many instances each
    flow is taken about as often as its probability says (none drawn is rare here)."""
    def flows(seed, n=600):
        eng = bpm.Engine(seed=seed, dehydrate=False)
        for _ in range(n):
            eng.start(fanout({"a": 0.8, "to_b": 0.5, "c": 0.3}))
        eng.run()
        return [tuple(d["flows"]) for d in made(eng)]

    first, again, other = flows(1), flows(1), flows(2)
    assert first == again and first != other
    share = {t: sum(f"to_{t}" in taken for taken in first) / len(first) for t in "abc"}
    # P(a) = 0.8 + P(none) * 0.8/1.6, P(none) = 0.2 * 0.5 * 0.7 = 0.07
    assert 0.78 < share["a"] < 0.90
    assert 0.45 < share["b"] < 0.60
    assert 0.25 < share["c"] < 0.37
    assert any(len(taken) == 3 for taken in first)


def test_when_no_flow_is_drawn_one_is_drawn_by_weight():
    """With tiny probabilities almost every draw takes no flow on its own; then one flow is
    drawn in proportion to the weights (a flow of weight 0 never)."""
    eng = bpm.Engine(seed=7, dehydrate=False)
    for _ in range(600):
        eng.start(fanout({"a": 0.001, "b": 0.002}))
    eng.run()
    taken = [tuple(d["flows"]) for d in made(eng)]
    ones = [t for t in taken if len(t) == 1]
    assert len(ones) >= 590
    assert all("to_c" not in t for t in taken)
    assert 0.58 < sum(t == ("to_b",) for t in ones) / len(ones) < 0.76


def test_the_draw_goes_on_from_the_count_after_a_restart(tmp_path):
    """The count of an instance's draws at the gateway is in its checkpoint: an engine
    recovered after each round draws what one that never stopped draws."""
    def looping():
        p = bpm.Process("loop")
        p.start("s")
        p.exclusive_gateway("back")
        p.inclusive_gateway("which")
        p.user_task("a")
        p.user_task("b")
        p.inclusive_gateway("join")
        p.user_task("again")
        p.end("e")
        p.flow("s", "back")
        p.flow("back", "e", condition="count >= 4")
        p.flow("back", "which")
        p.flow("which", "a")
        p.flow("which", "b")
        p.flow("a", "join")
        p.flow("b", "join")
        p.flow("join", "again")
        p.flow("again", "back")
        p.decide("which", {"a": 0.5, "b": 0.5})
        return p

    def drive(eng, restart=None):
        for _ in range(30):
            eng.run()
            if not eng.tasks():
                break
            for task in eng.tasks():
                count = eng.instance("i1").data["count"]
                eng.complete_task(task.id, {"count": count + 1}
                                  if task.node == "again" else None)
            if restart:
                eng = restart(eng)
        return eng

    straight = bpm.Engine(seed=11)
    straight.start(looping(), data={"count": 0})
    expected = made(drive(straight))
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db), seed=11)
    inst = eng.start(looping(), data={"count": 0})
    seen = []

    def restart(e):
        seen.extend(made(e))
        e.store.close()
        return recover(db, looping())

    eng = drive(eng, restart)
    assert len(expected) == 4 and len({tuple(d["flows"]) for d in expected}) > 1
    assert seen + made(eng) == expected
    assert eng.instance(inst.id).state == "completed"


def test_a_choice_can_be_rewound_and_made_the_other_way():
    """Rewind to before the choice of a and b, choose c alone: only c runs."""
    eng = bpm.Engine()
    inst = eng.start(fanout())
    eng.run()
    mark = eng.facts[-1].seq
    eng.decide(inst.id, ["a", "b"])
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["a", "b"]
    eng.rewind(mark)
    (view,) = eng.decisions()
    assert view.gateway == "which" and view.several
    eng.decide(inst.id, ["c"])
    finish(eng)
    assert [n for n in left(eng, inst) if n in "abc"] == ["c"]
    assert ended_at(inst) == ["done"]


def test_a_choice_survives_a_crash_before_and_after_it_is_taken(tmp_path):
    """A waiting inclusive decision and a choice of two flows accepted but not yet run
    both survive a restart on SQLite."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(fanout())
    eng.start(fanout())
    eng.run()
    eng.decide("i2", ["a", "c"])
    eng.store.close()  # the crash: the choice was accepted, not yet run
    eng = recover(db, fanout())
    (view,) = eng.decisions()
    assert (view.instance, view.several) == ("i1", True)
    eng.decide("i1", ["b", "c"])
    eng.run()
    assert sorted((t.instance, t.node) for t in eng.tasks()) == [
        ("i1", "b"), ("i1", "c"), ("i2", "a"), ("i2", "c")]
    eng.store.close()
    eng = recover(db, fanout())
    finish(eng)
    assert [i.state for i in eng.instances()] == ["completed", "completed"]


@pytest.mark.parametrize("dehydrate", [True, False])
def test_dehydration_on_and_off_give_the_same_run(dehydrate):
    """The same choices give the same nodes left, in order, and the same facts of the
    decisions, whether the instance dehydrates at the decision or not."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(fanout())
    eng.run()
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    eng.decide(inst.id, ["b", "c"])
    finish(eng)
    assert left(eng, inst) == _reference_left()
    assert made(eng) == [{"flow": "to_b", "flows": ["to_b", "to_c"], "by": "person"}]


def _reference_left():
    eng = bpm.Engine(dehydrate=False)
    inst = eng.start(fanout())
    eng.run()
    eng.decide(inst.id, ["b", "c"])
    finish(eng)
    return left(eng, inst)


def test_a_joining_decision_decides_after_its_join_fires():
    """A gateway that both joins and is a decision: the tracks merge first, then the one
    that leaves waits for the person's choice."""
    p = bpm.Process("mixed")
    p.start("s")
    p.parallel_gateway("fork")
    p.user_task("x")
    p.user_task("y")
    p.inclusive_gateway("gw")
    p.end("e1")
    p.end("e2")
    p.flow("s", "fork")
    p.flow("fork", "x")
    p.flow("fork", "y")
    p.flow("x", "gw")
    p.flow("y", "gw")
    p.flow("gw", "e1")
    p.flow("gw", "e2")
    p.decide("gw")
    eng = bpm.Engine()
    inst = eng.start(p)
    finish(eng)
    (view,) = eng.decisions()
    assert view.gateway == "gw" and inst.residency == "dehydrated"
    eng.decide(inst.id, ["e1", "e2"])
    eng.run()
    assert sorted(ended_at(inst)) == ["e1", "e2"]


@pytest.mark.parametrize("weights, named", [
    ({"a": 1.5}, "the weight of 'a' is the probability .* at most 1, got 1.5"),
    ({"a": -0.1, "b": 0.5}, "must be a finite number of at least 0"),
    ({"a": 0, "b": 0}, "its weights add up to 0"),
])
def test_a_rule_with_a_weight_that_is_no_probability_is_refused(weights, named):
    with pytest.raises(bpm.ModelError, match=named):
        fanout(weights).validate()


def test_an_inclusive_decision_stays_an_inclusive_gateway_and_signs_its_rule():
    """decide() keeps the gateway inclusive; the decision changes the signature, a rule's
    weights too, and a plain inclusive gateway signs as before."""
    p = fanout()
    node = p.validate().definition().nodes["which"]
    assert node.kind == "inclusive_gateway" and node.decision is not None
    plain = fanout(decide=False).validate().definition().signature
    assert plain == PLAIN  # as before decisions at inclusive gateways existed
    signatures = {q.validate().definition().signature
                  for q in (fanout(), fanout({"a": 0.5}), fanout({"a": 0.6}))}
    assert len(signatures | {plain}) == 4
