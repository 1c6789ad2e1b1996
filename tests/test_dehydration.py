"""Dehydration: which waits let an instance give up every coroutine, and what it looks like."""

import json
import logging
import re

import pytest
from conftest import approval, ended_at, kinds

import gobpm_nb as bpm


def timer_process(*durations):
    p = bpm.Process("timers")
    p.start("s")
    chain = ["s"]
    for n, d in enumerate(durations):
        chain.append(p.timer_catch(f"wait{n + 1}", duration=d))
    chain.append(p.end("e"))
    p.flow(*chain)
    return p


def fact(eng, kind):
    return [f for f in eng.facts if f.kind == kind]


def test_timer_wake():
    """A 2 h timer lets its instance dehydrate; nothing happens at +30 min; at 2 h it wakes
    and ends."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H"))
    eng.advance("PT30M")
    assert inst.residency == "dehydrated" and eng.stats()["coroutines"] == 0
    assert [(h.kind, h.node) for h in eng.holders()] == [("timer", "wait1")]
    assert fact(eng, "hydrated") == []
    eng.advance("PT1H30M")
    assert inst.state == "completed"
    (woke,) = fact(eng, "hydrated")
    assert woke.at.hour == 2


def test_dehydrated_instances_own_no_coroutines_while_resident_ones_own_two_each():
    """N dehydrated instances own 0 coroutines; N resident ones own at least 2N."""
    n = 50
    asleep, awake = bpm.Engine(), bpm.Engine(dehydrate=False)
    for eng in (asleep, awake):
        for _ in range(n):
            eng.start(timer_process("P1D"))
        eng.advance("PT1M")
    assert asleep.stats()["coroutines"] == 0
    assert asleep.stats()["instances"]["dehydrated"] == n
    assert awake.stats()["coroutines"] >= 2 * n
    assert awake.stats()["instances"]["resident"] == n


def test_a_five_minute_timer_stays_resident_and_still_fires():
    """A timer shorter than min_dehydrate_wait keeps its instance resident; it still fires."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT5M"))
    eng.advance("PT1M")
    assert inst.residency == "resident" and eng.stats()["coroutines"] == 2
    eng.advance("PT5M")
    assert inst.state == "completed" and fact(eng, "dehydrated") == []


def test_min_dehydrate_wait_is_an_engine_option():
    """With min_dehydrate_wait=PT1M the 5-minute timer lets its instance dehydrate."""
    eng = bpm.Engine(min_dehydrate_wait="PT1M")
    inst = eng.start(timer_process("PT5M"))
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"


def test_two_long_timers_dehydrate_wake_and_dehydrate_again_without_growing():
    """Dehydrate → wake → dehydrate: the stored checkpoint does not grow from cycle to cycle."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H", "PT3H", "PT4H"), {"order": "o-1"})
    sizes = []
    for hours in ("PT1H", "PT2H", "PT3H"):
        eng.advance(hours)
        assert inst.residency == "dehydrated"
        # digits aside (times and the arm order grow), the document has the same size
        sizes.append(len(re.sub(rb"\d", b"", eng.store.get(inst.id))))
    assert sizes[2] == sizes[1]
    stored = json.loads(eng.store.get(inst.id))
    assert [(t["id"], t["node"]) for t in stored["tracks"]] == [("t3", "wait3")]
    assert len(fact(eng, "dehydrated")) == 3 and len(fact(eng, "hydrated")) == 2
    eng.run()
    assert inst.state == "completed" and ended_at(inst) == ["e"]


def test_dehydrated_and_hydrated_facts_carry_exact_details_once_per_transition():
    """One dehydrated fact per dehydration, one hydrated per wake, with names and counts only."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H"), {"secret": "do-not-log"})
    eng.run()
    (rel,) = fact(eng, "dehydrated")
    assert (rel.instance, rel.details) == (inst.id, {"wait_kinds": ["timer"], "waits": 1,
                                                     "coroutines": 0})
    (wake,) = fact(eng, "hydrated")
    assert (wake.instance, wake.track, wake.node) == (inst.id, "t1", "wait1")
    assert wake.details == {"trigger": "timer", "track": "t1", "outcome": "continuation"}
    assert all("do-not-log" not in f.to_json() for f in eng.facts)


