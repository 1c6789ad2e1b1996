"""What a returned call guarantees on a durable store, and what a restart keeps
(issue 8, findings 5, 8, 9, 10, 11, 12, 13, 16)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import approval, catch, ended_at, recover

import gobpm_nb as bpm

SCENARIOS = Path(__file__).parent / "scenarios"


def test_recovery_never_moves_the_clock_back_and_the_escalation_fires(tmp_path):
    """Ten times advance 12 h then recover: the clock keeps going and the 24 h boundary fires."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval())
    ended = []
    for n in range(10):
        eng.advance("PT12H")
        ended += [(f.node, f.at.isoformat()) for f in eng.facts
                  if f.kind == "node_left" and f.node in ("done", "escalated")]
        at = eng.now
        eng.store.close()
        eng = recover(db, approval())
        assert eng.now == at, n
    assert ended == [("escalated", "2026-01-02T00:00:00+00:00")]
    assert eng.instances() == []  # it ended, and its checkpoint left the store


def test_a_started_instance_survives_a_crash_before_any_step(tmp_path):
    """start() returned: the instance is in the store, and runs after recovery."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval(), {"n": 1})
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, approval())
    assert [i.id for i in eng.instances()] == ["i1"]
    eng.advance("PT1M")
    assert [t.id for t in eng.tasks()] == ["i1:approve:1"]
    assert eng.instance("i1").data == {"n": 1}


def test_an_accepted_message_survives_a_crash_before_the_next_step(tmp_path):
    """publish_message returned "i1": after a crash, recovery delivers it once."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1", payload={"sum": 5}) == "i1"
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, catch())
    eng.run()
    inst = eng.instance("i1")
    assert inst.state == "completed" and inst.data == {"order": "o1", "sum": 5}
    assert len([f for f in eng.facts if f.kind == "message_correlated"]) == 0
    assert len([f for f in eng.facts if f.kind == "hydrated"]) == 1


def test_an_accepted_task_completion_survives_a_crash(tmp_path):
    """complete_task returned: after a crash the task is done, the escalation never fires."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval())
    eng.advance("PT1H")
    eng.complete_task("i1:approve:1", {"ok": True})
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, approval())
    eng.advance("P2D")
    inst = eng.instance("i1")
    assert ended_at(inst) == ["done"] and inst.data == {"ok": True} and eng.tasks() == []


@pytest.mark.parametrize("entry", [
    "{not json",
    "[" * 100_000 + "]" * 100_000,
    '{"kind": "task"}',
    '{"at": "soon", "seq": 1, "kind": "task", "node": "approve", "wait_kind": "node", '
    '"track": "t1", "payload": null, "ref": "i1:approve:1"}',
    '{"at": 1, "seq": 1, "kind": 5, "node": "approve", "wait_kind": "node", "track": "t1", '
    '"payload": null, "ref": null}',
])
def test_a_damaged_accepted_trigger_fails_only_its_instance(tmp_path, entry):
    """A task completion accepted before a crash whose record in the store is damaged (not
    JSON, nested past the stack, a field missing or of the wrong type): its instance is not
    recovered (``recovery_failed`` naming the journal and why, as for a damaged checkpoint)
    and the other instance's accepted completion is delivered; before, recovery as a whole
    failed."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval()), eng.start(approval())
    eng.advance("PT1H")
    eng.complete_task("i1:approve:1", {"ok": True})
    eng.complete_task("i2:approve:1", {"ok": True})
    eng.store.close()  # the crash: what it wrote stays, the file is free
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM journal").fetchone() == (2,)
        raw.execute("UPDATE journal SET entry = ? WHERE instance = 'i1'", (entry,))
    eng = recover(db, approval())
    (bad,) = [f for f in eng.facts if f.kind == "recovery_failed"]
    assert bad.instance == "i1" and bad.details["field"] == "<journal>"
    assert bad.details["cause"] in ("JSONDecodeError", "RecursionError", "KeyError",
                                    "ValueError", "TypeError")
    eng.advance("P2D")
    assert eng.instance("i1").state == "failed"
    assert ended_at(eng.instance("i2")) == ["done"] and eng.tasks() == []


def test_an_accepted_signal_survives_a_crash_for_every_receiver(tmp_path):
    """broadcast_signal returned 2: both receivers continue after recovery."""
    p = bpm.Process("sig")
    p.start("s")
    p.signal_catch("wait", signal="go")
    p.end("e")
    p.flow("s", "wait", "e")
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(p), eng.start(p)
    eng.advance("PT1M")
    assert eng.broadcast_signal("go", {"x": 1}) == 2
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, p)
    eng.run()
    assert [(i.state, i.data) for i in eng.instances()] == [("completed", {"x": 1})] * 2


