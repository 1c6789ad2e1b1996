# %% [markdown]
# # 10. From a modeler and back: BPMN 2.0 XML files
#
# Processes are usually drawn, not typed: in Camunda Modeler, the Camunda web modeler,
# bpmn.io, Signavio. What such a tool saves is a BPMN 2.0 XML file — the process
# (elements, flows, conditions, timers, messages), the diagram (where every shape and arrow
# sits) and the vendor's own extensions (which worker runs a service task, which field
# correlates a message). This notebook takes one such file, asks the engine what it can and
# cannot run, runs it on virtual time with dehydration, and saves it back.
#
# Three things to watch:
#
# - **The import report.** Loading never stops at the first problem: every element the
#   engine cannot run, every expression it cannot translate, every dangling reference is a
#   note with its source line. A process runs when none of its *error* notes touch it.
# - **Nothing from the file is evaluated.** Conditions (FEEL `= total > 1000`, JUEL
#   `${total > 1000}`) are translated to the engine's safe evaluator when they use only
#   names, literals, comparisons and `and`/`or`/`not`; a script in the file is never run —
#   you attach Python to it instead.
# - **The round trip.** The file written back is the file read — ids, diagram, documentation
#   and extensions unchanged — so it opens in the modeler as it was drawn.
#
# > **Spec:** [OMG BPMN 2.0.2](https://www.omg.org/spec/BPMN/2.0.2/), clause 15 *Exchange
# > Formats* (the XML schema the file follows; the XSD the import validates against ships in
# > `gobpm_nb/bpmn/xsd/`) and §12.1 *BPMN Diagram Interchange* ("the interchange of laid out
# > shapes and edges that constitute a BPMN diagram" — what the round trip keeps).
# >
# > **Semantics:** [eligibility](../docs/semantics.md#eligibility) — a user task and a message
# > catch let their instance dehydrate, a worker job keeps it resident: a process from a
# > file dehydrates and wakes exactly as one built in Python. The README's section "BPMN files: from
# > a modeler and back" lists what maps to what.

# %%
import io
import textwrap
import xml.etree.ElementTree as ET

import gobpm_nb as bpm
from gobpm_nb.cli import main as gobpm_command

ORDER_FILE = "data/order-approval.bpmn"  # relative to notebooks/, where the kernel runs


def show_holders(eng):
    for h in eng.holders():
        deadline = f"{h.deadline:%m-%d %H:%M}" if h.deadline else "-"
        print(f"{h.instance:3} {h.track:3} {h.kind:8} {h.wait_kind:8} {h.node:20} "
              f"deadline={deadline:11} keys={h.keys}")


def residency(eng):
    return {i.id: i.residency for i in eng.instances()}


def facts_since(eng, seen, kinds=None):
    for f in eng.facts[seen:]:
        if kinds is None or f.kind in kinds:
            print(f"{f.at:%m-%d %H:%M} {f.kind:18} {f.instance or '-':3} {f.track or '':3} "
                  f"{f.node or '':20} {f.details}")


def excerpt(text, start, count):
    """``count`` lines of ``text`` from the first line containing ``start``."""
    lines = text.splitlines()
    first = next(n for n, line in enumerate(lines) if start in line)
    print("\n".join(lines[first:first + count]))

# %% [markdown]
# ## The file
#
# `data/order-approval.bpmn` is an order-approval process in the shape Camunda Modeler 8
# saves it (`bpmn:` prefixes, `zeebe:` extensions, a diagram). Orders over 1000 need
# finance's approval within two days (a user task with an interrupting timer boundary);
# every order then waits for its payment (a message correlated by `orderId`) and a
# warehouse worker ships it (a service task with a job type). The raw XML of one task and of
# the payment message:

# %%
with open(ORDER_FILE, encoding="utf-8") as f:
    source = f.read()
excerpt(source, 'id="Activity_approve"', 9)
excerpt(source, '<bpmn:message id="Message_payment"', 5)

