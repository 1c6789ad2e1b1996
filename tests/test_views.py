"""Live widgets bound to an engine: synced traits after each API call, commands, safety."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import approval, snapshot, ticks_until

import gobpm_nb as bpm
from gobpm_nb.observe import projections as proj
from gobpm_nb.render import dot as render
from gobpm_nb.render.lineage import lineage_dot, lineage_legend
from gobpm_nb.render.marks import bpmn_legend
from gobpm_nb.ui import Dashboard, LineageView, ProcessView, dashboard_traits, flush_all
from gobpm_nb.ui import live as live_module
from gobpm_nb.ui import views as views_module

XSS = "<img src=x onerror=alert(1)>"
TRAITS = ("clock", "counters", "tasks", "holds", "decisions", "facts", "fact_page", "instances",
          "instance_rows", "selected", "lineage_dot", "process_dot", "process_bpmn",
          "process_marks")

NODE = re.compile(r'^\s+"((?:[^"\\]|\\.)*)" \[(.*)\]$', re.MULTILINE)
EDGE = re.compile(r'^\s+"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)" \[(.*)\]$', re.MULTILINE)
EDGE_LABEL = re.compile(r'(?<![a-z])label="((?:[^"\\]|\\.)*)"')


def order():
    """Fork into a user task (with a non-interrupting 2 h reminder) and a message wait; join."""
    p = bpm.Process("order")
    p.start("start")
    p.parallel_gateway("split")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("remind", attached_to="approve", duration="PT2H", interrupting=False)
    p.message_catch("pay", message="paid", key="order")
    p.parallel_gateway("merge")
    p.end("done")
    p.end("reminded")
    p.flow("start", "split", "approve", "merge", "done")
    p.flow("split", "pay", "merge")
    p.flow("remind", "reminded")
    return p.validate()


def graph(dot):
    """Nodes (id -> label lines) and edges (parent, child, label) of a DOT text."""
    nodes = {}
    for i, attrs in NODE.findall(dot):
        label = EDGE_LABEL.search(attrs)
        if label:
            nodes[i] = label.group(1).split("\\n")
    edges = []
    for a, b, attrs in EDGE.findall(dot):
        label = EDGE_LABEL.search(attrs)
        edges.append((a, b, label.group(1) if label else None))
    return nodes, edges


def lineage_rows(eng, iid="i1"):
    return [(t.id, t.node, t.state, t.parents, t.origin) for t in proj.lineage(eng, iid).tracks]


def traits(w):
    return {name: getattr(w, name) for name in TRAITS}


@pytest.fixture
def live():
    """An engine with one order instance and its three live widgets."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    board, lin, pv = eng.dashboard(), inst.lineage(live=True), inst.process_view(live=True)
    yield eng, inst, board, lin, pv
    for w in (board, lin, pv):
        w.close()


def refresh(*widgets):
    for w in widgets:
        w.refresh()


def test_constructors_return_bound_widgets(live):
    """eng.dashboard(), inst.lineage() and inst.process_view() return the bound widget classes."""
    eng, inst, board, lin, pv = live
    assert isinstance(board, Dashboard) and isinstance(lin, LineageView)
    assert isinstance(pv, ProcessView)
    assert (lin.view, pv.view, board.view) == ("graph", "graph", "dashboard")
    assert lin.title == "lineage of i1" and pv.title == "process view of i1"
    assert lin.legend == lineage_legend() and pv.legend == bpmn_legend()
    assert pv.bpmn.startswith("<?xml") and lin.bpmn == ""  # BPMN notation; lineage in Graphviz


def test_traits_after_step(live):
    """After one step the widgets show the single ready track at the start event."""
    eng, inst, board, lin, pv = live
    eng.step()
    refresh(board, lin, pv)
    assert lineage_rows(eng) == [("t1", "start", "ready", (), "start")]
    nodes, edges = graph(lin.dot)
    assert nodes == {"t1": ["t1", "start", "ready"]} and edges == []
    assert board.counters == {"resident": 1, "dehydrated": 0, "finished": 0, "coroutines": 2,
                              "holds": 0, "tasks": 0}
    assert (board.holds, board.tasks, board.instances, board.selected) == ([], [], ["i1"], "i1")
    assert board.clock == "2026-01-01T00:00:00Z"
    assert board.lineage_dot == lin.dot and board.process_dot == pv.dot
    assert "● t1 ready" in pv.dot
    assert traits(board) == dashboard_traits(eng, "i1")


