"""Rewind, replay and branch (README, "Rewind and branch"): the engine goes back to the state
right after any fact of its history, replaying its command history from the nearest snapshot
with the outcomes its user callables gave the first time; replaying the rest gives the same
facts, byte for byte; a branch is an independent engine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import snapshot
from generate import build, processes
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_transparency import commands, schedules

import gobpm_nb as bpm
from gobpm_nb.travel import history, snapshots

CALLS: Counter[str] = Counter()


def tally(data):
    """A script with a side effect: it counts its own calls."""
    CALLS["tally"] += 1
    return {"n": data.get("n", 0) + 1}


def is_big(data):
    """A condition with a side effect."""
    CALLS["is_big"] += 1
    return data.get("amount", 0) > 100


def mixed() -> bpm.Process:
    """Parallel tracks, a long timer (it dehydrates), a script, a message, a user task under a
    non-interrupting timer boundary, a worker job, a Python condition at a gateway."""
    p = bpm.Process("mixed")
    p.start("s")
    p.parallel_gateway("fork")
    p.timer_catch("wait", duration="PT2H")
    p.script_task("count", fn=tally)
    p.message_catch("paid", message="payment", key="order")
    p.user_task("check", assignee="ann")
    p.timer_boundary("late", attached_to="check", duration="PT3H", interrupting=False)
    p.service_task("pack", topic="warehouse")
    p.parallel_gateway("join")
    p.exclusive_gateway("route", default="e")
    p.end("e")
    p.end("big")
    p.end("nudged")
    p.flow("s", "fork", "wait", "count", "join", "route", "e")
    p.flow("fork", "paid", "join")
    p.flow("fork", "check", "pack", "join")
    p.flow("route", "big", condition=is_big)
    p.flow("late", "nudged")
    return p.validate()


def play_mixed(**options) -> bpm.Engine:
    """The mixed scenario: three orders, steps, clock moves, a message, tasks, jobs."""
    eng = bpm.Engine(**options)
    p = mixed()
    for n, amount in enumerate((50, 150, 120)):
        eng.start(p, {"order": f"o-{n}", "amount": amount})
    eng.step()
    eng.step()
    eng.advance("PT1H")
    eng.publish_message("payment", key="o-1", payload={"sum": 5})
    eng.advance("PT4H")
    for task in eng.tasks():
        eng.complete_task(task.id, {"ok": True})
    eng.run(until=eng.now)
    for job in eng.fetch_jobs("warehouse", worker="w"):
        if job.instance == "i3":
            eng.fail_job(job.id, "BROKEN")
        else:
            eng.complete_job(job.id, {"packed": True})
    eng.publish_message("payment", key="o-0")
    eng.publish_message("payment", key="o-2", payload={"late": True})
    eng.run()
    return eng


def lines(eng) -> list[str]:
    return [f.to_json() for f in eng.facts]


def state(eng) -> tuple:
    """Everything a user reads of the engine, its store's contents and its counters."""
    return snapshot(eng), eng.stats(), eng.store.contents()


def reference(eng, done: int, events: int, **options) -> bpm.Engine:
    """A fresh engine that ran the first ``done`` commands of ``eng``'s history, called
    again by hand, then ``events`` more scheduler events (where a rewind inside a command
    stops)."""
    ref = bpm.Engine(**options)
    for c in eng.history()[:done]:
        getattr(ref, c.name)(*c.args, **c.kwargs)
    for _ in range(events):
        ref.step()
    return ref


@pytest.fixture
def dense(monkeypatch):
    """Snapshots every 40 facts, so rewinds and replays start from many of them."""
    monkeypatch.setattr(snapshots, "SNAPSHOT_FACTS", 40)
    monkeypatch.setattr(snapshots, "SNAPSHOT_COST", 0)


