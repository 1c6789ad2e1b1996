"""The views of scopes: subprocesses and event subprocesses drawn as frames, multi-instance
activities, the inclusive gateway, escalation and link events — the Graphviz process view, the
lineage, the BPMN-notation marks and the dashboard's tables, dehydrated and woken."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from bpmn_shapes import diagram

import gobpm_nb as bpm
from gobpm_nb.observe import projections as proj
from gobpm_nb.render import dot as render
from gobpm_nb.render.lineage import lineage_dot, lineage_legend
from gobpm_nb.ui import dashboard_traits
from gobpm_nb.ui.process import process_picture

NODE = re.compile(r'^\s+"((?:[^"\\]|\\.)*)" \[(.*)\]$', re.MULTILINE)
EDGE = re.compile(r'^\s+"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)" \[(.*)\]$', re.MULTILINE)
LABEL = re.compile(r'(?<![a-z])label="((?:[^"\\]|\\.)*)"')
XLABEL = re.compile(r'xlabel="((?:[^"\\]|\\.)*)"')


def scoped():
    """s -> split (inclusive) -> [handle: hs -> work -> he, with the message event subprocess
    ``query`` inside; a 1-day timer ``late`` on it] | review (parallel multi-instance user
    task over ``reviewers``) | solo (default) -> join (inclusive) -> done; and the
    process's own non-interrupting message event subprocess ``aside`` [nudge -> answer]."""
    p = bpm.Process("scoped", "Scoped order")
    p.start("s")
    p.inclusive_gateway("split", default="solo")
    with p.subprocess("handle", "Handle") as sp:
        sp.start("hs")
        sp.user_task("work")
        sp.end("he")
        sp.flow("hs", "work", "he")
        with sp.event_subprocess("query") as ev:
            ev.message_start("ask", message="ask", key="order", interrupting=False)
            ev.script_task("note", fn=lambda d: {"asked": d.get("asked", 0) + 1})
            ev.end("noted")
            ev.flow("ask", "note", "noted")
    p.timer_boundary("late", attached_to="handle", duration="P1D")
    p.end("timeout")
    p.user_task("review")
    p.multi_instance("review", collection="reviewers", element="reviewer")
    p.script_task("solo", fn=lambda d: {})
    p.inclusive_gateway("join")
    p.end("done")
    p.flow("s", "split")
    p.flow("split", "handle", condition="handled")
    p.flow("split", "review", condition="reviewed")
    p.flow("split", "solo")
    p.flow("handle", "join")
    p.flow("review", "join")
    p.flow("solo", "join")
    p.flow("join", "done")
    p.flow("late", "timeout")
    with p.event_subprocess("aside", "Aside") as ev:
        ev.message_start("nudge", message="nudge", key="order", interrupting=False)
        ev.user_task("answer")
        ev.end("answered")
        ev.flow("nudge", "answer", "answered")
    return p


DATA = {"order": "o-1", "handled": True, "reviewed": True, "reviewers": ["ann", "bob"]}


def dehydrated():
    """An hour in: t1 runs ``handle`` (t5 inside it on ``work``), t2 is the body of ``review``
    (t3, t4 its inner instances); all dehydrated to the store."""
    eng = bpm.Engine()
    inst = eng.start(scoped(), DATA)
    eng.advance("PT1H")
    return eng, inst


def woken():
    """``dehydrated``, then a nudge (the process's event subprocess: t6, t7 inside it) and an
    ask (``handle``'s event subprocess: t8, t9 inside it) wake it; dehydrated again."""
    eng, inst = dehydrated()
    assert eng.publish_message("nudge", key="o-1") == inst.id
    assert eng.publish_message("ask", key="o-1") == inst.id
    eng.advance("PT1M")
    return eng, inst


def process_dot(eng, inst):
    return render.process_dot(proj.process_state(eng, inst.id))


def nodes(dot):
    """Node id -> its label's lines and xlabel's lines."""
    out = {}
    for i, attrs in NODE.findall(dot):
        label = LABEL.search(attrs)
        xlabel = XLABEL.search(attrs)
        out[i] = ((label.group(1).split("\\n") if label else []) +
                  (xlabel.group(1).split("\\n") if xlabel else []))
    return out


