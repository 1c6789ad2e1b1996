"""Conditional start events: of an event subprocess (armed while its scope runs, opened when
a data change makes its condition true) and of the process itself (an instance started by
``Engine.start_on_conditions``)."""

import pytest
from conftest import left, recover

import gobpm_nb as bpm


def watched(interrupting=True, condition="risk > 5"):
    """work (user task) -> more (user task), with an event subprocess of the process whose
    conditional start opens it on ``condition``: calm (user task) -> end."""
    p = bpm.Process("watched")
    p.start("s")
    p.user_task("work")
    p.user_task("more")
    p.end("e")
    p.flow("s", "work", "more", "e")
    with p.event_subprocess("watch") as ev:
        ev.conditional_start("hot", condition=condition, interrupting=interrupting)
        ev.user_task("calm")
        ev.end("ee")
        ev.flow("hot", "calm", "ee")
    return p


def complete(eng, node, outputs=None):
    """Complete the one task waiting at ``node``, then run."""
    (task,) = [t for t in eng.tasks() if t.node == node]
    eng.complete_task(task.id, outputs)
    eng.run()


def opened(eng, inst):
    """How many times the event subprocess opened (its tracks of origin ``event``)."""
    return sum(1 for t in inst.tracks if t.origin == "event")


# -- event subprocess starts ------------------------------------------------------------------

