"""Bad input at the API's edges gets a typed error naming the bad value, and changes nothing
(issue 8, findings 3, 14, 15; read-only facts)."""

import copy
import logging
import pickle

import pytest
from conftest import approval, catch, snapshot

import gobpm_nb as bpm


@pytest.mark.parametrize("call, named", [
    (lambda e: e.publish_message("paid", key=1, message_id=["m"]), "message_id"),
    (lambda e: e.publish_message("paid", key=1, message_id=""), "message_id"),
    (lambda e: e.start(catch(), {1: "a"}), "key 1"),
    (lambda e: e.start(catch(), {"a": (1, 2)}), "tuple"),
    (lambda e: e.start(catch(), {"a": float("nan")}), "nan"),
    (lambda e: e.publish_message("paid", key=1, payload={"a": {2: 3}}), "key 2"),
    (lambda e: e.complete_task("i1:approve:1", {"t": (1,)}), "tuple"),
    (lambda e: e.fetch_jobs("work", max_jobs=-1), "max_jobs"),
    (lambda e: e.deploy("not a process"), "str"),
    (lambda e: e.publish_message("paid", key=float("nan")), "nan"),
    (lambda e: e.publish_message("paid", key={1: 2}), r"key \{1: 2\}"),
    (lambda e: e.start(catch(), key=5), "non-empty string"),
    (lambda e: e.start(catch(), key="i1"), "already used"),
])
def test_a_bad_value_raises_a_typed_error_naming_it_and_changes_nothing(call, named):
    """Each of these raises a GobpmError whose message names the bad value."""
    eng = bpm.Engine()
    eng.start(approval())
    eng.advance("PT1M")
    before = snapshot(eng)
    with pytest.raises(bpm.GobpmError, match=named):
        call(eng)
    assert snapshot(eng) == before


@pytest.mark.parametrize("call, named", [
    (lambda s: bpm.Engine.recover(s, processes=approval()), "list of Process"),
    (lambda s: bpm.Engine.recover(s, processes=["approval"]), "list of Process"),
    (lambda s: bpm.Engine.recover(s, start="2026-01-01T00:00:00Z"), "'start'"),
    (lambda s: bpm.Engine.recover(None), "None"),
    (lambda s: bpm.Engine(store=object()), "not a checkpoint store"),
    (lambda s: bpm.Engine(s, min_dehydrate_wait="P1M"), "min_dehydrate_wait 'P1M' counts months"),
    (lambda s: bpm.Engine(s, wake_retry_backoff="P1Y"), "wake_retry_backoff 'P1Y' counts months"),
    (lambda s: bpm.Engine(s, seed="7"), "seed must be an int, got '7'"),
    # a string meant no, and was taken as yes
    (lambda s: bpm.Engine(s, dehydrate="False"), "dehydrate must be True or False, got 'False'"),
    (lambda s: bpm.Engine(s, keep_history="no"), "keep_history must be True or False, got 'no'"),
    (lambda s: bpm.Engine.recover(s, dehydrate=0), "dehydrate must be True or False, got 0"),
    # an OverflowError escaped from the fact log's deque
    (lambda s: bpm.Engine(s, keep_facts=2 ** 70), r"keep_facts must be None \(every fact\) or "
                                                   r"a count from 0 to 1,000,000,000,000, got "
                                                   r"1180591620717411303424"),
    (lambda s: bpm.Engine(s, keep_facts=True), "keep_facts must be None"),
])
def test_recover_and_engine_refuse_bad_arguments_with_engine_error(call, named):
    """recover() and Engine() name what is wrong with their arguments."""
    with pytest.raises(bpm.EngineError, match=named):
        call(bpm.MemoryStore())


def test_a_sqlite_store_on_a_directory_is_a_store_error(tmp_path):
    """SQLiteStore(<a directory>) raises StoreError naming the path."""
    with pytest.raises(bpm.StoreError, match="directory"):
        bpm.SQLiteStore(tmp_path)
    assert issubclass(bpm.StoreError, bpm.GobpmError)
    with pytest.raises(bpm.StoreError, match="holds a NUL character"):  # was a ValueError
        bpm.SQLiteStore(str(tmp_path / "a\0b.db"))


