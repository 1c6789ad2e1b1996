"""Group commit and ``start_many``: what a population costs in commits, and what a refused
commit, a refused write inside a group and a trigger for an uncommitted instance do."""

import json
import sqlite3

import pytest
from conftest import catch, recover

import gobpm_nb as bpm
from gobpm_nb.engine.durability import journal


def one_timer():
    p = bpm.Process("one_timer")
    p.start("s")
    p.timer_catch("wait", duration="P1D")
    p.end("e")
    p.flow("s", "wait", "e")
    return p


class Counting(bpm.SQLiteStore):
    """Counts committed transactions; refuses commits, or the write of one instance, when
    told to."""

    refuse_commits = False
    refuse_put: str | None = None

    def __init__(self, path):
        super().__init__(path)
        self.commits = 0

    def put(self, instance, doc, meta=None):
        if instance == self.refuse_put:
            raise OSError("disk full")
        was = self.in_group()
        super().put(instance, doc, meta)
        self.commits += not was

    def delete(self, instance, meta=None):
        was = self.in_group()
        super().delete(instance, meta)
        self.commits += not was

    def set_meta(self, meta):
        was = self.in_group()
        super().set_meta(meta)
        self.commits += not was

    def commit(self):
        if self.refuse_commits and self.in_group():
            self.rollback()
            raise OSError("disk full")
        was = self.in_group()
        super().commit()
        self.commits += was