@pytest.mark.parametrize("dehydrate", [False, True])
def test_an_interrupting_conditional_start_cancels_the_scope_when_data_makes_it_true(
        dehydrate):
    """A data change that makes the condition true opens the event subprocess and cancels
    every other track of the process: the next task is never created."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(watched(), data={"risk": 1})
    eng.run()
    complete(eng, "work", {"risk": 2})
    assert [t.node for t in eng.tasks()] == ["more"]
    complete(eng, "more", {"risk": 9})  # the instance would have ended: it does not
    assert [t.node for t in eng.tasks()] == ["calm"]
    assert inst.state == "active" and opened(eng, inst) == 1
    complete(eng, "calm")
    assert inst.state == "completed"
    assert left(eng, inst) == ["s", "work", "more", "hot", "calm", "ee", "watch"]


def test_an_interrupting_conditional_start_cancels_a_task_still_waiting():
    """Raised by a task on one branch, the condition cancels the task waiting on the other."""
    p = bpm.Process("two")
    p.start("s")
    p.parallel_gateway("fork")
    p.script_task("raise", fn=lambda d: {"risk": 9})
    p.user_task("wait")
    p.end("e1")
    p.end("e2")
    p.flow("s", "fork", "wait", "e1")
    p.flow("fork", "raise", "e2")
    with p.event_subprocess("watch") as ev:
        ev.conditional_start("hot", condition="risk > 5")
        ev.end("ee")
        ev.flow("hot", "ee")
    eng = bpm.Engine()
    inst = eng.start(p, data={"risk": 0})
    eng.run()
    assert inst.state == "completed" and eng.tasks() == []
    states = {t.node: t.state for t in inst.tracks}
    assert states["wait"] == "cancelled" and states["ee"] == "completed"


@pytest.mark.parametrize("dehydrate", [False, True])
def test_a_non_interrupting_conditional_start_runs_beside_once_per_rise(dehydrate):
    """Non-interrupting: it opens beside the process's tracks, once per change of the
    condition from false to true; a change that keeps it true opens nothing."""
    eng = bpm.Engine(dehydrate=dehydrate)
    inst = eng.start(watched(interrupting=False), data={"risk": 1})
    eng.run()
    complete(eng, "work", {"risk": 9})
    assert sorted(t.node for t in eng.tasks()) == ["calm", "more"]
    complete(eng, "calm", {"risk": 12})  # still true: no second opening
    assert opened(eng, inst) == 1
    assert [t.node for t in eng.tasks()] == ["more"]
    complete(eng, "more", {"risk": 2})  # false again; the process's path ends
    assert inst.state == "completed" and opened(eng, inst) == 1


def test_a_non_interrupting_conditional_start_opens_again_after_falling_and_rising():
    p = bpm.Process("again")
    p.start("s")
    p.user_task("t1")
    p.user_task("t2")
    p.user_task("t3")
    p.end("e")
    p.flow("s", "t1", "t2", "t3", "e")
    with p.event_subprocess("watch") as ev:
        ev.conditional_start("hot", condition="risk > 5", interrupting=False)
        ev.script_task("note", fn=lambda d: {"notes": d.get("notes", 0) + 1})
        ev.end("ee")
        ev.flow("hot", "note", "ee")
    eng = bpm.Engine()
    inst = eng.start(p, data={"risk": 0})
    eng.run()
    complete(eng, "t1", {"risk": 7})   # rise: opens
    complete(eng, "t2", {"risk": 1})   # fall
    complete(eng, "t3", {"risk": 8})   # rise again: opens again, beside the end
    assert inst.state == "completed"
    assert inst.data["notes"] == 2 and opened(eng, inst) == 2


def test_a_conditional_start_already_true_when_armed_opens_at_once():
    """As a conditional boundary: a condition that holds when its scope starts counts as a
    rise at its first check, so the event subprocess opens before the process goes on."""
    eng = bpm.Engine()
    inst = eng.start(watched(), data={"risk": 10})
    eng.run()
    assert [t.node for t in eng.tasks()] == ["calm"]
    assert "work" not in left(eng, inst)


def nested():
    """before -> sp (inside -> inside2, with an interrupting conditional event subprocess:
    handle) -> after; every task a user task."""
    p = bpm.Process("inner")
    p.start("s")
    p.user_task("before")
    p.user_task("after")
    p.end("e")
    with p.subprocess("sp") as sp:
        sp.start("ss")
        sp.user_task("inside")
        sp.user_task("inside2")
        sp.end("se")
        sp.flow("ss", "inside", "inside2", "se")
        with sp.event_subprocess("watch") as ev:
            ev.conditional_start("hot", condition="risk > 5")
            ev.script_task("handle", fn=lambda d: {"handled": True})
            ev.end("ee")
            ev.flow("hot", "handle", "ee")
    p.flow("s", "before", "sp", "after", "e")
    return p


def test_a_conditional_start_in_a_subprocess_interrupts_only_that_subprocess():
    """Armed while its subprocess runs: a rise cancels the subprocess's inside, the event
    subprocess runs in it, and the subprocess then goes on by its own flow."""
    eng = bpm.Engine()
    inst = eng.start(nested(), data={"risk": 0})
    eng.run()
    complete(eng, "before")
    complete(eng, "inside", {"risk": 9})
    assert [t.node for t in eng.tasks()] == ["after"]
    assert inst.data["handled"] is True
    assert left(eng, inst) == ["s", "before", "ss", "inside", "hot", "handle", "ee", "watch", "sp"]


def test_a_conditional_start_in_a_subprocess_true_when_it_starts_opens_at_once():
    """A rise before the subprocess starts is not seen, but the condition holds when the
    subprocess arms its start: it opens then, before the first task inside is created."""
    eng = bpm.Engine()
    inst = eng.start(nested(), data={"risk": 0})
    eng.run()
    complete(eng, "before", {"risk": 9})
    assert [t.node for t in eng.tasks()] == ["after"]
    assert inst.data["handled"] is True and opened(eng, inst) == 1
    assert "inside" not in left(eng, inst)


def test_a_conditional_start_in_a_subprocess_is_not_armed_after_it_ended():
    """A rise after the subprocess ended opens nothing."""
    eng = bpm.Engine()
    inst = eng.start(nested(), data={"risk": 0})
    eng.run()
    complete(eng, "before")
    complete(eng, "inside")
    complete(eng, "inside2")
    complete(eng, "after", {"risk": 9})
    assert inst.state == "completed" and "handled" not in inst.data
    assert opened(eng, inst) == 0


def test_a_conditional_start_keeps_its_instance_resident_and_warns_once(caplog):
    """A conditional wait has no holder: while its start is armed, an instance waiting on a
    user task stays resident (one warning names the start); once an interrupting start has
    opened, nothing conditional is armed and the instance dehydrates."""
    eng = bpm.Engine()
    inst = eng.start(watched(), data={"risk": 1})
    eng.run()
    assert inst.residency == "resident"
    assert [r.getMessage().count("conditional start 'hot'") for r in caplog.records] == [1]
    complete(eng, "work", {"risk": 9})
    assert inst.residency == "dehydrated" and [t.node for t in eng.tasks()] == ["calm"]


@pytest.mark.parametrize("interrupting", [True, False])
def test_a_conditional_start_survives_a_crash_and_recover(tmp_path, interrupting):
    """On SQLite, an instance whose conditional start is armed comes back resident after a
    crash between two calls, its start armed with what it last saw: a rise then opens it,
    as without the crash."""
    outcomes = []
    for crash in (False, True):
        db = tmp_path / f"{crash}.db"
        eng = bpm.Engine(store=bpm.SQLiteStore(db))
        inst = eng.start(watched(interrupting), data={"risk": 1})
        eng.run()
        complete(eng, "work", {"risk": 2})
        if crash:
            eng.store.close()
            eng = recover(db, watched(interrupting))
            inst = eng.instance(inst.id)
            assert inst.residency == "resident"
        complete(eng, "more", {"risk": 9})
        tasks = [t.node for t in eng.tasks()]
        complete(eng, "calm")
        outcomes.append((tasks, inst.state, inst.data, [t.node for t in inst.tracks]))
        eng.store.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == ["calm"] and outcomes[0][1] == "completed"


def test_rewind_and_replay_give_the_same_facts_with_a_python_condition():
    """The condition, a Python callable, answers through the tape: a replay after a rewind
    to the start gives the same facts, byte for byte, without calling it again."""
    calls = []

    def hot(data):
        calls.append(data["risk"])
        return data["risk"] > 5

    eng = bpm.Engine()
    eng.start(watched(interrupting=False, condition=hot), data={"risk": 1})
    eng.run()
    complete(eng, "work", {"risk": 9})
    complete(eng, "calm", {"risk": 2})
    before = [f.as_dict() for f in eng.facts]
    made = len(calls)
    eng.rewind(0)
    eng.replay()
    assert [f.as_dict() for f in eng.facts] == before
    assert len(calls) == made


def test_a_condition_naming_a_missing_field_is_an_incident_at_the_start():
    """As for a conditional boundary: a condition that names a field the data lacks fails
    the instance with an incident at the start event, naming the field."""
    eng = bpm.Engine()
    inst = eng.start(watched(condition="level > 5"), data={"risk": 1})
    eng.run()
    assert inst.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "hot" and "level" in incident.details["cause"]


def test_the_builder_refuses_a_conditional_start_without_a_condition():
    p = watched(condition=None)
    with pytest.raises(bpm.ModelError, match="conditional_start 'hot' has no condition"):
        p.validate()


# -- conditional starts of the process --------------------------------------------------------

def started_on(pid, condition, second=None):
    """A process that starts only by a conditional start ``cs`` (and ``cs2`` on ``second``):
    a user task, then the end."""
    p = bpm.Process(pid)
    p.conditional_start("cs", condition=condition)
    p.user_task("work")
    p.end("e")
    p.flow("cs", "work", "e")
    if second is not None:
        p.conditional_start("cs2", condition=second)
        p.flow("cs2", "work")
    return p


def deployed(eng, *processes):
    for p in processes:
        eng.deploy(p)
    return processes


def test_start_on_conditions_starts_one_instance_of_each_process_whose_start_holds():
    """Each deployed process whose conditional start holds on the data gets one instance,
    with the data as its data, in the order of the processes' ids (not of deployment)."""
    eng = bpm.Engine()
    deployed(eng, started_on("hot", "temp > 30"), started_on("cold", "temp < 10"),
             started_on("alarm", "temp > 25"))
    assert eng.start_on_conditions({"temp": 35}) == ["i1", "i2"]
    assert [eng.instance(i).definition.id for i in ("i1", "i2")] == ["alarm", "hot"]
    assert eng.instance("i2").data == {"temp": 35}
    assert eng.start_on_conditions({"temp": 20}) == []
    eng.run()
    assert [(t.instance, t.node) for t in eng.tasks()] == [("i1", "work"), ("i2", "work")]
    started = [f for f in eng.facts if f.kind == "instance_started"]
    assert [(f.node, f.details["by"]) for f in started] == [("cs", "conditional")] * 2