def statements(dot):
    """Node id -> its whole DOT statement."""
    return {m.group(1): m.group(0).strip() for m in NODE.finditer(dot)}


def edges(dot):
    """(tail, head) -> attributes text, for every edge in the order written."""
    return {(a, b): attrs for a, b, attrs in EDGE.findall(dot)}


def frames(dot):
    """Cluster name -> (its graph attributes, the node ids declared in it, nested ones too)."""
    out: dict[str, tuple[str, list[str]]] = {}
    stack: list[str] = []
    for line in dot.splitlines():
        opened = re.match(r'^\s+subgraph "(cluster_[^"]+)" \{$', line)
        if opened:
            stack.append(opened.group(1))
            out[opened.group(1)] = ("", [])
        elif line.strip() == "}" and stack:
            stack.pop()
        elif stack and line.strip().startswith("graph ["):
            out[stack[-1]] = (line.strip(), out[stack[-1]][1])
        elif stack:
            node = NODE.match(line)
            if node and " -> " not in line:
                for name in stack:
                    out[name][1].append(node.group(1))
    return out


# -- the Graphviz process view -----------------------------------------------------------
def test_subprocesses_are_frames_around_what_is_inside_them():
    """A subprocess and an event subprocess are clusters holding their inner elements (nested
    ones in their parent), labelled with their caption; an event subprocess's frame is dashed;
    flows to and from a subprocess are drawn to its frame's border."""
    eng, inst = dehydrated()
    dot = process_dot(eng, inst)
    found = frames(dot)
    assert list(found) == ["cluster_handle", "cluster_query", "cluster_aside"]
    assert found["cluster_handle"][1] == ["handle", "hs", "work", "he", "query", "ask", "note",
                                          "noted"]
    assert found["cluster_query"][1] == ["query", "ask", "note", "noted"]
    assert found["cluster_aside"][1] == ["aside", "nudge", "answer", "answered"]
    handle, query, aside = (found[f"cluster_{n}"][0] for n in ("handle", "query", "aside"))
    assert 'label="Handle (handle)", style="rounded",' in handle
    assert 'label="query", style="rounded,dashed",' in query
    assert 'label="Aside (aside)", style="rounded,dashed",' in aside
    assert "graph [compound=true]" in dot
    lines = edges(dot)
    assert 'lhead="cluster_handle"' in lines[("split", "handle")]
    assert 'ltail="cluster_handle"' in lines[("handle", "join")]
    # the boundary is tied to the frame, outside it, with no rank shared across the border
    assert "late" not in found["cluster_handle"][1]
    assert 'ltail="cluster_handle"' in lines[("handle", "late")]
    assert "rank=same" not in dot
    # layout only: the frame's node before the starts, the join after the inside's ends
    assert lines[("handle", "hs")] == lines[("he", "join")] == "style=invis"
    assert lines[("aside", "nudge")] == "style=invis"


def test_tokens_and_holds_land_on_the_running_and_the_inner_nodes():
    """Dehydrated: the track running the subprocess is on the frame's own node, the track inside
    on the inner task, the three tracks of the multi-instance task (body and two instances) on
    it beside its ``|||`` marker, and the process's own armed start carries its message hold."""
    eng, inst = dehydrated()
    assert inst.residency == "dehydrated"
    dot = process_dot(eng, inst)
    shown = nodes(dot)
    assert shown["handle"] == ["«subprocess»", "● t1 dehydrated"]
    assert shown["work"] == ["work", "«user»", "● t5 dehydrated", "☺ i1:work:3"]
    assert shown["review"] == ["review", "«user»", "||| reviewer in reviewers",
                               "● t2 dehydrated", "● t3 dehydrated", "● t4 dehydrated",
                               "☺ i1:review:1", "☺ i1:review:2"]
    assert shown["nudge"] == ["✉", "nudge", "nudge · order", "non-interrupting", "✉ nudge, o-1"]
    assert shown["ask"] == ["✉", "ask", "ask · order", "non-interrupting", "✉ ask, o-1"]
    assert shown["late"][-1] == "◷ 2026-01-02T00:00:00Z"
    assert shown["aside"] == ["«event subprocess»"] and shown["answer"] == ["answer", "«user»"]
    shapes = statements(dot)
    assert 'shape=diamond, label="○"' in shapes["split"]
    assert 'shape=diamond, label="○"' in shapes["join"]
    assert "shape=circle" in shapes["nudge"] and "dashed" in shapes["nudge"]
    frame = frames(dot)["cluster_handle"][0]
    assert f'color="{render.STATE_COLOURS["dehydrated"][1]}"' in frame  # its track's state


