"""The Python side of the notebook widgets: traits, reprs, command routing, coalescing."""

from __future__ import annotations

import pytest
import traitlets

from gobpm_nb.ui import Coalescer, DashboardWidget, GraphWidget
from gobpm_nb.ui.shared import SHARED_JS
from gobpm_nb.ui.widgets import COMMAND_FIELDS

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class FakeClock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_graph_widget_trait_defaults():
    """A new GraphWidget is an empty graph view with no title and no legend."""
    w = GraphWidget()
    assert (w.view, w.title, w.dot, w.legend) == ("graph", "", "", [])


def test_dashboard_widget_trait_defaults():
    """A new DashboardWidget shows an empty engine state and no error."""
    w = DashboardWidget()
    assert w.view == "dashboard"
    assert (w.clock, w.selected, w.lineage_dot, w.process_dot, w.error) == ("", "", "", "", "")
    assert (w.counters, w.tasks, w.holds, w.facts, w.instances) == ({}, [], [], [], [])
    assert (w.fact_page, w.last_step, w.publish_notice) == ({}, "", {})
    assert w.playing is False
    assert (w.moment, w.live) == ("", False)  # no header line until bound to an engine


def test_every_trait_of_the_contract_is_synced():
    """Each trait the front end reads is tagged sync=True."""
    graph = {"view", "title", "dot", "bpmn", "marks", "legend", "_shared", "_shared_digest"}
    dash = {
        "_shared",
        "_shared_digest",
        "view",
        "clock",
        "counters",
        "tasks",
        "holds",
        "facts",
        "fact_page",
        "last_step",
        "publish_notice",
        "instances",
        "selected",
        "lineage_dot",
        "process_dot",
        "process_bpmn",
        "process_marks",
        "playing",
        "moment",
        "live",
        "error",
    }
    assert graph <= set(GraphWidget().trait_names(sync=True))
    assert dash <= set(DashboardWidget().trait_names(sync=True))


def test_both_widgets_load_the_committed_bundle():
    """Both classes send the same bundled ES module, whose default export is the widget."""
    esm = GraphWidget()._esm
    assert esm == DashboardWidget()._esm
    assert esm.rstrip().endswith("as default};")


def test_view_is_fixed():
    """The view trait can be neither passed nor changed."""
    with pytest.raises(TypeError, match="'view'"):
        GraphWidget(view="dashboard")
    w = DashboardWidget()
    with pytest.raises(traitlets.TraitError):
        w.view = "graph"


def test_unknown_keyword_arguments_are_rejected_by_name():
    """A misspelt keyword argument raises TypeError naming every unknown name."""
    with pytest.raises(TypeError, match=r"GraphWidget\(\).*'lgend', 'titel'"):
        GraphWidget(titel="x", lgend=[])
    with pytest.raises(TypeError, match="'clok'"):
        DashboardWidget(clok="2026-01-01T00:00:00Z")


def test_legend_entries_are_label_colour_pairs():
    """Legend tuples become [label, colour] lists and other shapes are refused."""
    w = GraphWidget(legend=[("running", "#1f77b4"), ("dehydrated", "lightgrey")])
    assert w.legend == [["running", "#1f77b4"], ["dehydrated", "lightgrey"]]
    with pytest.raises(traitlets.TraitError):
        w.legend = [("only a label",)]


def test_counters_must_be_integers():
    """The counters trait holds names mapped to integers only."""
    w = DashboardWidget(counters={"resident": 3, "dehydrated": 97})
    assert w.counters == {"resident": 3, "dehydrated": 97}
    with pytest.raises(traitlets.TraitError):
        w.counters = {"resident": "three"}


def test_reprs_are_deterministic():
    """Two equal widgets have the same repr, free of ids and memory addresses."""
    a = GraphWidget(title="Lineage of i1", dot="digraph { a -> b }")
    b = GraphWidget(title="Lineage of i1", dot="digraph { a -> b }")
    assert repr(a) == repr(b) == "GraphWidget(title='Lineage of i1')"
    kw = {"clock": "2026-01-01T00:00:00Z", "instances": ["i1", "i2"], "facts": [{"seq": 1}]}
    assert (
        repr(DashboardWidget(**kw))
        == repr(DashboardWidget(**kw))
        == ("DashboardWidget(clock='2026-01-01T00:00:00Z', instances=2, tasks=0, holds=0, facts=1)")
    )
    assert "0x" not in repr(a) and a.model_id not in repr(a)


def test_mimebundle_has_widget_view_and_fixed_text():
    """The rich repr carries the widget view and the deterministic text/plain."""
    w = GraphWidget(title="Process approval")
    data, _metadata = w._repr_mimebundle_()
    assert data["text/plain"] == "GraphWidget(title='Process approval')"
    assert data[WIDGET_MIME]["model_id"] == w.model_id


def test_commands_are_routed_by_kind():
    """Each custom message goes to the handler registered for its kind, whole."""
    w = DashboardWidget()
    seen = []
    for kind in ("step", "advance", "publish"):
        w.on_command(kind, seen.append)
    w._handle_custom_msg({"kind": "step"}, [])
    w._handle_custom_msg({"kind": "advance", "duration": "PT1H"}, [])
    w.handle_command({"kind": "publish", "name": "paid", "key": "o-7", "payload": {"a": 1}})
    assert seen == [
        {"kind": "step"},
        {"kind": "advance", "duration": "PT1H"},
        {"kind": "publish", "name": "paid", "key": "o-7", "payload": {"a": 1}},
    ]
    assert w.error == ""
    assert w.commands == ["advance", "publish", "step"]


