"""A population run gives its own engine its commands through ``api.driving``
(``travel.driving``): the public commands' bodies without the envelope, which on an engine
keeping no history on a memory store only tells the watchers. Those commands leave the
engine as the public ones do, a watcher is still told, and any other engine is refused."""

import pytest

import gobpm_nb as bpm
from gobpm_nb.api import driving
from gobpm_nb.persist import SQLiteStore


def one_task():
    p = bpm.Process("desk")
    p.start("s")
    p.user_task("check")
    p.end("e")
    p.flow("s", "check", "e")
    return p


def quiet_engine(**options):
    return bpm.Engine(start="2026-01-05T09:00:00", keep_history=False, dehydrate=False,
                      **options)


def test_the_driving_handle_leaves_the_engine_as_the_public_commands_do():
    """Two engines, one driven by the public commands, one by a driving handle: the same facts, in
    the same order, at the same times, and the same clock and event count."""
    p = one_task()
    public, driven = quiet_engine(), quiet_engine()
    public.deploy(p)
    driven.deploy(p)
    handle = driving(driven)
    start = handle.starter(p)
    hour = 3_600_000_000
    t0 = handle.kernel.now
    ids = [public.start(p, data={"n": n}).id for n in range(3)]
    assert [start({"n": n}) for n in range(3)] == ids
    public.run(until=bpm.Engine(start="2026-01-05T10:00:00").now)
    handle.run_to(t0 + hour)
    for task in public.tasks()[:2]:
        public.complete_task(task.id)
    for task in driven.tasks()[:2]:
        handle.complete_task(task.id)
    public.run(until=bpm.Engine(start="2026-01-05T11:00:00").now)
    handle.run_to(t0 + 2 * hour)
    assert [f.as_dict() for f in driven.facts] == [f.as_dict() for f in public.facts]
    assert driven.now == public.now
    assert driven.stats() == public.stats()
    done = next(f for f in driven.facts if f.kind == "task_completed").details["task"]
    with pytest.raises(bpm.EngineError, match="already completed"):
        handle.complete_task(done)


def test_a_watcher_of_the_runs_engine_is_told_after_each_driving_command():
    """A dashboard opened on a run's engine watches it: each driving command tells it, as
    each public command would, a refused one too."""
    eng = quiet_engine()
    p = one_task()
    eng.deploy(p)
    handle = driving(eng)
    told = []
    eng.after_each_command(lambda: told.append(eng.now))
    start = handle.starter(p)
    start(None)
    handle.run_to(handle.kernel.now + 60_000_000)
    with pytest.raises(bpm.EngineError, match="unknown task"):
        handle.complete_task("nope")
    handle.complete_task(eng.tasks()[0].id)
    assert len(told) == 4


def test_the_driving_handle_refuses_an_engine_that_keeps_a_history_or_a_durable_store(tmp_path):
    """On an engine keeping its history, or on a durable store, the envelope records what
    a driving handle would skip: none is given."""
    with pytest.raises(bpm.EngineError, match="keeps no history"):
        driving(bpm.Engine())
    durable = bpm.Engine(SQLiteStore(str(tmp_path / "run.db")), keep_history=False)
    with pytest.raises(bpm.EngineError, match="not durable"):
        driving(durable)


def test_a_tap_hands_over_the_kinds_asked_as_the_log_keeps_them():
    """A tap sees only the facts of its kinds, each the tuple the log keeps (the facts'
    fields, in order), with nothing held back from the subscribers."""
    eng = quiet_engine(keep_facts=None)
    seen, tapped = [], []
    eng.subscribe(seen.append)
    driving(eng).tap(frozenset({"task_created", "instance_completed"}), tapped.append)
    inst = eng.start(one_task())
    eng.run()
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed"
    assert [f.kind for f in eng.facts] == [f.kind for f in seen]
    assert [tuple(f) for f in seen if f.kind in ("task_created", "instance_completed")] \
        == tapped
    assert [raw[2] for raw in tapped] == ["task_created", "instance_completed"]


def test_a_population_counts_every_case_it_simulated():
    """``simulated`` counts the warm-up's cases too; the summary's ``cases`` does not."""
    sc = bpm.Scenario(one_task(), start="2026-01-05T09:00:00", warmup="PT1H",
                      horizon="PT1H", arrivals={"replay": [{"at": "2026-01-05T09:30:00"},
                                                           {"at": "2026-01-05T10:30:00"},
                                                           {"at": "2026-01-05T10:45:00"}]},
                      durations={"check": {"fixed": "PT10M"}})
    pop = sc.run(progress=False)
    assert pop.simulated == 3
    assert pop.summary()["cases"] == 2