def test_the_wake_is_a_continuation_fork_of_the_dehydrated_track():
    """The woken track stays dehydrated; a new track with it as parent fires the wait node."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H"))
    eng.run()
    first, cont = inst.tracks
    assert (first.state, first.node) == ("dehydrated", "wait1")
    assert (cont.parents, cont.origin, cont.state) == (("t1",), "continuation", "completed")
    assert [f.node for f in eng.facts if f.kind == "node_left"] == ["s", "wait1", "e"]
    held = [f for f in eng.facts if f.kind == "wait_held"]
    assert len(held) == 1  # the fork never registers a new hold for the wait it fired


def test_reading_a_dehydrated_instance_does_not_wake_it():
    """data, tracks and holders of a dehydrated instance come from its checkpoint."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H"), {"n": 1})
    eng.advance("PT1M")
    assert inst.data == {"n": 1}
    assert [(t.id, t.node, t.state) for t in inst.tracks] == [("t1", "wait1", "dehydrated")]
    assert inst.checkpoint()["tracks"][0]["state"] == "dehydrated"
    assert inst.residency == "dehydrated" and eng.stats()["coroutines"] == 0


def test_dehydrate_false_never_dehydrates():
    """Engine(dehydrate=False) keeps every instance resident."""
    eng = bpm.Engine(dehydrate=False)
    inst = eng.start(timer_process("P1D"))
    eng.advance("PT1H")
    assert inst.residency == "resident" and "dehydrated" not in kinds(eng)


def test_holds_are_registered_when_their_waits_are_armed_resident_or_not():
    """Invariant 3 (docs/architecture.md): the task and its timer boundary are held as they
    are armed — with dehydration off as on, and before the instance dehydrates, never by
    its dehydration."""
    held = {}
    for dehydrate in (False, True):
        eng = bpm.Engine(dehydrate=dehydrate)
        eng.start(approval())
        eng.advance("PT1M")
        assert [(h.kind, h.wait_kind, h.node) for h in eng.holders()] == [
            ("task", "node", "approve"), ("timer", "boundary", "late")]
        held[dehydrate] = [(f.seq, f.node) for f in eng.facts if f.kind == "wait_held"]
        dehydrated = [f.seq for f in eng.facts if f.kind == "dehydrated"]
        assert len(dehydrated) == (1 if dehydrate else 0)
        assert all(seq < r for seq, _node in held[dehydrate] for r in dehydrated)
    assert held[False] == held[True] and [n for _s, n in held[True]] == ["approve", "late"]


def test_a_receive_task_dehydrates():
    """A receive task is a pure wait: its instance stays dehydrated until the message comes."""
    p = bpm.Process("recv")
    p.start("s")
    p.receive_task("r", message="m", key="k")
    p.end("e")
    p.flow("s", "r", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"k": 1})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    eng.publish_message("m", key=1, payload={"got": True})
    eng.run()
    assert inst.state == "completed" and inst.data["got"] is True


