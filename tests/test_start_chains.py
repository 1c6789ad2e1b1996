"""Instances that triggers create: a signal's or a timer's instance starts even when the
store refuses its first checkpoint (nobody could give the trigger again), and a process
that starts itself by its own throw stops with an incident instead of running for ever."""

import json

import pytest

import gobpm_nb as bpm


class Refusing(bpm.MemoryStore):
    """A durable memory store whose ``put`` raises OSError while ``fail`` is set."""

    durable = True
    fail = False

    def put(self, *args, **kwargs):
        if self.fail:
            raise OSError("disk full")
        return super().put(*args, **kwargs)


def waiting(start_kind: str) -> bpm.Process:
    p = bpm.Process("alarm")
    if start_kind == "signal":
        p.signal_start("s", signal="fire")
    else:
        p.timer_start("s", duration="PT1M")
    p.user_task("respond")
    p.end("e")
    p.flow("s", "respond", "e")
    return p


@pytest.mark.parametrize("start_kind", ["signal", "timer"])
def test_a_triggers_instance_starts_resident_when_the_store_refuses_it(start_kind):
    """The store refuses the new instance's checkpoint: the instance starts all the same,
    resident (a checkpoint_failed fact says why); once the store takes writes again its
    task completes as any other."""
    store = Refusing()
    eng = bpm.Engine(store=store)
    eng.deploy(waiting(start_kind))
    store.fail = True
    if start_kind == "signal":
        assert eng.broadcast_signal("fire", payload={"level": 2}) == 1
        eng.run(until=eng.now)
    else:
        eng.advance("PT1M")
    (inst,) = eng.instances()
    assert inst.state == "active" and inst.residency == "resident"
    assert "checkpoint_failed" in [f.kind for f in eng.facts]
    assert [t.node for t in eng.tasks()] == ["respond"]
    store.fail = False
    eng.complete_task(eng.tasks()[0].id, {})
    eng.run(until=eng.now)
    assert inst.state == "completed"


def self_starting(kind: str, wait: bool = False) -> bpm.Process:
    """A process that a signal (or a message) starts and that throws it again."""
    p = bpm.Process(f"self_{kind}")
    if kind == "signal":
        p.signal_start("s", signal="again")
        p.signal_throw("t", signal="again")
    else:
        p.message_start("s", message="again")
        p.message_throw("t", message="again")
    p.end("e")
    if wait:
        p.user_task("pause")
        p.flow("s", "pause", "t", "e")
    else:
        p.flow("s", "t", "e")
    return p


@pytest.mark.parametrize("kind", ["signal", "message"])
def test_a_process_that_starts_itself_by_its_throw_stops_at_the_limit(kind):
    """Each instance's throw starts the next one at the same instant: the chain stops at
    max_call_depth with an incident at the throw that would go further, naming the limit,
    and run(until=now) ends."""
    eng = bpm.Engine(max_call_depth=5)
    eng.deploy(self_starting(kind))
    if kind == "signal":
        eng.broadcast_signal("again")
    else:
        eng.publish_message("again")
    eng.run(until=eng.now)
    states = [i.state for i in eng.instances()]
    assert states == ["completed"] * 5 + ["failed"]
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.instance == eng.instances()[-1].id and incident.node == "t"
    assert "generation 6" in incident.details["cause"]
    assert "max_call_depth (5)" in incident.details["cause"]


def test_a_refused_broadcast_delivers_to_nobody():
    """The throw that would go past the limit is refused whole: an instance waiting for the
    same signal does not get it either."""
    eng = bpm.Engine(max_call_depth=2)
    eng.deploy(self_starting("signal", wait=True))
    listener = bpm.Process("listener")
    listener.start("s")
    listener.signal_catch("c", signal="again")
    listener.end("e")
    listener.flow("s", "c", "e")
    eng.broadcast_signal("again")  # generation 0 starts
    for _ in range(2):  # generations 0 and 1 throw: 1 and 2 start
        eng.run(until=eng.now)
        eng.complete_task(eng.tasks()[0].id, {})
    eng.run(until=eng.now)
    lone = eng.start(listener)
    eng.run(until=eng.now)
    eng.complete_task(eng.tasks()[0].id, {})  # generation 2 throws: refused
    eng.run(until=eng.now)
    assert lone.state == "active"
    assert [i.state for i in eng.instances() if i.process == "self_signal"] == \
        ["completed", "completed", "failed"]
    eng.broadcast_signal("again")  # a command's broadcast is generation 0 again
    eng.run(until=eng.now)
    assert lone.state == "completed"


def test_the_generation_survives_dehydration_and_a_restart(tmp_path):
    """An instance of the chain that waits keeps its generation in its checkpoint: after
    a restart its throw still counts from it."""
    store = bpm.SQLiteStore(tmp_path / "chain.db")
    eng = bpm.Engine(store=store, max_call_depth=3)
    proc = self_starting("signal", wait=True)
    eng.deploy(proc)
    eng.broadcast_signal("again")
    for _ in range(2):  # generations 0 and 1 pass their pause and throw
        eng.run(until=eng.now)
        eng.complete_task(eng.tasks()[0].id, {})
    eng.run(until=eng.now)
    (waiting_one,) = [i for i in eng.instances() if i.state == "active"]
    assert waiting_one.residency == "dehydrated"
    doc = json.loads(store.get(waiting_one.id))
    assert doc["generation"] == 2
    store.close()
    again = bpm.Engine.recover(bpm.SQLiteStore(tmp_path / "chain.db"), processes=[proc],
                               max_call_depth=3)
    again.complete_task(again.tasks()[0].id, {})  # generation 2 throws: 3 starts
    again.run(until=again.now)
    again.complete_task(again.tasks()[0].id, {})  # generation 3 throws: refused
    again.run(until=again.now)
    (failed,) = [i for i in again.instances() if i.state == "failed"]
    assert [f.instance for f in again.facts if f.kind == "incident"] == [failed.id]


def test_a_negative_generation_in_a_checkpoint_is_named(tmp_path):
    """A checkpoint whose generation is negative is corrupt: the wake fails naming the field,
    and the instance keeps its hold (nothing is lost)."""
    store = bpm.SQLiteStore(tmp_path / "n.db")
    eng = bpm.Engine(store=store)
    eng.deploy(self_starting("signal", wait=True))
    eng.broadcast_signal("again")
    eng.run(until=eng.now)
    (inst,) = eng.instances()
    doc = json.loads(store.get(inst.id))
    doc["generation"] = -1
    store.put(inst.id, json.dumps(doc).encode())
    eng.complete_task(eng.tasks()[0].id, {})
    eng.run(until=eng.now)
    failed = [f.details for f in eng.facts if f.kind == "wake_failed"]
    assert failed and failed[0]["cause"] == "CheckpointError"
    assert failed[0]["field"] == "generation"
    assert inst.state == "active" and "pause" in [h.node for h in eng.holders()]