def test_subscription_order_survives_two_restarts(tmp_path):
    """The first subscriber wins, however often the engine restarted in between."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    eng.store.close()
    eng = recover(db, catch())
    eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    eng.store.close()
    eng = recover(db, catch())
    eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    eng.store.close()
    eng = recover(db, catch())
    assert [eng.publish_message("paid", key="o1") for _ in range(3)] == ["i1", "i2", "i3"]


def test_a_consumed_ttl_message_does_not_come_back_and_ids_are_not_reused(tmp_path):
    """A buffered message taken and finished with stays gone after a restart; i2 comes next."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.publish_message("paid", key="o1", payload={"n": 1}, ttl="PT1H", message_id="only-once")
    inst = eng.start(catch(), {"order": "o1"})
    eng.run()
    assert inst.state == "completed" and inst.data["n"] == 1
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, catch())
    again = eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    assert again.id == "i2" and again.residency == "dehydrated"
    assert eng.publish_message("paid", key="o1", message_id="only-once") is None


def test_a_buffered_message_taken_before_a_crash_is_taken_again_after_it(tmp_path):
    """The instance that took it had not checkpointed since: the message is given back."""
    db = tmp_path / "run.db"
    p = bpm.Process("pay2")
    p.start("s")
    p.message_catch("wait", message="paid", key="order")
    p.user_task("ship")
    p.end("e")
    p.flow("s", "wait", "ship", "e")
    eng = bpm.Engine(store=bpm.SQLiteStore(db), dehydrate=False)
    eng.publish_message("paid", key="o1", payload={"n": 1}, ttl="PT1H")
    eng.start(p, {"order": "o1"})
    eng.step(), eng.step()  # the track takes the message; no quiet point yet
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, p)
    eng.run()
    assert eng.instance("i1").data == {"order": "o1", "n": 1}
    assert [t.node for t in eng.tasks()] == ["ship"]


def test_message_id_deduplication_survives_a_restart(tmp_path):
    """A redelivery of a correlated message id after a restart is dropped as a duplicate."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(catch(), {"order": "o1"})
    eng.start(catch(), {"order": "o1"})
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1", message_id="m-1") == "i1"
    eng.run()
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, catch())
    assert eng.publish_message("paid", key="o1", message_id="m-1") is None
    assert eng.facts[-1].details["reason"] == "duplicate message id"
    assert eng.instance("i2").residency == "dehydrated"


class FailingDeletes(bpm.SQLiteStore):
    """A durable store whose deletes fail while ``broken``."""

    broken = False

    def delete(self, instance, meta=None):
        if self.broken:
            raise OSError("delete failed")
        super().delete(instance, meta)


def test_a_failed_checkpoint_delete_is_retried_and_the_instance_never_comes_back(tmp_path):
    """The delete fails as the instance ends; the next command retries it."""
    db = tmp_path / "run.db"
    store = FailingDeletes(db)
    eng = bpm.Engine(store=store)
    eng.start(approval())
    eng.advance("PT1M")
    store.broken = True
    eng.complete_task("i1:approve:1")
    eng.run()
    assert eng.instance("i1").state == "completed" and store.ids() == ["i1"]
    store.broken = False
    eng.advance("PT1M")
    assert store.ids() == []
    store.close()
    eng = recover(db, approval())
    assert eng.instances() == [] and eng.tasks() == []


def test_recovery_of_a_checkpoint_naming_an_unknown_boundary_fails_only_that_instance(tmp_path):
    """recovery_failed names the field; the other instances recover and run."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval()), eng.start(approval())
    eng.advance("PT1M")
    eng.store.close()
    with sqlite3.connect(db) as raw:
        doc = json.loads(raw.execute("SELECT doc FROM checkpoints WHERE instance='i1'")
                         .fetchone()[0])
        doc["tracks"][0]["boundaries"] = {"ghost": doc["tracks"][0]["boundaries"]["late"]}
        raw.execute("UPDATE checkpoints SET doc = ? WHERE instance = 'i1'",
                    (json.dumps(doc).encode(),))
    eng = recover(db, approval())
    (bad,) = [f for f in eng.facts if f.kind == "recovery_failed"]
    assert bad.instance == "i1" and bad.details["field"] == "tracks[0].boundaries.ghost"
    assert eng.instance("i1").state == "failed"
    eng.complete_task("i2:approve:1")
    eng.run()
    assert eng.instance("i2").state == "completed"


def test_a_fresh_engine_refuses_a_store_that_holds_instances(tmp_path):
    """Engine(store=...) on a used store raises and says to use Engine.recover."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval())
    eng.store.close()
    store = bpm.SQLiteStore(db)
    with pytest.raises(bpm.EngineError, match="Engine.recover"):
        bpm.Engine(store=store)
    store.close()
    eng = recover(db, approval())
    assert [i.id for i in eng.instances()] == ["i1"]


def test_a_task_completed_between_steps_before_any_checkpoint_survives_a_crash(tmp_path):
    """The task was completed before its instance's first quiet point: after recovery the
    instance replays from its start, arms the task again and the completion is delivered."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval())
    while not eng.tasks():
        eng.step()
    (task,) = eng.tasks()
    eng.complete_task(task.id, {"ok": True})
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, approval())
    eng.advance("P2D")
    done = [f.node for f in eng.facts if f.kind == "node_left" and f.node in ("done", "late")]
    assert done == ["done"] and eng.tasks() == []
    assert len([f for f in eng.facts if f.kind == "task_completed"]) == 1


