"""Checkpoint capture: a versioned JSON document that decodes back to the same thing."""

import json

import pytest

import gobpm_nb as bpm
from gobpm_nb.engine.durability.checkpoint import read, track_doc
from gobpm_nb.persist import codec


def every_wait():
    p = bpm.Process("waits")
    p.start("s")
    p.parallel_gateway("fork")
    p.timer_catch("timer", duration="P2D")
    p.message_catch("msg", message="m", key="k")
    p.signal_catch("sig", signal="go")
    p.conditional_catch("cond", condition="flag == 1")
    p.user_task("task")
    p.timer_boundary("tb", attached_to="task", cycle="R3/PT10H", interrupting=False)
    p.message_boundary("mb", attached_to="task", message="stop", key="k")
    p.signal_boundary("sb", attached_to="task", signal="halt")
    p.conditional_boundary("cb", attached_to="task", condition="flag == 2")
    p.receive_task("recv", message="r", key="k")
    p.service_task("job", topic="work")
    p.event_gateway("race")
    p.timer_catch("arm_t", duration="PT5H")
    p.message_catch("arm_m", message="am", key="k")
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "fork")
    for w in ("timer", "msg", "sig", "cond", "task", "recv", "job", "race"):
        p.flow("fork", w)
    for w in ("timer", "msg", "sig", "cond", "task", "recv", "job", "arm_t", "arm_m"):
        p.flow(w, "join")
    p.flow("race", "arm_t")
    p.flow("race", "arm_m")
    p.flow("join", "e")
    for b in ("tb", "mb", "sb", "cb"):
        p.end(f"after_{b}")
        p.flow(b, f"after_{b}")
    return p


def parked():
    eng = bpm.Engine()
    inst = eng.start(every_wait(), {"k": "key-1", "flag": 0})
    eng.advance("PT1M")
    eng.publish_message("m", key="key-1")  # one branch reaches the join and waits there
    eng.advance("PT1M")
    return eng, inst


def test_a_checkpoint_holds_the_wait_state_of_every_element():
    """Each live track records what it waits for; boundaries keep their recorded deadlines."""
    eng, inst = parked()
    doc = inst.checkpoint()
    assert doc["schema"] == 2 and doc["process"]["id"] == "waits"
    holds = [t["wait"].pop("hold") for t in doc["tracks"] if "hold" in (t["wait"] or {})]
    holds += [a.pop("hold") for t in doc["tracks"] for a in (t["wait"] or {}).get("arms", [])]
    holds += [a.pop("hold") for t in doc["tracks"] for a in t["boundaries"].values()
              if "hold" in a]
    assert len(set(holds)) == len(holds) == 9  # the order each was armed in
    # a conditional wait has no hold, but the same sequence orders it (checked in that order)
    orders = [t["wait"].pop("order") for t in doc["tracks"]
              if (t["wait"] or {}).get("kind") == "conditional"]
    orders += [a.pop("order") for t in doc["tracks"] for a in t["boundaries"].values()
               if a.get("kind") == "conditional"]
    assert len(orders) == 2 and len(set(holds + orders)) == 11
    waits = {t["node"]: t["wait"] for t in doc["tracks"]}
    assert waits["timer"] == {"kind": "timer", "deadline": "2026-01-03T00:00:00Z",
                              "armed": "2026-01-01T00:00:00Z", "cycles": None}
    assert waits["sig"] == {"kind": "signal", "name": "go"}
    assert waits["cond"] == {"kind": "conditional", "last": False}
    assert waits["task"] == {"kind": "task", "task": "i1:task:1",
                             "created": "2026-01-01T00:00:00Z"}
    assert waits["recv"] == {"kind": "message", "name": "r", "key": '"key-1"'}
    assert waits["job"] == {"kind": "job", "job": "i1:job:1", "topic": "work"}
    assert [a["node"] for a in waits["race"]["arms"]] == ["arm_t", "arm_m"]
    assert waits["join"] == {"kind": "join"}
    task = [t for t in doc["tracks"] if t["node"] == "task"][0]
    assert task["boundaries"]["tb"] == {"kind": "timer", "deadline": "2026-01-01T10:00:00Z",
                                        "armed": "2026-01-01T00:00:00Z", "cycles": 2}
    assert set(task["boundaries"]) == {"tb", "mb", "sb", "cb"}
    at_join = [t["id"] for t in doc["tracks"] if t["node"] == "join"]
    assert list(doc["joins"]["join"].values()) == [at_join]
    json.dumps(doc)


def test_encode_decode_round_trip_keeps_every_field():
    """decode(encode(doc)) gives back the document, and reading it rebuilds every wait."""
    eng, inst = parked()
    doc = inst.checkpoint()
    back = codec.decode(codec.encode(doc), "i1")
    assert back == json.loads(json.dumps(doc))
    assert codec.encode(back) == codec.encode(doc)
    image = read(back, "i1")
    orders = {t["id"]: t for t in doc["tracks"]}
    for tr in image.tracks:
        holds = {(w.node, kind, w.kind): w.order
                 for kind, ws in (("node", [tr.wait]), ("boundary", tr.boundaries.values()))
                 for w in ws if w is not None and w.holdable and w.order is not None}
        holds.update({(a.node, "node", a.kind): a.order for a in getattr(tr.wait, "arms", ())
                      if a.holdable})
        assert track_doc(tr, holds) == orders[tr.id]


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("data"), "data"),
    (lambda d: d.update(schema=9), "schema"),
    (lambda d: d["tracks"][0].update(state="flying"), "tracks[0].state"),
    (lambda d: d["tracks"][0]["wait"].update(deadline="soon"), "tracks[0].wait.deadline"),
    (lambda d: d["seq"].update(track="x"), "seq.track"),
    (lambda d: d["tracks"][0].update(id="t" + "9" * 5000), "tracks[0].id"),
    (lambda d: d["tracks"][1].update(id=d["tracks"][0]["id"]), "tracks[1].id"),
])
def test_a_corrupt_document_raises_checkpoint_error_naming_the_field(mutate, field):
    """decode refuses a damaged document and names the instance and the field."""
    eng, inst = parked()
    doc = inst.checkpoint()
    doc["tracks"].sort(key=lambda t: t["node"] != "timer")
    mutate(doc)
    with pytest.raises(bpm.CheckpointError) as err:
        read(codec.decode(json.dumps(doc).encode(), "i1"), "i1")
    assert err.value.instance == "i1" and err.value.field == field