# %% [markdown]
# ## Loading it: the processes and the report
#
# `bpm.load_bpmn` takes a path, bytes or XML text. It reads every process of the file and
# collects the **report**: one note per problem, sorted by source line — a list of `Note`s
# that prints grouped by process (executable or not, runs or not), each with the element's
# name beside its id, its line and a hint (displayed as the last value of a cell, it is a
# table). This file has one warning: the script task carries a FEEL expression
# (`=quantity * unitPrice`), and the engine does not run expressions from a file — until it
# gets a Python function, the task passes the data through unchanged.
#
# In the browser (JupyterLite) every report in this notebook has one more warning, on the
# file itself: lxml, which validates a file against the BPMN 2.0 XML Schema, cannot be
# installed there, so the file is read with the standard library — hardened the same way,
# with the same notes and lines — and the report says that it was not validated.

# %%
model = bpm.load_bpmn(ORDER_FILE)
print(model)
print(model.report)

# %% [markdown]
# `model.process()` is the executable process, as a `Process` — the same object the builder
# makes. Each element of the file became a builder element: the extensions supplied the
# assignee, the job topic and the correlation key, and the FEEL conditions were translated
# (`=approved = true`: in FEEL a single `=` compares). A gateway's default is kept as the
# node its default flow leads to.

# %%
order = model.process()
print(order)
for e in order.elements:
    extra = {k: getattr(e, k) for k in ("assignee", "topic", "message", "attached_to",
                                         "default") if getattr(e, k, None) is not None}
    if getattr(e, "key", None) is not None:
        extra["key"] = e.key.source
    if getattr(e, "timer", None) is not None:
        extra["timer"] = e.timer.text
    print(f"{e.id:20} {e.kind:17} {e.name or '':17} {extra}")
for flow in order.flows:
    if flow.condition is not None:
        print(f"{flow.id:14} {flow.source} -> {flow.target}  when {flow.condition.source!r}")

# %% [markdown]
# ## A file the engine cannot run (yet)
#
# C.3.0 from the BPMN Model Interchange Working Group's test suite is a real modeler export
# (repository `bpmn-miwg/bpmn-miwg-test-suite`, CC BY 3.0; see `tests/data/miwg/README.md`).
# Its executable process has a subprocess drawn collapsed with nothing inside it, a condition
# written in plain prose
# (`Service Level == 'Premium'`, a name with a space) and a message boundary whose message
# says nothing about correlation. The report lists both errors at once, with their lines,
# and `process()` refuses the process with one `ModelError` naming each of them. The message
# boundary is a warning: a message with no correlation key is correlated by its name alone
# (as Camunda 7's `correlateMessage(name)` does).

# %%
miwg = bpm.load_bpmn("../tests/data/miwg/C.3.0.bpmn")
print(miwg)
print(miwg.report)
try:
    miwg.process()
except bpm.ModelError as exc:
    print(f"\nModelError, {len(exc.problems)} problems:")
    for problem in exc.problems:
        print(textwrap.fill(problem, 100, initial_indent=" - ", subsequent_indent="   "))

# %% [markdown]
# The same report is a command for a design review or a CI job: `python -m gobpm_nb check`
# prints it as a table and exits non-zero when the executable process cannot run. Here the
# command runs in this kernel — `gobpm_nb.cli.main` is what `python -m gobpm_nb` calls, with
# the same arguments, output and exit status — so the cell runs in the browser too
# (JupyterLite), where no process can be started.

# %%
for path in (ORDER_FILE, "../tests/data/miwg/C.3.0.bpmn"):
    out = io.StringIO()
    status = gobpm_command(["check", path], out=out)
    print(f"$ python -m gobpm_nb check {path}  (exit {status})")
    print(out.getvalue().splitlines()[0])
    print(out.getvalue().splitlines()[-1], "\n")

# %% [markdown]
# ## Python for the script task
#
# The file's script is not run; `set_function` attaches the Python that does its work. The
# function gets the instance data and returns the fields to merge, like any script task;
# `set_function` returns the task's id, like every builder call.

# %%
order.set_function("Activity_total",
                   lambda data: {"total": data["quantity"] * data["unitPrice"]})