def test_a_population_costs_one_commit_to_start_and_one_to_dehydrate(tmp_path):
    """start_many writes 50 first checkpoints in one transaction; the run that dehydrates them
    commits their 50 checkpoints and the clock in one more; a restart finds all 50."""
    store = Counting(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.deploy(one_timer())
    store.commits = 0
    insts = eng.start_many(one_timer(), [{"n": n} for n in range(50)])
    assert [i.id for i in insts] == [f"i{n}" for n in range(1, 51)]
    assert store.commits == 1 and len(store) == 50
    eng.run(until=eng.now)
    assert store.commits == 2
    assert eng.stats()["instances"]["dehydrated"] == 50
    store.close()
    again = recover(tmp_path / "run.db", one_timer())
    assert again.stats()["instances"]["dehydrated"] == 50
    assert again.instance("i7").data == {"n": 6}
    again.advance("P1DT1M")
    assert all(i.state == "completed" for i in again.instances())


def test_start_many_gives_the_facts_a_loop_of_start_gives():
    """The same instances, ids and facts, in the same order, as one start per item."""
    items = [{"n": n} for n in range(5)]
    loop = bpm.Engine()
    for item in items:
        loop.start(one_timer(), item)
    loop.advance("P2D")
    many = bpm.Engine()
    many.start_many(one_timer(), items)
    many.advance("P2D")
    assert [(f.kind, f.instance, f.track, f.node, f.details) for f in many.facts] == \
        [(f.kind, f.instance, f.track, f.node, f.details) for f in loop.facts]


def test_start_many_checks_every_item_first_and_changes_nothing_on_a_bad_one(tmp_path):
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"))
    with pytest.raises(bpm.EngineError, match=r"start data \[2\]"):
        eng.start_many(one_timer(), [{}, None, {"bad": object()}])
    for bad in ({"n": 1}, 5, "abc", None):
        with pytest.raises(bpm.EngineError, match="list of start data"):
            eng.start_many(one_timer(), bad)
    with pytest.raises(bpm.EngineError, match="start_many needs a Process"):
        eng.start_many("one_timer", [None])
    assert eng.instances() == [] and len(eng.store) == 0
    assert eng.start(one_timer()).id == "i1"


def test_start_many_is_all_or_none_when_the_store_refuses(tmp_path):
    """The third write fails: no instance exists, no checkpoint is stored, and the ids are
    given again by the next call."""
    store = Counting(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    store.refuse_put = "i3"
    with pytest.raises(bpm.EngineError, match="no instance started"):
        eng.start_many(one_timer(), [None] * 5)
    assert eng.instances() == [] and len(store) == 0
    assert [f.details for f in eng.facts if f.kind == "checkpoint_failed"] == [
        {"cause": "OSError", "checkpoints": 5}]
    store.refuse_put = None
    assert [i.id for i in eng.start_many(one_timer(), [None] * 2)] == ["i1", "i2"]


def test_a_commit_refused_at_the_end_of_a_run_says_so_and_the_next_command_commits(tmp_path):
    """The run ran (every instance dehydrated, its checkpoint kept in memory); StoreError says
    the store did not commit; the dehydrated instances can still be read and woken; the next
    command's commit writes them, and a restart finds them."""
    db = tmp_path / "run.db"
    store = Counting(db)
    eng = bpm.Engine(store=store)
    eng.start_many(one_timer(), [{"n": n} for n in range(3)])
    store.refuse_commits = True
    with pytest.raises(bpm.StoreError, match="failed to commit its 3 checkpoint writes"):
        eng.run(until=eng.now)
    assert eng.stats()["instances"]["dehydrated"] == 3
    assert eng.instance("i2").data == {"n": 1}  # read from what the engine kept
    (failed,) = [f for f in eng.facts if f.kind == "checkpoint_failed"]
    assert failed.details == {"cause": "OSError", "checkpoints": 3}
    store.refuse_commits = False
    eng.advance("PT1M")
    store.close()
    again = recover(db, one_timer())
    assert again.stats()["instances"]["dehydrated"] == 3
    again.advance("P1D")
    assert [i.state for i in again.instances()] == ["completed"] * 3


def test_a_restart_after_a_refused_commit_replays_from_the_committed_checkpoints(tmp_path):
    """The process dies before any later commit: the store still holds the start records,
    and the instances reach the same outcome from there."""
    db = tmp_path / "run.db"
    store = Counting(db)
    eng = bpm.Engine(store=store)
    eng.start_many(one_timer(), [{"n": n} for n in range(3)])
    store.refuse_commits = True
    with pytest.raises(bpm.StoreError):
        eng.advance("PT1H")
    store.close()
    again = recover(db, one_timer())
    assert again.now < eng.now  # the clock of the last committed command
    again.advance("P2D")
    assert [(i.id, i.state, i.data) for i in again.instances()] == [
        (f"i{n + 1}", "completed", {"n": n}) for n in range(3)]


def test_a_write_refused_inside_a_group_keeps_that_instance_resident_alone(tmp_path):
    store = Counting(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.start_many(one_timer(), [None] * 3)
    store.refuse_put = "i2"
    eng.run(until=eng.now)
    assert [i.residency for i in eng.instances()] == ["dehydrated", "resident", "dehydrated"]
    assert [(f.instance, f.details) for f in eng.facts if f.kind == "checkpoint_failed"] == [
        ("i2", {"cause": "OSError"})]
    store.refuse_put = None
    eng.advance("P2D")
    assert [i.state for i in eng.instances()] == ["completed"] * 3 and len(store) == 0


def test_a_trigger_for_an_instance_whose_checkpoint_is_not_committed_is_refused(tmp_path):
    """Recording it beside a checkpoint that will be written again later would let that
    write drop it: the call changes nothing, and succeeds once the commit went through."""
    store = Counting(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.start(catch(), {"order": "o1"})
    store.refuse_commits = True
    with pytest.raises(bpm.StoreError):
        eng.run(until=eng.now)
    with pytest.raises(bpm.EngineError, match="not committed the checkpoint of instance 'i1'"):
        eng.publish_message("paid", key="o1")
    assert eng.instance("i1").residency == "dehydrated"
    store.refuse_commits = False
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1") == "i1"
    eng.run()
    assert eng.instance("i1").state == "completed"


def test_a_long_run_commits_every_group_of_writes(tmp_path, monkeypatch):
    """Writes beyond ``journal.GROUP`` are committed as the run goes, so what the engine
    keeps in memory for the open group stays bounded."""
    monkeypatch.setattr(journal, "GROUP", 4)
    store = Counting(tmp_path / "run.db")
    eng = bpm.Engine(store=store)
    eng.start_many(one_timer(), [None] * 10)
    store.commits = 0
    eng.run(until=eng.now)
    assert store.commits == 3  # after 4 and 8 writes, and at the end
    assert len(eng._state.core.journal.unsynced) == 0 and len(store) == 10


def test_start_many_is_one_command_in_the_history_and_replays():
    """The history names it with its items; a rewind to the beginning and a replay give
    the same instances and facts."""
    eng = bpm.Engine()
    eng.start_many(one_timer(), [{"n": 1}, {"n": 2}])
    eng.advance("P2D")
    assert [(c.name, c.args[1:]) for c in eng.history()] == [
        ("start_many", ([{"n": 1}, {"n": 2}],)), ("advance", ())]
    before = [(f.kind, f.instance, f.node, f.details) for f in eng.facts]
    eng.rewind(0)
    assert eng.instances() == []
    eng.replay()
    after = [(f.kind, f.instance, f.node, f.details) for f in eng.facts]
    assert after[-len(before):] == before
    assert [(i.id, i.state) for i in eng.instances()] == [("i1", "completed"),
                                                         ("i2", "completed")]


class LosesGroup(bpm.SQLiteStore):
    """A store where writing one instance makes SQLite roll the whole open transaction back
    (as an I/O error or a full disk can), then fails."""

    lose_at: str | None = None

    def put(self, instance, doc, meta=None):
        if instance == self.lose_at and self.in_group():
            self.lose_at = None
            self._db.execute("ROLLBACK")
            raise sqlite3.OperationalError("disk I/O error")
        super().put(instance, doc, meta)


def test_a_group_sqlite_rolled_back_is_written_again_and_nothing_is_lost(tmp_path):
    """The third write takes the first two down with it: that instance stays resident, the
    group is written again before it commits, and a restart finds all five where they were."""
    db = tmp_path / "run.db"
    store = LosesGroup(db)
    eng = bpm.Engine(store=store)
    eng.start_many(one_timer(), [{"n": n} for n in range(5)])
    store.lose_at = "i3"
    eng.run(until=eng.now)
    assert [i.residency for i in eng.instances()] == [
        "dehydrated", "dehydrated", "resident", "dehydrated", "dehydrated"]
    stored = {iid: json.loads(store.get(iid))["tracks"][0]["node"] for iid in store.ids()}
    assert stored == {"i1": "wait", "i2": "wait", "i3": "s", "i4": "wait", "i5": "wait"}
    store.close()
    again = recover(db, one_timer())
    assert [i.residency for i in again.instances()] == ["dehydrated"] * 5
    again.advance("P2D")
    assert [(i.state, i.data) for i in again.instances()] == [
        ("completed", {"n": n}) for n in range(5)]
    assert [f.kind for f in again.facts].count("instance_started") == 0