def test_the_woken_state_shows_the_event_subprocess_tracks_where_they_stand():
    """After a nudge and an ask, the track running each event subprocess stands on its frame's
    node and the track inside on its task; the process's start stays armed (non-interrupting)."""
    eng, inst = woken()
    shown = nodes(process_dot(eng, inst))
    assert shown["aside"] == ["«event subprocess»", "● t6 dehydrated"]
    assert shown["answer"] == ["answer", "«user»", "● t7 dehydrated", "☺ i1:answer:4"]
    assert shown["nudge"][-1] == "✉ nudge, o-1"
    assert shown["query"] == ["«event subprocess»"]  # its track ran the script and ended
    assert inst.data["asked"] == 1


def test_the_same_state_gives_the_same_dot():
    """Two engines driven alike draw byte-identical DOT, lineage and marks."""
    a, b = (woken() for _ in range(2))
    texts = [(process_dot(eng, inst), lineage_dot(proj.lineage(eng, inst.id)),
              json.dumps(process_picture(eng, inst.id).marks, sort_keys=True))
             for eng, inst in (a, b)]
    assert texts[0] == texts[1]
    assert process_dot(*a) == texts[0][0]


@pytest.mark.slow  # two fresh interpreters
def test_the_dot_is_the_same_across_hash_seeds(tmp_path):
    """Two fresh interpreters with different hash seeds draw the same process DOT."""
    script = tmp_path / "draw.py"
    script.write_text(
        "import gobpm_nb as bpm\n"
        "from gobpm_nb.observe import projections as proj\n"
        "from gobpm_nb.render import dot as render\n"
        + textwrap.dedent(inspect.getsource(scoped)) +
        f"eng = bpm.Engine()\ninst = eng.start(scoped(), {DATA!r})\neng.advance('PT1H')\n"
        "print(render.process_dot(proj.process_state(eng, inst.id)))\n")
    outs = []
    for seed in ("1", "977"):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONHASHSEED": seed},
                              check=False)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1] and "cluster_handle" in outs[0]


def events():
    """Nested subprocesses (a non-interrupting timer on a task inside the inner one, an
    escalation thrown and ended with there, caught by an escalation event subprocess and a
    boundary), a sequential multi-instance subprocess, a link throw and its catch, and timer
    and error event subprocesses of the process."""
    p = bpm.Process("events")
    p.start("s")
    with p.subprocess("outer", "Outer") as o:
        o.start("o0")
        with o.subprocess("inner") as i:
            i.start("i0")
            i.user_task("deep")
            i.timer_boundary("nag", attached_to="deep", duration="PT5H", interrupting=False)
            i.end("nagged")
            i.escalation_throw("up", escalation="UP")
            i.end("i1", escalation="DONE")
            i.flow("nag", "nagged")
            i.flow("i0", "deep", "up", "i1")
        o.end("o1")
        o.flow("o0", "inner", "o1")
        with o.event_subprocess("heard_up") as ev:
            ev.escalation_start("heard", escalation="UP", interrupting=False)
            ev.end("noted")
            ev.flow("heard", "noted")
    p.escalation_boundary("esc", attached_to="outer", escalation="DONE")
    p.end("escalated")
    p.flow("esc", "escalated")
    with p.subprocess("each") as e:
        e.start("e0")
        e.user_task("check")
        e.end("e1")
        e.flow("e0", "check", "e1")
    p.multi_instance("each", sequential=True, cardinality="3")
    p.script_task("one", fn=lambda d: {"n": d.get("n", 0) + 1})
    p.exclusive_gateway("again", default="out")
    p.link_throw("go", link="loop")
    p.link_catch("back", link="loop")
    p.end("out")
    p.flow("s", "outer", "each", "one", "again")
    p.flow("back", "one")
    p.flow("again", "go", condition="n < 3")
    p.flow("again", "out")
    with p.event_subprocess("tick") as ev:
        ev.timer_start("hourly", cycle="R/PT1H", interrupting=False)
        ev.end("ticked")
        ev.flow("hourly", "ticked")
    with p.event_subprocess("rescue") as ev:
        ev.error_start("failed", error="E1")
        ev.end("rescued")
        ev.flow("failed", "rescued")
    return p


