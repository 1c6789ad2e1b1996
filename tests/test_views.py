"""Live widgets bound to an engine: synced traits after each API call, commands, safety."""

from __future__ import annotations

import asyncio
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

import gobpm_nb as bpm
from gobpm_nb.observe import projections as proj
from gobpm_nb.render import dot as render
from gobpm_nb.ui import Dashboard, LineageView, ProcessView, dashboard_traits, flush_all
from gobpm_nb.ui import views as views_module

XSS = "<img src=x onerror=alert(1)>"
TRAITS = ("clock", "counters", "tasks", "holds", "facts", "instances", "selected",
          "lineage_dot", "process_dot")

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
    board, lin, pv = eng.dashboard(), inst.lineage(), inst.process_view()
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
    assert lin.legend == render.lineage_legend() and pv.legend == render.process_legend()


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
    assert "dehydrated: released to the store, no coroutines" in lin.dot
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
    """The message wakes the released instance as a continuation fork; the join ends it."""
    eng, inst, board, lin, pv = live
    eng.advance("PT3H")
    eng.publish_message("paid", key="o-7")
    refresh(board, lin, pv)
    assert inst.residency == "resident"
    assert lineage_rows(eng)[3:] == [("t4", "pay", "ready", ("t2",), "continuation")]
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
    assert repr(lin) == "LineageView('i1', tracks=5, state='completed', residency='finished')"
    assert repr(pv) == "ProcessView('i1', process='order', tokens=0, holds=0)"


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
    assert lin.dot == render.lineage_dot(proj.lineage(eng, "i1"))
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
    board._handle_custom_msg({"kind": "rewind"}, [])
    assert "unknown command kind 'rewind'" in board.error
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
    """Run with an endless cycle timer armed puts the engine's refusal in the error trait."""
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
    assert "run() would never end" in board.error
    board.close()


def test_play_moves_virtual_time_on_the_event_loop(live):
    """Play advances the clock from the running asyncio loop until pause."""
    eng, inst, board, lin, pv = live

    async def scenario():
        board._handle_custom_msg({"kind": "play", "speed": 36000}, [])  # 1 h per 0.1 s tick
        assert board.playing is True and board.error == ""
        await asyncio.sleep(views_module.TICK * 3.5)
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
    lin = render.lineage_dot(proj.lineage(eng, inst.id))
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


def test_svg_fallback_follows_the_dot_program(monkeypatch):
    """The static SVG is in the display bundle only where the dot program exists."""
    eng = bpm.Engine()
    inst = eng.start(order(), data={"order": "o-7"})
    lin = inst.lineage()
    data, _meta = lin._repr_mimebundle_()
    assert data["text/plain"] == "LineageView('i1', tracks=1, state='active', residency='resident')"
    if shutil.which("dot"):
        assert data["image/svg+xml"].lstrip().startswith("<?xml")
    else:
        assert "image/svg+xml" not in data
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    assert render.svg(lin.dot) is None
    assert "image/svg+xml" not in lin._repr_mimebundle_()[0]
    lin.close()


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
    assert lin.dot == render.lineage_dot(proj.lineage(eng, "i1"))
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