def test_start_on_conditions_takes_the_first_start_that_holds_once_per_process():
    eng = bpm.Engine()
    deployed(eng, started_on("two", "temp > 30", second="temp > 20"))
    assert eng.start_on_conditions({"temp": 35}) == ["i1"]
    assert eng.start_on_conditions({"temp": 25}) == ["i2"]
    assert [f.node for f in eng.facts if f.kind == "instance_started"] == ["cs", "cs2"]


def test_start_on_conditions_names_one_process_by_id_or_by_process():
    eng = bpm.Engine()
    hot, warm = deployed(eng, started_on("hot", "temp > 30"), started_on("warm", "temp > 20"))
    assert eng.start_on_conditions({"temp": 35}, process="warm") == ["i1"]
    assert eng.instance("i1").definition.id == "warm"
    other = started_on("other", "temp > 0")  # not deployed yet: given, it is deployed
    assert eng.start_on_conditions({"temp": 1}, process=other) == ["i2"]
    assert eng.start_on_conditions({"temp": 1}, process="hot") == []


@pytest.mark.parametrize("process, message", [
    ("nobody", "process 'nobody' is not deployed"),
    (7, "process must be a Process or a process id, got int"),
])
def test_start_on_conditions_refuses_a_bad_process_and_changes_nothing(process, message):
    from conftest import snapshot
    eng = bpm.Engine()
    deployed(eng, started_on("hot", "temp > 30"))
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=message):
        eng.start_on_conditions({"temp": 35}, process=process)
    assert snapshot(eng) == before and eng.history()[-1].name == "deploy"


