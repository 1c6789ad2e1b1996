"""Durable checkpoints and restart recovery: recorded deadlines, trigger-absent re-arming."""

import json
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import gobpm_nb as bpm

SCENARIOS = Path(__file__).parent / "scenarios"
from conftest import ended_at, recover  # noqa: E402
from recovery_processes import approval, timer  # noqa: E402  (conftest puts it on the path)


def facts(eng, kind):
    return [f for f in eng.facts if f.kind == kind]


def at(text):
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_crash_recovery_in_a_separate_process_fires_the_timer_at_its_recorded_deadline(tmp_path):
    """A process dies; a fresh engine recovers from SQLite and the timer fires at 02:00."""
    db = tmp_path / "run.db"
    out = subprocess.run([sys.executable, str(SCENARIOS / "crash.py"), str(db)],
                         capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(SCENARIOS), "PATH": ""})
    assert out.stdout.startswith("3 holds")
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT2H"), approval()])
    assert eng.now == at("2026-01-01T00:30:00")  # where the last command left it
    assert [f.instance for f in facts(eng, "recovered")] == ["i1", "i2"]
    assert eng.stats()["coroutines"] == 0
    assert [t.id for t in eng.tasks()] == ["i2:approve:1"]
    eng.advance("PT3H")
    i1 = eng.instance("i1")
    assert i1.state == "completed" and i1.data == {"n": 1}
    (fired,) = [f for f in facts(eng, "timer_fired") if f.instance == "i1"]
    assert fired.at == at("2026-01-01T02:00:00")
    eng.complete_task("i2:approve:1", {"ok": True})
    eng.run()
    assert eng.instance("i2").state == "completed"
    assert eng.start(timer("PT2H")).id == "i3"


class FailingReads(bpm.SQLiteStore):
    """A durable store whose reads fail while ``broken`` is set."""

    broken = False

    def get(self, instance):
        if self.broken:
            raise OSError("read error")
        return super().get(instance)


def test_an_overdue_timer_fires_exactly_once_after_recovery(tmp_path):
    """A deadline that passed while the engine was failing fires once after the restart."""
    db = tmp_path / "run.db"
    store = FailingReads(db)
    eng = bpm.Engine(store=store)
    eng.start(timer("PT2H"))
    eng.advance("PT1M")
    store.broken = True
    eng.advance("PT3H")
    assert facts(eng, "wake_failed")
    eng.start(timer("P1D"))
    eng.advance("PT1M")
    store.broken = False
    store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT2H"), timer("P1D")])
    assert eng2.now == at("2026-01-01T03:02:00")  # recorded at the end of the last command
    eng2.advance("PT1H")
    assert eng2.instance("i1").state == "completed"
    assert len([f for f in facts(eng2, "timer_fired") if f.instance == "i1"]) == 1


def test_a_boundary_restores_at_its_recorded_deadline_not_at_restore_time(tmp_path):
    """The 24 h escalation recovered at 10:01 still fires at 24:00, not at 34:01."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(approval())
    eng.advance("PT10H")
    eng.start(timer("P2D"))
    eng.advance("PT1M")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[approval(), timer("P2D")])
    assert eng2.now == at("2026-01-01T10:01:00")
    late = [h for h in eng2.holders() if h.node == "late"]
    assert late[0].deadline == at("2026-01-02T00:00:00")
    eng2.advance("PT14H")
    inst = eng2.instance("i1")
    assert inst.state == "completed" and eng2.tasks() == []
    assert [t.node for t in inst.tracks if t.state == "completed"] == ["escalated"]


def waiting_on_disk(tmp_path, n):
    """An SQLite file, closed, holding ``n`` instances waiting on a five-hour timer."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    for _ in range(n):
        eng.start(timer("PT5H"))
    eng.advance("PT1M")
    eng.store.close()
    return db