# %% [markdown]
# ## Running it on virtual time
#
# Three orders at midnight: `o-1` and `o-3` are large (they wait for finance, under the
# two-day timer), `o-2` is small (it goes straight to the payment wait). An hour later all
# three are **dehydrated**: no coroutine is left, and every wait has its engine holder — the
# task inbox and the deadline heap for the large ones, the message index (key `o-2`) for the
# small one.

# %%
eng = bpm.Engine()
o1 = eng.start(order, {"orderId": "o-1", "quantity": 5, "unitPrice": 400})
o2 = eng.start(order, {"orderId": "o-2", "quantity": 2, "unitPrice": 45})
o3 = eng.start(order, {"orderId": "o-3", "quantity": 3, "unitPrice": 700})
eng.advance("PT1H")
print(residency(eng), "coroutines:", eng.stats()["coroutines"])
print({i.id: i.data["total"] for i in eng.instances()})
show_holders(eng)

# %% [markdown]
# The process view draws the graph from the file's elements, with `o-1`'s token on the
# approval task and both of its holds marked (the task and the boundary timer):

# %%
o1.process_view()

# %% [markdown]
# ## Finance approves `o-1`
#
# Completing the task by its id hydrates `i1`; the continuation fork binds `approved`,
# passes both gateways (`=approved = true` holds) and parks on the payment message — and the
# instance dehydrates again, now held by the message index. The boundary timer it beat is
# withdrawn.

# %%
seen = len(eng.facts)
(task,) = [t for t in eng.tasks() if t.instance == o1.id]
print(task.id, task.name, task.assignee)
eng.complete_task(task.id, {"approved": True})
eng.advance("PT1H")
facts_since(eng, seen, {"hydrated", "wait_released", "node_entered", "wait_held",
                        "dehydrated"})
print(residency(eng))

# %% [markdown]
# ## Payments arrive; the warehouse ships
#
# The bank's payment messages are correlated by `orderId`, as the file's
# `zeebe:subscription correlationKey="=orderId"` says. Each wakes its order, which moves on
# to *Ship order* — a worker job (`zeebe:taskDefinition type="shipping"`). A job in flight is
# active work: the two orders stay **resident** until the worker reports, however long it
# takes.

# %%
for key in ("o-1", "o-2"):
    print(key, "->", eng.publish_message("payment", key=key, payload={"paid": True}))
eng.advance("PT1H")
print(residency(eng), "coroutines:", eng.stats()["coroutines"], "jobs:", eng.stats()["jobs"])

jobs = eng.fetch_jobs("shipping", worker="warehouse-1")
print([(j.id, j.instance, j.data["orderId"]) for j in jobs])
for job in jobs:
    eng.complete_job(job.id, {"parcel": f"P-{job.data['orderId']}"})
eng.advance("PT1M")
print({i.id: (i.state, i.residency) for i in eng.instances()})
print(o1.data)

# %% [markdown]
# ## Nobody approves `o-3`
#
# Two days after its start, the boundary timer of `o-3` fires while the instance is
# dehydrated: the deadline heap wakes it, the boundary forks over the approval track
# (interrupting: the task is cancelled), and the order ends at *Order expired*.

# %%
seen = len(eng.facts)
eng.advance("P2D")
facts_since(eng, seen, {"timer_fired", "hydrated", "wait_released", "node_entered",
                        "instance_completed"})
print(o3.state, [(t.id, t.node, t.state, t.origin) for t in o3.tracks])
print("inbox:", eng.tasks(), "| holders:", eng.holders())

# %%
o3.process_view()

# %% [markdown]
# ## Saving it back
#
# `model.to_bpmn()` writes the file back (`order.to_bpmn()` gives the same text for a
# process that came from a file). Here is the approval task and its diagram shape in the
# export: the documentation, the `zeebe:` extension and the bounds drawn in the modeler are
# all there.

# %%
exported = model.to_bpmn()
excerpt(exported, 'id="Activity_approve"', 9)
excerpt(exported, 'id="Activity_approve_di"', 3)
print(order.to_bpmn() == exported)