def test_the_new_events_have_their_own_marks():
    """Escalation and link events, triggered starts and a sequential multi-instance subprocess
    are drawn with their glyphs; a link throw points at its catch with a dotted arrow; a
    boundary on a task inside a subprocess shares its rank inside the frame."""
    eng = bpm.Engine()
    inst = eng.start(events())
    eng.advance("PT30M")
    dot = process_dot(eng, inst)
    shown, shapes, lines = nodes(dot), statements(dot), edges(dot)
    assert shown["heard"][:4] == ["⇧", "heard", "UP", "non-interrupting"]
    assert shown["up"] == ["⬆", "up", "UP"] and shown["i1"][0] == "⬆"
    assert shown["esc"][:3] == ["⇧", "esc", "DONE"]
    assert shown["hourly"] == ["◷", "hourly", "cycle R/PT1H", "non-interrupting",
                               "◷ 2026-01-01T01:00:00Z"]
    assert shown["failed"] == ["⚡", "failed", "E1"]  # interrupting: said by the solid line
    assert "dashed" not in shapes["failed"] and "dashed" in shapes["hourly"]
    assert shown["go"] == ["➜", "go", "link loop"] and shown["back"] == ["⇨", "back", "link loop"]
    assert "style=dotted" in lines[("go", "back")] and "constraint=false" in lines[("go", "back")]
    assert shown["each"] == ["«subprocess»", "≡ × 3"]
    assert shown["inner"] == ["«subprocess»", "● t2 dehydrated"]
    assert shown["deep"][2] == "● t3 dehydrated"
    found = frames(dot)
    assert found["cluster_inner"][1] == ["inner", "i0", "deep", "nag", "nagged", "up", "i1"]
    assert set(found["cluster_inner"][1]) < set(found["cluster_outer"][1])
    inner = dot[dot.index('subgraph "cluster_inner"'):]
    assert inner.index('{ rank=same; "deep" "nag" }') < inner.index("\n    }")
    for kind in ("escalation_boundary", "escalation_start", "escalation_throw", "link_throw",
                 "link_catch", "timer_start", "error_start", "message_start", "signal_start"):
        assert kind in render.EVENT_GLYPHS


# -- the lineage ----------------------------------------------------------------------------
def test_the_lineage_shows_the_new_origins_with_their_own_edges():
    """The first track inside a subprocess hangs from the track running it (scope), an event
    subprocess's track from its scope's track (event), inner instances from the body (many);
    one started on the process's own scope says so; each has its legend entry."""
    eng, inst = woken()
    view = proj.lineage(eng, inst.id)
    assert [(e.parent, e.child, e.label) for e in view.edges] == [
        ("t1", "t2", "fork"), ("t2", "t3", "multi-instance"), ("t2", "t4", "multi-instance"),
        ("t1", "t5", "scope"), ("t6", "t7", "scope"), ("t1", "t8", "event subprocess"),
        ("t8", "t9", "scope")]
    dot = lineage_dot(view)
    lines = edges(dot)
    for (parent, child), origin in ((("t2", "t3"), "many"), (("t1", "t5"), "scope"),
                                    (("t1", "t8"), "event")):
        colour, style = render.EDGE_STYLES[origin]
        assert f'color="{colour}"' in lines[(parent, child)]
        assert f"style={style}" in lines[(parent, child)]
    styles = {render.EDGE_STYLES[o] for o in ("fork", "join", "continuation", "boundary",
                                              "scope", "event", "many")}
    assert len(styles) == 7  # each origin looks different
    shown = nodes(dot)
    assert shown["t6"] == ["t6", "Aside (aside)", "dehydrated", "event subprocess start"]
    assert shown["t1"] == ["t1", "Handle (handle)", "dehydrated"]
    legend = dict(lineage_legend())
    assert legend["edge scope (first track inside a subprocess)"] == \
        render.EDGE_STYLES["scope"][0]
    assert legend["edge event subprocess (dashed)"] == render.EDGE_STYLES["event"][0]
    assert legend["edge multi-instance (inner instance, dotted)"] == \
        render.EDGE_STYLES["many"][0]


