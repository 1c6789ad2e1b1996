"""The SQLite store's fast path: a checkpoint skips the journal delete of an instance with no
recorded triggers, and new files keep meta rows in their key's b-tree. What a store holds, and
what a restart recovers, stay the same."""

import json
import sqlite3

import pytest
from conftest import recover
from hypothesis import given
from hypothesis import strategies as st

import gobpm_nb as bpm
from gobpm_nb.persist import codec


def catch_then_task():
    p = bpm.Process("pay")
    p.start("s")
    p.message_catch("wait", message="paid", key="order")
    p.user_task("ship")
    p.end("e")
    p.flow("s", "wait", "ship", "e")
    return p


def test_a_recorded_trigger_is_dropped_by_its_instances_next_checkpoint(tmp_path):
    """The message wakes a dehydrated instance; the checkpoint at its task drops the entry,
    the other instance's checkpoints leave theirs alone, and a restart delivers nothing."""
    db = tmp_path / "run.db"
    store = bpm.SQLiteStore(db)
    eng = bpm.Engine(store=store)
    eng.start(catch_then_task(), {"order": "o1"})
    eng.start(catch_then_task(), {"order": "o2"})
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1") == "i1"
    assert [iid for iid, _ in store.journal()] == ["i1"]
    eng.run()
    assert store.journal() == [] and [t.id for t in eng.tasks()] == ["i1:ship:1"]
    store.close()
    eng = recover(db, catch_then_task())
    eng.run()
    assert [t.id for t in eng.tasks()] == ["i1:ship:1"]
    assert eng.instance("i2").residency == "dehydrated"


def test_entries_recorded_before_a_crash_are_dropped_after_recovery(tmp_path):
    """A fresh store reads which instances have entries: the first checkpoint after the
    replay drops them, so a second restart does not deliver the message again."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(catch_then_task(), {"order": "o1"})
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1", payload={"n": 1}) == "i1"
    eng.store.close()  # the crash: the first engine is gone
    store = bpm.SQLiteStore(db)
    eng = bpm.Engine.recover(store, processes=[catch_then_task()])
    eng.run()
    assert store.journal() == [] and [t.id for t in eng.tasks()] == ["i1:ship:1"]
    store.close()
    eng = recover(db, catch_then_task())
    eng.run()
    assert [t.id for t in eng.tasks()] == ["i1:ship:1"]
    assert eng.instance("i1").data == {"order": "o1", "n": 1}


def test_an_ended_instances_entries_leave_with_its_checkpoint(tmp_path):
    """The delete of a finished instance drops its entries too."""
    db = tmp_path / "run.db"
    store = bpm.SQLiteStore(db)
    eng = bpm.Engine(store=store)
    inst = eng.start(catch_then_task(), {"order": "o1"})
    eng.advance("PT1M")
    eng.publish_message("paid", key="o1")
    eng.run()
    eng.complete_task("i1:ship:1")
    eng.run()
    assert inst.state == "completed" and store.journal() == [] and len(store) == 0


def test_a_failed_checkpoint_write_keeps_the_entries(tmp_path):
    """The transaction fails after the delete of the entries: it is rolled back, the
    entries stay, and the next checkpoint of the instance still drops them."""
    store = bpm.SQLiteStore(tmp_path / "run.db")
    store.record([("i1", "{}"), ("i2", "{}")])
    with pytest.raises(sqlite3.Error):
        store.put("i1", b"{}", {"broken": object()})  # type: ignore[dict-item]
    assert store.journal() == [("i1", "{}"), ("i2", "{}")]
    store.put("i1", b"{}")
    assert store.journal() == [("i2", "{}")]
    store.put("i1", b"{}")
    store.delete("i2")
    assert store.journal() == [] and store.ids() == ["i1"]


def test_a_file_in_the_earlier_layout_is_read_and_written_as_before(tmp_path):
    """A store file whose meta table has rowids (as earlier versions made it): the same
    statements run on it, it keeps its layout, and an engine recovers from it."""
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE checkpoints (instance TEXT PRIMARY KEY, doc BLOB NOT NULL)")
        raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        raw.execute("CREATE TABLE journal (n INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "instance TEXT NOT NULL, entry TEXT NOT NULL)")
    raw.close()
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(catch_then_task(), {"order": "o1"})
    eng.advance("PT1M")
    assert eng.publish_message("paid", key="o1") == "i1"
    eng.store.close()
    eng = recover(db, catch_then_task())
    eng.run()
    assert [t.id for t in eng.tasks()] == ["i1:ship:1"]
    assert eng.store.journal() == []
    with sqlite3.connect(db) as raw:
        sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'meta'").fetchone()
    raw.close()
    assert "WITHOUT ROWID" not in sql[0]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(doc=st.dictionaries(st.text(), json_values, max_size=6))
def test_a_checkpoint_is_encoded_as_compact_json_writes_it(doc):
    """The codec's encoder, made once, writes the bytes ``json.dumps`` would (compact,
    ASCII, in the order built), and refuses what JSON cannot hold."""
    assert codec.encode(doc) == json.dumps(doc, separators=(",", ":"),
                                           allow_nan=False).encode()
    with pytest.raises(ValueError):
        codec.encode({**doc, "x": float("nan")})