@pytest.mark.slow
def test_rewind_to_every_fact_of_the_mixed_scenario_then_replay(dense):
    """For every fact n of a scenario with parallel tracks, timers, messages, user tasks, jobs,
    dehydration and wakes: rewind(n) gives exactly the state of a fresh engine that ran the
    same commands up to that point (facts, holders, tasks, instances, store contents), and
    replaying the remaining commands (replay(), or by hand) gives the whole scenario again,
    byte for byte."""
    eng = play_mixed(keep_facts=None)
    full, final = lines(eng), state(eng)
    assert {"dehydrated", "hydrated", "job_failed", "task_completed"} <= {
        f.kind for f in eng.facts}
    assert len(eng._state.history.snapshots) > 3
    for n in range(len(full) + 1):
        r = eng.rewind(n)
        got = lines(eng)
        assert got == full[:len(got)] and r.seq == len(got) >= n
        events = eng._state.history.into
        assert (r.interrupted is not None) == (events > 0)
        assert state(eng) == state(reference(eng, r.commands, events, keep_facts=None)), n
        if n % 2:
            eng.replay()
        else:  # the rest by hand: the interrupted command's remainder, then the others
            by_hand(eng, r)
        assert lines(eng) == full and state(eng) == final, n


def by_hand(eng, r) -> None:
    """Finish the interrupted command (replay(1)), then call the rest of the history's
    commands by hand, live."""
    rest = [c for c in eng.history() if not c.done]
    if r.interrupted:
        eng.replay(1)
        rest = rest[1:]
    for c in rest:
        getattr(eng, c.name)(*c.args, **c.kwargs)