# -- the BPMN-notation marks ---------------------------------------------------------------
def marks_of(eng, inst):
    picture = process_picture(eng, inst.id)
    return picture, {entry["id"]: entry for entry in picture.marks["elements"]}


def test_marks_name_the_inner_elements_and_the_process_hold():
    """Dehydrated: the marks name the subprocess (its running track), the inner task, the
    multi-instance task and each armed event start by the ids the drawn XML gives them; the
    process's own hold says it is the process's."""
    eng, inst = dehydrated()
    picture, marks = marks_of(eng, inst)
    assert list(marks) == ["s", "split", "handle", "hs", "work", "ask", "late", "review",
                           "nudge"]
    assert set(marks) <= set(diagram(picture.bpmn)[0])  # every id is a drawn shape
    assert [(b["state"], b["tip"]) for b in marks["handle"]["badges"]] == [
        ("dehydrated", "t1 dehydrated")]
    assert [b["tip"] for b in marks["work"]["badges"]] == [
        "t5 dehydrated", "☺ armed task hold of t5 on this node: task i1:work:3"]
    assert [(b["kind"], b["text"]) for b in marks["review"]["badges"]] == [
        ("token", "3"), ("hold", "☺ i1:review:1"), ("hold", "☺ i1:review:2")]
    (nudge,) = marks["nudge"]["badges"]
    assert (nudge["text"], nudge["tip"]) == (
        "✉ nudge · o-1",
        "✉ armed message hold of the process on this start of its event subprocess: "
        "message nudge · o-1")
    assert marks["nudge"]["classes"] == ["gobpm-held"]
    assert [b["text"] for b in marks["late"]["badges"]] == ["◷ 2026-01-02T00:00:00Z"]
    assert marks["ask"]["badges"][0]["tip"].startswith("✉ armed message hold of t1 on this "
                                                       "start of its event subprocess")
    assert picture.marks["flows"] == ["Flow_hs_work", "Flow_s_split", "Flow_split_handle",
                                      "Flow_split_review"]
    assert set(picture.marks["flows"]) <= set(diagram(picture.bpmn)[1])


def test_woken_marks_put_the_event_tracks_on_their_frames_and_tasks():
    eng, inst = woken()
    picture, marks = marks_of(eng, inst)
    assert [b["tip"] for b in marks["aside"]["badges"]] == ["t6 dehydrated"]
    assert [b["tip"] for b in marks["answer"]["badges"]][0] == "t7 dehydrated"
    assert "gobpm-left" in marks["note"]["classes"] and "note" not in \
        [t.node for t in picture.view.tokens]
    assert set(marks) <= set(diagram(picture.bpmn)[0])


# -- the dashboard's tables ---------------------------------------------------------------
def test_the_process_scope_hold_renders_in_the_holder_table():
    """A hold armed on the process's own scope (track "") shows as the process's in the
    holder table; the widgets build without error, and a nudge says where it went."""
    eng, inst = dehydrated()
    rows = dashboard_traits(eng, inst.id)["holds"]
    assert [(r["track"], r["node"]) for r in rows if r["kind"] == "message"] == [
        ("process", "nudge"), ("t1", "ask")]
    assert [h.track for h in proj.process_state(eng, inst.id).holds if h.node == "nudge"] == [""]
    board, lineage, view = eng.dashboard(), inst.lineage(live=True), inst.process_view(live=True)
    try:
        board._handle_custom_msg({"kind": "publish", "name": "nudge", "key": "o-1"}, [])
        assert board.error == ""
        assert board.publish_notice["text"] == (
            "Message 'nudge' with key 'o-1' reached instance i1 (the process's event "
            "subprocess start 'nudge')")
        board._handle_custom_msg({"kind": "step"}, [])
        for w in (board, lineage, view):
            w.refresh()
        assert board.error == "" and view.title == "process view of i1"
        assert lineage.title == "lineage of i1"
        assert "cluster_aside" in view.dot and "● t6" in view.dot
        assert [r["track"] for r in board.holds if r["node"] == "nudge"] == ["process"]
    finally:
        for w in (board, lineage, view):
            w.close()


