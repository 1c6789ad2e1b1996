"""The MIWG reference models (tests/data/miwg, CC BY 3.0): what each imports, what its report
says, which processes run, and a round trip that keeps everything."""

import pytest
from bpmn_shapes import MIWG_DIR, c14n, diagram, elements, flows, ids_and_tags

import gobpm_nb as bpm

MODELS = sorted(p.stem for p in MIWG_DIR.glob("*.bpmn"))

# model -> {process id: error notes}, executable ids, (errors, warnings) in the report
EXPECTED = {
    "A.1.0": ({"WFP-6-": 0}, [], (0, 1)),
    "A.2.0": ({"WFP-6-": 0}, [], (0, 1)),
    "A.2.1": ({"_To9ZoTOCEeSknpIVFCxNIQ": 0}, [], (0, 5)),
    "A.3.0": ({"WFP-6-": 1}, [], (1, 2)),
    "A.4.0": ({"WFP-6-1": 0, "WFP-6-2": 0}, [], (0, 0)),
    "B.1.0": ({"Process_ba16239e-181e-4b9f-bc5b-0bb2ee973450": 0, "WFP-6-1": 1,
               "WFP-6-2": 2, "WFP-0-": 0}, [], (3, 5)),
    "C.1.0": ({"sid-5FBB6CB3-8A7C-42B5-9024-15BB2684EC57": 1,
               "bpmn-miwg-test-case-c.1.0": 0}, ["bpmn-miwg-test-case-c.1.0"], (1, 5)),
    "C.3.0": ({"_8170787a-3207-434d-9bea-4787059f444f": 2},
              ["_8170787a-3207-434d-9bea-4787059f444f"], (2, 1)),
}

# what the report names as the reason a process cannot run (a fragment per error note); a
# subprocess drawn collapsed with nothing inside has no start event to run
EMPTY = "has 0 plain start events; give one (it is empty in the file"
REASONS = {
    "A.3.0": [EMPTY],  # its message boundary has a name: a warning
    # B.1.0: a timer start with an empty timeDate; a call activity calling a global task
    "B.1.0": ["date '' is not an ISO 8601 date-time",
              "calls <globalTask> 'global-task': only a process can be called", EMPTY],
    "C.1.0": ["exactly one of timeDuration"],
    "C.3.0": [EMPTY, "Service Level == 'Premium'"],
}


def load(name):
    return bpm.load_bpmn(MIWG_DIR / f"{name}.bpmn")


def begin(eng, process, data):
    """A new instance of ``process``: by eng.start(), or, when its only start is a message
    start event (C.1.0's invoice process), deployed and started by that message."""
    d = process.definition()
    if d.start:
        return eng.start(process, data=data)
    eng.deploy(process)
    (sid,) = d.instance_starts
    iid = eng.publish_message(d.nodes[sid].message, payload=data)
    eng.run()
    return eng.instance(iid)


@pytest.mark.parametrize("name", MODELS)
def test_each_model_imports_every_process_with_its_report(name):
    """Every process is read in document order; the report counts errors and warnings and
    each process has the error notes expected."""
    model = load(name)
    per_process, executable, counts = EXPECTED[name]
    assert list(model.processes) == list(per_process)
    assert model.executable == executable
    errors = [n for n in model.report if n.severity == "error"]
    assert (len(errors), len(model.report) - len(errors)) == counts
    assert {pid: len(model.errors(pid)) for pid in model.processes} == per_process
    assert all(n.line is not None and n.element for n in model.report)


@pytest.mark.parametrize("name", sorted(REASONS))
def test_the_report_says_why_a_process_cannot_run(name):
    """Each error note names its reason, in line order."""
    errors = [n for n in load(name).report if n.severity == "error"]
    assert [n.line for n in errors] == sorted(n.line for n in errors)
    for note, reason in zip(errors, REASONS[name], strict=True):
        assert reason in note.message, (note, reason)


@pytest.mark.parametrize("name, pid", [(m, pid) for m, (procs, _, _) in EXPECTED.items()
                                       for pid, errors in procs.items() if errors == 0])
def test_every_process_without_errors_runs_to_completion(name, pid):
    """A process no error note touches runs: user tasks completed, virtual time moved."""
    eng = bpm.Engine()
    inst = begin(eng, load(name).process(pid), {"approved": True})
    for _ in range(20):
        eng.run(until="2026-02-01T00:00:00Z")
        tasks = [t for t in eng.tasks() if t.instance == inst.id]
        if not tasks:
            break
        for task in tasks:
            eng.complete_task(task.id, {"approved": True})
    assert inst.state == "completed"


@pytest.mark.parametrize("name, pid", [(m, pid) for m, (procs, _, _) in EXPECTED.items()
                                       for pid, errors in procs.items() if errors])
def test_a_process_with_errors_is_refused_listing_them(name, pid):
    """process(id) raises one ModelError listing every error note of that process."""
    model = load(name)
    with pytest.raises(bpm.ModelError) as info:
        model.process(pid)
    assert len(info.value.problems) == len(model.errors(pid))
    with pytest.raises(bpm.ModelError):
        model.processes[pid].validate()


def test_the_executable_invoice_process_of_c10_runs_its_approval_loop():
    """C.1.0's executable process, started by its message start event ('invoice-received-
    C.1.0'): assign, approve (JUEL ${approved}), prepare the transfer, archive (a
    pass-through service), end; a refusal loops through review."""
    model = load("C.1.0")
    d = model.process().definition()
    assert (d.start, d.instance_starts) == ("", ("StartEvent_1",))
    assert d.nodes["StartEvent_1"].message == "invoice-received-C.1.0"
    eng = bpm.Engine()
    inst = begin(eng, model.process(), {"approved": False})
    answers = {"assignApprover": {}, "approveInvoice": {"approved": False},
               "reviewInvoice": {"clarified": "yes"}}
    seen = []
    for _ in range(10):
        eng.run()
        if not eng.tasks():
            break
        task = eng.tasks()[0]
        seen.append((task.node, task.assignee))
        eng.complete_task(task.id, answers.get(task.node, {}))
        if task.node == "reviewInvoice":
            answers["approveInvoice"] = {"approved": True}
    assert inst.state == "completed"
    assert seen == [("assignApprover", "demo"), ("approveInvoice", "${approver}"),
                    ("reviewInvoice", "demo"), ("approveInvoice", "${approver}"),
                    ("prepareBankTransfer", None)]


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_keeps_the_whole_file(name):
    """load -> to_bpmn gives the same canonical XML: DI, documentation, extensions, ids."""
    source = (MIWG_DIR / f"{name}.bpmn").read_bytes()
    assert c14n(load(name).to_bpmn()) == c14n(source)


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_gives_the_same_ids_kinds_flows_conditions_timers_and_bounds(name):
    """load -> to_bpmn -> load: the same ids and tags, the same elements (kinds, timers,
    conditions), the same flows, the same DI bounds, labels, isExpanded and waypoints."""
    model = load(name)
    text = model.to_bpmn()
    again = bpm.load_bpmn(text)
    source = (MIWG_DIR / f"{name}.bpmn").read_bytes()
    assert ids_and_tags(text) == ids_and_tags(source)
    assert list(again.processes) == list(model.processes)
    for pid, p in model.processes.items():
        assert elements(again.processes[pid]) == elements(p)
        assert flows(again.processes[pid]) == flows(p)
    assert diagram(text) == diagram(source)
    assert again.report == model.report