def test_traits_after_advance(live):
    """After advancing 3 h the fork, the reminder's boundary fork and both dehydrated waits show."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    refresh(board, lin, pv)
    assert inst.residency == "dehydrated"
    assert lineage_rows(eng) == [
        ("t1", "approve", "dehydrated", (), "start"),
        ("t2", "pay", "dehydrated", ("t1",), "fork"),
        ("t3", "reminded", "completed", ("t1",), "boundary"),
    ]
    nodes, edges = graph(lin.dot)
    assert nodes == {"t1": ["t1", "approve", "dehydrated"], "t2": ["t2", "pay", "dehydrated"],
                     "t3": ["t3", "reminded", "completed"]}
    assert edges == [("t1", "t2", "fork"), ("t1", "t3", "boundary fork")]
    assert 'style="rounded,filled,dashed"' in lin.dot  # dehydrated tracks look different
    assert "dehydrated: checkpoint in the store, no coroutines" in lin.dot
    assert board.counters == {"resident": 0, "dehydrated": 1, "finished": 0, "coroutines": 0,
                              "holds": 2, "tasks": 1}
    assert board.holds == [
        {"instance": "i1", "track": "t2", "kind": "message", "wait_kind": "node", "node": "pay",
         "deadline": None, "keys": ["paid", "o-7"]},
        {"instance": "i1", "track": "t1", "kind": "task", "wait_kind": "node",
         "node": "approve", "deadline": None, "keys": ["i1:approve:1"]},
    ]
    assert board.tasks == [{"id": "i1:approve:1", "instance": "i1", "node": "approve",
                            "assignee": "alice"}]
    assert board.clock == "2026-01-01T03:00:00Z"
    state = proj.process_state(eng, "i1")
    assert state.path == ("start", "split", "remind", "reminded")
    assert [tuple(t) for t in state.tokens] == [("t1", "approve", "dehydrated"),
                                                ("t2", "pay", "dehydrated")]
    pnodes, pedges = graph(pv.dot)
    assert pnodes["approve"][-2:] == ["● t1 dehydrated", "☺ i1:approve:1"]
    assert pnodes["pay"] == ["✉"]  # an event: its words are in the xlabel
    assert 'xlabel="pay\\npaid · order\\n● t2 dehydrated\\n✉ paid, o-7"' in pv.dot
    assert ("remind", "reminded", None) in pedges
    assert '"start" -> "split" [color="#2b8a3e", penwidth=2.4]' in pv.dot  # path taken
    assert '"approve" -> "merge" [color="#868e96", penwidth=1.1]' in pv.dot
    assert traits(board) == dashboard_traits(eng, "i1")


def test_traits_after_message_and_task(live):
    """The message wakes the dehydrated instance as a continuation fork; the join ends it."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    eng.publish_message("paid", key="o-7")
    assert inst.residency == "dehydrated"  # its wake is the next scheduler event
    assert eng.step().kind == "wake"
    refresh(board, lin, pv)
    assert inst.residency == "resident"
    # the wake ran the continuation within its event: from the catch on to the join
    assert lineage_rows(eng)[3:] == [("t4", "merge", "running", ("t2",), "continuation")]
    assert graph(lin.dot)[1][-1] == ("t2", "t4", "continuation")
    assert [h["kind"] for h in board.holds] == ["task"]
    assert board.counters["resident"] == 1 and board.counters["holds"] == 1

    eng.complete_task("i1:approve:1", {"ok": True})
    eng.run()
    refresh(board, lin, pv)
    assert (inst.state, inst.residency) == ("completed", "finished")
    assert lineage_rows(eng) == [
        ("t1", "merge", "merged", (), "start"),  # the task went to the resident track t1
        ("t2", "pay", "dehydrated", ("t1",), "fork"),
        ("t3", "reminded", "completed", ("t1",), "boundary"),
        ("t4", "merge", "merged", ("t2",), "continuation"),
        ("t5", "done", "completed", ("t1", "t4"), "join"),
    ]
    nodes, edges = graph(lin.dot)
    assert edges == [("t1", "t2", "fork"), ("t1", "t3", "boundary fork"),
                     ("t2", "t4", "continuation"), ("t1", "t5", "join"), ("t4", "t5", "join")]
    assert nodes["t5"] == ["t5", "done", "completed"]
    assert board.counters == {"resident": 0, "dehydrated": 0, "finished": 1, "coroutines": 0,
                              "holds": 0, "tasks": 0}
    assert board.holds == [] and board.tasks == []
    assert proj.process_state(eng, "i1").tokens == ()
    assert traits(board) == dashboard_traits(eng, "i1")
    assert repr(lin) == "LineageView('i1', tracks=5, state='completed', residency='finished', " \
        "moment='live')"
    assert repr(pv) == "ProcessView('i1', process='order', tokens=0, holds=0, moment='live')"


def test_facts_trait_is_the_log_tail(live):
    """The dashboard's fact timeline is the newest facts of the log, details as short text."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    board.refresh()
    expected = [proj.fact_row(f) for f in eng.facts[-proj.FACT_TAIL:]]
    assert board.facts == expected
    held = [f["details"] for f in board.facts if f["kind"] == "wait_held"]
    assert held[:2] == ["kind=message, wait_kind=node", "kind=task, wait_kind=node"]
    dehydrated = [f["details"] for f in board.facts if f["kind"] == "dehydrated"]
    assert dehydrated == ["wait_kinds=message+task+timer, waits=3, coroutines=0",
                          "wait_kinds=message+task, waits=2, coroutines=0"]


def test_reading_never_changes_residency(live):
    """Refreshing every widget of a dehydrated instance leaves it dehydrated with no coroutines."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    before = eng.stats()
    for _ in range(3):
        refresh(board, lin, pv)
    assert inst.residency == "dehydrated" and eng.stats() == before
    assert eng.stats()["coroutines"] == 0


def test_flush_all_brings_widgets_up_to_date(live):
    """flush_all (run after each notebook cell) makes every live widget exact."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    flush_all()
    assert traits(board) == dashboard_traits(eng, "i1")
    assert lin.dot == lineage_dot(proj.lineage(eng, "i1"))
    assert pv.dot == render.process_dot(proj.process_state(eng, "i1"))


def test_clock_only_change_is_flushed(live):
    """Moving the clock with no event due still updates the dashboard on flush."""
    eng, inst, board, lin, pv = live
    eng.run(until="2026-01-01T00:00:00Z")
    eng.advance("PT3H")
    eng.advance("PT1M")  # nothing is due: no fact, only the clock moves
    flush_all()
    assert board.clock == "2026-01-01T03:01:00Z"


def test_ipython_cell_hook_flushes_after_each_cell():
    """Under IPython, a cell that calls the engine leaves the dashboard exact with no refresh."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False  # no history database, no saving thread
    shell = InteractiveShell.instance(config=config)
    try:
        eng = bpm.Engine()
        eng.start(order(), data={"order": "o-7"})
        shell.user_ns["eng"] = eng
        board = eng.dashboard()
        assert views_module._after_cell in shell.events.callbacks["post_run_cell"]
        result = shell.run_cell("eng.advance('PT3H')", store_history=False)
        assert result.success
        assert traits(board) == dashboard_traits(eng, "i1")
        assert board.counters["dehydrated"] == 1
        board.close()
    finally:
        shell.events.unregister("post_run_cell", views_module._after_cell)
        shell.events.unregister("pre_run_cell", live_module._before_cell)
        InteractiveShell.clear_instance()


