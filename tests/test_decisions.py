"""Decisions (design-review mode): an exclusive gateway where a person chooses the flow
(``Engine.decide``) or a rule draws it from the engine's seeded generator (``p.decide``)."""

import pytest
from conftest import ended_at, recover, snapshot

import gobpm_nb as bpm


def review(weights=None, pid="review"):
    """start -> decision "ok?" -> user task "ship" -> end "shipped"
                              \\-> user task "fix"  -> end "fixed"."""
    p = bpm.Process(pid)
    p.start("s")
    p.exclusive_gateway("ok?")
    p.user_task("ship")
    p.user_task("fix")
    p.end("shipped")
    p.end("fixed")
    p.flow("s", "ok?")
    p.flow("ok?", "ship", id="yes", condition="never_read > 0")
    p.flow("ok?", "fix", id="no")
    p.flow("ship", "shipped")
    p.flow("fix", "fixed")
    p.decide("ok?", weights)
    return p


def test_a_track_waits_at_a_decision_with_a_decision_hold_and_dehydrates():
    """The token parks at the gateway, held by a ``decision`` hold; the instance dehydrates."""
    eng = bpm.Engine()
    inst = eng.start(review())
    eng.run()
    assert inst.residency == "dehydrated"
    (hold,) = eng.holders(inst.id)
    assert (hold.kind, hold.node, hold.track) == ("decision", "ok?", "t1")
    (view,) = eng.decisions()
    assert view.flows == (("yes", "ship"), ("no", "fix"))


def test_deciding_by_flow_id_or_by_target_takes_that_flow_and_no_condition_is_read():
    """A person's choice leaves by that flow; the flow's condition (on a missing field) is
    never evaluated, so no incident."""
    eng = bpm.Engine()
    a, b = eng.start(review()), eng.start(review())
    eng.run()
    eng.decide(a.id, "yes")
    eng.decide(b.id, "fix")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["ship", "fix"]
    made = [(f.instance, f.details) for f in eng.facts if f.kind == "decision_made"]
    assert made == [("i1", {"flow": "yes", "by": "person"}),
                    ("i2", {"flow": "no", "by": "person"})]
    assert eng.decisions() == []


@pytest.mark.parametrize("call, named", [
    (lambda eng: eng.decide("i9", "yes"), "unknown instance 'i9'"),
    (lambda eng: eng.decide("i1", "maybe"), "'maybe' is not a flow .* yes, no"),
    (lambda eng: eng.decide("i1", "yes", track="t7"), "waits at no decision on track 't7'"),
    (lambda eng: eng.decide("i2", "yes"), "instance 'i2' waits at no decision"),
])
def test_a_bad_decision_names_what_is_wrong_and_changes_nothing(call, named):
    eng = bpm.Engine()
    eng.start(review())
    p = bpm.Process("plain")
    p.start("s")
    p.user_task("t")
    p.end("e")
    p.flow("s", "t", "e")
    eng.start(p)
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=named):
        call(eng)
    assert snapshot(eng) == before


def test_a_decision_already_taken_cannot_be_taken_again():
    """The second choice for the same wait is refused: the first one is on its way."""
    eng = bpm.Engine()
    inst = eng.start(review())
    eng.run()
    eng.decide(inst.id, "yes")
    with pytest.raises(bpm.EngineError, match="waits at no decision"):
        eng.decide(inst.id, "no")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["ship"]


