"""Deployment: versions, and refusing invalid processes and bad starts."""

import pytest
from conftest import snapshot

import gobpm_nb as bpm


def simple(duration="PT1H"):
    p = bpm.Process("v")
    p.start("s")
    p.timer_catch("t", duration=duration)
    p.end("e")
    p.flow("s", "t", "e")
    return p


def test_a_changed_definition_deploys_as_the_next_version_and_instances_stay_pinned():
    """Same graph, same version; a changed graph is version 2; old instances keep version 1."""
    eng = bpm.Engine()
    a = eng.start(simple())
    b = eng.start(simple())
    c = eng.start(simple("PT5H"))
    assert (a.version, b.version, c.version) == (1, 1, 2)
    eng.run()
    assert a.state == b.state == c.state == "completed"


def test_instance_ids_are_sequential_or_given():
    """Ids are i1, i2… unless the caller gives a key; a used key is refused."""
    eng = bpm.Engine()
    assert eng.start(simple()).id == "i1"
    assert eng.start(simple(), key="order-7").id == "order-7"
    assert eng.start(simple()).id == "i2"
    with pytest.raises(bpm.EngineError, match="order-7"):
        eng.start(simple(), key="order-7")


@pytest.mark.parametrize("call, error", [
    (lambda e: e.start(bpm.Process("empty")), bpm.ModelError),
    (lambda e: e.start(simple(), data=[1]), bpm.EngineError),
    (lambda e: e.start(simple(), data={"x": float("nan")}), bpm.EngineError),
    (lambda e: e.start("approval"), bpm.EngineError),
    (lambda e: e.instance("i99"), bpm.EngineError),
])
def test_starting_an_invalid_process_or_bad_data_changes_nothing(call, error):
    """An invalid process or bad data raises a typed error; the engine is exactly as before."""
    eng = bpm.Engine()
    eng.start(simple())
    eng.step()
    before = snapshot(eng)
    with pytest.raises(error):
        call(eng)
    assert snapshot(eng) == before


def test_every_error_is_a_gobpm_error():
    """ModelError, EngineError and CheckpointError share the GobpmError base."""
    assert issubclass(bpm.ModelError, bpm.GobpmError)
    assert issubclass(bpm.EngineError, bpm.GobpmError)
    assert issubclass(bpm.CheckpointError, bpm.GobpmError)


def test_the_public_surface():
    """The package exports exactly its public names."""
    assert sorted(bpm.__all__) == ["CheckpointError", "Engine", "EngineError", "Fact",
                                   "GobpmError", "Instance", "MemoryStore", "ModelError",
                                   "Process", "SQLiteStore"]