@pytest.mark.parametrize("key", [lambda d: d["a"] / 0, "a / 0", "missing"])
def test_a_correlation_key_that_fails_is_an_incident_and_the_engine_goes_on(key):
    """A key that raises fails its instance with an incident; other instances still run."""
    p = bpm.Process("bad")
    p.start("s")
    p.message_catch("wait", message="m", key=key)
    p.end("e")
    p.flow("s", "wait", "e")
    eng = bpm.Engine()
    bad = eng.start(p, {"a": 1})
    good = eng.start(catch(), {"order": "o1"})
    eng.run()
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "wait" and "correlation key" in incident.details["cause"]
    assert bad.state == "failed" and eng.stats()["coroutines"] == 0
    assert eng.publish_message("paid", key="o1") == good.id
    eng.run()
    assert good.state == "completed"


def test_a_message_throw_whose_key_names_a_missing_field_is_an_incident():
    """The throw's key raises KeyError inside the process: an incident, not an escape."""
    p = bpm.Process("throw")
    p.start("s")
    p.message_throw("send", message="m", key="nowhere")
    p.end("e")
    p.flow("s", "send", "e")
    eng = bpm.Engine()
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed"
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "send" and "nowhere" in incident.details["cause"]


def test_the_dehydration_threshold_applies_to_the_wait_as_armed():
    """A 2 h timer woken at 01:30 by another track's message dehydrates again: it was 2 h."""
    p = bpm.Process("both")
    p.start("s")
    p.parallel_gateway("fork")
    p.timer_catch("two_hours", duration="PT2H")
    p.message_catch("wait", message="m", key="k")
    p.user_task("after")
    p.parallel_gateway("join")
    p.end("e")
    p.flow("s", "fork")
    p.flow("fork", "two_hours", "join")
    p.flow("fork", "wait", "after", "join")
    p.flow("join", "e")
    eng = bpm.Engine()
    inst = eng.start(p, {"k": 1})
    eng.advance("PT1M")
    assert inst.residency == "dehydrated"
    eng.advance("PT89M")
    eng.publish_message("m", key=1)
    eng.run(until=eng.now)
    assert inst.residency == "dehydrated"  # the timer was 2 h when armed; 30 min are left


def test_a_subscriber_cannot_change_the_fact_log():
    """Changing a fact's details in a subscriber leaves the logged fact as it was."""
    eng = bpm.Engine()

    def meddle(fact):
        fact.details["meddled"] = True
        if "fields" in fact.details:
            fact.details["fields"].append("x")
    eng.subscribe(meddle)
    eng.start(catch(), {"order": "o1"})
    eng.run()
    eng.publish_message("paid", key="o1", payload={"a": 1})
    eng.run()
    assert all("meddled" not in f.details for f in eng.facts)
    changed = [f for f in eng.facts if f.kind == "data_changed"]
    assert [f.details["fields"] for f in changed] == [["a"]]


def test_facts_are_echoed_at_debug_from_the_command_after_the_level_is_set(caplog):
    """Set the gobpm_nb logger to DEBUG between two commands: the next command's facts are
    logged, the earlier ones were not; set it back and the echo stops."""
    eng = bpm.Engine()
    eng.start(catch(), {"order": "o1"})
    with caplog.at_level(logging.DEBUG, logger="gobpm_nb"):
        assert not caplog.records  # start() ran before the level was set
        eng.run()
        echoed = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert echoed and all(m.startswith("Fact(") for m in echoed)
    assert any("wait_held" in m for m in echoed)
    caplog.clear()
    eng.publish_message("paid", key="o1", payload={"a": 1})
    eng.run()
    assert not [r for r in caplog.records if r.levelno == logging.DEBUG]


class Unreadable(bpm.MemoryStore):
    """A store that cannot list what it holds."""

    def ids(self):
        raise OSError("disk gone")


def test_a_store_that_cannot_be_read_is_an_engine_error_naming_it():
    """Engine() and Engine.recover() on a store whose listing fails raise EngineError."""
    for call in (lambda s: bpm.Engine(store=s), lambda s: bpm.Engine.recover(s)):
        with pytest.raises(bpm.EngineError, match="disk gone"):
            call(Unreadable())