def test_a_decision_survives_a_crash_before_and_after_it_is_taken(tmp_path):
    """Waiting at a decision and a choice accepted both survive a restart on SQLite."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(review())
    eng.start(review())
    eng.run()
    eng.decide("i2", "no")
    eng.store.close()  # the crash: the choice was accepted, not yet run
    eng = recover(db, review())
    assert [v.instance for v in eng.decisions()] == ["i1"]
    eng.decide("i1", "ship")
    eng.run()
    assert sorted((t.instance, t.node) for t in eng.tasks()) == [("i1", "ship"), ("i2", "fix")]


def test_a_decision_can_be_rewound_and_made_the_other_way():
    """Rewind to before the choice, choose the other flow: the instance goes that way."""
    eng = bpm.Engine()
    inst = eng.start(review())
    eng.run()
    mark = eng.facts[-1].seq
    eng.decide(inst.id, "yes")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["ship"]
    eng.rewind(mark)
    assert [v.gateway for v in eng.decisions()] == ["ok?"]
    eng.decide(inst.id, "no")
    eng.run()
    (task,) = eng.tasks()
    eng.complete_task(task.id)
    eng.run()
    assert ended_at(inst) == ["fixed"]


def test_a_rule_draws_by_weight_reproducibly_from_the_engine_seed():
    """Two engines with one seed draw the same flows; another seed draws others; the share
    follows the weights."""
    def flows(seed, n=400):
        eng = bpm.Engine(seed=seed, dehydrate=False)
        for _ in range(n):
            eng.start(review({"yes": 3, "no": 1}))
        eng.run()
        return [f.details["flow"] for f in eng.facts if f.kind == "decision_made"]

    first, again, other = flows(1), flows(1), flows(2)
    assert first == again and first != other
    assert 0.68 < first.count("yes") / len(first) < 0.82


def test_a_draw_does_not_depend_on_other_instances_or_gateways():
    """The n-th draw of an instance at a gateway is the same whatever other instances and
    processes drew before it."""
    def drawn_by_i(eng, iid):
        return [f.details["flow"] for f in eng.facts
                if f.kind == "decision_made" and f.instance == iid]

    alone = bpm.Engine(seed=5)
    alone.start(review({"yes": 1, "no": 1}))
    alone.run()
    crowded = bpm.Engine(seed=5)
    first = crowded.start(review({"yes": 1, "no": 1}))
    for _ in range(5):
        crowded.start(review({"yes": 1, "no": 1}, pid="other"))
    crowded.run()
    assert first.id == "i1"
    assert drawn_by_i(alone, "i1") == drawn_by_i(crowded, "i1")


def test_a_rule_in_a_loop_keeps_drawing_after_a_restart(tmp_path):
    """The draw count is in the checkpoint: a recovered instance draws the next number, not
    the first again (the same flows as an engine that never stopped)."""
    def looping():
        p = bpm.Process("loop")
        p.start("s")
        p.exclusive_gateway("again?")
        p.user_task("work")
        p.end("e")
        p.flow("s", "again?")
        p.flow("again?", "work")
        p.flow("again?", "e")
        p.flow("work", "again?")
        p.decide("again?", {"work": 1, "e": 1})
        return p

    def run_to_end(eng, restart=None):
        for _ in range(50):
            eng.run()
            if not eng.tasks():
                break
            eng.complete_task(eng.tasks()[0].id)
            if restart:
                eng = restart(eng)
        return [f.details["flow"] for f in eng.facts if f.kind == "decision_made"]

    for seed in range(1, 100):  # the first seed (not the default 0) going round a few times
        straight = bpm.Engine(seed=seed)
        straight.start(looping())
        expected = run_to_end(straight)
        if len(expected) >= 4:
            break
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db), seed=seed)
    eng.start(looping())
    seen = []

    def restart(e):
        seen.extend(f.details["flow"] for f in e.facts if f.kind == "decision_made")
        e.store.close()
        with pytest.raises(bpm.EngineError, match=f"written by an engine with seed {seed}, "
                           f"not {seed + 1}"):
            bpm.Engine.recover(bpm.SQLiteStore(db), processes=[looping()], seed=seed + 1)
        # no seed given: the store's own, so the draws go on as if nothing had stopped
        return bpm.Engine.recover(bpm.SQLiteStore(db), processes=[looping()])

    last = run_to_end(eng, restart)
    assert len(expected) >= 4
    assert seen + last == expected


@pytest.mark.parametrize("weights, named", [
    ({"nowhere": 1}, "'nowhere' is not one of its outgoing flows"),
    ({"yes": -1, "no": 1}, "must be a finite number of at least 0"),
    ({"yes": 0, "no": 0}, "its weights add up to 0"),
    ({"yes": 1, "ship": 1}, "flow 'yes' is given twice"),
])
def test_a_rule_that_names_no_flow_or_a_bad_weight_is_refused_by_validate(weights, named):
    with pytest.raises(bpm.ModelError, match=named):
        review(weights).validate()


@pytest.mark.parametrize("call, named", [
    (lambda p: p.decide("nope"), "has no element 'nope'"),
    (lambda p: p.decide("ship"), "user_task 'ship' is not an exclusive or inclusive gateway"),
    (lambda p: p.decide("ok?", {"yes": "a lot"}), "is not a flow and a number"),
    (lambda p: p.decide("ok?", [("yes", 1)]), "weights must be a dict"),
])
def test_decide_on_the_builder_names_a_wrong_gateway_or_weight(call, named):
    with pytest.raises(bpm.ModelError, match=named):
        call(review())


def test_a_decision_changes_the_process_signature_and_a_plain_gateway_keeps_its_own():
    """A decision is part of the graph (adding one makes a new version); a process without
    one signs as it did before decisions existed (a store written then still recovers)."""
    plain = bpm.Process("review")
    plain.start("s")
    plain.exclusive_gateway("ok?")
    plain.end("e")
    plain.end("f")
    plain.flow("s", "ok?")
    plain.flow("ok?", "e")
    plain.flow("ok?", "f")
    assert plain.validate().definition().signature == "7fefc1773a089aa0"  # before decisions
    plain.decide("ok?")
    person = plain.validate().definition().signature
    plain.decide("ok?", {"e": 1})
    rule = plain.validate().definition().signature
    assert len({"7fefc1773a089aa0", person, rule}) == 3
