# %% [markdown]
# # 9. A design review: order to cash
#
# The earlier notebooks took one idea each. This one puts them together the way a team would
# in a design review: a realistic order-to-cash process on the table, and a list of "what
# happens if…" questions, each answered by running the process on virtual time — in
# milliseconds, exactly the same way every time — instead of by arguing over the diagram.
#
# The process: the credit check decides whether we take the order. Then two branches run
# in parallel:
#
# - **cash**: send the invoice and wait for the *payment message* (correlated by order id).
#   After 7 days a non-interrupting reminder goes out; after 30 days an interrupting
#   boundary gives up and cancels the whole order (a terminate end).
# - **fulfilment**: the warehouse picks and packs (a user task) with a 24-hour
#   non-interrupting *escalation* to operations; then the *shipping timer* — three days in
#   transit — and delivery is recorded.
#
# A parallel join waits for both; then the order is closed.
#
# > **Semantics:** [A wait is not work](../docs/semantics.md#a-wait-is-not-work) (a user
# > task, a timer, a receive task — this process has all three);
# > [continuation fork](../docs/semantics.md#continuation-fork) and
# > [boundary fork](../docs/semantics.md#boundary-fork);
# > [holdability](../docs/semantics.md#holdability) ("pack within 24 hours or escalate" is two
# > waits); [recovery](../docs/semantics.md#recovery) (a restart mid-order);
# > [two halves](../docs/semantics.md#two-halves); and what this notebook leans on in its last
# > questions: dehydration is [transparent](../docs/semantics.md#residency) — the same outcome
# > resident or dehydrated, and across a crash.

# %%
import os
import shutil
import tempfile
from datetime import timedelta

import gobpm_nb as bpm

o2c = bpm.Process("order_to_cash")
o2c.start("order_received")
o2c.script_task("check_credit",
                fn=lambda d: {"credit_ok": d["amount"] <= d.get("credit_limit", 5000)})
o2c.exclusive_gateway("credit_ok", default="rejected")
o2c.parallel_gateway("split")
# cash
o2c.script_task("send_invoice", fn=lambda d: {"invoiced": d["amount"]})
o2c.receive_task("await_payment", message="payment", key="order_id")
o2c.timer_boundary("payment_reminder", attached_to="await_payment", duration="P7D",
                   interrupting=False)
o2c.timer_boundary("payment_lapsed", attached_to="await_payment", duration="P30D")
o2c.script_task("remind_customer",
                fn=lambda d: {"reminders": d.get("reminders", 0) + 1})
o2c.end("reminder_sent")
o2c.script_task("cancel_order", fn=lambda d: {"cancelled": True})
o2c.end("cancelled", terminate=True)
# fulfilment
o2c.user_task("pick_and_pack", assignee="warehouse")
o2c.timer_boundary("pack_sla", attached_to="pick_and_pack", duration="PT24H",
                   interrupting=False)
o2c.script_task("page_operations", fn=lambda d: {"ops_paged": True})
o2c.end("escalated")
o2c.timer_catch("in_transit", duration="P3D")
o2c.script_task("record_delivery", fn=lambda d: {"delivered": True})
# together again
o2c.parallel_gateway("join")
o2c.script_task("close_order", fn=lambda d: {"closed": True})
o2c.end("order_closed")
o2c.end("rejected")

o2c.flow("order_received", "check_credit", "credit_ok")
o2c.flow("credit_ok", "split", condition="credit_ok == True")
o2c.flow("credit_ok", "rejected")
o2c.flow("split", "send_invoice", "await_payment", "join")
o2c.flow("payment_reminder", "remind_customer", "reminder_sent")
o2c.flow("payment_lapsed", "cancel_order", "cancelled")
o2c.flow("split", "pick_and_pack", "in_transit", "record_delivery", "join")
o2c.flow("pack_sla", "page_operations", "escalated")
o2c.flow("join", "close_order", "order_closed")
o2c.validate()

# %% [markdown]
# ## The review harness
#
# `review()` starts one order on a fresh engine, plays a schedule of outside events at
# given offsets from the start (the warehouse finishing, the customer paying), runs 40 days,
# and reports: how the order ended, its milestones with their times, and how much of its
# life the instance spent dehydrated.

# %%
MILESTONES = {"check_credit", "send_invoice", "await_payment", "remind_customer",
              "cancel_order", "pick_and_pack", "page_operations", "in_transit",
              "record_delivery", "close_order", "rejected"}


def pack(eng, inst):
    """The warehouse completes the order's pick-and-pack task."""
    (task,) = [t for t in eng.tasks() if t.instance == inst.id and t.node == "pick_and_pack"]
    eng.complete_task(task.id, {"packed_by": "kim"})


def pay(amount):
    """The customer's bank sends the payment message for the order."""
    def act(eng, inst):
        eng.publish_message("payment", key=inst.data["order_id"], payload={"paid": amount})
    return act