@pytest.mark.parametrize("doc, field", [
    (b'{"schema": 2, "instance": "i2"}', "process"),  # a field missing
    (("[" * 100_000 + "]" * 100_000).encode(), "<document>"),  # nested past the stack
], ids=["missing-field", "nested-past-the-stack"])
def test_one_corrupt_record_fails_only_its_instance(tmp_path, doc, field):
    """A damaged checkpoint fails its own instance with a fact naming the field; the others
    recover. One nested past the stack is a document that does not decode, not a failure of
    the store."""
    db = waiting_on_disk(tmp_path, 3)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE checkpoints SET doc = ? WHERE instance = 'i2'", (doc,))
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT5H")])
    (bad,) = facts(eng2, "recovery_failed")
    assert bad.instance == "i2" and bad.details == {"field": field}
    assert eng2.instance("i2").state == "failed"
    eng2.run()
    assert [eng2.instance(i).state for i in ("i1", "i3")] == ["completed", "completed"]


@pytest.mark.parametrize("key, value, why", [
    ("seen", "[" * 100_000 + "]" * 100_000, "RecursionError"),
    ("seen", "{not json", "JSONDecodeError"),
    ("buffer", "[[1, 2]]", "ValueError"),
    ("next_instance", "abc", "ValueError"),
    ("clock", "soon", "ValueError"),
    ("seed", "[]", "ValueError"),
    ("process:timer", "{bad", "JSONDecodeError"),
])
def test_a_damaged_engine_record_is_a_store_error_naming_it(tmp_path, key, value, why):
    """The engine's own records beside the checkpoints (counters, clock, seed, the message
    window and buffer, deployed versions), damaged: recovery raises a StoreError naming the
    record and what is wrong with it (a RecursionError or a JSONDecodeError escaped before),
    and leaves the store as it was; repaired, it recovers every instance."""
    db = waiting_on_disk(tmp_path, 2)
    with sqlite3.connect(db) as raw:
        good = dict(raw.execute("SELECT key, value FROM meta"))
        raw.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        before = sorted(raw.execute("SELECT key, value FROM meta"))
    with pytest.raises(bpm.StoreError, match=rf"^the store's record '{key}' is damaged "
                                             rf"\({why}: .*\); nothing was recovered$"):
        bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT5H")])
    with sqlite3.connect(db) as raw:
        assert sorted(raw.execute("SELECT key, value FROM meta")) == before
        raw.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, good[key]))
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT5H")])
    eng2.run()
    assert [i.state for i in eng2.instances()] == ["completed", "completed"]


def test_a_process_version_not_yet_registered_keeps_its_hold_until_deployed(tmp_path):
    """Recovered without its process, the wake fails and retries; deploying it lets it wake."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(timer("PT2H"))
    eng.advance("PT1M")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[])
    eng2.advance("PT2H")
    assert facts(eng2, "wake_failed") and eng2.instance("i1").residency == "dehydrated"
    assert eng2.deploy(timer("PT2H")) == 1
    eng2.advance("PT1M")
    assert eng2.instance("i1").state == "completed"


def test_a_resident_instance_recovers_from_its_quiet_point_checkpoint(tmp_path):
    """With a durable store even resident instances are recorded at each quiet point."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db), dehydrate=False)
    eng.start(timer("PT5H"), {"v": 1})
    eng.advance("PT1M")
    assert eng.instance("i1").residency == "resident"
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT5H")],
                              dehydrate=False)
    assert eng2.instance("i1").residency == "resident" and eng2.stats()["coroutines"] == 2
    eng2.run()
    assert eng2.instance("i1").state == "completed" and eng2.instance("i1").data == {"v": 1}


