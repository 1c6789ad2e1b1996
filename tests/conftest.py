import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import gobpm_nb as bpm

sys.path.insert(0, str(Path(__file__).parent / "scenarios"))
from recovery_processes import approval  # noqa: E402, F401  (shared with the crash script)

# Hypothesis's per-example deadline (200 ms by default) and its "too slow" health check are
# wall time: on a loaded machine a correct property test would fail for being slow.
# `HYPOTHESIS_PROFILE=ci` (what .ci/run sets): the same examples on every run, so that whether a
# submission passes never depends on a draw; a plain `pytest` draws new ones each time (and
# `--hypothesis-seed=N` reproduces a run), which is how new findings are looked for.
settings.register_profile("gobpm_nb", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("gobpm_nb"), derandomize=True,
                          database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gobpm_nb"))


@pytest.fixture
def eng():
    return bpm.Engine(dehydrate=False)


def ended_at(inst):
    """The nodes where completed tracks ended, in track order."""
    return [t.node for t in inst.tracks if t.state == "completed"]


def left(eng, inst):
    """The nodes an instance left, in order (its node completions)."""
    return [f.node for f in eng.facts if f.kind == "node_left" and f.instance == inst.id]


class Down(bpm.MemoryStore):
    """A memory store whose ``get`` raises OSError while ``down`` is set."""

    down = False

    def get(self, instance):
        if self.down:
            raise OSError("store down")
        return super().get(instance)


def snapshot(eng):
    """Everything a user can read of the engine, to check that a refused call changed nothing."""
    return ([f.as_dict() for f in eng.facts], eng.holders(), eng.tasks(), eng.now,
            [(i.id, i.state, i.residency, i.tracks, i.data) for i in eng.instances()])


def recover(path, *processes):
    """A fresh engine recovered from the SQLite file at ``path``."""
    return bpm.Engine.recover(bpm.SQLiteStore(path), processes=list(processes))


def catch(message="paid"):
    """start -> a message catch keyed by the ``order`` field -> end."""
    p = bpm.Process("pay")
    p.start("s")
    p.message_catch("wait", message=message, key="order")
    p.end("e")
    p.flow("s", "wait", "e")
    return p


def kinds(eng, inst=None):
    return [f.kind for f in eng.facts if inst is None or f.instance == inst.id]


async def ticks_until(done, wall=20.0):
    """Let a playing dashboard's ticks run until ``done()`` holds; fail after ``wall`` seconds
    of wall time. A test of play waits for the virtual progress it asserts, never for a fixed
    time: a loaded machine runs fewer ticks a second, never other ones."""
    import asyncio

    from gobpm_nb.ui.views import TICK

    for _ in range(int(wall / TICK)):
        await asyncio.sleep(TICK)
        if done():
            return
    pytest.fail(f"play did not get there in {wall} s of wall time")


def pytest_collection_modifyitems(items):
    """Every notebook cell that nbval runs is ``slow``: ``pytest -m "not slow"`` leaves the
    notebooks to the full run."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