# %% [markdown]
# Nothing was lost or renamed. Reading the export again gives the same element and flow ids,
# and every diagram shape keeps its bounds, every edge its waypoints, every label its place.
# In fact the export is the same XML document as the file, compared in canonical form
# (C14N): only the spelling of empty elements (`<x />` vs `<x/>`) differs in the raw text.
# (The comparison uses the standard library's `xml.etree.ElementTree`, which is everywhere
# Python is, the browser included.) The Python function is not in the file: call
# `set_function` again after loading it.

# %%
again = bpm.load_bpmn(exported).process()
print("element ids:", [e.id for e in again.elements] == [e.id for e in order.elements])
print("flow ids:   ", [f.id for f in again.flows] == [f.id for f in order.flows])


def diagram(xml_text):
    """Every shape's bounds, edge's waypoints and label's bounds, by the element drawn."""
    drawn = {}
    for node in ET.fromstring(xml_text).iter():
        if node.tag.endswith(("}BPMNShape", "}BPMNEdge")):
            points = [p for p in node.iter() if p.tag.endswith(("}Bounds", "}waypoint"))]
            drawn[node.get("bpmnElement")] = [dict(p.attrib) for p in points]  # labels too
    return drawn


drawn = diagram(source)
print("diagram:    ", diagram(exported) == drawn, f"({len(drawn)} shapes and edges)")
print("same document (C14N):", ET.canonicalize(exported) == ET.canonicalize(source))
print("same raw text:", exported == source)

# %% [markdown]
# ## A process built in Python, as a file
#
# The other direction: a `Process` built in cells exports with `p.to_bpmn()` as a new file
# a modeler can open — `incoming`/`outgoing` on every node, Camunda 8 extensions
# (`zeebe:assignmentDefinition`, `zeebe:subscription`), FEEL conditions, and a left-to-right
# diagram from a deterministic layered layout (the same text in every run).

# %%
refund = bpm.Process("refund", "Refund request")
refund.start("requested", "Refund requested")
refund.exclusive_gateway("large", "Over 200?", default="auto_refund")
refund.user_task("review", "Review refund", assignee="support")
refund.timer_boundary("review_late", attached_to="review", duration="P1D")
refund.script_task("auto_refund", "Refund automatically", fn=lambda d: {"refunded": d["amount"]})
refund.message_catch("returned", "Goods returned", message="return", key="orderId")
refund.end("done", "Refunded")
refund.end("escalated", "Escalated")
refund.flow("requested", "large")
refund.flow("large", "review", condition="amount > 200")
refund.flow("large", "auto_refund")
refund.flow("review", "returned", "done")
refund.flow("auto_refund", "done")
refund.flow("review_late", "escalated")
refund.validate()

xml = refund.to_bpmn()
print(len(xml.splitlines()), "lines")
excerpt(xml, 'id="large"', 5)
excerpt(xml, 'id="Flow_large_review"', 3)
excerpt(xml, 'bpmnElement="review"', 3)

# %% [markdown]
# Read back with `bpm.Process.from_bpmn`, it has the same elements with the same ids and
# kinds, the same conditions and timer. Flow ids are the one thing that changes: the
# builder's `"large->review"` is not a valid XML id, so the file names it
# `Flow_large_review` (and the re-read process uses that name). The function of the script
# task stays in Python.

# %%
reread = bpm.Process.from_bpmn(xml)
print([(e.id, e.kind) for e in reread.elements] == [(e.id, e.kind) for e in refund.elements])
print([f.id for f in refund.flows])
print([f.id for f in reread.flows])
print([(f.source, f.target, f.condition.source) for f in reread.flows if f.condition])
print(reread.to_bpmn() == xml)

# %% [markdown]
# The re-read process runs like any other. A large refund waits for support, dehydrated;
# with its function attached again, a small one is refunded at once.

# %%
reread.set_function("auto_refund", lambda d: {"refunded": d["amount"]})
eng2 = bpm.Engine()
big = eng2.start(reread, {"orderId": "r-1", "amount": 450})
small = eng2.start(reread, {"orderId": "r-2", "amount": 40})
eng2.advance("PT1H")
print(big.id, big.residency, [h.kind + "@" + h.node for h in eng2.holders()])
print(small.id, small.state, small.data)
