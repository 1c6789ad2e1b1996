import pytest

import gobpm_nb as bpm


@pytest.fixture
def eng():
    return bpm.Engine(dehydrate=False)


def approval():
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
    p.end("done")
    p.end("escalated")
    p.flow("start", "approve", "done")
    p.flow("late", "escalated")
    return p.validate()


def ended_at(inst):
    """The nodes where completed tracks ended, in track order."""
    return [t.node for t in inst.tracks if t.state == "completed"]


def left(eng, inst):
    """The nodes an instance left, in order (its node completions)."""
    return [f.node for f in eng.facts if f.kind == "node_left" and f.instance == inst.id]


def snapshot(eng):
    """Everything a user can read of the engine, to check that a refused call changed nothing."""
    return ([f.as_dict() for f in eng.facts], eng.holders(), eng.tasks(), eng.now,
            [(i.id, i.state, i.residency, i.tracks, i.data) for i in eng.instances()])


def kinds(eng, inst=None):
    return [f.kind for f in eng.facts if inst is None or f.instance == inst.id]
