"""The process builder and its validation: every problem at once, an immutable definition."""

import dataclasses
import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

import gobpm_nb as bpm
from gobpm_nb.model.timers import Cycle


def base(pid="p"):
    """start -> work -> done: a valid process each case below breaks in one way."""
    p = bpm.Process(pid)
    p.start("start")
    p.user_task("work")
    p.end("done")
    p.flow("start", "work", "done")
    return p


def problems(p):
    """The problems one validate() call reports, in one ModelError."""
    with pytest.raises(bpm.ModelError) as info:
        p.validate()
    assert isinstance(info.value, bpm.GobpmError)
    return info.value.problems


def has(found, *fragments):
    """Some problem mentions every fragment."""
    assert any(all(f in msg for f in fragments) for msg in found), (fragments, found)


# -- one problem at a time -----------------------------------------------------------------
def test_no_start_event():
    """A process without a start event is refused, naming the process."""
    p = bpm.Process("nostart")
    p.user_task("work")
    p.end("done")
    p.flow("work", "done")
    found = problems(p)
    assert len(found) == 1
    has(found, "'nostart'", "no start event")


def test_two_start_events():
    """A process with two start events is refused, naming both."""
    p = base()
    p.start("start2")
    p.flow("start2", "work")
    found = problems(p)
    assert len(found) == 1
    has(found, "'start'", "'start2'", "start events")


def test_dangling_flow_unknown_target():
    """A flow to an element that does not exist is refused, naming the flow and the target."""
    p = base()
    p.flow("work", "ghost")
    assert problems(p) == ["flow 'work->ghost' is dangling: no element 'ghost'"]


def test_dangling_flow_unknown_source():
    """A flow from an element that does not exist is refused, naming the source."""
    p = base()
    p.flow("ghost", "done")
    found = problems(p)
    assert len(found) == 1
    has(found, "'ghost->done'", "dangling", "'ghost'")


def test_dangling_flow_names_both_missing_ends():
    """A flow whose two ends are both unknown names both of them."""
    p = base()
    p.flow("nowhere", "elsewhere")
    found = problems(p)
    assert len(found) == 1
    has(found, "dangling", "'nowhere'", "'elsewhere'")


def test_duplicate_flow():
    """The same flow drawn twice is refused, naming it."""
    p = base()
    p.flow("work", "done")
    assert problems(p) == ["duplicate flow 'work->done'"]


def test_duplicate_element_ids():
    """Two elements with the same id are refused, naming the id."""
    p = base()
    p.user_task("work", "again")
    found = problems(p)
    assert len(found) == 1
    has(found, "duplicate id", "'work'")


def test_element_id_equal_to_a_flow_id():
    """An element whose id is also a flow's id is refused, naming the id."""
    p = base()
    p.end("work->done")
    has(problems(p), "duplicate id", "'work->done'")


def test_unreachable_node():
    """Nodes no path from the start reaches are warned about, each named; the process is
    valid."""
    p = base()
    p.user_task("orphan")
    p.end("lost")
    p.flow("orphan", "lost")
    assert p.validate() is p
    assert p.warnings == ["user_task 'orphan' is unreachable from the start event",
                          "end 'lost' is unreachable from the start event"]


@pytest.mark.parametrize("host, kind", [("gw", "exclusive_gateway"), ("start", "start")])
def test_boundary_on_something_that_is_not_an_activity(host, kind):
    """A boundary event attached to a gateway or an event is refused, naming both."""
    p = bpm.Process("p")
    p.start("start")
    p.exclusive_gateway("gw")
    p.user_task("work")
    p.end("done")
    p.flow("start", "gw", "work", "done")
    p.timer_boundary("late", attached_to=host, duration="PT1H")
    p.flow("late", "done")
    found = problems(p)
    has(found, "'late'", f"'{host}'", kind, "not an activity")


def test_boundary_on_unknown_element():
    """A boundary event attached to an id that does not exist is refused, naming the id."""
    p = base()
    p.signal_boundary("stop", attached_to="nowhere", signal="halt")
    p.flow("stop", "done")
    has(problems(p), "'stop'", "unknown element 'nowhere'")