def test_replaying_the_remaining_commands_by_hand_gives_the_same_facts():
    """After a rewind, finishing the interrupted command (replay(1)) and calling the rest of
    the history's commands by hand, live, gives the same facts byte for byte."""
    eng = play_mixed(keep_facts=None)
    full = lines(eng)
    for n in (0, 7, len(full) // 3, len(full) // 2, len(full) - 4):
        by_hand(eng, eng.rewind(n))
        assert lines(eng) == full, n


def test_user_callables_run_once_per_execution_never_on_replay():
    """A script and a Python condition with side-effect counters run once per original
    execution: rewinds, replays and branches are served their recorded outcomes; a branch
    that goes on, or a command called anew after a rewind, runs them live again."""
    CALLS.clear()
    eng = play_mixed(keep_facts=None)
    once = Counter(CALLS)
    assert once["tally"] == 3 and once["is_big"] >= 2
    full = lines(eng)
    for n in (0, 5, len(full) // 2, len(full) - 1):
        eng.rewind(n)
        eng.branch()
        eng.replay()
    b = eng.branch(at=len(full) // 3)
    assert CALLS == once and lines(eng) == full
    b.run()  # the branch goes on live: its scripts run, once each
    assert CALLS["tally"] > once["tally"]
    CALLS.clear()
    CALLS.update(once)
    eng.rewind(0)
    eng.start(mixed(), {"order": "o-9", "amount": 500})
    eng.run(until="2026-01-01T03:00:00Z")
    assert CALLS["tally"] == once["tally"] + 1


def test_rewind_by_time_goes_to_the_last_fact_at_or_before_it():
    """rewind(datetime) and rewind(ISO text) equal rewind(n) for n the last fact at or before
    that time; a time after the last fact goes to the last fact."""
    eng = play_mixed(keep_facts=None)
    facts = eng.facts
    start = facts[0].at
    for hours in (0, 1, 2.5, 5, 30):
        t = start + timedelta(hours=hours)
        n = max(f.seq for f in facts if f.at <= t)
        by_time = eng.rewind(t)
        got = lines(eng)
        eng.rewind(n)
        assert lines(eng) == got and eng.rewind(t.isoformat()).seq == by_time.seq == n
        eng.replay()


def test_bad_rewind_points_raise_and_change_nothing():
    """A number beyond the log, a negative number, a bool, a float, a malformed ISO text, a
    time before the start: EngineError naming the point, and the engine is as it was."""
    eng = play_mixed()
    end = eng.stats()["facts"]
    before = state(eng)
    bad = [(end + 1, "beyond the log"), (-1, "negative"), (True, "sequence number"),
           (2.5, "sequence number"), (None, "sequence number"), ("2026-13-45", "2026-13-45"),
           ("yesterday", "yesterday"), ("2025-12-31T23:59:59Z", "before the start")]
    for to, words in bad:
        with pytest.raises(bpm.EngineError, match=words):
            eng.rewind(to)
        assert state(eng) == before
    with pytest.raises(bpm.EngineError, match="count"):
        eng.replay(-1)
    assert state(eng) == before


def test_subscribers_get_one_rewound_fact_that_the_log_does_not_keep():
    """A rewind hands subscribers one ``rewound`` fact numbered as the last fact kept, with
    counts only; eng.facts does not keep it and the next fact takes the next number."""
    eng = play_mixed(keep_facts=None)
    seen = []
    eng.subscribe(seen.append)
    end = eng.stats()["facts"]
    r = eng.rewind(40)
    assert [(f.kind, f.seq, dict(f.details)) for f in seen] == [
        ("rewound", r.seq, {"to": r.seq, "dropped": end - r.seq, "added": 0})]
    assert all(f.kind != "rewound" for f in eng.facts) and eng.stats()["facts"] == r.seq
    seen.clear()
    eng.replay()
    assert [(f.kind, dict(f.details)) for f in seen] == [
        ("rewound", {"to": end, "dropped": 0, "added": end - r.seq})]
    eng.advance("P1D")
    assert seen[-1].seq == eng.facts[-1].seq


def test_instance_handles_stay_valid_across_rewinds():
    """A handle reads the rewound state; before its instance existed it raises EngineError
    saying so, and after a replay it reads the instance again."""
    eng = play_mixed(keep_facts=None)
    third = eng.instance("i3")
    ended = third.state
    eng.rewind(1)
    assert eng.instance("i1").state == "active"
    with pytest.raises(bpm.EngineError, match="'i3' at this point of the history"):
        third.state  # noqa: B018
    eng.replay()
    assert third.state == ended


def test_a_new_command_after_a_rewind_discards_the_history_rewound_over():
    """Like an undo stack: a command after a rewind drops what replay() would have run (an
    interrupted command is kept as the events it had run); a refused one drops nothing."""
    eng = play_mixed(keep_facts=None)
    r = eng.rewind(30)
    assert r.pending > 0
    with pytest.raises(bpm.EngineError):
        eng.complete_task("no-such-task")
    assert eng.replay(0).pending == r.pending
    eng.rewind(30)
    eng.advance("PT10M")
    assert eng.replay().pending == 0 and eng.history()[-1].name == "advance"
    assert all(c.done for c in eng.history())
    assert len(eng.history()) == r.commands + (1 if r.interrupted else 0) + 1


def test_rewind_across_dehydration_restores_the_stored_checkpoints():
    """Rewinding to a point where an instance was dehydrated puts its checkpoint back in the
    store, byte for byte, after it was woken and ended; it reads as dehydrated again."""
    eng = bpm.Engine(keep_facts=None)
    inst = eng.start(mixed(), {"order": "o-1", "amount": 10})
    eng.advance("PT1H")
    assert inst.residency == "dehydrated"
    at, stored, doc = eng.stats()["facts"], eng.store.contents(), inst.checkpoint()
    eng.publish_message("payment", key="o-1")
    eng.advance("PT3H")
    eng.complete_task(eng.tasks()[0].id, {})
    eng.run(until=eng.now)
    eng.complete_job(eng.fetch_jobs("warehouse")[0].id, {})
    eng.run()
    assert inst.residency == "finished" and len(eng.store) == 0
    eng.rewind(at)
    assert eng.store.contents() == stored and inst.residency == "dehydrated"
    assert inst.checkpoint() == doc


def test_a_branch_is_independent_of_its_engine():
    """branch() and branch(at=n) give engines on memory stores that run on their own; the
    engine they came from is untouched, and goes on as before."""
    eng = play_mixed(keep_facts=None)
    full, final = lines(eng), state(eng)
    now = eng.branch()
    assert lines(now) == full and state(now) == final
    mid = eng.branch(at=len(full) // 2)
    assert lines(mid) == full[:len(lines(mid))]
    mid.broadcast_signal("anything")
    mid.advance("P2D")
    for task in mid.tasks():
        mid.complete_task(task.id, {"branch": True})
    mid.run()
    now.start(mixed(), {"order": "x"})
    now.run(until=now.now)
    assert state(eng) == final and lines(eng) == full
    assert lines(mid)[:len(full) // 2] == full[:len(full) // 2]
    again = mid.branch(at=len(full) // 4)
    assert lines(again) == full[:len(lines(again))]


def test_durable_stores_refuse_rewind_and_branch_into_memory(tmp_path):
    """On SQLite rewind raises EngineError saying why (it would rewrite durable history)
    and changes nothing; the engine keeps no command history (its memory would grow with every
    command of a long run: the store is its history), so branch(at=...) is refused too, and
    branch() gives a memory engine where it stands, with a history of its own."""
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"), keep_facts=None)
    inst = eng.start(mixed(), {"order": "o-1", "amount": 500})
    eng.advance("PT1H")
    eng.publish_message("payment", key="o-1")
    eng.advance("PT5H")
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match="durable"):
        eng.rewind(3)
    with pytest.raises(bpm.EngineError, match="keeps no command history"):
        eng.branch(at=10)
    assert snapshot(eng) == before and eng.history() == []
    now = eng.branch()
    assert snapshot(now) == before and isinstance(now.store, bpm.MemoryStore)
    assert not now.store.durable
    now.run(until="2026-01-01T09:00:00Z")
    now.rewind(len(before[0]))  # the branch keeps a history from where it began
    assert snapshot(now) == before
    assert snapshot(eng) == before and inst.residency == eng.instance("i1").residency


def test_a_recovered_engine_history_starts_at_the_recovery(tmp_path):
    """After Engine.recover (from a memory store) the history begins at the recovery:
    branch(at=0) is the recovered state, and a fact before the recovery is refused."""
    store = bpm.MemoryStore()
    eng = bpm.Engine(store=store)
    eng.start(mixed(), {"order": "o-1", "amount": 500})
    eng.advance("PT1H")
    back = bpm.Engine.recover(store, processes=[mixed()])
    first = back.stats()["facts"]
    back.publish_message("payment", key="o-1")
    back.advance("PT5H")
    start = back.branch(at=0)
    assert start.stats()["facts"] == first and len(start.history()) == 0
    if first > 1:
        with pytest.raises(bpm.EngineError, match="recovered"):
            back.branch(at=1)
    assert [c.name for c in back.history()] == ["publish_message", "advance"]


def test_bounded_fact_logs_rewind_through_the_history():
    """With keep_facts, a point whose fact left the kept log is still reached through the
    history, and the log then keeps exactly the newest facts up to it."""
    full = lines(play_mixed(keep_facts=None))
    eng = play_mixed(keep_facts=25)
    for n in (10, len(full) // 2, len(full) - 30):
        r = eng.rewind(n)
        assert lines(eng) == full[max(0, r.seq - 25):r.seq]
        eng.replay()
        assert lines(eng) == full[-25:]


def test_a_widget_follows_rewinds_and_opens_on_a_branch():
    """A live dashboard shows the rewound state after a rewind; widgets open on a branch."""
    eng = play_mixed()
    inst = eng.instance("i2")
    board, lin = eng.dashboard(), inst.lineage(live=True)
    try:
        eng.rewind(20)
        board.refresh()
        lin.refresh()
        assert board.facts[-1]["seq"] == eng.facts[-1].seq
        assert "i2" in repr(lin)
        b = eng.branch()
        view = b.instance("i2").lineage()
        assert "tracks=" in repr(view)
        view.close()
    finally:
        board.close()
        lin.close()


EXAMPLES = int(os.environ.get("REWIND_EXAMPLES", "200"))


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tree=processes, schedule=schedules,
       points=st.lists(st.floats(0, 1), min_size=1, max_size=3), manual=st.booleans(),
       spacing=st.sampled_from([15, 5_000]))
def test_rewind_anywhere_in_random_scenarios_then_replay(tree, schedule, points, manual,
                                                         spacing):
    """Random processes (tests/generate.py: every element the engine runs, scopes, calls,
    many instances) under random schedules: rewinding to
    random facts keeps the facts before them, and replaying the rest (replay(), or by hand
    with the interrupted command finished first) gives every fact and the final state again."""
    proc, called, *_ = build(tree)
    saved = snapshots.SNAPSHOT_FACTS, snapshots.SNAPSHOT_COST
    snapshots.SNAPSHOT_FACTS, snapshots.SNAPSHOT_COST = spacing, 0 if spacing < 100 else 8
    try:
        eng = bpm.Engine(keep_facts=None)
        for _, command in commands(proc, called, schedule):
            command(eng)
        full, final = lines(eng), state(eng)
        for x in points:
            n = round(x * len(full))
            r = eng.rewind(n)
            got = lines(eng)
            assert got == full[:len(got)] and len(got) >= n
            event(f"rewound into a command: {r.interrupted is not None}")
            event(f"replayed from a later snapshot: {len(eng._state.history.snapshots) > 1}")
            if manual:
                by_hand(eng, r)
            else:
                eng.replay()
            assert lines(eng) == full and state(eng) == final
    finally:
        snapshots.SNAPSHOT_FACTS, snapshots.SNAPSHOT_COST = saved


def drive(eng, begin_at=0, branches=None):
    """The mixed scenario one scheduler event at a time, with its triggers at fixed steps;
    ``branches`` collects a branch of the engine before every step from ``begin_at`` on."""
    p = mixed()
    k = begin_at
    while True:
        if branches is not None:
            branches.append(eng.branch())
        if k == 0:
            for n, amount in enumerate((50, 150, 120)):
                eng.start(p, {"order": f"o-{n}", "amount": amount})
        elif k in (40, 41):
            eng.publish_message("payment", key=f"o-{k - 40}", payload={"k": k})
        elif k == 60:
            for task in eng.tasks():
                eng.complete_task(task.id, {"ok": True})
        elif k == 90:
            for job in eng.fetch_jobs("warehouse"):
                eng.complete_job(job.id, {})
        if eng.step() is None and k > 90:
            return
        k += 1


def test_a_copy_at_any_event_boundary_runs_on_as_the_original():
    """A branch taken between any two scheduler events (tracks between two nodes, parked,
    resumed with a trigger not yet run, loops with mail, timers, dehydrated instances) goes on
    exactly as the engine it was taken from: every coroutine is made again where it stood."""
    eng = bpm.Engine(keep_facts=None)
    branches: list[bpm.Engine] = []
    drive(eng, branches=branches)
    full = lines(eng)
    assert len(branches) > 100
    for k, b in enumerate(branches):
        drive(b, begin_at=k)
        assert lines(b) == full, k


def test_replays_fail_the_store_calls_that_failed():
    """The golden scenario's store is down for a while (wakes fail, retry, later succeed):
    a rewind anywhere replays those failures from the tape, and the facts come back byte for
    byte."""
    from golden import lines as golden_lines
    from golden import play

    eng = play()
    full = golden_lines(eng)
    assert any('"wake_failed"' in line for line in full)
    for n in range(0, len(full), max(1, len(full) // 25)):
        eng.rewind(n)
        assert golden_lines(eng) == full[:eng.stats()["facts"]]
        eng.replay()
        assert golden_lines(eng) == full, n


def test_without_a_history_start_an_engine_branches_where_it_stands(tmp_path, monkeypatch):
    """A recovered engine on a durable store keeps no command history (nor would it keep a start
    for a store too big to copy): a rewind point or branch(at=...) is refused, saying why;
    branch() works, and the branch's own history starts at the branch point."""
    monkeypatch.setattr(history, "START_MAX_INSTANCES", 0)
    path = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(path))
    eng.start(mixed(), {"order": "o-1", "amount": 500})
    eng.advance("PT1H")
    eng.store.close()
    back = bpm.Engine.recover(bpm.SQLiteStore(path), processes=[mixed()])
    back.publish_message("payment", key="o-1")
    with pytest.raises(bpm.EngineError, match="keeps no command history"):
        back.branch(at=0)
    b = back.branch()
    assert lines(b) == lines(back)
    seq = b.stats()["facts"]
    b.advance("PT5H")
    b.rewind(0)
    assert b.stats()["facts"] == seq and lines(b) == lines(back)


def test_a_replay_that_goes_another_way_leaves_the_engine_as_it_was():
    """When the history cannot reproduce the recorded run (here: a tape tampered with), a
    rewind raises EngineError and the engine, its store and its log are exactly as before."""
    eng = play_mixed(keep_facts=None)
    before = state(eng)
    tape = eng._state.core.tape
    site, returned, value = tape.outcomes[0]
    tape.outcomes[0] = (("fn", "elsewhere"), returned, value)
    with pytest.raises(bpm.EngineError, match="nothing changed"):
        eng.rewind(len(lines(eng)) - 3)
    assert state(eng) == before
    tape.outcomes[0] = (site, returned, value)
    eng.rewind(5)
    eng.replay()
    assert state(eng) == before


@pytest.mark.slow  # a benchmark script
def test_the_rewind_benchmark_runs():
    """benchmarks/rewind.py runs end to end on a small history and prints its figures (no
    timing checks)."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "rewind.py"
    proc = subprocess.run([sys.executable, str(script), "--sizes", "3000", "--points", "3"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("rewind_3k_median_ms", "plain_replay_3k_s", "history_bytes_per_command_3k"):
        assert re.search(rf"^{name}=\d", proc.stdout, re.MULTILINE), proc.stdout


def test_a_branch_replays_the_failures_of_a_flaky_store():
    """On a store whose reads and writes fail now and then (refused checkpoints, failed
    wakes and their retries), branch(at=n) and rewind replay the same failures from the
    tape: the facts are the engine's, byte for byte."""
    from flaky import Flaky

    store = Flaky(bpm.MemoryStore(), [n % 3 == 1 for n in range(40)])
    eng = bpm.Engine(store=store, wake_retry_backoff="PT1S", keep_facts=None)
    p = mixed()
    for n in range(3):
        try:
            eng.start(p, {"order": f"o-{n}", "amount": 50 * n})
        except bpm.EngineError:
            pass
    for step in ("PT1H", "PT3H", "PT5H"):
        eng.advance(step)
        for task in eng.tasks():
            eng.complete_task(task.id, {"ok": True})
    eng.advance("P1D")
    full = lines(eng)
    assert store.failures["put"] and store.failures["get"]
    assert any('"wake_failed"' in x or '"checkpoint_failed"' in x for x in full)
    for n in range(0, len(full), max(1, len(full) // 15)):
        b = eng.branch(at=n)
        assert lines(b) == full[:len(lines(b))]
    eng.rewind(len(full) // 2)  # the wrapper hands contents()/replace() to its memory store
    eng.replay()
    assert lines(eng) == full


def test_a_store_that_cannot_be_put_back_refuses_rewind():
    """A custom store without contents()/replace() cannot hold what it held again: rewind
    raises EngineError saying so, and nothing changes; branch works."""

    class Plain:
        durable = False

        def __init__(self):
            self.inner = bpm.MemoryStore()

        def __getattr__(self, name):
            if name in ("contents", "replace"):
                raise AttributeError(name)
            return getattr(self.inner, name)

    eng = bpm.Engine(store=Plain(), keep_facts=None)
    eng.start(mixed(), {"order": "o-1", "amount": 5})
    eng.advance("PT3H")
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match="MemoryStore"):
        eng.rewind(3)
    assert snapshot(eng) == before
    got = lines(eng.branch(at=3))
    assert len(got) >= 3 and got == lines(eng)[:len(got)]


def test_history_span_reads_the_history_bounds_without_copying(tmp_path):
    """history_span() is (first, position, last): the whole history before a rewind, the
    rewound-to position inside it after one, all three equal on a durable store's engine."""
    eng = play_mixed(keep_facts=None)
    last = eng.stats()["facts"]
    assert eng.history_span() == (0, last, last)
    eng.rewind(7)
    first, here, end = eng.history_span()
    assert (first, end) == (0, last) and here == eng.facts[-1].seq >= 7
    eng.replay()
    assert eng.history_span() == (0, last, last)
    durable = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"))
    durable.start(mixed(), {"order": "o-1", "amount": 500})
    n = durable.stats()["facts"]
    assert durable.history_span() == (n, n, n)