def test_a_worker_job_keeps_its_instance_resident():
    """A worker service task is active work: its instance never dehydrates while the job is open."""
    p = bpm.Process("job")
    p.start("s")
    p.service_task("charge", topic="pay")
    p.end("e")
    p.flow("s", "charge", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("P2D")
    assert inst.residency == "resident" and eng.stats()["coroutines"] == 2
    (job,) = eng.fetch_jobs("pay", "w")
    eng.complete_job(job.id)
    eng.run()
    assert inst.state == "completed"


def test_an_eligible_wait_without_a_holder_stays_resident_and_warns_once(caplog):
    """A user task guarded by a conditional boundary stays resident; one warning names it."""
    p = bpm.Process("cond")
    p.start("s")
    p.user_task("approve")
    p.conditional_boundary("risky", attached_to="approve", condition="risk > 5")
    p.end("e")
    p.end("stop")
    p.flow("s", "approve", "e")
    p.flow("risky", "stop")
    eng = bpm.Engine()
    with caplog.at_level(logging.WARNING, logger="gobpm_nb"):
        inst = eng.start(p, {"risk": 0})
        eng.advance("P1D")
        eng.advance("P1D")
    assert inst.residency == "resident"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "'risky'" in warnings[0]


def test_a_custom_wait_node_without_the_capability_stays_resident():
    """An element class that does not implement dehydratable() keeps its instance resident."""
    from dataclasses import dataclass

    from gobpm_nb.model import elements as el

    @dataclass(frozen=True)
    class PlainTask(el.UserTask):
        kind = "user_task"
        dehydratable = None  # opts out of the capability

    p = bpm.Process("custom")
    p.start("s")
    p._add(PlainTask("t"))
    p.end("e")
    p.flow("s", "t", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("P1D")
    assert inst.residency == "resident" and len(eng.tasks()) == 1


def test_dehydrated_data_keeps_the_order_its_fields_arrived_in():
    """Dehydrating and waking an instance does not reorder its data fields."""
    eng = bpm.Engine()
    inst = eng.start(timer_process("PT2H"), {"zeta": 1, "alpha": {"y": 1, "x": 2}})
    eng.advance("PT1M")
    assert list(inst.data) == ["zeta", "alpha"] and list(inst.data["alpha"]) == ["y", "x"]
    eng.run()
    assert list(inst.data) == ["zeta", "alpha"]


def notes_process():
    p = bpm.Process("notes")
    p.start("s")
    p.user_task("u")
    p.message_boundary("um", attached_to="u", message="note", key="k", interrupting=False)
    p.script_task("noted", fn=lambda d: {"log": d.get("log", []) + [f"noted {d['which']}"]})
    p.script_task("filed", fn=lambda d: {"log": d.get("log", []) + [f"filed {d['which']}"]})
    p.end("en")
    p.end("e")
    p.flow("s", "u", "e")
    p.flow("um", "noted", "filed", "en")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_durable_store_changes_no_outcome(tmp_path, dehydrate):
    """Checkpointing at quiet points adds no scheduler event: memory and SQLite agree."""
    logs = []
    for store in (bpm.MemoryStore(), bpm.SQLiteStore(tmp_path / f"{dehydrate}.db")):
        eng = bpm.Engine(store=store, dehydrate=dehydrate)
        eng.publish_message("note", key="b", payload={"which": 1}, ttl="PT1H")
        eng.publish_message("note", key="b", payload={"which": 2}, ttl="PT1H")
        inst = eng.start(notes_process(), data={"k": "b"})
        eng.run(until="2026-01-01T00:30:00Z")
        logs.append(inst.data["log"])
    assert logs[0] == logs[1]


def test_step_sequences_are_the_same_with_dehydration_on_and_off():
    """Dehydrating takes no event of its own: the same steps reach the same place."""
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve")
    p.timer_boundary("late", attached_to="approve", duration="PT1H")
    p.end("done")
    p.end("escalated")
    p.flow("start", "approve", "done")
    p.flow("late", "escalated")
    seen = []
    for dehydrate in (False, True):
        eng = bpm.Engine(dehydrate=dehydrate)
        eng.start(p)
        events = [(e.kind, e.node, e.at) for e in (eng.step() for _ in range(4))]
        seen.append((events, eng.now, [t.id for t in eng.tasks()]))
    assert seen[0] == seen[1]


def test_an_instance_does_not_dehydrate_while_another_of_its_timers_is_due_at_that_instant():
    """Two branches wait on timers due at one instant: the first firing's track parks again,
    but the instance stays resident for the second (dehydrated between them, it would be woken
    again at once — and a failed wake would move that branch's later steps later)."""
    p = bpm.Process("twin")
    p.start("s")
    p.parallel_gateway("fork")
    p.parallel_gateway("join")
    for side in ("a", "b"):
        p.timer_catch(f"{side}1", duration="PT2H")
        p.timer_catch(f"{side}2", duration="PT2H")
        p.flow("fork", f"{side}1", f"{side}2", "join")
    p.end("e")
    p.flow("s", "fork")
    p.flow("join", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.advance("PT3H")
    at_two = [f for f in eng.facts if f.at.hour == 2 and f.kind in ("dehydrated", "hydrated")]
    assert [f.kind for f in at_two] == ["hydrated", "dehydrated"]
    eng.run()
    assert inst.state == "completed"


def waits_on_one_condition():
    """Two branches each wait out a timer (2 h, then 3 h) and then the condition
    ``total >= 1``, then write ``last``; an event subprocess's timer (1 day) sets total."""
    p = bpm.Process("conditions")
    p.start("s")
    p.parallel_gateway("fork")
    p.parallel_gateway("join")
    for branch, hours in (("a", 2), ("b", 3)):
        p.timer_catch(f"wait_{branch}", duration=f"PT{hours}H")
        p.conditional_catch(f"cond_{branch}", condition="total >= 1")
        p.script_task(f"write_{branch}", fn=lambda d, b=branch: {"last": b})
        p.flow("fork", f"wait_{branch}", f"cond_{branch}", f"write_{branch}", "join")
    p.end("e")
    p.flow("s", "fork")
    p.flow("join", "e")
    with p.event_subprocess("later") as ev:
        ev.timer_start("tick", duration="P1D", interrupting=False)
        ev.script_task("set", fn=lambda d: {"total": 1})
        ev.end("set_end")
        ev.flow("tick", "set", "set_end")
    return p


@pytest.mark.parametrize("dehydrate", [False, True])
def test_conditions_that_hold_at_once_fire_in_the_order_their_waits_were_armed(dehydrate):
    """Branch a arms its condition first (after 2 h), b second (after 3 h); one data change
    makes both hold: a goes first, then b, with dehydration on as off. (Dehydrated after its
    start, the instance is woken by a's timer, whose continuation fork gives a's track a
    newer id than b's: checked in track order, b went first when dehydrated.)"""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(waits_on_one_condition(), {"total": 0})
    eng.advance("P2D")
    assert inst.state == "completed" and inst.data["last"] == "b"
    order = [f.node for f in eng.facts if f.kind == "node_left" and f.node.startswith("cond")]
    assert order == ["cond_a", "cond_b"]
