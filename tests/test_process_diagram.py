"""The process view in BPMN notation: which diagram it draws, and the engine's state on it
(what the browser puts on each shape). The drawing itself is checked in a real browser by
test_browser.py; here, the data it is drawn from."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap

import pytest
from bpmn_shapes import MIWG_DIR, diagram
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn.drawing import drawing
from gobpm_nb.bpmn.names import BPMN as BPMN_NS
from gobpm_nb.bpmn.names import BPMNDI as BPMNDI_NS
from gobpm_nb.bpmn.names import DC as DC_NS
from gobpm_nb.render import dot as render
from gobpm_nb.render.marks import bpmn_legend
from gobpm_nb.ui import dashboard_traits

XSS = "<script>alert(1)</script>"
NS = {"bpmn": "http://www.omg.org/spec/BPMN/20100524/MODEL",
      "bpmndi": "http://www.omg.org/spec/BPMN/20100524/DI"}


def claim():
    """A user task under an interrupting 2-day timer and a non-interrupting message boundary."""
    p = bpm.Process("claim", "Insurance claim")
    p.start("received")
    p.user_task("review", XSS, assignee="adjuster")
    p.timer_boundary("late", "Late", attached_to="review", duration="P2D")
    p.message_boundary("docs", "Documents in", attached_to="review", message="documents",
                       key="claim", interrupting=False)
    p.end("closed")
    p.end("escalated")
    p.end("filed")
    p.flow("received", "review", "closed")
    p.flow("late", "escalated")
    p.flow("docs", "filed")
    return p.validate()


def entries(marks):
    return {entry["id"]: entry for entry in marks["elements"]}


def badge_texts(entry, kind):
    return [b["text"] for b in entry["badges"] if b["kind"] == kind]


def test_a_process_built_in_python_is_drawn_with_its_own_ids():
    """The view's BPMN document names every node by the engine's id, draws a shape for each,
    and the marks name its flows by their ids in that document (``Flow_a_b``)."""
    eng = bpm.Engine()
    inst = eng.start(claim(), data={"claim": "c-1"})
    view = inst.process_view(live=True)
    root = etree.fromstring(view.bpmn.encode())
    process = root.find("bpmn:process", NS)
    ids = [n.get("id") for n in process if n.get("id") and not n.tag.endswith("sequenceFlow")]
    assert ids == [e.id for e in claim().elements]
    assert set(ids) <= set(diagram(view.bpmn)[0])  # a shape for every node
    eng.advance("PT1H")
    flow_ids = {n.get("id") for n in process.iterfind("bpmn:sequenceFlow", NS)}
    assert view.marks["flows"] == ["Flow_received_review"] and set(view.marks["flows"]) <= flow_ids
    # an unnamed node is labelled with its id, as in the Graphviz view
    assert process.find("bpmn:startEvent", NS).get("name") == "received"
    view.close()


def test_marks_after_advance_put_tokens_and_holds_on_their_shapes():
    """After an hour the dehydrated track stands on the user task (a dehydrated token), the task
    hold badge names the task, the timer badge its deadline and the message badge its
    correlation; the start event and the first flow are the path taken."""
    eng = bpm.Engine()
    inst = eng.start(claim(), data={"claim": "c-1"})
    view = inst.process_view(live=True)
    eng.advance("PT1H")
    marks = entries(view.marks)
    assert list(marks) == ["received", "review", "late", "docs"]
    review = marks["review"]
    assert "gobpm-token" in review["classes"] and "gobpm-dehydrated" in review["classes"]
    assert [(b["state"], b["text"], b["dashed"]) for b in review["badges"]
            if b["kind"] == "token"] == [("dehydrated", "1", True)]
    assert badge_texts(review, "hold") == ["☺ i1:review:1"]
    assert badge_texts(marks["late"], "hold") == ["◷ 2026-01-03T00:00:00Z"]
    assert badge_texts(marks["docs"], "hold") == ["✉ documents · c-1"]
    assert marks["received"]["classes"] == ["gobpm-left"]
    assert view.marks["residency"] == "dehydrated"
    assert "checkpoint in the store" in view.marks["status"]
    # hover: the tracks and holds there, names as they are
    assert review["tip"].splitlines()[:2] == [f"{XSS} (review) · user_task", "● t1 dehydrated"]
    assert view.legend == bpmn_legend()
    view.close()


def test_boundary_forks_are_marked_where_they_began():
    """A message on the non-interrupting boundary forks t2 there: the boundary shows the fork
    badge, its flow is taken, and the task of the dehydrated instance still holds its token."""
    eng = bpm.Engine()
    inst = eng.start(claim(), data={"claim": "c-1"})
    view = inst.process_view(live=True)
    eng.advance("PT1H")
    eng.publish_message("documents", key="c-1")
    eng.advance("PT1H")
    view.refresh()
    marks = entries(view.marks)
    assert badge_texts(marks["docs"], "fork") == ["↳ t2"]
    assert "gobpm-fork" in marks["docs"]["classes"]
    assert "t2: boundary fork of t1" in marks["docs"]["tip"]
    assert "Flow_docs_filed" in view.marks["flows"]
    assert badge_texts(marks["review"], "token") == ["1"]
    view.close()


def test_an_imported_model_is_drawn_as_its_file_draws_it():
    """A model read from a MIWG file keeps its own diagram: every shape's bounds and every
    edge's waypoints are the file's."""
    source = (MIWG_DIR / "C.1.0.bpmn").read_bytes()
    eng = bpm.Engine()
    eng.deploy(bpm.Process.from_bpmn(source))  # it starts by its message start event
    inst = eng.instance(eng.publish_message("invoice-received-C.1.0"))
    view = inst.process_view(live=True)
    eng.advance("PT1H")
    assert diagram(view.bpmn) == diagram(source)
    marks = entries(view.marks)
    assert badge_texts(marks["assignApprover"], "hold") == ["☺ i1:assignApprover:1"]
    assert view.marks["flows"] == ["SequenceFlow_1"]
    view.close()


def test_a_process_outside_the_collaboration_of_its_diagram_is_still_drawn():
    """MIWG B.1.0 draws a collaboration of two pools; its first process (the one with no
    errors) is in no pool but its shapes are on the same plane. Its drawing names it in the
    collaboration (a participant with no pool shape), so the viewer draws its shapes; a
    process a pool already names is left as the file has it."""
    model = bpm.load_bpmn(MIWG_DIR / "B.1.0.bpmn")
    pid = "Process_ba16239e-181e-4b9f-bc5b-0bb2ee973450"
    made = drawing(model.process(pid).definition())
    assert made is not None and made.source == "file"
    root = etree.fromstring(made.xml.encode("utf-8"))
    refs = [p.get("processRef") for p in root.iter(f"{{{BPMN_NS}}}participant")]
    assert refs == ["WFP-6-1", "WFP-6-2", pid]  # drawn last: over the pools' fills
    assert set(diagram(made.xml)[0]) >= set(model.process(pid).definition().nodes)
    c10 = bpm.load_bpmn(MIWG_DIR / "C.1.0.bpmn")
    assert drawing(c10.process().definition()).xml == c10.to_bpmn()


def test_an_imported_file_without_a_diagram_gets_the_exporters_layout():
    """A file that draws nothing is laid out like a process built in Python."""
    p = bpm.Process.from_bpmn(claim().to_bpmn().split("<bpmndi:BPMNDiagram")[0]
                              + "</bpmn:definitions>\n")
    made = drawing(p.definition())
    assert made is not None and made.source == "layout"
    assert set(diagram(made.xml)[0]) >= {e.id for e in p.elements}


def test_ids_that_are_not_xml_names_fall_back_to_graphviz():
    """A process whose ids cannot be written to a BPMN file is drawn by Graphviz, with the
    Graphviz legend."""
    p = bpm.Process("odd")
    p.start("start here")
    p.end("done")
    p.flow("start here", "done")
    eng = bpm.Engine()
    view = eng.start(p).process_view(live=True)
    assert (view.bpmn, view.marks) == ("", {})
    assert view.dot and view.legend == render.process_legend()
    view.close()


def test_the_diagram_is_sent_once_and_only_the_marks_change():
    """A live view builds and sends its BPMN document once; later commands change the marks."""
    eng = bpm.Engine()
    inst = eng.start(claim(), data={"claim": "c-1"})
    view = inst.process_view(live=True)
    sent = []
    view.observe(lambda change: sent.append(change["name"]), names=["bpmn", "marks"])
    for _ in range(3):
        eng.advance("PT1H")
        view.refresh()
    assert "bpmn" not in sent and sent.count("marks") >= 1
    view.close()


def test_the_dashboard_draws_the_selected_instance_in_bpmn():
    """The dashboard's process panel is the selected instance's BPMN document and marks, and
    follows the selection to an instance of another process."""
    eng = bpm.Engine()
    eng.start(claim(), data={"claim": "c-1"})
    eng.deploy(bpm.Process.from_bpmn(MIWG_DIR / "C.1.0.bpmn"))
    other = eng.instance(eng.publish_message("invoice-received-C.1.0"))
    board = eng.dashboard()
    eng.advance("PT1H")
    assert 'id="review"' in board.process_bpmn and board.process_marks["flows"]
    board.selected = other.id
    assert 'id="assignApprover"' in board.process_bpmn
    assert "assignApprover" in [e["id"] for e in board.process_marks["elements"]]
    traits = dashboard_traits(eng, other.id)
    assert (board.process_bpmn, board.process_marks) == (traits["process_bpmn"],
                                                          traits["process_marks"])
    board.close()


@pytest.mark.slow  # two fresh interpreters
def test_marks_are_the_same_across_hash_seeds(tmp_path):
    """Two fresh interpreters with different hash seeds build byte-identical marks and XML."""
    script = tmp_path / "marks.py"
    script.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(tmp_path.parent)!r})\n"
        "import gobpm_nb as bpm\n"
        f"exec({_source(claim)!r})\n"
        "eng = bpm.Engine()\n"
        "inst = eng.start(claim(), data={'claim': 'c-1'})\n"
        "eng.advance('PT1H'); eng.publish_message('documents', key='c-1'); eng.advance('P3D')\n"
        "view = inst.process_view()\n"
        "print(json.dumps([view.bpmn, view.marks], sort_keys=True))\n")
    outs = []
    for seed in ("1", "977"):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120, env={"PYTHONHASHSEED": seed, "PATH": ""},
                              check=False)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert json.loads(outs[0])[1]["elements"]


def _source(fn):
    return f"XSS = {XSS!r}\n" + textwrap.dedent(inspect.getsource(fn))


def test_names_of_neighbouring_boundary_events_do_not_overlap():
    """Two timers on one task sit 44 px apart, closer than a name is wide: the exporter gives
    their names boxes side by side (the right one's starts at its event's left edge, the left
    one's ends at its event's right edge), in the row under the events."""
    p = bpm.Process("pay")
    p.start("s")
    p.receive_task("await_payment", message="payment", key="order")
    p.timer_boundary("payment_reminder", attached_to="await_payment", duration="P7D",
                     interrupting=False)
    p.timer_boundary("payment_lapsed", attached_to="await_payment", duration="P30D")
    p.end("paid")
    p.end("reminded")
    p.end("lapsed")
    p.flow("s", "await_payment", "paid")
    p.flow("payment_reminder", "reminded")
    p.flow("payment_lapsed", "lapsed")
    root = etree.fromstring(p.validate().to_bpmn().encode("utf-8"))
    shapes = {s.get("bpmnElement"): s for s in root.iter(f"{{{BPMNDI_NS}}}BPMNShape")}

    def box(shape, path):
        b = shape.find(path)
        return [float(b.get(k)) for k in ("x", "y", "width", "height")]

    label = f"{{{BPMNDI_NS}}}BPMNLabel/{{{DC_NS}}}Bounds"
    right, left = box(shapes["payment_reminder"], label), box(shapes["payment_lapsed"], label)
    event = box(shapes["payment_lapsed"], f"{{{DC_NS}}}Bounds")
    assert left[0] + left[2] <= right[0], (left, right)
    assert left[1] == right[1] >= event[1] + event[3], (left, right, event)


def test_the_legends_name_every_kind_of_hold_the_engine_has():
    """A call activity's hold (its child instance's end) is a hold like the others: both
    legends say what its mark means (they once left it out)."""
    from gobpm_nb.vocabulary import HOLD_KINDS

    for legend in (bpmn_legend(), render.process_legend()):
        for kind in HOLD_KINDS:
            assert any(f"armed {kind} hold" in label for label, _ in legend), (kind, legend)