def test_running_a_cell_again_closes_the_widgets_it_made():
    """A re-run cell replaces its output: the dashboard it made last time is closed and stops
    following the engine; a dashboard made by another cell, and the new one, follow it."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    try:
        live_module._install_cell_hook()  # as after an earlier cell that made a widget
        eng = bpm.Engine()
        eng.start(order(), data={"order": "o-7"})
        shell.user_ns["eng"] = eng
        shell.run_cell("board = eng.dashboard()", store_history=False, cell_id="make")
        first = shell.user_ns["board"]
        shell.run_cell("other = eng.dashboard()", store_history=False, cell_id="keep")
        shell.run_cell("board = eng.dashboard()", store_history=False, cell_id="make")
        second, other = shell.user_ns["board"], shell.user_ns["other"]
        assert first.comm is None and second.comm is not None and other.comm is not None
        before = first.clock
        assert shell.run_cell("eng.advance('PT3H')", store_history=False, cell_id="go").success
        assert first.clock == before
        assert second.clock == other.clock == "2026-01-01T03:00:00Z"
        second.close()
        other.close()
    finally:
        for event, hook in (("pre_run_cell", live_module._before_cell),
                            ("post_run_cell", views_module._after_cell)):
            if hook in shell.events.callbacks.get(event, []):
                shell.events.unregister(event, hook)
        InteractiveShell.clear_instance()


def test_dashboard_commands_drive_the_engine(live):
    """Custom messages step, advance, publish, complete and run the engine through its API."""
    eng, inst, board, lin, pv = live
    board._handle_custom_msg({"kind": "step"}, [])
    assert board.error == ""
    board._handle_custom_msg({"kind": "advance", "duration": "PT3H"}, [])
    assert (board.error, board.clock, inst.residency) == ("", "2026-01-01T03:00:00Z",
                                                          "dehydrated")
    assert traits(board) == dashboard_traits(eng, "i1")
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-7",
                              "payload": {"amount": 3}}, [])
    assert board.error == ""
    assert [f["kind"] for f in board.facts if f["kind"] == "message_correlated"] == \
        ["message_correlated"]
    board._handle_custom_msg({"kind": "complete", "task": "i1:approve:1",
                              "outputs": {"ok": True}}, [])
    assert (board.error, board.tasks) == ("", [])
    board._handle_custom_msg({"kind": "run"}, [])
    assert board.error == ""
    assert inst.state == "completed" and inst.data == {"order": "o-7", "amount": 3, "ok": True}
    assert board.counters["finished"] == 1
    assert traits(board) == dashboard_traits(eng, "i1")


def test_select_shows_another_instance(live):
    """Selecting an instance switches both graphs to it; an unknown id sets error."""
    eng, inst, board, lin, pv = live
    other = eng.start(order(), data={"order": "o-8"})
    board._handle_custom_msg({"kind": "step"}, [])
    assert board.instances == ["i1", "i2"] and board.selected == "i1"
    board._handle_custom_msg({"kind": "select", "instance": other.id}, [])
    assert (board.error, board.selected) == ("", "i2")
    assert 'digraph "lineage i2"' in board.lineage_dot
    assert board.process_dot == render.process_dot(proj.process_state(eng, "i2"))
    board._handle_custom_msg({"kind": "select", "instance": "nope"}, [])
    assert "'select' failed" in board.error and "nope" in board.error
    board.error = ""
    board.selected = "i1"  # the front end sets the trait directly, too
    assert 'digraph "lineage i1"' in board.lineage_dot


def test_unknown_and_bad_commands_set_error(live):
    """Unknown kinds and bad fields land in the error trait; the engine is untouched."""
    eng, inst, board, lin, pv = live
    before = eng.stats()
    board._handle_custom_msg({"kind": "explode"}, [])
    assert "unknown command kind 'explode'" in board.error
    board._handle_custom_msg({"kind": "advance", "duration": "soon"}, [])
    assert board.error.startswith("command 'advance' failed: EngineError")
    board._handle_custom_msg({"kind": "advance"}, [])
    assert "ISO 8601 duration" in board.error
    board._handle_custom_msg({"kind": "complete", "task": "t-none", "outputs": {}}, [])
    assert board.error.startswith("command 'complete' failed: EngineError")
    board._handle_custom_msg({"kind": "publish", "name": "", "payload": {}}, [])
    assert "message name" in board.error
    assert eng.stats() == before and eng.now == bpm.Engine().now


def test_run_with_an_unbounded_cycle_reports_error():
    """With an endless cycle timer armed, Run stops at the next tick; Run to the 'end' puts
    the engine's refusal in the error trait and changes nothing."""
    p = bpm.Process("tick")
    p.start("start")
    p.user_task("task")
    p.timer_boundary("every", attached_to="task", cycle="R/PT1H", interrupting=False)
    p.end("end")
    p.end("ticked")
    p.flow("start", "task", "end")
    p.flow("every", "ticked")
    eng = bpm.Engine()
    eng.start(p.validate())
    board = eng.dashboard()
    board._handle_custom_msg({"kind": "advance", "duration": "PT1M"}, [])
    board._handle_custom_msg({"kind": "run"}, [])
    assert (board.error, board.clock) == ("", "2026-01-01T01:00:00Z")  # the first tick
    assert re.fullmatch(r"Run to the next quiet point: \d+ events; the clock moved PT59M to "
                        r"2026-01-01T01:00:00Z", board.last_step), board.last_step
    before = eng.stats()
    board._handle_custom_msg({"kind": "run", "horizon": "end"}, [])
    assert "run() would never end" in board.error
    assert (eng.stats(), board.clock) == (before, "2026-01-01T01:00:00Z")
    board.close()


def test_play_moves_virtual_time_on_the_event_loop(live):
    """Play advances the clock from the running asyncio loop until pause."""
    eng, inst, board, lin, pv = live

    async def scenario():
        board._handle_custom_msg({"kind": "play", "speed": 36000}, [])  # 1 h per 0.1 s tick
        assert board.playing is True and board.error == ""
        await ticks_until(lambda: eng.now >= bpm.Engine().now.replace(hour=2))
        board._handle_custom_msg({"kind": "pause"}, [])
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert board.playing is False and board.error == ""
    assert eng.now >= bpm.Engine().now.replace(hour=2)
    assert inst.residency == "dehydrated"
    assert board.clock == proj.when(eng.now)


