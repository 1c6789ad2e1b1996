"""The complex gateway: split like the inclusive gateway; join when its activation condition
(over the data and ``arrived``) first holds, then take in the rest without firing again."""

from __future__ import annotations

import pytest
from conftest import ended_at, left, recover

import gobpm_nb as bpm
from gobpm_nb.engine.durability.checkpoint import check_against, read
from gobpm_nb.ui.process import process_picture


def quorum(activation="arrived >= 2", pid="quorum"):
    """s -> fork (parallel) -> three reviews a, b, c -> cg (complex) -> tally (counts the
    passes in ``n``) -> done."""
    p = bpm.Process(pid)
    p.start("s")
    p.parallel_gateway("fork")
    for t in ("a", "b", "c"):
        p.user_task(t, assignee="rev")
    p.complex_gateway("cg", activation=activation)
    p.script_task("tally", fn=lambda d: {"n": d.get("n", 0) + 1})
    p.end("done")
    p.flow("s", "fork")
    for t in ("a", "b", "c"):
        p.flow("fork", t, "cg")
    p.flow("cg", "tally", "done")
    return p


def complete(eng, node):
    (task,) = [t for t in eng.tasks() if t.node == node]
    eng.complete_task(task.id)
    eng.run()


@pytest.mark.parametrize("dehydrate", [True, False])
def test_it_fires_once_when_two_of_three_arrive_and_takes_the_third_in_silently(dehydrate):
    """Two reviews done: the gateway fires (tally runs once); the third review's token is
    consumed without a second firing, and the gateway resets."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")
    assert "tally" not in left(eng, inst)
    complete(eng, "b")
    assert inst.data == {"n": 1} and inst.state == "active"
    assert [t.node for t in eng.tasks()] == ["c"]
    complete(eng, "c")
    assert inst.state == "completed" and inst.data == {"n": 1}
    assert left(eng, inst).count("tally") == 1
    consumed = [f for f in eng.facts if f.kind == "track_state" and f.details.get("reset")]
    assert len(consumed) == 1 and consumed[0].node == "cg"
    assert [f.kind for f in eng.facts].count("gateway_reset") == 1


def test_the_condition_reads_the_data_beside_the_count():
    """``arrived >= need``: the instance's own field decides how many it waits for."""
    eng = bpm.Engine()
    inst = eng.start(quorum("arrived >= need"), {"need": 3})
    eng.run()
    complete(eng, "a")
    complete(eng, "b")
    assert "n" not in inst.data
    complete(eng, "c")
    assert inst.data["n"] == 1 and inst.state == "completed"


def test_a_callable_condition_is_given_the_count_as_arrived():
    seen = []

    def activation(data):
        seen.append(data["arrived"])
        return data["arrived"] == 1

    eng = bpm.Engine()
    inst = eng.start(quorum(activation))
    eng.run()
    complete(eng, "b")
    assert inst.data == {"n": 1} and seen == [1]
    complete(eng, "a")
    complete(eng, "c")
    assert inst.data == {"n": 1} and inst.state == "completed" and seen == [1]


def test_the_reset_ends_when_no_token_can_come_and_the_next_round_fires_again():
    """A loop back to ``a``: after the first firing (``a``), the gateway waits for the tokens
    of ``b`` and ``c``; ``b``'s is consumed, ``c`` is cancelled by its boundary and goes
    elsewhere, so the reset ends at the quiet point; ``a``'s second token fires again."""
    p = bpm.Process("rounds")
    p.start("s")
    p.parallel_gateway("fork")
    p.user_task("a", assignee="x")
    p.user_task("b", assignee="x")
    p.user_task("c", assignee="x")
    p.signal_boundary("drop", attached_to="c", signal="drop")
    p.end("dropped")
    p.complex_gateway("cg", activation="arrived >= 1")
    p.script_task("count", fn=lambda d: {"n": d.get("n", 0) + 1})
    p.exclusive_gateway("again", default="done")
    p.end("done")
    p.flow("s", "fork")
    p.flow("fork", "a", "cg")
    p.flow("fork", "b", "cg")
    p.flow("fork", "c", "cg")
    p.flow("drop", "dropped")
    p.flow("cg", "count", "again")
    p.flow("again", "a", condition="n < 2")
    p.flow("again", "done")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    complete(eng, "a")
    assert inst.data == {"n": 1}
    assert sorted(eng.checkpoint(inst.id)["resets"]["cg"]) == ["b->cg", "c->cg"]
    complete(eng, "b")  # consumed by the reset: no second count
    assert inst.data == {"n": 1}
    assert eng.checkpoint(inst.id)["resets"] == {"cg": ["c->cg"]}
    eng.broadcast_signal("drop")
    eng.run()
    assert "resets" not in eng.checkpoint(inst.id)  # nothing can come on c's flow now
    complete(eng, "a")  # the second round
    assert inst.data == {"n": 2} and inst.state == "completed"
    assert sorted(ended_at(inst)) == ["done", "dropped"]