def test_finished_instances_leave_the_store(tmp_path):
    """A completed instance's checkpoint is deleted; nothing is left to recover."""
    store = bpm.SQLiteStore(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.start(timer("PT2H"))
    eng.run()
    assert store.ids() == []


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
def test_stores_keep_bytes_not_objects(tmp_path, store_kind):
    """Both stores hand back encoded bytes that decode to the checkpoint."""
    store = bpm.MemoryStore() if store_kind == "memory" else bpm.SQLiteStore(tmp_path / "s.db")
    eng = bpm.Engine(store=store)
    inst = eng.start(timer("PT2H"), {"x": [1, 2]})
    eng.advance("PT1M")
    raw = store.get(inst.id)
    assert isinstance(raw, bytes) and b'"x":[1,2]' in raw


def test_subscriptions_keep_their_order_across_a_restart(tmp_path):
    """The instance that subscribed first still gets the message first after recovery."""
    late = bpm.Process("late")
    late.start("s")
    late.timer_catch("pause", duration="PT2H")
    late.message_catch("w", message="m", key="k")
    late.end("e")
    late.flow("s", "pause", "w", "e")
    early = bpm.Process("early")
    early.start("s")
    early.message_catch("w", message="m", key="k")
    early.end("e")
    early.flow("s", "w", "e")
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(late, {"k": 1}, key="a-late")
    eng.start(early, {"k": 1}, key="b-early")
    eng.advance("PT3H")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[late, early])
    assert eng2.publish_message("m", key=1) == "b-early"
    assert eng2.publish_message("m", key=1) == "a-late"


def test_waits_no_holder_keeps_come_back_resident_after_recovery(tmp_path):
    """A worker job and a conditional catch are rebuilt resident: the job keeps its id."""
    p = bpm.Process("mixed")
    p.start("s")
    p.parallel_gateway("fork")
    p.service_task("charge", topic="pay")
    p.conditional_catch("until", condition="paid == True")
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "fork", "charge", "join", "e")
    p.flow("fork", "until", "join")
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(p, {"paid": False})
    eng.advance("PT1M")
    assert inst.residency == "resident"
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[p])
    again = eng2.instance(inst.id)
    assert again.residency == "resident" and eng2.stats()["coroutines"] == 3
    (job,) = eng2.fetch_jobs("pay", "w")
    assert job.id == "i1:charge:1"
    eng2.complete_job(job.id, {"paid": True})
    eng2.run()
    assert again.state == "completed"


def test_an_overdue_hold_shows_its_recorded_deadline_and_each_instance_one_recovered_fact(
        tmp_path):
    """Recovery fires an overdue timer once, at once (it was due at its recorded deadline,
    before the clock the store recorded); one recovered fact per instance."""
    db = tmp_path / "run.db"
    store = FailingReads(db)
    eng = bpm.Engine(store=store)
    eng.start(timer("PT2H"))
    eng.start(timer("PT5M"), key="short")
    eng.advance("PT1M")
    store.broken = True
    eng.advance("PT3H")
    eng.start(timer("P1D"))
    eng.advance("PT1M")
    store.broken = False
    store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[timer("PT2H"), timer("PT5M"),
                                                              timer("P1D")])
    assert [h for h in eng2.holders() if h.instance == "i1"] == []
    (fired,) = [f for f in facts(eng2, "timer_fired") if f.instance == "i1"]
    assert fired.at == eng2.now == at("2026-01-01T03:02:00")
    assert eng2.instance("i1").state == "completed"
    assert sorted(f.instance for f in facts(eng2, "recovered")) == ["i1", "i2"]


