"""The approval example at the top of the README, as written."""

from conftest import approval, ended_at

import gobpm_nb as bpm


def test_completing_before_the_deadline_reaches_done_and_releases_the_boundary():
    """Completing the task within 24 h ends at `done` and withdraws the boundary hold."""
    eng = bpm.Engine()
    inst = eng.start(approval(), data={"amount": 120})
    eng.advance("PT1H")
    assert [(h.kind, h.wait_kind, h.node) for h in eng.holders()] == [
        ("task", "node", "approve"), ("timer", "boundary", "late")]
    eng.complete_task(eng.tasks()[0].id, {"approved": True})
    eng.run()
    assert inst.state == "completed"
    assert ended_at(inst) == ["done"]
    assert eng.holders() == []
    assert inst.data == {"amount": 120, "approved": True}
    released = [f.details["reason"] for f in eng.facts if f.kind == "wait_released"
                and f.node == "late"]
    assert released == ["withdrawn"]


def test_advancing_past_the_deadline_escalates_and_the_task_leaves_the_inbox():
    """Advancing 25 h fires the interrupting boundary: `escalated`, and no task is left."""
    eng = bpm.Engine()
    inst = eng.start(approval(), data={"amount": 120})
    eng.advance("PT25H")
    assert inst.state == "completed"
    assert ended_at(inst) == ["escalated"]
    assert eng.tasks() == []
    assert eng.holders() == []
    guarded, fork = inst.tracks
    assert guarded.state == "cancelled" and guarded.node == "approve"
    assert fork.parents == (guarded.id,) and fork.origin == "boundary"
    assert eng.now == bpm.Engine().now + __import__("datetime").timedelta(hours=25)