def test_start_on_conditions_refuses_a_process_without_a_conditional_start():
    from conftest import snapshot
    plain = bpm.Process("plain")
    plain.start("s")
    plain.end("e")
    plain.flow("s", "e")
    eng = bpm.Engine()
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match="'plain' has no conditional start event"):
        eng.start_on_conditions({}, process=plain)
    assert snapshot(eng) == before
    with pytest.raises(bpm.EngineError, match="start data"):
        eng.start_on_conditions(["not", "a", "dict"])


def test_a_condition_that_cannot_be_evaluated_counts_as_false_and_says_why():
    """A missing name (or any error) is false for that process only, and a fact names the
    process, the start and the kind of error, never a value."""
    eng = bpm.Engine()
    deployed(eng, started_on("hot", "temp > 30"), started_on("level", "level > 2"),
             started_on("typed", "temp > 'high'"))
    assert eng.start_on_conditions({"temp": 35}) == ["i1"]
    failed = [(f.node, f.details) for f in eng.facts if f.kind == "start_condition_failed"]
    assert failed == [("cs", {"process": "level", "cause": "KeyError", "field": "level"}),
                      ("cs", {"process": "typed", "cause": "TypeError"})]
    assert "35" not in repr(failed)


def test_only_the_newest_version_is_evaluated():
    eng = bpm.Engine()
    eng.deploy(started_on("hot", "temp > 30"))
    eng.deploy(started_on("hot", "temp > 40"))
    assert eng.start_on_conditions({"temp": 35}) == []
    (iid,) = eng.start_on_conditions({"temp": 45})
    assert eng.instance(iid).definition.version == 2