def test_a_message_buffered_with_a_ttl_survives_a_restart(tmp_path):
    """A message accepted with a time-to-live is a trigger: after recovery it still waits
    for its subscription, and it still expires at its recorded time."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.publish_message("paid", key="o-1", payload={"sum": 3}, ttl="PT2H", message_id="m-1")
    eng.publish_message("paid", key="o-2", ttl="PT1H")
    eng.store.close()
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(db))
    assert eng2.publish_message("paid", key="o-1", ttl="PT1H", message_id="m-1") is None
    waiting = bpm.Process("pay")
    waiting.start("s")
    waiting.message_catch("w", message="paid", key="order")
    waiting.end("e")
    waiting.flow("s", "w", "e")
    eng2.advance("PT90M")
    assert [f.details["reason"] for f in facts(eng2, "message_dropped")] == [
        "duplicate message id", "ttl expired"]
    inst = eng2.start(waiting, {"order": "o-1"})
    eng2.run()
    assert inst.state == "completed" and inst.data["sum"] == 3


# -- a crash right after a start: the process's event subprocesses still listen --------------
EVENT_STARTS = {"signal": {"signal": "alarm"}, "message": {"message": "cancel", "key": "'all'"},
                "timer": {"duration": "PT1H"}}


def watched(kind, by):
    """A process started ``by`` a plain, message or timer start -> work -> done, with an
    event subprocess whose ``kind`` start (not interrupting) runs ``react``."""
    p = bpm.Process("watched")
    if by == "message":
        p.message_start("s", message="go")
    elif by == "timer":
        p.timer_start("s", duration="PT1M")
    else:
        p.start("s")
    p.user_task("work")
    p.end("done")
    p.flow("s", "work", "done")
    with p.event_subprocess("ev") as ev:
        getattr(ev, f"{kind}_start")("es", interrupting=False, **EVENT_STARTS[kind])
        ev.script_task("react", fn=lambda d: {"reacted": d.get("reacted", 0) + 1})
        ev.end("ee")
        ev.flow("es", "react", "ee")
    return p


def caller():
    p = bpm.Process("caller")
    p.start("s")
    p.call_activity("call", process="watched")
    p.end("e")
    p.flow("s", "call", "e")
    return p


def start_by(eng, by, p):
    """Start an instance of ``p`` by one of the five ways an instance begins."""
    if by == "start":
        eng.start(p)
    elif by == "start_many":
        eng.start_many(p, [{}])
    elif by == "message":
        eng.deploy(p)
        eng.publish_message("go")
    elif by == "timer":
        eng.deploy(p)
        eng.step()  # the start timer fires: the instance exists, nothing of it has run
    else:
        eng.deploy(p)
        eng.start(caller())
        while len(eng.instances()) < 2:  # the call activity starts its child
            eng.step()


def copy_db(src, dst):
    """What a crash right now would leave on disk: the database file and its WAL."""
    for tail in ("", "-wal", "-shm"):
        if Path(f"{src}{tail}").exists():
            shutil.copyfile(f"{src}{tail}", f"{dst}{tail}")


def reacted(eng, kind):
    """Fire the event subprocess's start; how often it ran in the watched instance."""
    if kind == "signal":
        eng.broadcast_signal("alarm")
    elif kind == "message":
        eng.publish_message("cancel", key="all")
    eng.advance("PT2H")
    (inst,) = [i for i in eng.instances() if eng.describe_instance(i.id).process == "watched"]
    return inst.data.get("reacted", 0)


@pytest.mark.parametrize("kind", ["signal", "message", "timer"])
@pytest.mark.parametrize("by", ["start", "start_many", "message", "timer", "call"])
def test_event_subprocesses_still_listen_after_a_crash_right_after_the_start(tmp_path, by,
                                                                             kind):
    """A crash right after an instance begins (its first checkpoint only, written before
    the start opened the process's scope): recovery opens that scope again, so a signal,
    message or timer start of an event subprocess fires as it would without the crash."""
    p = watched(kind, by)
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"))
    start_by(eng, by, p)
    copy_db(tmp_path / "run.db", tmp_path / "crashed.db")
    again = recover(tmp_path / "crashed.db", p, caller())
    assert reacted(again, kind) == reacted(eng, kind) == 1


# -- a checkpoint that does not read fails only its own instance ----------------------------
def boundary(doc):
    return doc["tracks"][0]["boundaries"]["late"]


CORRUPTIONS = {
    "tracks": lambda d: d.update(tracks=[]),
    "tracks[0].id": lambda d: d["tracks"][0].update(id="track-one"),
    "tracks[0].parents[0]": lambda d: d["tracks"][0].update(parents=["one"]),
    "tracks[0].node": lambda d: d["tracks"][0].update(node="nowhere"),
    "tracks[0].wait.hold": lambda d: d["tracks"][0]["wait"].update(hold="seven"),
    "data": lambda d: d.update(data=[1]),
    "seq.track": lambda d: d["seq"].update(track=0),
    "tracks[0].boundaries.late.deadline": lambda d: boundary(d).update(deadline="tomorrow"),
    "tracks[0].boundaries.late.armed": lambda d: boundary(d).update(
        armed="9999-12-31T23:59:59-14:00"),
}