class FailingMeta(bpm.SQLiteStore):
    """A durable store whose meta writes fail while ``fail`` is set."""

    fail = False

    def set_meta(self, meta):
        if self.fail:
            raise OSError("disk full")
        return super().set_meta(meta)


def test_a_command_whose_clock_cannot_be_recorded_says_so(tmp_path):
    """advance() ran but the store refused the clock: StoreError (not the EngineError of a
    refused call, which changes nothing), never a silent return."""
    store = FailingMeta(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.start(approval())
    eng.run()
    store.fail = True
    with pytest.raises(bpm.StoreError, match="the command ran, but the store failed"):
        eng.advance("PT5H")
    store.fail = False
    eng.advance("PT1M")
    store.close()
    assert recover(tmp_path / "run.db", approval()).now == eng.now


def test_a_deploy_the_store_cannot_record_changes_nothing(tmp_path):
    """start() of a new process on a store refusing meta: EngineError; a later start works."""
    store = FailingMeta(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    store.fail = True
    with pytest.raises(bpm.EngineError, match="not deployed"):
        eng.start(approval())
    assert eng.instances() == []
    store.fail = False
    assert eng.start(approval()).version == 1
    assert "process:approval" in store.meta()


def test_a_timer_fired_by_a_step_before_a_crash_still_comes_before_a_later_message(tmp_path):
    """step() fired a cycle boundary, then a message came, then the process died: after
    recovery the boundary's work and the message's both happen, in that order."""
    p = bpm.Process("p")
    p.start("s")
    p.receive_task("r", message="pay", key="k")
    p.timer_boundary("rc", attached_to="r", cycle="R2/PT1H", interrupting=False)
    p.script_task("rem", fn=lambda d: {"rem": d.get("rem", 0) + 1})
    p.end("e")
    p.end("er")
    p.flow("s", "r", "e")
    p.flow("rc", "rem", "er")
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(p, {"k": "a"})
    eng.run(until="2026-01-01T00:00:01Z")
    assert eng.step().kind == "timer"
    eng.publish_message("pay", key="a")
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, p)
    eng.advance("PT10H")
    assert eng.instance("i1").state == "completed"
    rem = [f for f in eng.facts if f.kind == "node_left" and f.node == "rem"]
    assert len(rem) == 1 and rem[0].at.hour == 1


def test_recovery_runs_what_was_due_before_it_returns(tmp_path):
    """A boundary timer that fired in a step before the crash has fired again when recover
    returns: the worker finds no job to fetch, as it would have without the crash."""
    p = bpm.Process("w")
    p.start("s")
    p.service_task("w", topic="t")
    p.timer_boundary("wt", attached_to="w", duration="PT2H")
    p.end("e")
    p.end("et")
    p.flow("s", "w", "e")
    p.flow("wt", "et")
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(p)
    eng.run(until="2026-01-01T00:00:01Z")
    assert eng.step().node == "wt"
    eng.store.close()  # the crash: what it wrote stays, the file is free
    eng = recover(db, p)
    assert eng.fetch_jobs("t") == []


def test_a_second_store_on_an_open_file_is_refused_until_the_first_is_closed(tmp_path):
    """One writer per file: a second SQLiteStore (and so a second engine) on a file an open
    store holds is refused with StoreError naming it, empty file or not; closing the first
    frees it, and what the first wrote is all there."""
    db = tmp_path / "run.db"
    first = bpm.Engine(store=bpm.SQLiteStore(db))
    with pytest.raises(bpm.StoreError, match=r"run\.db.* is open in another store"):
        bpm.Engine(store=bpm.SQLiteStore(db))  # the file is still empty
    first.start(approval(), {"n": 1})
    with pytest.raises(bpm.StoreError, match=r"run\.db"):
        recover(db, approval())
    first.store.close()
    again = recover(db, approval())
    assert [(i.id, i.data) for i in again.instances()] == [("i1", {"n": 1})]


def test_a_killed_process_leaves_no_lock_behind(tmp_path):
    """The lock lives as long as the process that holds it: while a child process holds the
    file it is refused here; once the child is killed (-9), recovery opens it."""
    db = tmp_path / "run.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
        env={"PYTHONPATH": f"{SCENARIOS}{os.pathsep}{Path(bpm.__file__).parent.parent}",
             "PATH": ""})
    try:
        assert holder.stdout.readline().strip() == "started i1"
        with pytest.raises(bpm.StoreError, match="open in another store"):
            bpm.SQLiteStore(db)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdin.close()
        holder.stdout.close()
    eng = recover(db, approval())
    assert [i.id for i in eng.instances()] == ["i1"]


HOLDER = """
import sys
import gobpm_nb as bpm
from recovery_processes import approval
eng = bpm.Engine(store=bpm.SQLiteStore(sys.argv[1]))
print("started", eng.start(approval()).id, flush=True)
sys.stdin.read()  # killed while it waits
"""