@pytest.mark.parametrize("duration", ["P99999Y", "PT9999999999999H"])
def test_a_duration_out_of_the_calendars_range_is_a_typed_error(duration):
    """advance(), a ttl and a timer refuse a duration the calendar cannot hold, by name."""
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError, match="9999"):
        eng.advance(duration)
    with pytest.raises(bpm.EngineError, match="9999"):
        eng.publish_message("m", key=1, ttl=duration)
    p = bpm.Process("t")
    p.start("s")
    p.timer_catch("t", duration=duration)
    p.end("e")
    p.flow("s", "t", "e")
    with pytest.raises(bpm.ModelError, match="'t'"):
        p.validate()


def test_a_deadline_beyond_the_calendar_is_an_incident_not_a_stranded_instance():
    """A timer valid in 2026 but not from the engine's clock fails its instance, typed."""
    p = bpm.Process("big")
    p.start("s")
    p.timer_catch("t", duration="P7900Y")
    p.end("e")
    p.flow("s", "t", "e")
    eng = bpm.Engine(start="2200-01-01T00:00:00Z")
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed" and eng.stats()["coroutines"] == 0
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "t" and "out of range" in incident.details["cause"]


def deep(levels):
    out = cur = {}
    for _ in range(levels):
        cur["a"] = {}
        cur = cur["a"]
    return out


def test_data_nested_too_deeply_is_refused_at_start_and_fails_a_script_that_returns_it():
    """More than 100 levels: start() refuses it by name; a script returning it is an incident."""
    p = bpm.Process("deep")
    p.start("s")
    p.script_task("sc", fn=lambda d: {"x": deep(5000)})
    p.end("e")
    p.flow("s", "sc", "e")
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError, match="nested more than 100"):
        eng.start(p, {"x": deep(600)})
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed" and eng.stats()["coroutines"] == 0


def _shared(levels):
    """A list of ten strings shared ten times at each level: 10**levels strings in all."""
    x = ["x"] * 10
    for _ in range(levels - 1):
        x = [x] * 10
    return x


def _nested(levels):
    x = []
    for _ in range(levels):
        x = [x]
    return x


def test_a_hostile_argument_is_refused_at_once_and_named_shortly():
    """A hundred million strings in one shared list, as start data, a message key or a task
    id: the command is refused before anything runs (it took a minute and gigabytes to copy,
    record or print), saying why; a list nested 5,000 deep as an id, a key or a duration is
    an EngineError whose message shows a few levels of it (a RecursionError escaped while it
    was printed). Nothing started."""
    p = bpm.Process("p")
    p.start("s")
    p.user_task("t")
    p.end("e")
    p.flow("s", "t", "e")
    eng = bpm.Engine()
    wide, deep = _shared(8), _nested(5000)
    for call, name in ((lambda: eng.start(p, {"x": wide}), "start"),
                       (lambda: eng.publish_message("go", key=wide), "publish_message"),
                       (lambda: eng.complete_task(wide), "complete_task")):
        with pytest.raises(bpm.EngineError, match=rf"^{name}: its arguments hold more than "
                                                  "1,000,000 values"):
            call()
    with pytest.raises(bpm.EngineError, match=r"^unknown task \[\[\[\[\.\.\.\]\]\]\]$"):
        eng.complete_task(deep)
    with pytest.raises(bpm.EngineError, match=r"^message 'go': key \[\[\[\[\.\.\.\]"):
        eng.publish_message("go", key=deep)
    with pytest.raises(bpm.EngineError, match=r"^duration \[\[\[\[\.\.\.\]\]\]\] is not "
                                              "an ISO 8601 duration string$"):
        eng.advance(deep)
    assert eng.instances() == [] and eng.history() == []


