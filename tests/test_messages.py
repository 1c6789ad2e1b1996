"""Messages and signals: correlation, buffering with a time-to-live, de-duplication, broadcast."""

import pytest
from conftest import ended_at, kinds, snapshot

import gobpm_nb as bpm


def waiting(kind="message_catch"):
    p = bpm.Process("pay")
    p.start("s")
    if kind == "message_catch":
        p.message_catch("w", message="paid", key="order")
    else:
        p.receive_task("w", message="paid", key="order")
    p.end("e")
    p.flow("s", "w", "e")
    return p


@pytest.mark.parametrize("kind", ["message_catch", "receive_task"])
def test_a_message_reaches_only_the_instance_whose_key_matches(kind):
    """Correlation is by name plus key: the right key delivers and binds the payload."""
    eng = bpm.Engine()
    a = eng.start(waiting(kind), {"order": "o-1"})
    b = eng.start(waiting(kind), {"order": "o-2"})
    eng.run()
    assert eng.publish_message("paid", key="o-2", payload={"sum": 7}) == b.id
    eng.run()
    assert b.state == "completed" and b.data == {"order": "o-2", "sum": 7}
    assert a.state == "active" and a.data == {"order": "o-1"}


def test_a_message_for_nobody_is_dropped_with_a_fact():
    """No subscription and no ttl: a message_dropped fact names the message."""
    eng = bpm.Engine()
    assert eng.publish_message("paid", key="x") is None
    f = eng.facts[-1]
    assert f.kind == "message_dropped" and f.details == {"message": "paid",
                                                         "reason": "no subscriber"}


def test_a_message_with_a_ttl_waits_for_the_first_subscription_that_opens():
    """A buffered message is delivered to a subscription opened before it expires."""
    eng = bpm.Engine()
    eng.publish_message("paid", key="o-1", payload={"sum": 3}, ttl="PT1H")
    eng.advance("PT30M")
    inst = eng.start(waiting(), {"order": "o-1"})
    eng.run()
    assert inst.state == "completed" and inst.data["sum"] == 3
    assert "message_dropped" not in kinds(eng)


def test_a_buffered_message_expires_after_its_ttl():
    """After the ttl the message is dropped; a later subscription waits."""
    eng = bpm.Engine()
    eng.publish_message("paid", key="o-1", ttl="PT1H")
    eng.advance("PT2H")
    assert eng.facts[-1].details == {"message": "paid", "reason": "ttl expired"}
    inst = eng.start(waiting(), {"order": "o-1"})
    eng.run()
    assert inst.state == "active"


def test_a_redelivered_message_id_is_ignored():
    """The same message_id twice: the second is dropped as a duplicate."""
    eng = bpm.Engine()
    a = eng.start(waiting(), {"order": "o-1"})
    b = eng.start(waiting(), {"order": "o-1"})
    eng.run()
    assert eng.publish_message("paid", key="o-1", message_id="m1") == a.id
    assert eng.publish_message("paid", key="o-1", message_id="m1") is None
    eng.run()
    assert a.state == "completed" and b.state == "active"
    dropped = [f.details["reason"] for f in eng.facts if f.kind == "message_dropped"]
    assert dropped == ["duplicate message id"]


def test_correlation_keys_keep_their_type():
    """Key 7 and key "7" are different correlation values."""
    eng = bpm.Engine()
    inst = eng.start(waiting(), {"order": 7})
    eng.run()
    assert eng.publish_message("paid", key="7") is None
    assert eng.publish_message("paid", key=7) == inst.id


def test_a_signal_reaches_every_waiting_subscriber():
    """broadcast_signal wakes all instances waiting on that signal name."""
    p = bpm.Process("sig")
    p.start("s")
    p.signal_catch("w", signal="go")
    p.end("e")
    p.flow("s", "w", "e")
    eng = bpm.Engine()
    insts = [eng.start(p) for _ in range(3)]
    eng.run()
    assert eng.broadcast_signal("go", {"when": "now"}) == 3
    eng.run()
    assert all(i.state == "completed" and i.data == {"when": "now"} for i in insts)
    assert eng.broadcast_signal("go") == 0


def test_throw_events_send_messages_and_signals_between_instances():
    """A message throw correlates to another instance; a signal throw reaches every waiter."""
    sender = bpm.Process("sender")
    sender.start("s")
    sender.message_throw("tell", message="paid", key="order", payload=["sum"])
    sender.signal_throw("shout", signal="go")
    sender.end("e")
    sender.flow("s", "tell", "shout", "e")
    listener = bpm.Process("listener")
    listener.start("s")
    listener.signal_catch("w", signal="go")
    listener.end("e")
    listener.flow("s", "w", "e")
    eng = bpm.Engine()
    r = eng.start(waiting(), {"order": "o-9"})
    li = eng.start(listener)
    eng.run()
    eng.start(sender, {"order": "o-9", "sum": 12})
    eng.run()
    assert r.state == "completed" and r.data["sum"] == 12
    assert li.state == "completed"


def test_a_missing_correlation_field_fails_the_instance_with_an_incident():
    """A message wait whose key field is absent from the data is an incident naming it."""
    eng = bpm.Engine()
    inst = eng.start(waiting(), {})
    eng.run()
    assert inst.state == "failed"
    f = [f for f in eng.facts if f.kind == "incident"][0]
    assert f.node == "w" and "order" in f.details["cause"]


@pytest.mark.parametrize("call", [
    lambda e: e.publish_message("", key="x"),
    lambda e: e.publish_message("paid", key="x", payload=[1]),
    lambda e: e.publish_message("paid", key="x", payload={"f": object()}),
    lambda e: e.publish_message("paid", key="x", ttl="forever"),
    lambda e: e.publish_message("paid", key={1, 2}),
    lambda e: e.broadcast_signal(None),
])
def test_malformed_messages_are_refused_without_changing_anything(call):
    """A bad name, payload, key or ttl raises EngineError and leaves the engine as it was."""
    eng = bpm.Engine()
    eng.start(waiting(), {"order": "o-1"})
    eng.run()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError):
        call(eng)
    assert snapshot(eng) == before


def test_ended_at_receive():
    """A receive task completes when its message arrives."""
    eng = bpm.Engine()
    inst = eng.start(waiting("receive_task"), {"order": 1})
    eng.run()
    eng.publish_message("paid", key=1)
    eng.run()
    assert ended_at(inst) == ["e"]


def test_a_message_throw_whose_key_field_is_missing_says_so_like_a_wait():
    """A message throw's key naming an absent field: the incident says 'names missing field'
    as a wait's does (it said "raised KeyError: 'order'")."""
    p = bpm.Process("tell")
    p.start("s")
    p.message_throw("t", message="paid", key="order")
    p.end("e")
    p.flow("s", "t", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {})
    eng.run()
    assert inst.state == "failed"
    [incident] = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "t"
    assert incident.details["cause"] == "correlation key 'order' names missing field 'order'"