def test_event_gateway_arm_that_is_not_a_catch():
    """An event-based gateway arm that is a user task is refused, naming the arm."""
    p = bpm.Process("p")
    p.start("start")
    p.event_gateway("eg")
    p.message_catch("paid", message="paid", key="order")
    p.user_task("work")
    p.end("done")
    p.flow("start", "eg", "paid", "done")
    p.flow("eg", "work", "done")
    found = problems(p)
    assert len(found) == 1
    has(found, "'eg'", "arm 'work'", "user_task", "not a catch event or receive task")


def test_gateway_with_no_way_out():
    """A gateway with no outgoing flow is refused, naming it."""
    p = base()
    p.parallel_gateway("split")
    p.flow("start", "split")
    assert problems(p) == ["parallel_gateway 'split' has no way out (no outgoing flow)"]


def test_task_with_no_way_out():
    """A task with no outgoing flow is valid (an implicit end), with a warning naming it."""
    p = bpm.Process("p")
    p.start("start")
    p.user_task("work")
    p.flow("start", "work")
    assert p.validate() is p
    assert p.warnings == ["user_task 'work' has no outgoing flow: its track ends there (an "
                          "implicit end)"]


def timer_process(**timer):
    p = bpm.Process("p")
    p.start("start")
    p.timer_catch("wait", **timer)
    p.user_task("work")
    p.timer_boundary("late", attached_to="work", **timer)
    p.end("done")
    p.flow("start", "wait", "work", "done")
    p.flow("late", "done")
    return p


@pytest.mark.parametrize("timer, value", [
    ({"duration": "P1X"}, "'P1X'"),
    ({"duration": "-PT1H"}, "'-PT1H'"),
    ({"date": "not-a-date"}, "'not-a-date'"),
    ({"cycle": "R3/PTxx"}, "'R3/PTxx'"),
    ({"cycle": "R0/PT1M"}, "'R0/PT1M'"),
])
def test_unparsable_timer(timer, value):
    """A timer whose duration, date or cycle does not parse is refused, naming element and text."""
    found = problems(timer_process(**timer))
    assert len(found) == 2
    has(found, "timer_catch 'wait'", value)
    has(found, "timer_boundary 'late'", value)


@pytest.mark.parametrize("timer", [{}, {"duration": "PT1H", "date": "2026-03-01T09:00:00Z"},
                                   {"duration": "PT1H", "cycle": "R3/PT1H"}])
def test_timer_needs_exactly_one_of_duration_date_cycle(timer):
    """A timer given none, or two, of duration/date/cycle is refused, naming the element."""
    found = problems(timer_process(**timer))
    assert len(found) == 2
    has(found, "wait", "exactly one of duration, date or cycle")
    has(found, "late", "exactly one of duration, date or cycle")


@pytest.mark.parametrize("kind", ["message_catch", "receive_task", "message_boundary"])
def test_missing_correlation_key(kind):
    """A message wait without key= is refused, naming the element."""
    p = base()
    if kind == "message_boundary":
        p.message_boundary("m", attached_to="work", message="paid")
        p.flow("m", "done")
    else:
        getattr(p, kind)("m", message="paid")
        p.flow("start", "m", "done")
    assert problems(p) == [f"{kind} 'm' has no correlation key (give key=)"]


def test_condition_that_does_not_parse():
    """A string condition with a syntax error is refused, naming the flow and the source."""
    p = bpm.Process("p")
    p.start("start")
    p.exclusive_gateway("gw")
    p.end("a")
    p.end("b")
    p.flow("start", "gw", "a")
    p.flow("gw", "b", condition="amount >")
    found = problems(p)
    assert len(found) == 1
    has(found, "gw->b", "'amount >'", "does not parse")


def test_unsafe_condition_is_a_model_problem():
    """A condition that tries to import or reach dunders is refused at validate time."""
    p = bpm.Process("p")
    p.start("start")
    p.exclusive_gateway("gw")
    p.end("a")
    p.end("b")
    p.flow("start", "gw")
    p.flow("gw", "a", condition="__import__('os').getcwd()")
    p.flow("gw", "b", condition="().__class__")
    found = problems(p)
    assert len(found) == 2
    has(found, "gw->a", "__import__")
    has(found, "gw->b", "__class__")