def test_unknown_kind_sets_error_naming_it():
    """A message of an unregistered kind sets the error trait and does not raise."""
    w = DashboardWidget()
    w.on_command("step", lambda message: None)
    w._handle_custom_msg({"kind": "rewind", "to": "PT0S"}, [])
    assert "'rewind'" in w.error and "step" in w.error


def test_malformed_messages_set_error():
    """A message without a string kind is reported in the error trait, not raised."""
    w = DashboardWidget()
    w._handle_custom_msg(["not", "a", "dict"], [])
    assert w.error.startswith("malformed command")
    w.error = ""
    w._handle_custom_msg({"duration": "PT1H"}, [])
    assert w.error.startswith("malformed command")


def test_handler_exception_sets_error_naming_kind():
    """A handler that raises leaves its kind and message in the error trait."""
    w = DashboardWidget()

    def advance(message):
        raise ValueError(f"not an ISO 8601 duration: {message['duration']!r}")

    w.on_command("advance", advance)
    w._handle_custom_msg({"kind": "advance", "duration": "soon"}, [])
    assert w.error == "command 'advance' failed: ValueError: not an ISO 8601 duration: 'soon'"


def test_successful_command_clears_error_before_handler_runs():
    """The error is cleared before a handler runs, so a handler may set a new one."""
    w = DashboardWidget(error="old problem")
    w.on_command("step", lambda message: None)
    w.handle_command({"kind": "step"})
    assert w.error == ""

    def run(message):
        w.error = "cycle timer armed: pass until="

    w.on_command("run", run)
    w.handle_command({"kind": "run"})
    assert w.error == "cycle timer armed: pass until="


def test_select_updates_selected_without_a_handler():
    """Choosing an instance needs no handler; a registered one is still called."""
    w = DashboardWidget(instances=["i1", "i2"])
    w.handle_command({"kind": "select", "instance": "i2"})
    assert (w.selected, w.error) == ("i2", "")
    chosen = []
    w.on_command("select", lambda message: chosen.append(message["instance"]))
    w.handle_command({"kind": "select", "instance": "i1"})
    assert (w.selected, chosen) == ("i1", ["i1"])


def test_on_command_checks_its_arguments():
    """Registering a non-callable handler or an empty kind is a TypeError."""
    w = DashboardWidget()
    with pytest.raises(TypeError, match="'step'"):
        w.on_command("step", "not callable")
    with pytest.raises(TypeError):
        w.on_command("", print)


def test_command_table_matches_the_front_end():
    """The documented command kinds are the ones the shared module's dashboard sends."""
    code = SHARED_JS.read_text(encoding="utf-8")
    for kind in COMMAND_FIELDS:
        assert f'kind:"{kind}"' in code


def test_coalescer_limits_pushes_in_a_burst():
    """100,000 pokes within 0.5 s of fake time push at most 11 times, and flush pushes the end."""
    clock = FakeClock()
    state = {"value": 0}
    pushed = []
    c = Coalescer(lambda: pushed.append(state["value"]), interval=0.05, clock=clock)
    n = 100_000
    for i in range(1, n + 1):
        state["value"] = i
        clock.now = 0.5 * (i - 1) / (n - 1)
        c.poke()
    assert 1 <= len(pushed) <= 11
    assert pushed[0] == 1
    c.flush()
    assert pushed[-1] == n
    assert not c.pending
    count = len(pushed)
    c.flush()
    assert len(pushed) == count


def test_coalescer_pushes_at_once_after_a_quiet_interval():
    """A poke after a full interval of quiet pushes immediately, nothing stays pending."""
    clock = FakeClock()
    pushes = []
    c = Coalescer(lambda: pushes.append(clock.now), interval=0.05, clock=clock)
    c.poke()
    clock.now = 0.01
    c.poke()
    assert (pushes, c.pending) == ([0.0], True)
    clock.now = 0.2
    c.poke()
    assert (pushes, c.pending) == ([0.0, 0.2], False)
    c.flush()
    assert pushes == [0.0, 0.2]


def test_coalescer_keeps_the_change_pending_when_push_fails():
    """If push raises, the change stays pending and flush retries it."""
    calls = []

    def push():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("comm closed")

    c = Coalescer(push, clock=FakeClock())
    with pytest.raises(RuntimeError):
        c.poke()
    assert c.pending
    c.flush()
    assert (len(calls), c.pending) == (2, False)


def test_coalescer_rejects_a_negative_interval():
    """A negative interval is a ValueError."""
    with pytest.raises(ValueError, match="-1"):
        Coalescer(lambda: None, interval=-1)


def test_dashboard_repr_counts_the_kept_log_and_says_what_the_last_step_did():
    """The repr counts the facts the log keeps (not the rows of one page) and carries the
    last-step line once there is one."""
    w = DashboardWidget(facts=[{"seq": 201}], fact_page={"kept": 250, "total": 250})
    assert repr(w).endswith("facts=250)")
    w.last_step = "Step: timer event · instance i1 · track t1 · node late"
    assert repr(w).endswith("facts=250, last_step='Step: timer event · instance i1 · track t1 "
                            "· node late')")