def test_with_no_activation_condition_it_joins_like_an_inclusive_gateway():
    """The split took two of three flows: the join waits for exactly those two."""
    p = bpm.Process("plain")
    p.start("s")
    p.complex_gateway("split")
    p.user_task("a", assignee="x")
    p.user_task("b", assignee="x")
    p.user_task("c", assignee="x")
    p.complex_gateway("join")
    p.end("done")
    p.flow("s", "split")
    p.flow("split", "a", condition="x > 0")
    p.flow("split", "b", condition="x > 1")
    p.flow("split", "c", condition="x > 5")
    for t in ("a", "b", "c"):
        p.flow(t, "join")
    p.flow("join", "done")
    eng = bpm.Engine()
    inst = eng.start(p, {"x": 2})
    eng.run()
    assert sorted(t.node for t in eng.tasks()) == ["a", "b"]
    complete(eng, "a")
    assert inst.state == "active"
    complete(eng, "b")
    assert inst.state == "completed" and ended_at(inst) == ["done"]


def test_the_split_takes_the_default_only_when_no_condition_holds_and_else_is_an_incident():
    p = bpm.Process("split")
    p.start("s")
    p.complex_gateway("g", default="other")
    p.end("big")
    p.end("other")
    p.flow("s", "g")
    p.flow("g", "big", condition="x > 5")
    p.flow("g", "other")
    eng = bpm.Engine()
    small, big = eng.start(p, {"x": 1}), eng.start(p, {"x": 9})
    eng.run()
    assert ended_at(small) == ["other"] and ended_at(big) == ["big"]
    q = bpm.Process("stuck")
    q.start("s")
    q.complex_gateway("g")
    q.end("big")
    q.flow("s", "g")
    q.flow("g", "big", condition="x > 5")
    eng = bpm.Engine()
    inst = eng.start(q, {"x": 1})
    eng.run()
    assert inst.state == "failed"
    assert any(f.kind == "incident" and "no condition holds" in str(f.details)
               for f in eng.facts)


def test_a_bad_activation_condition_is_refused_naming_the_gateway():
    p = bpm.Process("bad")
    p.start("s")
    p.complex_gateway("cg", activation="arrived >=")
    p.end("e")
    p.flow("s", "cg", "e")
    with pytest.raises(bpm.ModelError, match="cg: activation"):
        p.validate()


def test_a_condition_naming_a_missing_field_is_an_incident_at_the_gateway():
    eng = bpm.Engine()
    inst = eng.start(quorum("arrived >= need"))
    eng.run()
    complete(eng, "a")
    assert inst.state == "failed"
    assert any(f.kind == "incident" and f.node == "cg" for f in eng.facts)