def test_garbage_bytes_raise_checkpoint_error():
    """Bytes that are not JSON are a CheckpointError, not a crash."""
    with pytest.raises(bpm.CheckpointError, match="i9"):
        codec.decode(b"\x00not json", "i9")


# -- integers JSON text cannot hold --------------------------------------------------------
HUGE = 10 ** 5000  # more digits than Python converts to or from text (4,300 by default)


def with_task():
    p = bpm.Process("big")
    p.start("s")
    p.user_task("work")
    p.end("e")
    p.flow("s", "work", "e")
    return p


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("dehydrate", [True, False])
@pytest.mark.parametrize("how", ["start", "start_many"])
def test_start_data_with_an_integer_json_cannot_hold_is_refused_and_uses_no_id(
        tmp_path, store, dehydrate, how):
    """An integer past the digit limit of JSON text is refused where it enters, with an
    EngineError naming the field, dehydration on or off; nothing changed, no id used."""
    kept = bpm.SQLiteStore(tmp_path / "run.db") if store == "sqlite" else bpm.MemoryStore()
    eng = bpm.Engine(store=kept, dehydrate=dehydrate)
    with pytest.raises(bpm.EngineError, match=r"\.n is an integer of more than \d+ digits"):
        if how == "start":
            eng.start(with_task(), {"n": HUGE})
        else:
            eng.start_many(with_task(), [{}, {"n": HUGE}])
    assert eng.instances() == [] and kept.ids() == []
    assert eng.start(with_task(), {"n": -(10 ** 4299)}).id == "i1"  # 4,300 digits: held
    eng.advance("PT1M")
    assert eng.instance("i1").data == {"n": -(10 ** 4299)}


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_script_returning_an_integer_json_cannot_hold_ends_the_same_dehydrated_or_not(
        dehydrate):
    """A script whose result holds such an integer is an incident at the script, with
    dehydration on as off (on, its checkpoint could not have been written)."""
    p = bpm.Process("grow")
    p.start("s")
    p.script_task("grow", fn=lambda d: {"n": HUGE})
    p.user_task("work")
    p.end("e")
    p.flow("s", "grow", "work", "e")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p)
    eng.advance("PT1M")
    assert inst.state == "failed" and inst.data == {}
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "grow" and "data.n is an integer" in incident.details["cause"]


def test_a_checkpoint_the_codec_cannot_encode_is_refused_like_a_store_failure(
        tmp_path, monkeypatch):
    """Should a document still not encode, the write is refused as a failed store write is:
    a start raises EngineError and uses no id; a quiet point keeps its instance resident
    with a ``checkpoint_failed`` fact. No raw ValueError leaves a command."""
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"))
    good = codec.encode

    def refuse(doc):
        raise ValueError("cannot encode")
    monkeypatch.setattr(codec, "encode", refuse)
    with pytest.raises(bpm.EngineError, match="not started"):
        eng.start(with_task())
    monkeypatch.setattr(codec, "encode", good)
    inst = eng.start(with_task())
    assert inst.id == "i1"
    monkeypatch.setattr(codec, "encode", refuse)
    eng.advance("PT1M")
    assert inst.residency == "resident"
    assert [(f.instance, f.details) for f in eng.facts if f.kind == "checkpoint_failed"] == [
        ("i1", {"cause": "ValueError"})] * 2


def test_reading_fields_together_takes_and_refuses_what_reading_one_does():
    """``Reader.fields`` (several fields in one call, on a wake's hot path) gives each value
    ``Reader.get`` gives, and refuses each value it refuses with the same message: missing
    fields, wrong types, bool for int, a dict subclass, bad and out-of-range times, track ids."""
    from collections import OrderedDict

    from gobpm_nb.engine.state.fields import CHECKS, Reader
    from gobpm_nb.errors import CheckpointError

    values = [None, True, 0, 7, -1, "", "x", "t1", "t0", "t01", [], ["t1"], {}, OrderedDict(),
              "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+02:00", "not a time",
              "0001-01-01T00:00:00+01:00", 1.5]
    r = Reader("i1")

    def outcome(fn):
        try:
            return ("ok", fn())
        except CheckpointError as exc:
            return ("error", str(exc))

    for kind in CHECKS:
        for v in values:
            for obj in ({"f": v}, {}, OrderedDict(f=v)):
                one = outcome(lambda obj=obj, kind=kind: r.get(obj, "f", kind, "w"))
                many = outcome(lambda obj=obj, kind=kind: r.fields(obj, "w", (("f", kind),))[0])
                assert one == many, (kind, v, obj)