def started(eng, inst):
    return next(f.at for f in eng.facts if f.instance == inst.id
                and f.kind == "instance_started")


def since(at, t0):
    d = at - t0
    return f"day {d.days} {d.seconds // 3600:02d}:{d.seconds % 3600 // 60:02d}"


def dehydrated_share(eng, inst):
    """The share of the instance's life (start to end, or to now) it spent dehydrated."""
    t0, end = started(eng, inst), eng.now
    dehydrated, since_dehydrated = timedelta(0), None
    for f in eng.facts:
        if f.instance != inst.id:
            continue
        if f.kind == "dehydrated":
            since_dehydrated = f.at
        elif f.kind in ("hydrated", "instance_completed") and since_dehydrated is not None:
            dehydrated += f.at - since_dehydrated
            since_dehydrated = None
        if f.kind == "instance_completed":
            end = f.at
    if since_dehydrated is not None:
        dehydrated += end - since_dehydrated
    return dehydrated / (end - t0) if end > t0 else 0.0


def run_order(data, events=(), engine=None, days=40):
    """Start one order; play ``events`` (offset from its start, action); run ``days``."""
    eng = engine or bpm.Engine()
    inst = eng.start(o2c, dict(data))
    t0 = eng.now
    for offset, act in sorted(events, key=lambda e: e[0]):
        eng.run(until=t0 + offset)
        act(eng, inst)
    eng.run(until=t0 + timedelta(days=days))
    return eng, inst


def review(question, data, events=()):
    eng, inst = run_order(data, events)
    t0 = started(eng, inst)
    ended = sorted(t.node for t in inst.tracks if t.state == "completed")
    print(f"Q: {question}")
    print(f"   outcome: {inst.state}, ended at {ended}")
    for f in eng.facts:
        if f.instance == inst.id and f.kind == "node_left" and f.node in MILESTONES:
            print(f"   {since(f.at, t0)}  {f.node}")
    wakes = sum(1 for f in eng.facts if f.instance == inst.id and f.kind == "hydrated")
    print(f"   data: {inst.data}")
    print(f"   dehydrated {dehydrated_share(eng, inst):.0%} of its life, woken {wakes} times; "
          f"coroutines now: {eng.stats()['coroutines']}")
    return eng, inst


ORDER = {"order_id": "SO-1001", "amount": 1800, "credit_limit": 5000}

# %% [markdown]
# ## Q1. The happy path
#
# The warehouse packs after 6 hours; the payment arrives on day 2. Note the share of its life
# the instance spent dehydrated: in virtual time it is resident only for instants — each
# wake runs to the next quiet point at the same virtual moment, and the instance dehydrates
# again.

# %%
eng, inst = review("happy path", ORDER,
                   [(timedelta(hours=6), pack), (timedelta(days=2), pay(1800))])

# %%
inst.lineage()

# %% [markdown]
# ## Q2. What if the warehouse takes 30 hours?
#
# The 24-hour escalation is non-interrupting: operations are paged at 24:00 while the task
# stays open; packing at 30:00 then continues as usual. The instance was dehydrated when the
# escalation fired — the boundary's holder woke it.

# %%
eng, inst = review("warehouse needs 30 h", ORDER,
                   [(timedelta(hours=30), pack), (timedelta(days=2), pay(1800))])

# %% [markdown]
# ## Q3. What if the customer never pays?
#
# A reminder on day 7, and on day 30 the interrupting boundary cancels the order. The
# terminate end stops every other track — the fulfilment branch, already delivered and
# waiting at the join, is cancelled — and the instance ends `terminated`.

# %%
eng, inst = review("no payment", ORDER, [(timedelta(hours=6), pack)])
print("   tracks:", [(t.node, t.state) for t in inst.tracks if t.state != "dehydrated"])

# %% [markdown]
# ## Q4. What if the payment arrives before the order is in the system?
#
# The customer pays from a pro-forma invoice; the payment message comes an hour before the
# order is entered. Published with a time-to-live of one day it is buffered, and the
# receive task takes it the moment it is armed: the cash branch never waits.

# %%
early = bpm.Engine()
early.publish_message("payment", key="SO-1001", payload={"paid": 1800}, ttl="P1D")
early.advance("PT1H")
eng, inst = run_order(ORDER, [(timedelta(hours=6), pack)], engine=early)
for f in eng.facts:
    if f.kind.startswith("message") or (f.instance == inst.id and f.node == "await_payment"
                                        and f.kind == "node_left"):
        print(f"{f.at:%m-%d %H:%M} {f.kind:18} {f.details}")
print(inst.state, inst.data)

# %% [markdown]
# ## Q5. What if credit is refused?

# %%
eng, inst = review("over the credit limit", {**ORDER, "amount": 9000})

