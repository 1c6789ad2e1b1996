"""Multi-instance call activities: each inner instance calls one child; the body goes on when
the children have completed by the multi-instance rules; a boundary on the call activity
ends every child."""

import pytest

import gobpm_nb as bpm


def billing():
    """The called process: one user task, whose outputs are its data."""
    p = bpm.Process("billing")
    p.start("bs")
    p.user_task("bill")
    p.end("be")
    p.flow("bs", "bill", "be")
    return p


def orders(sequential=False, completion=None, boundary=False):
    p = bpm.Process("orders")
    p.start("s")
    p.call_activity("each", process="billing", outputs=["invoice"])
    p.multi_instance("each", sequential=sequential, collection="items", element="item",
                     output_collection="invoices", output_element="invoice",
                     completion=completion)
    p.end("e")
    p.flow("s", "each", "e")
    if boundary:
        p.message_boundary("cancel", attached_to="each", message="cancel", key="order")
        p.end("cancelled")
        p.flow("cancel", "cancelled")
    return p


def engine(dehydrate=True):
    eng = bpm.Engine(dehydrate=dehydrate)
    eng.deploy(billing())
    return eng


def bill(eng, task):
    """Complete a child's task with an invoice made from the item it was given."""
    child = eng.instance(task.instance)
    eng.complete_task(task.id, {"invoice": f"inv-{child.data['item']}"})
    eng.run()


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_parallel_multi_instance_call_starts_one_child_per_item(dehydrate):
    """Three items: three children at once, each given its item; completed in any order,
    the invoices come back in item order and the caller goes on."""
    eng = engine(dehydrate)
    inst = eng.start(orders(), {"items": ["a", "b", "c"]})
    eng.run()
    children = [eng.instance(t.instance) for t in eng.tasks()]
    assert len(children) == 3 and {c.parent for c in children} == {inst.id}
    assert [c.data["item"] for c in children] == ["a", "b", "c"]
    for task in reversed(eng.tasks()):
        bill(eng, task)
    assert inst.state == "completed" and inst.data["invoices"] == ["inv-a", "inv-b", "inv-c"]
    assert "invoice" not in inst.data  # each child's output stayed its inner instance's
    assert {c.state for c in children} == {"completed"}


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_sequential_multi_instance_call_starts_each_child_after_the_last_ended(dehydrate):
    """One child at a time, in item order; each starts when the one before has completed."""
    eng = engine(dehydrate)
    inst = eng.start(orders(sequential=True), {"items": ["a", "b", "c"]})
    eng.run()
    given = []
    while eng.tasks():
        (task,) = eng.tasks()
        given.append(eng.instance(task.instance).data["item"])
        bill(eng, task)
    assert given == ["a", "b", "c"]
    assert inst.state == "completed" and inst.data["invoices"] == ["inv-a", "inv-b", "inv-c"]


def test_a_completion_condition_ends_the_children_still_running():
    """Two of three invoices are enough: the third child is terminated with its task."""
    eng = engine()
    inst = eng.start(orders(completion="numberOfCompletedInstances >= 2"),
                     {"items": ["a", "b", "c"]})
    eng.run()
    tasks = eng.tasks()
    bill(eng, tasks[0])
    bill(eng, tasks[2])
    assert inst.state == "completed" and inst.data["invoices"] == ["inv-a", None, "inv-c"]
    assert eng.instance(tasks[1].instance).state == "terminated" and eng.tasks() == []


@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_boundary_on_a_multi_instance_call_ends_every_child(dehydrate):
    """A message boundary on the call activity fires while three children wait: every child
    is terminated, their tasks withdrawn, and the caller leaves by the boundary."""
    eng = engine(dehydrate)
    inst = eng.start(orders(boundary=True), {"items": ["a", "b", "c"], "order": "o-1"})
    eng.run()
    children = [eng.instance(t.instance) for t in eng.tasks()]
    bill(eng, eng.tasks()[0])  # one child is done already
    eng.publish_message("cancel", "o-1")
    eng.run()
    assert inst.state == "completed" and "cancelled" in [t.node for t in inst.tracks
                                                        if t.state == "completed"]
    assert [c.state for c in children] == ["completed", "terminated", "terminated"]
    assert eng.tasks() == [] and eng.holders() == []
    assert "invoices" not in inst.data


def test_a_multi_instance_call_recovers_with_its_children(tmp_path):
    """A caller with two children left recovers from SQLite beside them; completing them
    finishes the caller with every invoice."""
    db = tmp_path / "calls.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.deploy(billing())
    inst = eng.start(orders(), {"items": ["a", "b", "c"]})
    eng.run()
    bill(eng, eng.tasks()[1])
    eng.store.close()
    del eng
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[billing(), orders()])
    inst = eng.instance(inst.id)
    assert len(eng.tasks()) == 2
    for task in eng.tasks():
        bill(eng, task)
    assert inst.state == "completed" and inst.data["invoices"] == ["inv-a", "inv-b", "inv-c"]
    eng.store.close()


def test_a_loop_on_a_call_activity_calls_again_while_its_condition_holds():
    """A standard loop on a call activity: one child per run, until the outputs say stop."""
    p = bpm.Process("again")
    p.start("s")
    p.call_activity("each", process="billing", outputs=["invoice"])
    p.loop("each", condition="invoice != 'ok'", maximum=5)
    p.end("e")
    p.flow("s", "each", "e")
    eng = engine()
    inst = eng.start(p, {"invoice": None})
    eng.run()
    for answer in ("no", "no", "ok"):
        (task,) = eng.tasks()
        eng.complete_task(task.id, {"invoice": answer})
        eng.run()
    assert inst.state == "completed" and inst.data["invoice"] == "ok"
    assert [f.details for f in eng.facts if f.kind == "loop_ended"] == [
        {"iterations": 3, "reason": "condition"}]