def test_exclusive_default_not_one_of_its_targets():
    """exclusive_gateway(default=...) naming a node it does not lead to is refused."""
    p = bpm.Process("p")
    p.start("start")
    p.exclusive_gateway("gw", default="done")
    p.user_task("a")
    p.user_task("b")
    p.end("done")
    p.flow("start", "gw")
    p.flow("gw", "a", "done")
    p.flow("gw", "b", "done", condition="amount > 1")
    found = problems(p)
    assert len(found) == 1
    has(found, "'gw'", "default 'done'", "not one of its outgoing targets")


@pytest.mark.parametrize("given", [{}, {"fn": lambda d: None, "topic": "billing"}])
def test_service_task_needs_exactly_one_of_fn_or_topic(given):
    """A service task with neither, or both, of fn= and topic= is refused, naming it."""
    p = bpm.Process("p")
    p.start("start")
    p.service_task("svc", **given)
    p.end("done")
    p.flow("start", "svc", "done")
    assert problems(p) == ["service_task 'svc' needs exactly one of fn= or topic="]


def test_script_task_without_fn():
    """A script task without fn= is refused, naming it."""
    p = bpm.Process("p")
    p.start("start")
    p.script_task("calc")
    p.end("done")
    p.flow("start", "calc", "done")
    assert problems(p) == ["script_task 'calc' needs fn="]


def test_end_event_with_outgoing_flows():
    """An end event that has an outgoing flow is refused, naming it."""
    p = base()
    p.end("early")
    p.flow("start", "early", "work")
    assert problems(p) == ["end event 'early' has outgoing flows"]


def test_condition_out_of_a_parallel_gateway():
    """A condition on a flow out of a parallel gateway is refused, naming the flow."""
    p = bpm.Process("p")
    p.start("start")
    p.parallel_gateway("split")
    p.end("a")
    p.end("b")
    p.flow("start", "split")
    p.flow("split", "a")
    p.flow("split", "b", condition="amount > 1")
    assert problems(p) == ["parallel_gateway 'split': flow 'split->b' may not carry a condition"]


def test_condition_out_of_an_event_gateway():
    """A condition on a flow out of an event-based gateway is refused, naming the flow."""
    p = bpm.Process("p")
    p.start("start")
    p.event_gateway("eg")
    p.signal_catch("stop", signal="stop")
    p.timer_catch("wait", duration="PT1H")
    p.end("done")
    p.flow("start", "eg")
    p.flow("eg", "stop", "done")
    p.flow("eg", "wait", condition=lambda d: True)
    p.flow("wait", "done")
    assert problems(p) == ["event_gateway 'eg': flow 'eg->wait' may not carry a condition"]


# -- every problem at once -----------------------------------------------------------------
def test_every_problem_is_listed_at_once():
    """One validate() call lists every problem of a badly broken graph, not just the first."""
    p = bpm.Process("broken")
    p.start("start")
    p.script_task("calc")                                   # no fn
    p.service_task("svc")                                   # neither fn nor topic
    p.exclusive_gateway("gw", default="nowhere")            # default not a target
    p.user_task("work")
    p.user_task("work")                                     # duplicate id
    p.timer_boundary("late", attached_to="gw", duration="P1X")   # on a gateway, bad text
    p.message_catch("paid", message="paid")                 # no key
    p.timer_catch("wait")                                   # no timer given
    p.parallel_gateway("stuck")                             # no way out
    p.end("done")
    p.end("early")
    p.user_task("orphan")                                   # unreachable
    p.flow("start", "calc", "svc", "gw")
    p.flow("gw", "work", "done")
    p.flow("gw", "paid", "wait", "stuck")
    p.flow("gw", "early", "done")                           # end with an outgoing flow
    p.flow("work", "ghost")                                 # dangling
    p.flow("work", "done")                                  # duplicate flow
    p.flow("orphan", "done", condition="x ==")              # does not parse
    p.flow("late", "done")
    found = problems(p)
    has(found, "script_task 'calc'", "fn=")
    has(found, "service_task 'svc'", "fn= or topic=")
    has(found, "'gw'", "default 'nowhere'")
    has(found, "duplicate id 'work'")
    has(found, "'late'", "'gw'", "not an activity")
    has(found, "'late'", "'P1X'")
    has(found, "'paid'", "correlation key")
    has(found, "wait", "exactly one of duration, date or cycle")
    has(found, "'stuck'", "no way out")
    has(found, "end event 'early'", "outgoing")
    assert not any("unreachable" in f for f in found)  # a warning, not a problem
    assert "user_task 'orphan' is unreachable from the start event" in p.warnings
    has(found, "'work->ghost'", "dangling", "'ghost'")
    has(found, "duplicate flow 'work->done'")
    has(found, "orphan->done", "'x =='", "does not parse")
    assert len(found) == len(set(found)) >= 13
    with pytest.raises(bpm.ModelError) as info:
        p.validate()
    for msg in found:
        assert msg in str(info.value)