def test_start_refuses_a_process_whose_only_start_is_conditional_naming_it():
    from conftest import snapshot
    eng = bpm.Engine()
    p = started_on("hot", "temp > 30")
    eng.deploy(p)
    before = snapshot(eng)
    with pytest.raises(bpm.EngineError, match=r"no plain start event.*conditional start "
                                              r"'cs' \(temp > 30\): eng.start_on_conditions"):
        eng.start(p, data={"temp": 35})
    assert snapshot(eng) == before


def test_a_plain_start_beside_a_conditional_one_is_where_start_begins():
    p = started_on("both", "temp > 30")
    p.start("s")
    p.flow("s", "work")
    eng = bpm.Engine()
    inst = eng.start(p, data={"temp": 0})
    eng.run()
    assert left(eng, inst) == ["s"]
    assert eng.start_on_conditions({"temp": 31}) == ["i2"]
    eng.run()
    assert left(eng, eng.instance("i2")) == ["cs"]


@pytest.mark.parametrize("dehydrate", [False, True])
def test_instances_started_on_conditions_run_alike_with_dehydration_on_and_off(dehydrate):
    eng = bpm.Engine(dehydrate=dehydrate)
    deployed(eng, started_on("hot", "temp > 30"))
    (iid,) = eng.start_on_conditions({"temp": 35})
    eng.run()
    inst = eng.instance(iid)
    assert inst.residency == ("dehydrated" if dehydrate else "resident")
    complete(eng, "work", {"done": True})
    assert inst.state == "completed" and inst.data == {"temp": 35, "done": True}


def test_instances_started_on_conditions_survive_a_crash(tmp_path):
    """On SQLite, instances started by the call are recorded before it returns: after a
    crash they come back at their start, not run, and run with the next command."""
    db = tmp_path / "run.db"
    hot, cold = started_on("hot", "temp > 30"), started_on("alarm", "temp > 0")
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    deployed(eng, hot, cold)
    assert eng.start_on_conditions({"temp": 35}) == ["i1", "i2"]
    eng.store.close()
    eng2 = recover(db, hot, cold)
    assert [(i.id, i.state) for i in eng2.instances()] == [("i1", "active"), ("i2", "active")]
    eng2.run()
    assert sorted((t.instance, t.node) for t in eng2.tasks()) == [("i1", "work"),
                                                                  ("i2", "work")]
    assert eng2.start_on_conditions({"temp": 1}) == ["i3"]  # the counter was recorded
    eng2.store.close()


def test_start_on_conditions_rewinds_and_replays_to_the_same_facts():
    """A command like start: in the history, rewound over and replayed to the same facts,
    its Python condition answered from the tape (not called again)."""
    calls = []

    def hot(data):
        calls.append(1)
        return data["temp"] > 30

    eng = bpm.Engine()
    deployed(eng, started_on("hot", hot), started_on("level", "level > 2"))
    eng.start_on_conditions({"temp": 35})
    eng.run()
    eng.start_on_conditions({"temp": 5, "level": 3})
    eng.run()
    assert "start_on_conditions" in [c.name for c in eng.history()]
    before = [f.as_dict() for f in eng.facts]
    made = len(calls)
    eng.rewind(0)
    assert eng.instances() == []
    eng.replay()
    assert [f.as_dict() for f in eng.facts] == before and len(calls) == made


# -- BPMN ------------------------------------------------------------------------------------

def drawn_both():
    """A process started by a conditional start, with an event subprocess of each kind."""
    p = started_on("drawn", "temp > 30")
    with p.event_subprocess("watch") as ev:
        ev.conditional_start("hot", condition="risk > 5", interrupting=False)
        ev.end("noted")
        ev.flow("hot", "noted")
    with p.event_subprocess("stop") as ev:
        ev.conditional_start("halt", condition="halt == True")
        ev.end("halted")
        ev.flow("halt", "halted")
    return p


