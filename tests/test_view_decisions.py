"""Decisions in the dashboard (issue 23): the waiting decisions in its state (read through
``Engine.decisions``), the ``decide`` command its buttons and the diagram's flows send, the
flows drawn dashed where a person may choose, and what a refused choice says."""

from __future__ import annotations

import re

import pytest
from conftest import snapshot

import gobpm_nb as bpm
from gobpm_nb.observe import projections as proj
from gobpm_nb.observe.choices import decision_rows
from gobpm_nb.render.dot import HOLD_LOOKS, process_dot
from gobpm_nb.render.marks import bpmn_legend
from gobpm_nb.ui import dashboard_traits
from gobpm_nb.ui.widgets import COMMAND_FIELDS

DECISION = HOLD_LOOKS["decision"][1]
TRAITS = ("clock", "counters", "tasks", "holds", "decisions", "facts", "fact_page",
          "instances", "instance_rows", "selected", "lineage_dot", "process_dot",
          "process_bpmn", "process_marks")


def review(gateway: str = "ok", flow_ids: bool = True) -> bpm.Process:
    """start -> decision -> "Ship it" (flow yes) or "fix" (flow no) -> ends."""
    p = bpm.Process("review")
    p.start("s")
    p.exclusive_gateway(gateway, "Looks good?")
    p.user_task("ship", "Ship it")
    p.user_task("fix")
    p.end("shipped")
    p.end("fixed")
    p.flow("s", gateway)
    if flow_ids:
        p.flow(gateway, "ship", id="yes")
        p.flow(gateway, "fix", id="no")
    else:
        p.flow(gateway, "ship")
        p.flow(gateway, "fix")
    p.flow("ship", "shipped")
    p.flow("fix", "fixed")
    p.decide(gateway)
    return p


@pytest.fixture
def waiting():
    """Two instances waiting at their decision, and a dashboard on the engine."""
    eng = bpm.Engine()
    eng.start(review())
    eng.start(review())
    eng.run()
    board = eng.dashboard()
    yield eng, board
    board.close()


def traits(board):
    return {name: getattr(board, name) for name in TRAITS}


def test_the_dashboard_state_lists_the_shown_instances_decisions_and_counts_the_engines(waiting):
    eng, board = waiting
    flows = [{"flow": "yes", "target": "ship", "label": "→ Ship it"},
             {"flow": "no", "target": "fix", "label": "→ fix"}]
    assert board.selected == "i1"
    assert board.decisions == {"total": 2, "rows": [
        {"instance": "i1", "track": "t1", "gateway": "ok", "label": "Looks good?",
         "several": False, "flows": flows}], "activations": []}
    assert proj.dashboard_state(eng, "i2").decisions["rows"][0]["instance"] == "i2"
    assert traits(board) == dashboard_traits(eng, "i1")
    assert "decide" in board.commands and COMMAND_FIELDS["decide"] == \
        ("instance", "flow", "track")


def test_a_flow_is_labelled_by_its_name_in_the_file():
    """A flow the file names is labelled by its name, on its button and its diagram badge."""
    xml = review().to_bpmn()
    xml, count = re.subn(r'(<(?:bpmn:)?sequenceFlow id="yes")', r'\1 name="Ship it now"', xml)
    assert count == 1
    q = bpm.Process.from_bpmn(xml)
    q.decide("ok")  # a file does not say a gateway is a decision
    eng = bpm.Engine()
    eng.start(q)
    eng.run()
    board = eng.dashboard()
    try:
        labels = [f["label"] for f in board.decisions["rows"][0]["flows"]]
        assert labels == ["Ship it now", "→ fix"]
        assert [c["label"] for c in board.process_marks["choices"]] == labels
    finally:
        board.close()
    assert decision_rows(eng, "") == [] and decision_rows(eng, "i1")[0]["flows"][1]["label"] \
        == "→ fix"


def test_deciding_from_the_dashboard_is_the_engines_decide_command(waiting):
    """The ``decide`` command calls ``eng.decide`` (it is in the command history), says what
    it did, and the dashboard shows the engine after it; Run takes the chosen way."""
    eng, board = waiting
    board._handle_custom_msg({"kind": "decide", "instance": "i1", "flow": "yes", "track": "t1"},
                             [])
    assert board.error == ""
    assert eng.history()[-1].name == "decide"
    assert eng.history()[-1].args[:2] == ("i1", "yes")
    assert board.last_step.startswith("Decide ok (instance i1, track t1): flow yes → ship")
    assert board.decisions == {"total": 1, "rows": [], "activations": []}
    assert traits(board) == dashboard_traits(eng, "i1")
    board._handle_custom_msg({"kind": "run"}, [])
    assert [t["node"] for t in board.tasks] == ["ship"]
    # by the node it leads to, with no track: as eng.decide takes it
    board._handle_custom_msg({"kind": "decide", "instance": "i2", "flow": "fix", "track": ""},
                             [])
    assert board.error == "" and board.decisions == {"total": 0, "rows": [], "activations": []}
    board._handle_custom_msg({"kind": "run"}, [])
    assert sorted(t["node"] for t in board.tasks) == ["fix", "ship"]