# -- a valid process -----------------------------------------------------------------------
def everything():
    """A valid process using every builder method; returns it and the ids the builders gave."""
    p = bpm.Process("everything", "Every element")
    ids = [
        p.start("start"),
        p.script_task("calc", fn=lambda d: {"n": 1}),
        p.service_task("inline", fn=lambda d: None),
        p.service_task("remote", topic="billing"),
        p.user_task("approve", assignee="alice"),
        p.timer_boundary("late", attached_to="approve", duration="PT24H"),
        p.message_boundary("cancel", attached_to="approve", message="cancel", key="order"),
        p.signal_boundary("halt", attached_to="approve", signal="halt", interrupting=False),
        p.error_boundary("oops", attached_to="remote", error="E1"),
        p.conditional_boundary("big", attached_to="approve", condition="amount > 1000"),
        p.exclusive_gateway("gw", default="split"),
        p.parallel_gateway("split"),
        p.receive_task("receipt", message="receipt", key=lambda d: d["order"]),
        p.timer_catch("pause", date="2026-03-01T09:00:00Z"),
        p.parallel_gateway("join"),
        p.event_gateway("eg"),
        p.message_catch("paid", message="paid", key="order"),
        p.signal_catch("stop", signal="stop"),
        p.timer_catch("tick", cycle="R3/PT10M"),
        p.conditional_catch("ready", condition="len(items) >= 2"),
        p.receive_task("reply", message="reply", key="order"),
        p.message_throw("notify", message="done", key="order", payload=["amount"]),
        p.signal_throw("shout", signal="finished", payload=("amount",)),
        p.end("done"),
        p.end("stopped", terminate=True),
        p.end("failed", error="E2"),
    ]
    p.flow("start", "calc", "inline", "remote", "approve", "gw")
    p.flow("gw", "split", "receipt", "join")
    p.flow("gw", "done", condition="amount < 0")
    p.flow("split", "pause", "join", "eg")
    for arm in ("paid", "stop", "tick", "ready", "reply"):
        p.flow("eg", arm)
    p.flow("paid", "notify", "shout", "done")
    p.flow("stop", "stopped")
    for arm in ("tick", "ready", "reply"):
        p.flow(arm, "done")
    for b in ("late", "cancel", "halt", "oops", "big"):
        p.flow(b, "failed")
    return p, ids


def test_valid_process_validates_and_returns_itself():
    """validate() on a valid process returns the same process, so calls chain."""
    p, _ = everything()
    assert p.validate() is p
    assert base().validate().id == "p"


def test_builder_methods_return_the_element_id():
    """Each builder method returns the id it was given."""
    p, ids = everything()
    assert ids == [e.id for e in p.elements]
    assert ids[:3] == ["start", "calc", "inline"]


def test_flow_returns_the_flow_ids():
    """flow(a, b, c) draws a chain and returns the ids of its flows."""
    p = bpm.Process("p")
    assert p.flow("a", "b", "c") == ["a->b", "b->c"]
    assert [(f.source, f.target) for f in p.flows] == [("a", "b"), ("b", "c")]


