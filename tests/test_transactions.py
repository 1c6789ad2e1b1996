"""Transactions: a cancel end withdraws the tracks inside, compensates what completed inside
in reverse order and leaves by the cancel boundary; an error leaves as from a subprocess."""

import pytest

import gobpm_nb as bpm


def shop(ran, ending="cancel", dehydrate=True):
    """A transaction ``tx``: ``reserve`` and ``charge`` complete (each with a handler), a
    user task ``ship`` waits on a parallel branch, and the other branch ends at ``ending``."""
    p = bpm.Process("shop")
    p.start("s")
    with p.transaction("tx") as tx:
        tx.start("ts")
        tx.parallel_gateway("fork")
        for name in ("reserve", "charge"):
            tx.script_task(name, fn=lambda d, n=name: {n: True})
            tx.compensation_boundary(f"b_{name}", attached_to=name, handler=f"un{name}")
            tx.script_task(f"un{name}", fn=lambda d, n=name: ran.append(n) or {n: False},
                           for_compensation=True)
        tx.user_task("ship")
        tx.end("done")
        if ending == "cancel":
            tx.end("abort", cancel=True)
        else:
            tx.end("abort", error="broken")
        tx.flow("ts", "fork", "reserve", "charge", "abort")
        tx.flow("fork", "ship", "done")
    p.cancel_boundary("cancelled", attached_to="tx")
    p.error_boundary("failed", attached_to="tx", error="broken")
    p.end("ok")
    p.end("was_cancelled")
    p.end("was_failed")
    p.flow("s", "tx", "ok")
    p.flow("cancelled", "was_cancelled")
    p.flow("failed", "was_failed")
    return p.validate()


def ended_at(eng):
    return [f.node for f in eng.facts if f.kind == "track_state"
            and f.details.get("state") == "completed" and f.node.startswith(("ok", "was_"))]


def test_a_cancel_end_withdraws_compensates_and_leaves_by_the_cancel_boundary():
    """The waiting task is withdrawn, the completed activities are compensated latest first,
    and the token leaves by the cancel boundary."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(shop(ran), {})
    eng.run()
    assert ran == ["charge", "reserve"]
    assert eng.tasks() == [] and inst.state == "completed"
    assert ended_at(eng) == ["was_cancelled"]
    assert inst.data == {"reserve": False, "charge": False}
    cancelled = [f.details for f in eng.facts if f.kind == "transaction_cancelled"]
    assert cancelled == [{"withdrawn": 1, "activities": 2}]
    assert [t.state for t in inst.tracks if t.node == "ship"] == ["withdrawn"]


def test_an_error_in_a_transaction_leaves_by_the_error_boundary_without_compensation():
    """An error end inside a transaction is caught by its error boundary, as from a
    subprocess: nothing is compensated."""
    ran = []
    eng = bpm.Engine()
    inst = eng.start(shop(ran, ending="error"), {})
    eng.run()
    assert ran == [] and ended_at(eng) == ["was_failed"] and inst.state == "completed"


def test_a_transaction_that_completes_leaves_by_its_flow():
    """Without a cancel end reached, a transaction is a subprocess."""
    p = bpm.Process("plain_tx")
    p.start("s")
    with p.transaction("tx") as tx:
        tx.start("ts")
        tx.user_task("work")
        tx.end("te")
        tx.end("abort", cancel=True)
        tx.flow("ts", "work", "te")
    p.cancel_boundary("cancelled", attached_to="tx")
    p.end("ok")
    p.end("was_cancelled")
    p.flow("s", "tx", "ok")
    p.flow("cancelled", "was_cancelled")
    eng = bpm.Engine()
    inst = eng.start(p.validate(), {})
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert ended_at(eng) == ["ok"] and inst.state == "completed"


@pytest.mark.parametrize("dehydrate", [True, False])
def test_a_cancelled_transaction_waits_for_a_handler_that_is_a_user_task(dehydrate):
    """A handler that is a user task holds the cancellation; the instance dehydrates
    meanwhile (when it may) and leaves by the cancel boundary once the task is done."""
    p = bpm.Process("tx_wait")
    p.start("s")
    with p.transaction("tx") as tx:
        tx.start("ts")
        tx.script_task("charge", fn=lambda d: {"charged": True})
        tx.compensation_boundary("b", attached_to="charge", handler="refund")
        tx.user_task("refund", for_compensation=True)
        tx.end("abort", cancel=True)
        tx.flow("ts", "charge", "abort")
    p.cancel_boundary("cancelled", attached_to="tx")
    p.end("ok")
    p.end("was_cancelled")
    p.flow("s", "tx", "ok")
    p.flow("cancelled", "was_cancelled")
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(p.validate(), {})
    eng.run()
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    eng.complete_task(eng.tasks()[0].id, {"charged": False})
    eng.run()
    assert ended_at(eng) == ["was_cancelled"] and inst.data == {"charged": False}


def test_a_cancel_end_outside_a_transaction_is_refused():
    """A cancel end event belongs directly inside a transaction with a cancel boundary."""
    p = bpm.Process("bad")
    p.start("s")
    p.end("e", cancel=True)
    p.flow("s", "e")
    with pytest.raises(bpm.ModelError, match="not directly inside a transaction"):
        p.validate()