def test_the_fact_filter_offers_the_escalation_kinds():
    """The kind filter always lists the escalation facts, and filtering by one finds them."""
    p = bpm.Process("esc")
    p.start("s")
    p.parallel_gateway("fork")
    p.end("up", escalation="UP")
    p.end("lost", escalation="NOBODY")
    p.flow("s", "fork", "up")
    p.flow("fork", "lost")
    with p.event_subprocess("ev") as ev:
        ev.escalation_start("es", escalation="UP", interrupting=False)
        ev.end("ee")
        ev.flow("es", "ee")
    eng = bpm.Engine()
    board = eng.dashboard()
    try:
        assert {"escalation_caught", "escalation_uncaught"} <= set(board.fact_page["kinds"])
        eng.start(p)
        eng.run()
        for kind, details in (("escalation_caught", "escalation=UP, start=es"),
                              ("escalation_uncaught", "escalation=NOBODY")):
            board._handle_custom_msg({"kind": "facts", "fact_kind": kind}, [])
            assert board.error == ""
            assert [(r["kind"], r["details"]) for r in board.facts] == [(kind, details)]
    finally:
        board.close()


@pytest.mark.parametrize("make", [scoped, events])
def test_every_node_of_a_scoped_process_is_drawn_once(make):
    """Every element is declared exactly once in the DOT, inside or outside frames."""
    eng = bpm.Engine()
    inst = eng.start(make(), DATA)
    eng.advance("PT1H")
    dot = process_dot(eng, inst)
    declared = [m.group(1) for m in NODE.finditer(dot) if " -> " not in m.group(0)]
    assert sorted(declared) == sorted(n.id for n in proj.process_state(eng, inst.id).nodes)


def test_a_call_activity_and_its_hold_have_their_own_look():
    from gobpm_nb.render.dot import HOLD_LOOKS, TASK_CAPTIONS

    child = bpm.Process("callee")
    child.start("s")
    child.user_task("work")
    child.end("e")
    child.flow("s", "work", "e")
    caller = bpm.Process("caller")
    caller.start("s")
    caller.call_activity("call", "Call it", process="callee", version=1)
    caller.end("e")
    caller.flow("s", "call", "e")
    eng = bpm.Engine()
    eng.deploy(child)
    inst = eng.start(caller)
    eng.run()
    dot = process_dot(eng, inst)
    assert TASK_CAPTIONS["call_activity"] in dot and "callee v1" in dot
    assert HOLD_LOOKS["call"][0] in dot
    from gobpm_nb.observe.fact_pages import FACT_KINDS

    assert {"checkpoint_failed", "error_to_caller"} <= set(FACT_KINDS)


def test_both_lineages_show_the_call_between_them():
    child = bpm.Process("callee")
    child.start("s")
    child.user_task("work")
    child.end("e")
    child.flow("s", "work", "e")
    caller = bpm.Process("caller")
    caller.start("s")
    caller.call_activity("call", process="callee")
    caller.end("e")
    caller.flow("s", "call", "e")
    eng = bpm.Engine()
    eng.deploy(child)
    parent = eng.start(caller)
    eng.run()
    (kid,) = [i for i in eng.instances() if i.id != parent.id]
    up = lineage_dot(proj.lineage(eng, parent.id))
    down = lineage_dot(proj.lineage(eng, kid.id))
    assert f"calls {kid.id}" in up and '"t1" -> "child ' in up
    assert f"called by {parent.id}" in down and '"caller" -> "t1"' in down
