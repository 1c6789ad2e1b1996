# %% [markdown]
# # 13. Run it as drawn: an analyst's diagram in a design review
#
# An analyst drew the order process in a descriptive modeller — boxes, diamonds, arrows with
# labels such as "in stock?", "yes", "no" — and exported it as BPMN 2.0 XML. Nothing in the
# file says how to run it: no conditions, no message definitions, no implementations. Yet the
# class wants to *walk through* it: what happens when the customer withdraws, when the
# payment fails?
#
# **Design-review mode** (`load_bpmn(path, run_as_drawn=True)`) runs such a diagram. Every
# gap the engine fills is written down as a warning note `as drawn: ...` in the import
# report, so the class sees exactly what was assumed; each gateway whose flows carry only
# labels becomes a **decision**, and the class clicks the way.
#
# Three things to watch:
#
# - **What the diagram lacks** (the report as written) and **what the run assumes** (the
#   report as drawn).
# - **Compensation**: an order withdrawn after its delivery slot was booked has the booking
#   undone by the handler the analyst attached to it.
# - **A transaction**: when the payment fails inside "Payment and shipping", everything
#   still going on inside is withdrawn, the card charge is refunded, and the order leaves by
#   the transaction's cancel boundary.
#
# > **Semantics:** [Design-review mode](../docs/semantics.md#design-review-mode) (every
# > assumption), [Decisions](../docs/semantics.md#decisions) and
# > [Compensation](../docs/semantics.md#compensation) (records, throws, transactions).
# > **Reference:** the README's [Decisions](../README.md#decisions-a-person-or-a-rule-chooses-the-way)
# > and [Compensation and transactions](../README.md#compensation-and-transactions).

# %%
import xml.etree.ElementTree as ET

import gobpm_nb as bpm

ORDER_FILE = "data/order-as-drawn.bpmn"  # relative to notebooks/, where the kernel runs
# The labels the analyst wrote on the flows ("yes", "no"), as the dashboard's buttons show them
labels = {f.get("id"): f.get("name") for f in ET.parse(ORDER_FILE).iter()
          if f.tag.endswith("}sequenceFlow")}


def name(node):
    return names.get(node, node) if node else "-"


def path(inst):
    """The nodes an instance left, in order, by their names in the diagram."""
    return " → ".join(name(f.node) for f in eng.facts
                      if f.instance == inst.id and f.kind == "node_left")


def tracks(inst):
    for t in inst.tracks:
        print(f"  {t.id:3} {t.origin:12} {t.state:10} at {name(t.node)}")


def facts_since(seen, inst, kinds):
    for f in eng.facts[seen:]:
        if f.instance == inst.id and f.kind in kinds:
            print(f"  {f.seq:3} {f.kind:22} {f.track or '':3} {name(f.node):22} {f.details}")


def waiting():
    for d in eng.decisions():
        flows = ", ".join(f"{labels[flow]!r} → {name(target)} ({flow})"
                          for flow, target in d.flows)
        print(f"  {d.instance}  waits at {name(d.gateway)!r}: {flows}")
    for t in eng.tasks():
        print(f"  {t.instance}  task {t.name!r} ({t.id})")

# %% [markdown]
# ## The file, as written
#
# `data/order-as-drawn.bpmn` is written in the style of the exports of the BPMN Model
# Interchange Working Group's test suite: `semantic:` prefixes, `isExecutable="false"`, a
# full diagram. Read as written, the engine takes it, with warnings: the process is not
# marked executable, and the "Shipping notice" event names no message defined in the file, so
# the engine takes the message its name names, correlated by that name alone (as SpiffWorkflow
# and Camunda 7 read such a file). Note what the report does *not* complain about: the
# gateways. As written, a gateway whose flows carry no condition takes its first flow, so
# every order would go the first way at every diamond; only in design-review mode does it
# wait for a person.
#
# (In the browser, JupyterLite, each report here has one more warning, on the file: lxml
# cannot be installed there, so the file is not validated against the BPMN XML Schema —
# notebook 10 says more.)

# %%
written = bpm.load_bpmn(ORDER_FILE)
print(written)
print(written.report)

# %% [markdown]
# ## The file, as drawn
#
# Read in design-review mode, it runs as the analyst meant it: the same warnings, and a note
# for each of the three gateways: it is a decision, a person chooses the flow. The compensation
# boundaries, the handlers, the transaction and its cancel events need no assumption: the
# file says all the engine needs.

# %%
model = bpm.load_bpmn(ORDER_FILE, run_as_drawn=True)
print(model)
print(model.report)
order = model.process()
names = {e.id: e.name or f"({e.kind.replace('_', ' ')})" for e in order.elements}
print(order)

# %% [markdown]
# ## Four orders come in
#
# Each order is an instance, started with a key the class can read (the instance's id). The
# tasks of the diagram have no implementation: they pass. All four orders run to the first
# diamond, "In stock?", and wait there — each with a `decision` hold, dehydrated like any
# waiting instance.

# %%
eng = bpm.Engine()  # virtual clock at 2026-01-01T00:00:00Z
for key in ("SO-1", "SO-2", "SO-3", "SO-4"):
    eng.start(order, {"customer": key}, key=key)