def test_an_interrupt_stops_a_run_between_two_events_and_the_engine_goes_on():
    """A person interrupts the kernel (SIGINT) while a script task runs inside ``run``: the
    script's event ends, then the run stops with KeyboardInterrupt, the command recorded as
    interrupted with the events it ran (a rewind and replay give the same facts). Nothing is
    left half done: the run goes on where it stopped, the task completes and the instance
    ends with no coroutine left (before, the interrupt killed the track's coroutine half way
    through its node and complete_task failed an assertion)."""
    import os
    import signal

    rang = []

    def ring(data):
        if not rang:
            rang.append(1)
            os.kill(os.getpid(), signal.SIGINT)  # as Jupyter's "interrupt the kernel" does
        return {"rang": data.get("rang", 0) + 1}

    p = bpm.Process("bell")
    p.start("s")
    p.user_task("t")
    p.timer_boundary("tick", attached_to="t", cycle="R3/PT1M", interrupting=False)
    p.script_task("ring", fn=ring)
    p.end("e")
    p.end("rung")
    p.flow("s", "t", "e")
    p.flow("tick", "ring", "rung")
    eng = bpm.Engine()
    inst = eng.start(p)
    with pytest.raises(KeyboardInterrupt):
        eng.run(until="2026-01-01T01:00:00")
    assert inst.data == {"rang": 1} and eng.now.minute == 1
    assert eng.history()[-1].name == "run"
    seen = [(f.kind, f.node) for f in eng.facts]
    eng.rewind(to=1)  # and back: the interrupted run's events replay as they ran
    eng.replay()
    assert [(f.kind, f.node) for f in eng.facts] == seen and inst.data == {"rang": 1}
    eng.run(until="2026-01-01T01:00:00")
    assert inst.data == {"rang": 3}
    eng.complete_task(eng.tasks()[0].id)
    eng.run()
    assert inst.state == "completed" and eng.stats()["coroutines"] == 0


def test_a_finished_instance_keeps_its_data_and_tracks_but_no_checkpoint():
    """An ended instance is kept as a summary: its state, final data and every track's last
    view read as before it ended; its checkpoint has left the store, and asking for it is
    an EngineError that says so."""
    eng = bpm.Engine(bpm.MemoryStore())
    p = bpm.Process("two")
    p.start("s")
    p.timer_catch("wait", duration="P1D")
    p.script_task("mark", fn=lambda d: {"marked": d["n"] + 1})
    p.end("e")
    p.flow("s", "wait", "mark", "e")
    inst = eng.start(p, {"n": 1})
    eng.run()
    assert (inst.state, inst.residency) == ("completed", "finished")
    assert inst.data == {"n": 1, "marked": 2}
    assert [(t.id, t.node, t.state, t.parents, t.origin) for t in inst.tracks] == [
        ("t1", "wait", "dehydrated", (), "start"),
        ("t2", "e", "completed", ("t1",), "continuation")]
    with pytest.raises(bpm.EngineError, match="completed: its checkpoint has left the store"):
        inst.checkpoint()
    inst.data["n"] = 99  # a copy: the summary does not change
    assert inst.data["n"] == 1
    assert eng.stats()["coroutines"] == 0 and len(eng.store) == 0


@pytest.mark.parametrize("name, call", [
    ("deploy", lambda e: e.deploy("not a process")),
    ("start", lambda e: e.start(catch(), key=5)),
    ("start_many", lambda e: e.start_many(catch(), 5)),
    ("start_many", lambda e: e.start_many("not a process", [{}])),
    ("run", lambda e: e.run(until="soon")),
    ("advance", lambda e: e.advance("soon")),
    ("advance", lambda e: e.advance("-PT1H")),
    ("publish_message", lambda e: e.publish_message("")),
    ("broadcast_signal", lambda e: e.broadcast_signal("")),
    ("complete_task", lambda e: e.complete_task("no-such-task")),
    ("fetch_jobs", lambda e: e.fetch_jobs("work", worker="")),
    ("complete_job", lambda e: e.complete_job("no-such-job")),
    ("fail_job", lambda e: e.fail_job("no-such-job", "boom")),
])
def test_a_command_refusing_a_bad_argument_still_tells_its_watchers(name, call):
    """Every public command ends by calling its ``after_each_command`` watchers, whether it
    returned or raised: a refused argument too, and nothing changed."""
    eng = bpm.Engine()
    eng.start(approval())
    eng.advance("PT1M")
    before = snapshot(eng)
    told = []
    eng.after_each_command(lambda: told.append(eng.now))
    with pytest.raises(bpm.EngineError):
        call(eng)
    assert told == [eng.now] and snapshot(eng) == before