def test_play_without_an_event_loop_sets_error(live):
    """Play outside an event loop is refused with a message, not an exception."""
    eng, inst, board, lin, pv = live
    board._handle_custom_msg({"kind": "play", "speed": 3600}, [])
    assert "running asyncio event loop" in board.error and board.playing is False
    board._handle_custom_msg({"kind": "play", "speed": -1}, [])
    assert "positive number" in board.error


def test_unknown_instance_is_refused():
    """A view of an instance the engine does not know raises the engine's error."""
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError):
        views_module.lineage_view(eng, "i9")


def test_closed_widget_stops_listening(live):
    """After close, a widget no longer subscribes and later runs leave it as it was."""
    eng, inst, board, lin, pv = live
    lin.close()
    dot = lin.dot
    eng.advance("PT3H")
    flush_all()
    lin.refresh()
    assert lin.dot == dot


def xss_process():
    p = bpm.Process("xss", name=XSS)
    p.start("start", name=XSS)
    p.user_task("task", name=XSS, assignee=XSS)
    p.timer_boundary("late", name='a "quoted" \\N & &lt;b&gt; name', attached_to="task",
                     duration="PT24H")
    p.end("end", name="\\G\nnewline")
    p.end("late_end")
    p.flow("start", "task", "end")
    p.flow("late", "late_end")
    return p.validate()


def test_names_are_quoted_literally_in_dot():
    """Names with HTML, quotes, backslashes and entities become literal DOT strings."""
    eng = bpm.Engine()
    inst = eng.start(xss_process(), data={"who": XSS})
    eng.advance("PT1H")
    lin = lineage_dot(proj.lineage(eng, inst.id))
    pv = render.process_dot(proj.process_state(eng, inst.id))
    assert '"<img src=x onerror=alert(1)> (task)\\n«user · <img src=x onerror=alert(1)>»' in pv
    assert "xlabel=\"<img src=x onerror=alert(1)> (start)\"" in pv
    assert 'a \\"quoted\\" \\\\N &amp; &amp;lt;b&amp;gt; name (late)' in pv
    assert '\\\\G newline (end)' in pv
    assert '"t1" [label="t1\\n<img src=x onerror=alert(1)> (task)\\ndehydrated"' in lin
    for dot in (lin, pv):
        assert not re.search(r"=\s*<", dot)  # no HTML-like label anywhere
        # every '<' sits inside a double-quoted string
        for line in dot.splitlines():
            outside = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
            assert "<" not in outside and ">" not in outside.replace("->", ""), line


@pytest.mark.skipif(shutil.which("dot") is None, reason="the dot program renders the SVG")
def test_names_render_as_text_in_svg():
    """Rendered by dot, the hostile name is escaped text and every look-alike is literal."""
    eng = bpm.Engine()
    inst = eng.start(xss_process())
    eng.advance("PT1H")
    image = render.svg(render.process_dot(proj.process_state(eng, inst.id)))
    assert image is not None and "<img" not in image
    assert "&lt;img src=x onerror=alert(1)&gt; (task)" in image
    assert "\\N &amp; &amp;lt;b&amp;gt; name (late)" in image
    assert "\\G newline (end)" in image


def test_a_view_carries_a_png_drawing_where_the_dot_program_exists(monkeypatch):
    """The display bundle holds the widget, its text repr and, where the dot program exists,
    a PNG of the same DOT (what a notebook that is not trusted shows) in tens of KB; no SVG
    (no notebook front end shows it where it does not show the widget)."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    eng.advance("PT3H")
    lin, pv = inst.lineage(), inst.process_view()
    data, _meta = lin._repr_mimebundle_()
    assert data["text/plain"] == "LineageView('i1', tracks=3, state='active', " \
        f"residency='dehydrated', moment='at fact {len(eng.facts)} · 2026-01-01 03:00')"
    assert "image/svg+xml" not in data
    for view in (lin, pv):
        bundle = view._repr_mimebundle_()[0]
        if shutil.which("dot"):
            image = base64.b64decode(bundle["image/png"])
            assert image.startswith(b"\x89PNG\r\n\x1a\n") and 2_000 < len(image) < 50_000
        else:
            assert "image/png" not in bundle
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    assert render.png(lin.dot) is None
    assert "image/png" not in lin._repr_mimebundle_()[0]
    lin.close()
    pv.close()


def test_the_static_drawing_names_its_moment_as_text():
    """The PNG of a frozen view says which moment it shows, one more line of the graph's
    label, quoted like every other text (a hostile caption renders literally)."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    lin = inst.lineage()
    hostile = 'at fact 1 · "x" \\N <b>'
    head = lin.dot.splitlines()[1]
    label = re.search(r'label=("(?:[^"\\]|\\.)*")', head).group(1)
    marked = render.captioned(lin.dot, hostile)
    assert marked == lin.dot.replace(label, label[:-1] + "\\n" + render.q(hostile)[1:], 1)
    if shutil.which("dot"):
        assert "\\N &lt;b&gt;" in render.svg(marked) and "at fact 1" in render.svg(marked)
    lin.close()