def test_conditional_starts_survive_a_round_trip_with_their_diagram():
    """Written: a conditionalEventDefinition with its condition (FEEL) on each start,
    isInterrupting="false" on the non-interrupting one, a shape for each, valid BPMN; read
    back: the same process, written again byte for byte."""
    from bpmn_shapes import NS, diagram
    from lxml import etree

    from gobpm_nb.bpmn.schema import schema

    p = drawn_both()
    text = p.to_bpmn()
    root = etree.fromstring(text.encode())
    assert schema().validate(root.getroottree()), schema().error_log
    for sid, condition in (("cs", "=temp > 30"), ("hot", "=risk > 5"),
                           ("halt", "=halt = true")):
        found = root.find(f".//bpmn:startEvent[@id='{sid}']/bpmn:conditionalEventDefinition/"
                          "bpmn:condition", NS)
        assert found is not None and found.text == condition
    assert root.find(".//bpmn:startEvent[@id='hot']", NS).get("isInterrupting") == "false"
    shapes, _ = diagram(text)
    assert {"cs", "hot", "halt"} <= set(shapes)
    model = bpm.load_bpmn(text)
    assert model.report == []
    again = model.process()
    assert again.definition().signature == p.definition().signature
    assert again.to_bpmn() == text


def test_a_file_with_conditional_starts_runs():
    """Read from a file (FEEL and JUEL conditions), the process starts on conditions and its
    event subprocess opens on a data change."""
    p = bpm.load_bpmn(drawn_both().to_bpmn().replace("=risk &gt; 5", "${risk &gt; 5}")
                      .replace("=risk > 5", "${risk > 5}")).process()
    assert p.definition().nodes["hot"].condition.describe() == "risk > 5"
    eng = bpm.Engine()
    eng.deploy(p)
    (iid,) = eng.start_on_conditions({"temp": 31, "risk": 0, "halt": False})
    eng.run()
    complete(eng, "work", {"risk": 6})
    inst = eng.instance(iid)
    assert inst.state == "completed" and left(eng, inst).count("noted") == 1


def test_the_process_view_draws_conditional_starts_as_start_events():
    """A conditional start is drawn as a start event with its glyph and condition, dashed
    when it does not interrupt; the token that opened it is drawn where it stands."""
    from gobpm_nb.observe import projections as proj
    from gobpm_nb.render import dot as render

    eng = bpm.Engine()
    inst = eng.start(watched(interrupting=False), data={"risk": 1})
    eng.run()
    complete(eng, "work", {"risk": 9})
    dot = render.process_dot(proj.process_state(eng, inst.id))
    (hot,) = [line for line in dot.splitlines() if line.strip().startswith('"hot" [')]
    assert 'shape=circle, label="≡"' in hot and "dashed" in hot
    assert 'xlabel="hot\\nrisk > 5\\nnon-interrupting"' in hot
    assert 'tooltip="conditional_start hot"' in hot
    (calm,) = [line for line in dot.splitlines() if line.strip().startswith('"calm" [')]
    assert "● t3 waiting" in calm


def test_design_review_mode_runs_a_conditional_start_whose_condition_it_cannot_read():
    """As drawn, a conditional start whose condition does not translate stands in as a plain
    start (in an event subprocess, a signal start named by its name), with a warning; one
    it reads stays conditional."""
    text = drawn_both().to_bpmn().replace("=temp &gt; 30", "${sensor.read()}") \
        .replace("=temp > 30", "${sensor.read()}")
    written = bpm.load_bpmn(text)
    assert [n.element for n in written.report if n.severity == "error"] == ["cs"]
    drawn = bpm.load_bpmn(text, run_as_drawn=True)
    assert [n.severity for n in drawn.report if n.element == "cs"] == ["warning", "warning"]
    d = drawn.process().definition()
    assert d.start == "cs" and d.nodes["hot"].kind == "conditional_start"
    eng = bpm.Engine()
    inst = eng.start(drawn.process(), data={"risk": 0, "halt": False})
    eng.run()
    complete(eng, "work", {"halt": True})
    assert inst.state == "completed" and "halted" in left(eng, inst)