def test_a_megabyte_id_is_named_in_a_message_of_a_few_thousand_characters():
    """A process whose id is a megabyte long, and a megabyte argument where a count goes:
    the error says what was wrong in a thousand characters or so (its message had a
    megabyte), and a model's problems stay whole beside it. No message is longer than
    20,000 characters and a few."""
    big = "x" * 1_000_000
    with pytest.raises(bpm.ModelError) as got:
        bpm.Process(big).validate()
    text = str(got.value)
    assert len(text) < 1_100 and text.startswith("process 'xxx")
    assert text.endswith("' has no start event") and "characters cut" in text
    assert got.value.problems == [f"process {big!r} has no start event"]
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError, match=r"^commands must be None or a count >= 0, "
                                              r"got 'x+\.\.\.x+'$"):
        eng.replay(big)
    assert len(str(bpm.EngineError(big))) < 20_100
    assert str(bpm.EngineError("short")) == "short"


def _every_error_class(cls=bpm.GobpmError):
    """The package's error classes (not a benchmark's or a test's subclass of them)."""
    if cls.__module__.startswith("gobpm_nb"):
        yield cls
    for sub in cls.__subclasses__():
        yield from _every_error_class(sub)


@pytest.mark.parametrize("err", [
    bpm.GobpmError("plain"), bpm.EngineError("unknown task 't9'"),
    bpm.StoreError("store 'x.db' failed"), bpm.ModelError(["p1", "p2"], ["w1"]),
    bpm.CheckpointError("i1", "tracks.0.node", "not a string"),
    bpm.ScenarioError("durations.check", "'PT8X' is not an ISO 8601 duration")],
    ids=lambda e: type(e).__name__)
def test_every_error_survives_pickling_and_copying_whole(err):
    """A Dask worker's error comes back pickled, and ``copy`` copies the same way: each
    class comes back with its message and its fields (a ScenarioError or a CheckpointError
    could not be unpickled: their constructors take more than the message)."""
    for back in (pickle.loads(pickle.dumps(err)), copy.copy(err)):  # noqa: S301 (its own bytes)
        assert type(back) is type(err) and str(back) == str(err)
        assert vars(back) == vars(err)
    assert {type(err)} <= set(_every_error_class())


def test_the_pickling_test_names_every_error_class():
    named = {"GobpmError", "EngineError", "StoreError", "ModelError", "CheckpointError",
             "ScenarioError"}
    assert {c.__name__ for c in _every_error_class()} == named


@pytest.mark.parametrize("dehydrate", [False, True])
@pytest.mark.parametrize("chained", [False, True])
def test_a_timer_due_past_the_year_9999_is_an_incident_naming_its_deadline(dehydrate, chained):
    """An hour's timer armed a second before the calendar ends (alone, or the second of
    two timers in a row, which the engine hands from one to the next): the instance fails
    with an incident that says why. It failed later with 'OverflowError: date value out of
    range' and a traceback in the log, as the deadline was first written out."""
    p = bpm.Process("late")
    p.start("s")
    timers = [p.timer_catch("first", duration="PT1S")] if chained else []
    timers.append(p.timer_catch("t", duration="PT1H"))
    p.end("e")
    p.flow("s", *timers, "e")
    eng = bpm.Engine(start="9999-12-31T23:59:58Z" if chained else "9999-12-31T23:59:59Z",
                     dehydrate=dehydrate)
    inst = eng.start(p)
    eng.run()
    assert inst.state == "failed" and eng.stats()["coroutines"] == 0
    (incident,) = [f for f in eng.facts if f.kind == "incident"]
    assert incident.node == "t"
    assert incident.details["cause"] == ("its timer's deadline is out of range (PT1H after "
                                         "9999-12-31T23:59:59Z is past the year 9999)")