eng.run()
so1, so2, so3, so4 = (eng.instance(k) for k in ("SO-1", "SO-2", "SO-3", "SO-4"))
waiting()
print({i.id: i.residency for i in eng.instances()})

# %% [markdown]
# ## The dashboard: the class decides
#
# The dashboard's **Decide** row shows the decisions of the selected order, one button per
# flow with the label the analyst wrote ("yes", "no"); on the diagram the two flows are
# dashed, and clicking one decides too. Pick an order in the picker, click, then **Step** or
# **Run**. The cells below make the notebook's own choices with `eng.decide(instance, flow)`
# — exactly what a button sends — so that it runs the same way without a browser.

# %%
eng.dashboard()

# %% [markdown]
# `SO-4` is out of stock (the flow leading to "Offer back order"); the others are in stock.
# `eng.decide` takes the flow's id or the node it leads to. The in-stock orders book their
# delivery slot — the booking *completes*, so it can be compensated later — and wait at
# "Customer confirms?".

# %%
eng.decide("SO-4", "_offer_back_order")
for inst in (so1, so2, so3):
    eng.decide(inst.id, "_book_slot")
eng.run()
print("SO-4:", so4.state, "|", path(so4))
waiting()

# %% [markdown]
# ## The customer withdraws: the booking is compensated
#
# `SO-2`'s customer says no. That path throws a compensation event, "Undo booking": the
# engine looks up what completed in the process and has a compensation handler — the
# booking — and runs its handler, "Cancel booking", in a track of its own (origin
# `compensation`). The throw waits for it, then the order ends at "Order withdrawn".

# %%
seen = len(eng.facts)
eng.decide("SO-2", "_undo_booking")
eng.run()
facts_since(seen, so2, {"decision_made", "compensation_started", "compensated",
                        "instance_completed"})
print(so2.state, "|", path(so2))
tracks(so2)

# %% [markdown]
# The dehydrated tracks are where the order waited at a decision; each decision continued
# in a new track (a continuation). `t4` is the handler's track.
#
# ## Two customers confirm: payment and shipping
#
# `SO-1` and `SO-3` enter the transaction "Payment and shipping": the card is charged (a
# compensable activity inside the transaction), then two things happen in parallel — the
# warehouse packs the parcel (a user task: it waits in the inbox) and someone checks that
# the payment cleared (a decision).

# %%
for inst in (so1, so3):
    eng.decide(inst.id, "_payment_and_shipping")
eng.run()
waiting()
tracks(so3)

# %% [markdown]
# `SO-1` goes well: the parcel is packed, the payment cleared ("yes"). Both branches meet,
# the transaction ends, the shipping notice is sent (a message by its name, which no one
# waits for here) and the order is completed. Nothing is compensated.

# %%
(pack,) = [t for t in eng.tasks() if t.instance == "SO-1"]
eng.complete_task(pack.id, {"packed_by": "kim"})
eng.decide("SO-1", "_tx_join")
eng.run()
print(so1.state, "|", path(so1))

# %% [markdown]
# ## The payment fails: the transaction is cancelled
#
# For `SO-3` the payment does not clear ("no"): the path ends at the cancel end event
# "Payment failed". The transaction is cancelled: the packing task still open inside it is
# **withdrawn**, the card charge that completed inside it is **compensated** ("Refund card"),
# and the order leaves by the **cancel boundary**. On that path, "Inform customer", then
# the end event "Order cancelled" — a compensation end: it undoes the booking made outside
# the transaction too.

# %%
seen = len(eng.facts)
eng.decide("SO-3", "_payment_failed")
eng.run()
facts_since(seen, so3, {"decision_made", "transaction_cancelled", "wait_released",
                        "compensation_started", "compensated", "instance_completed"})
print(so3.state, "|", path(so3))
tracks(so3)
print("inbox:", eng.tasks())

# %% [markdown]
# The process view shows `SO-3` as it is now: the path it took in green, through the
# transaction and out by its cancel boundary.

# %%
so3.process_view()

# %% [markdown]
# ## What if the payment had cleared? Rewind and decide the other way
#
# Every decision is a command in the engine's history. `eng.rewind(n)` puts the whole engine
# back to the state right after fact `n` — here the moment before `SO-3`'s decision, where it
# waited at "Payment cleared?" — and the class decides again. A new command after a rewind
# starts a new history from there (what the rewind went back over is dropped).

# %%
(choice,) = [c for c in eng.history()
             if c.name == "decide" and c.args == ("SO-3", "_payment_failed")]
back = eng.rewind(choice.first)
print(f"rewound to fact {back.seq}; {back.dropped} facts after it can be replayed")
print("SO-3:", so3.state)
waiting()

# %%
eng.decide("SO-3", "_tx_join")  # "yes", this time
(pack,) = [t for t in eng.tasks() if t.instance == "SO-3"]
eng.complete_task(pack.id, {"packed_by": "lee"})
eng.run()
print(so3.state, "|", path(so3))
print({i.id: i.state for i in eng.instances()})
print("compensated this time:", [f.node for f in eng.facts
                                 if f.instance == "SO-3" and f.kind == "compensated"])