@pytest.mark.parametrize("command, message", [
    ({"instance": "i1", "flow": "maybe"},
     "command 'decide' failed: EngineError: 'maybe' is not a flow of the decision"),
    ({"instance": "i1", "flow": "yes", "track": "t9"},
     "command 'decide' failed: EngineError: instance 'i1' waits at no decision on track 't9'"),
    ({"instance": "i7", "flow": "yes"}, "command 'decide' failed: EngineError: unknown instance"),
    ({"instance": "i1"}, "command 'decide' failed: ValueError: decide needs a flow"),
    ({"flow": "yes"}, "command 'decide' failed: ValueError: decide needs an instance id"),
    ({"instance": "i1", "flow": "yes", "track": 3}, "decide's track must be a track id"),
])
def test_a_refused_decision_says_why_in_the_error_bar_and_changes_nothing(waiting, command,
                                                                          message):
    eng, board = waiting
    before, shown = snapshot(eng), board.decisions
    board._handle_custom_msg({"kind": "decide", **command}, [])
    assert message in board.error
    assert snapshot(eng) == before and board.decisions == shown


def test_a_decision_taken_twice_is_refused_the_second_time(waiting):
    eng, board = waiting
    board.handle_command({"kind": "decide", "instance": "i1", "flow": "yes"})
    board.handle_command({"kind": "decide", "instance": "i1", "flow": "no"})
    assert board.error.startswith("command 'decide' failed: EngineError")


def test_a_frozen_dashboard_refuses_a_decision(waiting):
    eng, board = waiting
    board.freeze()
    board.handle_command({"kind": "decide", "instance": "i1", "flow": "yes"})
    assert board.error.startswith("frozen at fact")
    assert len(eng.decisions()) == 2


def test_the_diagram_draws_the_choosable_flows_with_the_command_a_click_sends():
    """Flows built in Python are drawn under other ids (``Flow_ok_ship``): a choice carries
    the drawn id and the definition's flow for the command."""
    eng = bpm.Engine()
    eng.start(review(flow_ids=False))
    eng.run()
    board = eng.dashboard()
    try:
        choices = board.process_marks["choices"]
        assert [c["decide"] for c in choices] == [
            {"instance": "i1", "track": "t1", "flow": "ok->ship"},
            {"instance": "i1", "track": "t1", "flow": "ok->fix"}]
        drawn = [c["flow"] for c in choices]
        assert all(f'id="{flow}"' in board.process_bpmn for flow in drawn)
        assert board.process_marks["colours"]["decision"] == DECISION
        assert ["?", "decision"] == [b["text"][0] for b in _badges(board, "ok")] + ["decision"]
        board.handle_command({"kind": "decide", **choices[1]["decide"]})
        assert board.error == "" and board.process_marks["choices"] == []
    finally:
        board.close()
    assert any("click it on a dashboard" in label for label, _ in bpmn_legend())


def _badges(board, node):
    (entry,) = [e for e in board.process_marks["elements"] if e["id"] == node]
    return [b for b in entry["badges"] if b["kind"] == "hold"]


def test_graphviz_draws_the_choosable_flows_dashed_in_the_decision_colour():
    """A gateway whose id is no XML name has no BPMN drawing: Graphviz draws its choosable
    flows dashed; once decided they are drawn as before."""
    eng = bpm.Engine()
    eng.start(review(gateway="ok?"))
    eng.run()
    dot = process_dot(proj.process_state(eng, "i1"))
    dashed = [line for line in dot.splitlines() if "dashed" in line and DECISION in line]
    assert [line.split(" [")[0].strip() for line in dashed] == ['"ok?" -> "ship"',
                                                               '"ok?" -> "fix"']
    board = eng.dashboard()
    try:
        assert board.process_bpmn == "" and board.decisions["total"] == 1
        board.handle_command({"kind": "decide", "instance": "i1", "flow": "no"})
        assert DECISION not in [line for line in board.process_dot.splitlines()
                                if "->" in line][1]
    finally:
        board.close()