def test_flow_needs_two_ids():
    """flow() with fewer than two ids raises ModelError at once."""
    with pytest.raises(bpm.ModelError, match="at least two"):
        bpm.Process("p").flow("a")


def test_process_id_must_be_a_string():
    """A process needs a non-empty string id."""
    with pytest.raises(bpm.ModelError):
        bpm.Process("")


def test_definition_exposes_the_parsed_graph():
    """The definition indexes flows, boundaries and parsed timers by element id."""
    p, _ = everything()
    d = p.definition()
    assert d.start == "start"
    assert [f.target for f in d.outgoing["gw"]] == ["split", "done"]
    assert [f.source for f in d.incoming["join"]] == ["receipt", "pause"]
    assert [b.id for b in d.boundaries["approve"]] == ["late", "cancel", "halt", "big"]
    assert [b.id for b in d.boundaries["remote"]] == ["oops"]
    assert d.timers["late"] == timedelta(hours=24)
    assert d.timers["tick"] == Cycle(3, timedelta(minutes=10))
    assert d.timers["pause"].isoformat() == "2026-03-01T09:00:00+00:00"
    assert d.node("approve").assignee == "alice"


def test_definition_is_immutable():
    """Mutating a definition's mappings, fields or elements raises."""
    d = everything()[0].definition()
    for mapping in (d.nodes, d.outgoing, d.incoming, d.boundaries, d.timers):
        with pytest.raises(TypeError):
            mapping["x"] = None
        with pytest.raises(TypeError):
            del mapping[next(iter(mapping))]
    with pytest.raises(AttributeError):
        d.flows.append(None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.signature = "forged"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.nodes["approve"].assignee = "mallory"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.flows[0].target = "done"


def test_definition_is_a_snapshot():
    """Building more after definition() leaves the earlier definition as it was."""
    p = base()
    before = p.definition()
    p.user_task("extra")
    p.flow("work", "extra", "done")
    after = p.definition()
    assert "extra" not in before.nodes
    assert "extra" in after.nodes
    assert before.signature != after.signature


def approval(duration="PT24H"):
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("late", attached_to="approve", duration=duration, interrupting=True)
    p.end("done")
    p.end("escalated")
    p.flow("start", "approve", "done")
    p.flow("late", "escalated")
    return p


def test_signature_same_for_same_graph_and_changes_with_duration():
    """Two identically built processes share a signature; a changed duration changes it."""
    a, b = approval().definition(), approval().definition()
    assert a.signature == b.signature
    assert approval("PT25H").definition().signature != a.signature
    assert approval(timedelta(hours=24)).definition().signature == \
        approval(timedelta(hours=24)).definition().signature


def test_signature_changes_with_a_condition():
    """Changing a flow's condition text changes the signature."""
    def build(cond):
        p = bpm.Process("p")
        p.start("s")
        p.exclusive_gateway("gw", default="b")
        p.end("a")
        p.end("b")
        p.flow("s", "gw")
        p.flow("gw", "a", condition=cond)
        p.flow("gw", "b")
        return p.definition().signature
    assert build("amount > 1") == build("amount > 1")
    assert build("amount > 1") != build("amount > 2")


SIGNATURE_SCRIPT = textwrap.dedent("""
    import gobpm_nb as bpm
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
    p.message_boundary("cancel", attached_to="approve", message="cancel", key="order")
    p.exclusive_gateway("gw", default="done")
    p.end("done")
    p.end("escalated")
    p.flow("start", "approve", "gw", "done")
    p.flow("gw", "escalated", condition="amount > 100 and status in {'a', 'b'}")
    p.flow("late", "escalated")
    p.flow("cancel", "escalated")
    print(p.definition().signature)
""")


@pytest.mark.slow  # fresh interpreters
def test_signature_is_stable_across_python_processes():
    """The signature is the same in fresh interpreters with different hash seeds."""
    outs = []
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", SIGNATURE_SCRIPT], env=env,
                              capture_output=True, text=True, check=True, timeout=60)
        outs.append(done.stdout.strip())
    assert len(outs[0]) == 16
    assert outs[0] == outs[1] == outs[2]