def test_the_reset_survives_a_crash_on_sqlite(tmp_path):
    """Fired, waiting for the third review's token: the engine crashes; the recovered engine
    still consumes that token without firing again."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")
    complete(eng, "b")
    assert inst.residency == "dehydrated"
    assert eng.checkpoint(inst.id)["resets"] == {"cg": ["c->cg"]}
    eng.store.close()  # the crash
    eng = recover(db, quorum())
    inst = eng.instance(inst.id)
    complete(eng, "c")
    assert inst.state == "completed" and inst.data == {"n": 1}


def test_tokens_waiting_for_the_condition_survive_a_crash_on_sqlite(tmp_path):
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")  # one token parked at the gateway
    eng.store.close()
    eng = recover(db, quorum())
    inst = eng.instance(inst.id)
    complete(eng, "c")
    assert inst.data == {"n": 1}
    complete(eng, "b")
    assert inst.state == "completed" and inst.data == {"n": 1}


def test_a_checkpoint_whose_reset_names_a_foreign_flow_is_refused():
    """A reset naming a flow that does not enter the gateway: CheckpointError names it."""
    eng = bpm.Engine()
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")
    complete(eng, "b")
    doc = eng.checkpoint(inst.id)
    check_against(read(doc, inst.id), inst.definition)  # as it was: fine
    doc["resets"] = {"cg": ["s->fork"]}
    with pytest.raises(bpm.CheckpointError, match="'s->fork' is not an incoming flow of 'cg'"):
        check_against(read(doc, inst.id), inst.definition)
    doc["resets"] = {"cg": "c->cg"}
    with pytest.raises(bpm.CheckpointError, match="resets.cg"):
        read(doc, inst.id)


def test_rewind_to_before_the_firing_and_replay_fires_once_again():
    eng = bpm.Engine(keep_facts=None)
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")
    mark = eng.facts[-1].seq
    complete(eng, "b")
    complete(eng, "c")
    first = [f.as_dict() for f in eng.facts]
    eng.rewind(mark)
    assert inst.state == "active" and "n" not in inst.data
    complete(eng, "b")
    complete(eng, "c")
    assert inst.data == {"n": 1} and inst.state == "completed"
    again = [f.as_dict() for f in eng.facts if f.kind != "rewound"]
    assert again == first


def test_a_bpmn_file_round_trip_keeps_the_activation_condition_and_its_shape():
    xml = quorum("arrived >= 2 and ok").to_bpmn()
    assert "<bpmn:complexGateway" in xml and "bpmnElement=\"cg\"" in xml
    assert "activationCondition" in xml
    q = bpm.Process.from_bpmn(xml)
    cg = next(e for e in q.elements if e.id == "cg")
    assert cg.activation.source == "arrived >= 2 and ok"
    assert q.to_bpmn() == xml
    model = bpm.load_bpmn(xml)
    assert not [n for n in model.report if n.severity == "error"]


def test_a_file_activation_condition_that_cannot_be_read_is_an_error_as_written():
    xml = quorum().to_bpmn().replace("=arrived &gt;= 2", "${nrOfCompleted ?}")
    model = bpm.load_bpmn(xml)
    errors = [n for n in model.report if n.severity == "error"]
    assert errors and errors[0].element == "cg"
    with pytest.raises(bpm.ModelError):
        model.process()
    drawn = bpm.load_bpmn(xml, run_as_drawn=True)
    notes = [n.message for n in drawn.report if n.element == "cg"]
    assert any("joins as an inclusive gateway" in m for m in notes)
    eng = bpm.Engine()
    inst = eng.start(drawn.process(as_drawn=True))
    eng.run()
    for t in ("a", "b"):
        complete(eng, t)
    assert "tally" not in left(eng, inst)  # as an inclusive join: waits for all three
    complete(eng, "c")
    assert inst.state == "completed" and left(eng, inst).count("tally") == 1


def test_the_process_view_draws_the_gateway_with_its_waiting_token():
    eng = bpm.Engine()
    inst = eng.start(quorum())
    eng.run()
    complete(eng, "a")
    picture = process_picture(eng, inst.id)
    assert 'shape=diamond, label="✱"' in picture.dot
    assert "complexGateway" in picture.bpmn
    (mark,) = [m for m in picture.marks["elements"] if m["id"] == "cg"]
    assert "gobpm-token" in mark["classes"]


def in_subprocess():
    """s -> sp [ss -> fork -> a, b (user tasks) -> cg (activation arrived >= 1) -> tally ->
    se] with an interrupting signal boundary ``stop`` -> after (user task) -> stopped;
    sp -> done."""
    p = bpm.Process("scoped_complex")
    p.start("s")
    with p.subprocess("sp") as sp:
        sp.start("ss")
        sp.parallel_gateway("fork")
        sp.user_task("a", assignee="x")
        sp.user_task("b", assignee="x")
        sp.complex_gateway("cg", activation="arrived >= 1")
        sp.script_task("tally", fn=lambda d: {"n": d.get("n", 0) + 1})
        sp.end("se")
        sp.flow("ss", "fork")
        sp.flow("fork", "a", "cg")
        sp.flow("fork", "b", "cg")
        sp.flow("cg", "tally", "se")
    p.signal_boundary("stop", attached_to="sp", signal="stop")
    p.end("done")
    p.user_task("after", assignee="x")
    p.end("stopped")
    p.flow("s", "sp", "done")
    p.flow("stop", "after", "stopped")
    return p


def test_inside_a_subprocess_the_reset_is_kept_per_scope_and_the_scope_waits_for_it():
    eng = bpm.Engine()
    inst = eng.start(in_subprocess())
    eng.run()
    complete(eng, "a")
    host = next(t for t in inst.tracks if t.node == "sp" and t.state != "completed")
    assert inst.data == {"n": 1}
    assert eng.checkpoint(inst.id)["resets"] == {f"cg@{host.id}": ["b->cg"]}
    complete(eng, "b")
    assert inst.state == "completed" and sorted(ended_at(inst)) == ["done", "se"]
    assert inst.data == {"n": 1}


def test_a_scope_stopped_during_the_reset_forgets_it():
    eng = bpm.Engine()
    inst = eng.start(in_subprocess())
    eng.run()
    complete(eng, "a")
    assert "resets" in eng.checkpoint(inst.id)
    eng.broadcast_signal("stop")
    eng.run()
    assert [t.node for t in eng.tasks()] == ["after"]
    doc = eng.checkpoint(inst.id)
    assert "resets" not in doc and doc["joins"] == {}
    complete(eng, "after")
    assert inst.state == "completed" and ended_at(inst)[-1] == "stopped"