def adhoc() -> bpm.Process:
    """start -> ad-hoc "Work" [user task "Check", task "draft"] -> end, a person chooses."""
    p = bpm.Process("adhoc")
    p.start("s")
    with p.adhoc_subprocess("work", "Work") as w:
        w.user_task("check", "Check")
        w.script_task("draft", fn=lambda d: {"drafted": True})
    p.end("e")
    p.flow("s", "work", "e")
    return p


def test_an_adhoc_subprocess_waiting_for_a_person_has_a_button_per_element():
    """The decisions trait lists the selected instance's waiting ad-hoc subprocess with its
    activatable elements; the ``activate`` command is ``eng.activate`` (in the history), says
    what it did, and a refused one goes to the error bar, changing nothing."""
    eng = bpm.Engine()
    inst = eng.start(adhoc())
    eng.run()
    board = eng.dashboard()
    try:
        assert board.decisions == {"total": 1, "rows": [], "activations": [
            {"instance": "i1", "track": "t1", "adhoc": "work", "label": "Work",
             "elements": [{"element": "check", "label": "Check"},
                          {"element": "draft", "label": "draft"}]}]}
        assert COMMAND_FIELDS["activate"] == ("instance", "adhoc", "element", "track")
        before, shown = snapshot(eng), board.decisions
        board.handle_command({"kind": "activate", "instance": "i1", "adhoc": "work",
                              "element": "nope"})
        assert "command 'activate' failed: EngineError: 'nope' is not an activatable" in \
            board.error
        assert snapshot(eng) == before and board.decisions == shown
        board.handle_command({"kind": "activate", "instance": "i1", "adhoc": "work",
                              "element": "draft", "track": "t1"})
        assert board.error == ""
        assert eng.history()[-1].name == "activate"
        assert board.last_step.startswith("Activate draft in work (instance i1)")
        assert traits(board) == dashboard_traits(eng, "i1")
        board.handle_command({"kind": "run"})
        assert inst.state == "completed" and inst.data["drafted"] is True
        assert board.decisions == {"total": 0, "rows": [], "activations": []}
    finally:
        board.close()


def fanout() -> bpm.Process:
    """start -> inclusive decision "which" -> "Pack" or "gift" or both -> inclusive join."""
    p = bpm.Process("fanout")
    p.start("s")
    p.inclusive_gateway("which", "Which?")
    p.user_task("pack", "Pack")
    p.user_task("gift")
    p.inclusive_gateway("join")
    p.end("done")
    p.flow("s", "which")
    p.flow("which", "pack", id="to_pack")
    p.flow("which", "gift", id="to_gift")
    p.flow("pack", "join")
    p.flow("gift", "join")
    p.flow("join", "done")
    p.decide("which")
    return p


def test_an_inclusive_decision_is_shown_as_several_and_takes_the_flows_sent():
    """The row and the diagram's choices say ``several``; the ``decide`` command with a list
    of flows takes each (``eng.decide`` with the list) and says so."""
    eng = bpm.Engine()
    eng.start(fanout())
    eng.run()
    board = eng.dashboard()
    try:
        (row,) = board.decisions["rows"]
        assert row["several"] is True and [f["flow"] for f in row["flows"]] == \
            ["to_pack", "to_gift"]
        assert [c["several"] for c in board.process_marks["choices"]] == [True, True]
        board.handle_command({"kind": "decide", "instance": "i1",
                              "flow": ["to_gift", "to_pack"], "track": "t1"})
        assert board.error == ""
        assert eng.history()[-1].args[:2] == ("i1", ["to_gift", "to_pack"])
        assert board.last_step.startswith("Decide which (instance i1, track t1): flows "
                                          "to_pack → pack, to_gift → gift")
        board._handle_custom_msg({"kind": "run"}, [])
        assert sorted(t["node"] for t in board.tasks) == ["gift", "pack"]
    finally:
        board.close()


@pytest.mark.parametrize("flow, message", [
    ([], "ValueError: decide needs a flow"),
    (["to_pack", 3], "ValueError: decide needs a flow"),
    (["to_pack", "to_pack"], "EngineError: flow 'to_pack' is given twice"),
])
def test_a_refused_list_of_flows_says_why_and_changes_nothing(flow, message):
    eng = bpm.Engine()
    eng.start(fanout())
    eng.run()
    board = eng.dashboard()
    try:
        before = snapshot(eng)
        board.handle_command({"kind": "decide", "instance": "i1", "flow": flow})
        assert message in board.error
        assert snapshot(eng) == before
    finally:
        board.close()