def test_a_view_shows_the_moment_it_was_made_and_stays_there():
    """inst.lineage() and inst.process_view() show the engine as it was when they were made
    (the header names the fact and the clock) and do not follow it afterwards; nothing of
    theirs runs per fact."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    eng.advance("PT3H")
    lin, pv = inst.lineage(), inst.process_view()
    dots = (lin.dot, pv.dot, pv.marks)
    moment = f"at fact {len(eng.facts)} · 2026-01-01 03:00"
    assert (lin.moment, pv.moment, lin.live, pv.live) == (moment, moment, False, False)
    assert not lin.following and not pv.following
    eng.publish_message("paid", key="o-7")
    eng.complete_task("i1:approve:1", {"ok": True})
    eng.run()
    flush_all()
    lin.refresh()
    assert (lin.dot, pv.dot, pv.marks) == dots and lin.moment == moment
    assert "dehydrated" in lin.dot and inst.state == "completed"
    lin.close()
    pv.close()


def test_follow_live_and_freeze_here_move_a_view_between_the_two():
    """Setting ``live`` (what the header's button does) follows the engine from where it
    stands; setting it back freezes the view at the engine's fact and clock then."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    eng.advance("PT3H")
    lin = inst.lineage()
    eng.publish_message("paid", key="o-7")
    eng.run(until=eng.now)
    lin.live = True  # "follow live"
    assert lin.moment == "live" and lin.following
    assert graph(lin.dot)[1][-1] == ("t2", "t4", "continuation")
    eng.complete_task("i1:approve:1", {"ok": True})
    eng.run()
    lin.flush()
    assert graph(lin.dot)[0] == proj_nodes(eng) and inst.state == "completed"
    lin.live = False  # "freeze here"
    assert lin.moment == f"at fact {len(eng.facts)} · 2026-01-01 03:00" and not lin.following
    kept = lin.dot
    eng.rewind(5)
    lin.refresh()
    assert lin.dot == kept  # a frozen view keeps its moment across a rewind
    lin.follow()
    assert lin.moment == "live" and lin.dot != kept  # following shows the rewound engine
    assert graph(lin.dot)[0] == proj_nodes(eng)
    lin.close()


def proj_nodes(eng, iid="i1"):
    return graph(lineage_dot(proj.lineage(eng, iid)))[0]


def test_a_live_view_follows_the_engine_and_says_live():
    """``live=True`` makes a view that follows the engine, its header saying so."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    pv = inst.process_view(live=True)
    assert (pv.moment, pv.live, pv.following) == ("live", True, True)
    eng.advance("PT3H")
    pv.flush()
    assert "● t1 dehydrated" in pv.dot
    pv.live = False
    assert pv.moment == f"at fact {len(eng.facts)} · 2026-01-01 03:00"
    pv.close()


def test_a_branch_view_says_branch_in_its_title():
    """A view of an instance on a branch is titled as the branch's, not as the original's."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    eng.advance("PT3H")
    where = len(eng.facts)
    what_if = eng.branch()
    assert (eng.branched_at, what_if.branched_at) == (None, where)
    original, branched = inst.lineage(), what_if.instance("i1").lineage()
    assert original.title == "lineage of i1"
    assert branched.title == f"lineage of i1 · branch from fact {where}"
    assert repr(branched).endswith(f", branch_from={where})") and "branch" not in repr(original)
    assert what_if.instance("i1").process_view().title == \
        f"process view of i1 · branch from fact {where}"
    original.close()
    branched.close()


def test_dot_sets_fonts_on_graph_nodes_and_edges(live):
    """Every DOT document names its font for the graph, its nodes and its edges."""
    eng, inst, board, lin, pv = live
    for dot in (lin.dot, pv.dot):
        for scope in ("graph", "node", "edge"):
            assert re.search(rf'^\s+{scope} \[.*fontname="Arial,Helvetica,sans-serif"', dot,
                             re.MULTILINE), (scope, dot)


def test_process_shapes_follow_bpmn():
    """Events are circles, tasks rounded boxes, gateways diamonds with markers, boundaries
    small double circles beside their activity, dashed when non-interrupting."""
    eng = bpm.Engine()
    eng.start(order(), data={"order": "o-7"})
    dot = render.process_dot(proj.process_state(eng, "i1"))
    lines = {m.group(1): m.group(0) for m in re.finditer(r'^\s+"([^"]+)" \[(?!dir).*$', dot,
                                                         re.MULTILINE)}
    assert "shape=circle" in lines["start"] and "shape=circle" in lines["done"]
    assert "penwidth=3.2" in lines["done"]
    assert 'shape=box' in lines["approve"] and '"rounded,filled' in lines["approve"]
    assert 'shape=diamond, label="+"' in lines["split"]
    assert "shape=doublecircle" in lines["remind"] and "dashed" in lines["remind"]
    assert "shape=doublecircle" in lines["pay"]
    assert '{ rank=same; "approve" "remind" }' in dot


@pytest.mark.slow  # two fresh interpreters
def test_widget_state_is_the_same_across_hash_seeds(tmp_path):
    """Two fresh processes with different hash seeds build byte-identical widget states."""
    (tmp_path / "test_views_order.py").write_text(
        "import gobpm_nb as bpm\n\n\n" + inspect.getsource(order))
    script = tmp_path / "state.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import gobpm_nb as bpm
        from test_views_order import order
        eng = bpm.Engine()
        eng.start(order(), data={{"order": "o-7"}})
        eng.start(order(), data={{"order": "o-8"}})
        board = eng.dashboard()
        eng.advance("PT3H")
        eng.publish_message("paid", key="o-8")
        eng.run(until="2026-01-01T04:00:00Z")
        board.refresh()
        names = {list(TRAITS)!r}
        print(json.dumps({{n: getattr(board, n) for n in names}}, sort_keys=True))
    """))
    outs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    state = json.loads(outs[0])
    assert state["counters"]["resident"] + state["counters"]["dehydrated"] == 2


def test_every_command_ends_with_the_exact_widget_state_outside_a_notebook(live):
    """Without any cell hook or refresh, each command leaves the traits at its final state."""
    eng, inst, board, lin, pv = live
    eng.advance("PT25H")
    assert traits(board) == dashboard_traits(eng, "i1")
    assert lin.dot == lineage_dot(proj.lineage(eng, "i1"))
    for _ in range(3):  # a teacher's loop: each hour's end is what shows
        time.sleep(views_module.INTERVAL)
        eng.advance("PT1H")
        assert board.clock == eng.now.isoformat().replace("+00:00", "Z")
        assert traits(board) == dashboard_traits(eng, "i1")


def test_a_closed_widget_is_no_longer_told_about_commands(live):
    """close() stops the command watch too: the engine forgets the widget."""
    eng, inst, board, lin, pv = live
    lin.close()
    before = lin.dot
    eng.advance("PT25H")
    assert lin.dot == before


# -- the dashboard's controls: the last-step line, Run's horizon, fact pages, the notice ---
STEP_LINE = re.compile(r"^Step: (track|loop|timer|expiry|retry) event · instance i\d+"
                       r"( · track t\d+)?( · node \w+)? — \S")


def widget_state(board):
    """Every synced trait a refused dashboard command must leave as it was."""
    return {name: getattr(board, name) for name in TRAITS + ("last_step", "publish_notice")}


@pytest.fixture
def busy():
    """Twelve order instances, each run to its first quiet point before the next starts (so
    the facts of i1 come first and the log holds more than a page), and a dashboard."""
    eng = bpm.Engine()
    for n in range(12):
        eng.start(order(), data={"order": f"o-{n}"})
        eng.run(until=eng.now)
    board = eng.dashboard()
    yield eng, board
    board.close()


def test_step_says_what_it_ran_even_when_no_fact_is_emitted():
    """Every step names its event kind and where it ran, also a step that emits no fact
    (a turn of the instance's loop): the dashboard never looks dead."""
    eng = bpm.Engine()
    eng.start(order(), data={"order": "o-7"})
    board = eng.dashboard()
    silent = []
    for _ in range(6):
        facts = eng.stats()["facts"]
        board._handle_custom_msg({"kind": "step"}, [])
        assert board.error == "" and STEP_LINE.match(board.last_step), board.last_step
        if eng.stats()["facts"] == facts:
            silent.append(board.last_step)
    assert silent, "no step without a fact to check"
    assert all(line == "Step: loop event · instance i1 — a turn of the instance's loop, which "
                       "emits no fact" for line in silent)
    board.close()


def test_step_on_a_quiet_engine_names_the_deadline_it_jumps_to(busy):
    """Nothing ready: Step moves the clock to the next deadline and the line says how far."""
    eng, board = busy
    board._handle_custom_msg({"kind": "step"}, [])
    assert board.clock == "2026-01-01T02:00:00Z"
    assert board.last_step == (
        "Step: timer event · instance i1 · track t1 · node remind — a timer fired its wait. "
        "Nothing was ready: the clock jumped PT2H to the next deadline, 2026-01-01T02:00:00Z")
    assert "Dashboard(clock='2026-01-01T02:00:00Z'" in repr(board)
    assert "last_step='Step: timer event" in repr(board)


def test_step_and_run_on_an_idle_engine_say_so():
    """With nothing scheduled at all, Step and Run do nothing and say the engine is idle."""
    eng = bpm.Engine()
    board = eng.dashboard()
    for kind in ("step", "run"):
        board._handle_custom_msg({"kind": kind}, [])
        assert board.error == ""
        assert board.last_step.endswith("nothing is scheduled (no track is ready, no deadline "
                                         "is armed): the engine is idle")
    assert board.clock == "2026-01-01T00:00:00Z"
    board.close()


def test_an_idle_engine_with_open_tasks_says_what_it_waits_for(busy):
    """Idle is not finished: once nothing is scheduled, Step and Run name the open tasks and
    message waits the engine holds (what the forms below can answer)."""
    eng, board = busy
    eng.run()
    for kind in ("step", "run"):
        board._handle_custom_msg({"kind": kind}, [])
        assert board.error == ""
        assert board.last_step.endswith(
            "the engine is idle; it waits for the outside: 12 open tasks (the Complete form), "
            "12 message waits (the Publish form)"), board.last_step


def test_complete_publish_and_pause_say_what_they_did(live):
    """The last-step line follows every control, not only Step, Run and Advance: a completed
    task (and the wake it caused), a published message, and a paused play."""
    eng, inst, board, lin, pv = live
    board._handle_custom_msg({"kind": "advance", "duration": "PT1H"}, [])
    assert inst.residency == "dehydrated"
    board._handle_custom_msg({"kind": "complete", "task": "i1:approve:1", "outputs": {}}, [])
    assert board.error == ""
    assert board.last_step == ("Complete task i1:approve:1 (instance i1, node approve): done; "
                               "the dehydrated instance is woken from the store at the next "
                               "Step or Run")
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-99"}, [])
    assert board.last_step == ("Publish: Message 'paid' with key 'o-99' reached nobody (no "
                               "subscriber): it was dropped")
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-7"}, [])
    assert board.last_step.startswith("Publish: Message 'paid' with key 'o-7' reached "
                                      "instance i1") and \
        board.last_step.endswith("; it goes on at the next Step or Run"), board.last_step

    async def scenario():
        board._handle_custom_msg({"kind": "play", "speed": 36000}, [])
        await ticks_until(lambda: eng.now > before)
        board._handle_custom_msg({"kind": "pause"}, [])

    before = eng.now
    asyncio.run(scenario())
    assert re.fullmatch(r"Pause: play stopped: \d+ events?; the clock moved PT\d+H to "
                        r"2026-01-01T\d\d:00:00Z", board.last_step), board.last_step
    assert board.last_step.endswith(proj.when(eng.now)) and eng.now > before
    board._handle_custom_msg({"kind": "pause"}, [])  # not playing: the line stays
    assert board.last_step.startswith("Pause: play stopped")


def test_run_stops_at_the_next_quiet_point_instead_of_emptying_the_future(busy):
    """Run with no horizon runs the next deadline's events and stops: the reminders fire at
    2 h, the instances stay active, and their tasks and messages are still held."""
    eng, board = busy
    board._handle_custom_msg({"kind": "run"}, [])
    assert (board.error, board.clock) == ("", "2026-01-01T02:00:00Z")
    assert re.fullmatch(r"Run to the next quiet point: \d+ events; the clock moved PT2H to "
                        r"2026-01-01T02:00:00Z", board.last_step), board.last_step
    assert [i.state for i in eng.instances()] == ["active"] * 12
    assert board.counters["tasks"] == 12
    assert eng.stats()["pending_events"] == 0  # quiet: nothing due until a trigger comes
    board._handle_custom_msg({"kind": "run"}, [])  # nothing is scheduled any more: idle
    assert board.clock == "2026-01-01T02:00:00Z" and "idle" in board.last_step


def test_run_goes_for_a_duration_or_until_a_date(busy):
    """A horizon is an ISO duration or a date-time: the clock ends there, the line says so."""
    eng, board = busy
    board._handle_custom_msg({"kind": "run", "horizon": "pt3h"}, [])
    assert (board.error, board.clock) == ("", "2026-01-01T03:00:00Z")
    assert re.fullmatch(r"Run for PT3H: \d+ events; the clock moved PT3H to "
                        r"2026-01-01T03:00:00Z", board.last_step), board.last_step
    board._handle_custom_msg({"kind": "run", "horizon": " 2026-01-02T00:00:00Z "}, [])
    assert (board.error, board.clock) == ("", "2026-01-02T00:00:00Z")
    assert board.last_step == ("Run until 2026-01-02T00:00:00Z: 0 events; the clock moved "
                               "PT21H to 2026-01-02T00:00:00Z")


@pytest.mark.parametrize("horizon, message", [
    ("soon", "Run's horizon 'soon' is not understood: give an ISO 8601 duration such as "
             "'PT24H', a date-time such as '2026-01-02T00:00:00Z', or 'end'"),
    ("PT", "Run's horizon 'PT' is not understood"),
    (24, "Run's horizon must be text"),
    ("-PT1H", "duration '-PT1H' is negative; the clock never moves backwards"),
    ("2025-12-31T00:00:00Z", "run(until='2025-12-31T00:00:00Z') is before the clock"),
])
def test_a_malformed_horizon_is_refused_and_changes_nothing(busy, horizon, message):
    """A horizon Run cannot read, or one in the past, is a clear error; nothing changed."""
    eng, board = busy
    before, shown = snapshot(eng), widget_state(board)
    board._handle_custom_msg({"kind": "run", "horizon": horizon}, [])
    assert board.error.startswith("command 'run' failed: ") and message in board.error
    assert snapshot(eng) == before and widget_state(board) == shown


def test_fact_table_pages_back_to_the_first_fact(busy):
    """The table shows the newest page and says how many facts the log keeps; the oldest page
    starts with the very first fact, and older/newer walk between them."""
    eng, board = busy
    log, size = eng.facts, proj.FACT_PAGE
    kept = len(log)
    assert kept > size  # more than one page
    page = board.fact_page
    assert (page["page"], page["start"], page["total"], page["kept"], page["emitted"]) == \
        (None, kept - size, kept, kept, kept)
    assert [row["seq"] for row in board.facts] == list(range(kept - size + 1, kept + 1))
    while board.fact_page["older"] is not None:  # what "‹ older" sends, until it greys out
        board._handle_custom_msg({"kind": "facts", "page": board.fact_page["older"]}, [])
        assert board.error == ""
    assert board.fact_page["page"] == 0 and board.fact_page["start"] == 0
    assert board.facts[0] == proj.fact_row(log[0])
    assert (board.facts[0]["seq"], board.facts[0]["kind"]) == (1, "instance_started")
    assert len(board.facts) == size and board.fact_page["newer"] == 1
    last = page["pages"] - 1
    board._handle_custom_msg({"kind": "facts", "page": 99}, [])  # past the end: the last page
    assert (board.error, board.fact_page["page"]) == ("", last)
    assert board.facts[0]["seq"] == last * size + 1 and board.facts[-1]["seq"] == kept
    assert board.fact_page["newer"] is None  # what "newer ›" sends next: the newest
    assert traits(board) == dashboard_traits(eng, "i1", proj.FactQuery(page=99))


def test_fact_filter_searches_the_whole_kept_log(busy):
    """Filtering by an instance whose facts are all older than the newest page still finds
    every one of them (the browser gets them from Python, a page at a time)."""
    eng, board = busy
    assert not [row for row in board.facts if row["instance"] == "i1"]  # not on the newest page
    board._handle_custom_msg({"kind": "facts", "instance": "i1", "page": None}, [])
    expected = [proj.fact_row(f) for f in eng.facts if f.instance == "i1"]
    assert board.error == "" and board.facts == expected and expected
    assert (board.fact_page["instance"], board.fact_page["total"]) == ("i1", len(expected))
    board._handle_custom_msg({"kind": "facts", "instance": "i1", "fact_kind": "wait_held"}, [])
    assert sorted((row["instance"], row["kind"], row["node"]) for row in board.facts) == [
        ("i1", "wait_held", "approve"), ("i1", "wait_held", "pay"), ("i1", "wait_held", "remind")]
    assert traits(board) == dashboard_traits(eng, "i1", proj.FactQuery("i1", "wait_held"))
    eng.advance("PT2H")  # the filter stays in force as the log grows
    board.refresh()  # what the after-cell hook does
    assert all(row["instance"] == "i1" and row["kind"] == "wait_held" for row in board.facts)
    assert traits(board) == dashboard_traits(eng, "i1", proj.FactQuery("i1", "wait_held"))


@pytest.mark.parametrize("command, message", [
    ({"page": -1}, "a fact page is a whole number from 0 (the oldest page) up, or null for the "
                   "newest facts; got -1"),
    ({"page": "2"}, "got '2'"),
    ({"page": True}, "got True"),
    ({"instance": 7}, "the fact filter's instance must be an instance id"),
    ({"fact_kind": ["timer_fired"]}, "the fact filter's kind must be a fact kind"),
    ({"instance": "i99"}, "no fact of instance 'i99' among the {kept} facts the log keeps; the "
                          "fact table is unchanged"),
    ({"instance": "i1", "fact_kind": "job_created"},
     "no fact of instance 'i1' and of kind 'job_created' among the {kept} facts"),
])
def test_a_bad_fact_query_is_refused_and_changes_nothing(busy, command, message):
    """A negative page, a field of the wrong type or a filter that matches no kept fact is a
    clear error; the table keeps its page and filter."""
    eng, board = busy
    board._handle_custom_msg({"kind": "facts", "instance": "i2", "page": 0}, [])
    before, shown = snapshot(eng), widget_state(board)
    board._handle_custom_msg({"kind": "facts", **command}, [])
    assert board.error.startswith("command 'facts' failed: ValueError: ")
    assert message.format(kept=len(eng.facts)) in board.error
    assert snapshot(eng) == before and widget_state(board) == shown


def test_keep_facts_bounds_what_the_table_pages_through():
    """With keep_facts=50 the oldest page starts at the oldest kept fact, and the table says
    how many facts were emitted in all."""
    eng = bpm.Engine(keep_facts=50)
    for n in range(6):
        eng.start(order(), data={"order": f"o-{n}"})
    eng.run(until=eng.now)
    emitted = eng.stats()["facts"]
    assert emitted > 50
    board = eng.dashboard()
    page = board.fact_page
    assert (page["kept"], page["emitted"], page["total"], page["pages"]) == (50, emitted, 50, 1)
    assert [row["seq"] for row in board.facts] == list(range(emitted - 49, emitted + 1))
    assert repr(board).endswith("facts=50)")
    board._handle_custom_msg({"kind": "facts", "page": 0}, [])
    assert board.facts[0]["seq"] == eng.facts[0].seq == emitted - 49
    assert traits(board) == dashboard_traits(eng, "i1", proj.FactQuery(page=0))
    board.close()


def test_a_message_that_reaches_nobody_says_so_by_the_form(busy):
    """Publishing to a key no instance waits for is no error: the notice by the form says
    the message reached nobody; a matching message names the instance it reached."""
    eng, board = busy
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-99"}, [])
    assert board.error == ""
    assert board.publish_notice == {
        "text": "Message 'paid' with key 'o-99' reached nobody (no subscriber): it was dropped",
        "level": "warning"}
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-3", "payload": {}},
                             [])
    assert board.publish_notice == {
        "text": "Message 'paid' with key 'o-3' reached instance i4 (track t2 at 'pay')",
        "level": "ok"}
    board._handle_custom_msg({"kind": "publish", "name": "paid", "key": "o-3"}, [])
    assert board.publish_notice["level"] == "warning"  # i4 took it already: nobody waits


def test_span_text_is_an_iso_duration():
    """The line's spans read as ISO 8601 durations."""
    from datetime import timedelta

    from gobpm_nb.ui.status import span_text

    assert [span_text(timedelta(**kw)) for kw in (
        {}, {"hours": 2}, {"days": 1, "hours": 21}, {"minutes": 1, "seconds": 30},
        {"days": 3}, {"milliseconds": 500})] == \
        ["PT0S", "PT2H", "P1DT21H", "PT1M30S", "P3D", "PT0.5S"]


def test_timeline_rewinds_replays_and_branches():
    """The timeline's commands call eng.rewind(N), eng.replay() and eng.branch(); the views
    follow, the last-step line says where the engine stands, a branch gets its dashboard."""
    eng = bpm.Engine()
    inst = eng.start(approval(), {"request": "r-1"})
    eng.advance("P2D")
    board = eng.dashboard()
    original = list(eng.facts)
    assert board.timeline == {"start": 0, "end": 23, "position": 23,
                              "at": "2026-01-03T00:00:00Z", "pending": 0, "movable": True,
                              "note": ""}
    board._handle_custom_msg({"kind": "rewind", "to": 10}, [])
    assert board.error == ""
    assert (inst.state, eng.facts[-1].seq) == ("active", 10)
    assert board.timeline["position"] == 10 and board.timeline["pending"] == 13
    assert board.last_step == "Rewound to fact 10 at 2026-01-01T00:00:00Z (in the middle of " \
                              "advance): 13 facts after it can be replayed"
    assert [t["id"] for t in board.tasks] == ["i1:approve:1"]
    assert traits(board) == dashboard_traits(eng, "i1")
    board._handle_custom_msg({"kind": "branch"}, [])
    assert board.error == "" and isinstance(board.branch, Dashboard)
    assert board.last_step.startswith("Branched at fact 10")
    twin = board.branch
    twin._handle_custom_msg({"kind": "complete", "task": "i1:approve:1", "outputs": {}}, [])
    twin._handle_custom_msg({"kind": "run", "horizon": "end"}, [])
    assert twin.error == "" and twin.counters["finished"] == 1
    assert inst.state == "active" and eng.facts[-1].seq == 10  # the branch left it alone
    board._handle_custom_msg({"kind": "replay"}, [])
    assert board.error == "" and inst.state == "completed"
    assert list(eng.facts) == original
    assert board.timeline["position"] == 23 and board.timeline["pending"] == 0
    assert board.last_step == "At the newest point: fact 23 at 2026-01-03T00:00:00Z"
    assert traits(board) == dashboard_traits(eng, "i1")
    board.close()
    assert twin._closed


@pytest.mark.parametrize("to, message", [
    (99, "beyond the log"), (-1, "negative"), ("10", "fact sequence number"),
    (True, "fact sequence number"), (None, "fact sequence number"),
])
def test_a_bad_rewind_is_refused_and_changes_nothing(to, message):
    eng = bpm.Engine()
    eng.start(approval(), {"request": "r-1"})
    eng.advance("P2D")
    board = eng.dashboard()
    before = (list(eng.facts), board.timeline, board.last_step)
    board._handle_custom_msg({"kind": "rewind", "to": to}, [])
    assert board.error.startswith("command 'rewind' failed") and message in board.error
    assert (list(eng.facts), board.timeline, board.last_step) == before
    board.close()


def test_a_durable_store_refuses_the_timeline_but_branches(tmp_path):
    """On SQLite the slider cannot move (no command history): a rewind is refused into the error
    trait; "branch here" still makes a branch in memory, with its own dashboard."""
    eng = bpm.Engine(store=bpm.SQLiteStore(tmp_path / "run.db"))
    eng.start(approval(), {"request": "r-1"})
    eng.advance("PT1H")
    board = eng.dashboard()
    assert board.timeline["movable"] is False and "durable" in board.timeline["note"]
    seq = eng.facts[-1].seq
    board._handle_custom_msg({"kind": "rewind", "to": 1}, [])
    assert "'rewind' failed: EngineError" in board.error and "durable" in board.error
    assert eng.facts[-1].seq == seq
    board._handle_custom_msg({"kind": "branch"}, [])
    twin = board.branch
    assert board.error == "" and twin.timeline["movable"] is False  # nothing done there yet
    twin._handle_custom_msg({"kind": "advance", "duration": "PT1H"}, [])
    assert twin.timeline["movable"] is True and twin.timeline["start"] == seq
    board.close()
    eng.store.close()