# %% [markdown]
# ## Q6. Would anything change if nothing ever dehydrated?
#
# Dehydration must be invisible in the outcome. Run the same three schedules with
# `dehydrate=False` and compare what an auditor sees: the node completions in order, the
# final data and the end state.

# %%
SCHEDULES = {
    "happy path": [(timedelta(hours=6), pack), (timedelta(days=2), pay(1800))],
    "slow warehouse": [(timedelta(hours=30), pack), (timedelta(days=2), pay(1800))],
    "no payment": [(timedelta(hours=6), pack)],
}


def audit(eng, inst):
    left = [f.node for f in eng.facts if f.instance == inst.id and f.kind == "node_left"]
    return left, inst.data, inst.state


for name, events in SCHEDULES.items():
    on = audit(*run_order(ORDER, events))
    off = audit(*run_order(ORDER, events, bpm.Engine(dehydrate=False)))
    print(f"{name:15} same outcome: {on == off}  ({len(on[0])} node completions, {on[2]})")

# %% [markdown]
# ## Q7. What if the engine restarts in the middle of an order?
#
# Run the happy path on SQLite, stop the engine on day 1 with the order dehydrated (the
# warehouse is done, the payment not yet in), recover in a fresh engine and play the rest
# of the schedule there. The recovered clock stands at 00:00 on day 1, where the last
# command before the stop left it. The outcome is the one of Q1.

# %%
workdir = tempfile.mkdtemp(prefix="gobpm-review-")
db = os.path.join(workdir, "o2c.db")

first = bpm.Engine(store=bpm.SQLiteStore(db))
order = first.start(o2c, dict(ORDER))
T0 = first.now
first.run(until=T0 + timedelta(hours=6))
pack(first, order)
first.run(until=T0 + timedelta(days=1))
print("before the stop:", order.residency, [(h.kind, h.wait_kind, h.node) for h in first.holders()])
first.store.close()

second = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[o2c])
order = second.instance(order.id)
print("recovered at", since(second.now, T0), order.residency,
      [(t.id, t.node, t.state) for t in order.tracks])
second.run(until=T0 + timedelta(days=2))
pay(1800)(second, order)
second.run(until=T0 + timedelta(days=40))
print(order.state, order.data)
happy = run_order(ORDER, SCHEDULES["happy path"])[1]
print("same data and end as without the restart:", (order.data, order.state) ==
      (happy.data, happy.state))
second.store.close()
shutil.rmtree(workdir)

# %% [markdown]
# ## A hundred orders at once
#
# Finally the operator's view: a hundred orders entered over a morning with assorted
# behaviour, then a look at the engine on day 3 — what is dehydrated, what is held, what is
# in the inbox. The dashboard shows the same live, with controls to step, advance, publish
# a message or complete a task.

# %%
desk = bpm.Engine()
for n in range(100):
    desk.start(o2c, {"order_id": f"SO-{2000 + n}", "amount": 500 + 97 * n,
                     "credit_limit": 8000}, key=f"SO-{2000 + n}")
    desk.advance("PT3M")
for task in desk.tasks()[::2]:
    desk.complete_task(task.id, {"packed_by": "kim"})
for n in range(0, 100, 3):
    desk.publish_message("payment", key=f"SO-{2000 + n}", payload={"paid": 500 + 97 * n})
desk.advance("P3D")
print(desk.stats())
states = {}
for i in desk.instances():
    states[(i.state, i.residency)] = states.get((i.state, i.residency), 0) + 1
print(states)
holds = {}
for h in desk.holders():
    holds[(h.kind, h.wait_kind, h.node)] = holds.get((h.kind, h.wait_kind, h.node), 0) + 1
for key, count in sorted(holds.items()):
    print(f"{count:4}  {key}")

# %%
desk.dashboard()

# %% [markdown]
# ## A person decides
#
# In a design review the credit check can be left to a person instead of its condition:
# `o2c.decide("credit_ok")` makes the gateway a decision. An order then waits there (a
# `decision` hold, dehydrated like any wait), and the dashboard shows a **Decide** row with
# a button per outgoing flow; on the diagram the two flows are dashed, and clicking one does
# what its button does: `eng.decide(instance, flow)`, a command like any other.

# %%
o2c.decide("credit_ok")
panel = bpm.Engine()
panel.start(o2c, {"order_id": "SO-5000", "amount": 9000, "credit_limit": 5000},
            key="SO-5000")
panel.run()
panel.decisions()

# %%
panel.dashboard()

# %% [markdown]
# Over the limit, but the reviewer lets it through: the button "→ split" sends what this
# cell types. The order goes on at the next step, into packing and payment (the dashboard
# above, live, shows it there).

# %%
panel.decide("SO-5000", "split")  # the flow's id, or (as here) the node it leads to
panel.advance("PT1H")
[t.node for t in panel.tasks()], panel.decisions()