def corrupt(db, iid, mutate):
    with sqlite3.connect(db) as raw:
        (text,) = raw.execute("SELECT doc FROM checkpoints WHERE instance = ?", (iid,)).fetchone()
        doc = json.loads(text)
        mutate(doc)
        raw.execute("UPDATE checkpoints SET doc = ? WHERE instance = ?",
                    (json.dumps(doc).encode(), iid))


@pytest.mark.parametrize("when", ["recovery", "wake"])
@pytest.mark.parametrize("field", list(CORRUPTIONS))
def test_a_checkpoint_that_does_not_read_fails_only_its_instance(tmp_path, field, when):
    """Whatever field is wrong (a track id, a node, a type, a time), the instance fails at
    recovery (``recovery_failed``) or at its wake (``wake_failed``, its hold kept) naming
    the field; the command goes on and the other instance's escalation fires."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db), wake_retry_backoff="PT6H")
    bad, good = eng.start(approval()), eng.start(approval())
    eng.advance("PT1M")
    if when == "recovery":
        eng.store.close()
        corrupt(db, bad.id, CORRUPTIONS[field])
        eng = recover(db, approval())
        failed = facts(eng, "recovery_failed")
    else:
        corrupt(db, bad.id, CORRUPTIONS[field])
    eng.advance("P2D")
    if when == "wake":
        failed = facts(eng, "wake_failed")
        assert eng.instance(bad.id).residency == "dehydrated"
    assert {(f.instance, f.details["field"]) for f in failed} == {(bad.id, field)}
    assert ended_at(eng.instance(good.id)) == ["escalated"]


def keyed():
    """s -> work -> done, and an event subprocess whose message start is keyed by ``id``."""
    p = bpm.Process("keyed")
    p.start("s")
    p.user_task("work")
    p.end("done")
    p.flow("s", "work", "done")
    with p.event_subprocess("ev") as ev:
        ev.message_start("es", message="cancel", key="id")
        ev.end("ee")
        ev.flow("es", "ee")
    return p


@pytest.mark.parametrize("crash", [False, True])
def test_an_event_subprocess_start_whose_key_fails_is_an_incident_at_the_start(tmp_path, crash):
    """A message start of an event subprocess whose key names a field the data lacks: the
    instance fails with an incident at that start (nothing raised out of ``start``, no hold,
    no coroutine left), also when a recovery arms it again from the first checkpoint (here
    one whose data lost the field) and the other instances recover."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(keyed(), {"id": 7} if crash else {})
    if crash:
        eng.start(approval())
        copy_db(db, tmp_path / "crashed.db")
        corrupt(tmp_path / "crashed.db", inst.id, lambda d: d.update(data={}))
        eng = recover(tmp_path / "crashed.db", keyed(), approval())
        inst = eng.instance(inst.id)
        eng.advance("PT1M")
        assert [t.node for t in eng.tasks()] == ["approve"]
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "es" and "names missing field 'id'" in incident.details["cause"]
    assert inst.state == "failed" and eng.holders(inst.id) == []


def echo():
    """s -> shout (throws signal sa) -> hear (catches sa) -> e."""
    p = bpm.Process("echo")
    p.start("s")
    p.signal_throw("shout", signal="sa")
    p.signal_catch("hear", signal="sa")
    p.end("e")
    p.flow("s", "shout", "hear", "e")
    return p


@pytest.mark.parametrize("crash", [False, True])
def test_an_instance_started_and_not_run_is_recovered_ready_and_runs_in_its_place(
        tmp_path, crash):
    """Two instances started at one instant, with a crash between the starts: recover gives
    back the first ready at its start, not run, and the next run interleaves the two as
    without the crash: each shouts before either listens, so neither hears the other."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(echo())
    if crash:
        eng.store.close()
        eng = recover(db, echo())
        assert [(t.node, t.state) for t in eng.instance("i1").tracks] == [("s", "ready")]
        assert "node_entered" not in [f.kind for f in eng.facts]
    eng.start(echo())
    eng.run(until=eng.now)
    assert [(i.id, i.state) for i in eng.instances()] == [("i1", "active"), ("i2", "active")]
    assert [h.node for h in eng.holders()] == ["hear", "hear"]
