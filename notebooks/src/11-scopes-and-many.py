# %% [markdown]
# # 11. Scopes and many
#
# A subprocess with a deadline, an event subprocess that cancels, a parallel review with a
# completion condition — watching each dehydration and each wake.
#
# A **scope** is a part of a process with its own start and its own ends. The process itself
# is the outermost scope. A **subprocess** is a scope drawn inside it: the flow enters the
# subprocess, runs what is inside from its start to an end, and leaves by the subprocess's
# outgoing flow. An **event subprocess** is a scope with no incoming flow: it starts itself
# when its event comes, while the scope around it is running. A **multi-instance** activity
# runs its body once per item of a list, each run with its own local variables.
#
# This engine runs a scope with the same tracks as everything else:
#
# - the track that enters a subprocess **runs** it: it waits on the scope (wait kind
#   `scope`) until the inside is done, and it carries the boundaries of the subprocess;
# - a new track, origin `scope`, with the running track as its parent, enters the
#   subprocess's start; the checkpoint names the running track in the inner track's `scope`;
# - an event subprocess's start is armed, with a holder, while its scope runs; when it fires,
#   a track with origin `event` runs the event subprocess;
# - a multi-instance body track waits while one inner track per item (origin `many`) runs.
#
# So the rules of notebooks 02 and 04 apply unchanged: an instance dehydrates when every
# live track is parked on a wait that has a holder, and a trigger hydrates it.
#
# > **Semantics:** [Wait holders](../docs/semantics.md#wait-holders) — each hold below is one
# > of these; [holdability](../docs/semantics.md#holdability) — a wait, and every boundary
# > over it, needs a holder before the instance can dehydrate;
# > [continuation fork](../docs/semantics.md#continuation-fork) and
# > [boundary fork](../docs/semantics.md#boundary-fork) — the two ways a wake continues;
# > [the quiet point](../docs/semantics.md#the-quiet-point) — a track at a parallel join;
# > [residency facts](../docs/semantics.md#residency-facts) — `dehydrated` and `hydrated`.

# %%
import gobpm_nb as bpm

# The facts that show a dehydration and a wake; node_entered/node_left are left out.
WATCH = {"track_state", "wait_held", "wait_released", "dehydrated", "hydrated", "timer_fired",
         "message_correlated", "task_created", "task_completed", "instance_completed",
         "error_caught"}


def show_holders(eng):
    """Every hold in the engine: what will wake which instance."""
    print(f"{'inst':4} {'track':5} {'kind':7} {'wait_kind':9} {'node':12} {'deadline':11} keys")
    for h in eng.holders():
        deadline = f"{h.deadline:%m-%d %H:%M}" if h.deadline else "-"
        track = h.track or '""'  # "": the process's own scope, no track to name
        print(f"{h.instance:4} {track:5} {h.kind:7} {h.wait_kind:9} {h.node:12} "
              f"{deadline:11} {', '.join(map(str, h.keys)) or '-'}")


def show_tracks(eng, inst):
    """An instance's residency and its tracks; `scope` (read from the checkpoint) names the
    track running the scope a live track is in."""
    scopes = {}
    if inst.state == "active":
        scopes = {t["id"]: t.get("scope") for t in eng.checkpoint(inst.id)["tracks"]}
    print(f"{inst.id}: {inst.state}, {inst.residency}; engine coroutines "
          f"{eng.stats()['coroutines']}")
    print(f"  {'id':4} {'node':12} {'state':10} {'origin':12} {'parents':8} scope")
    for t in inst.tracks:
        parents = ",".join(t.parents) or "-"
        print(f"  {t.id:4} {t.node:12} {t.state:10} {t.origin:12} {parents:8} "
              f"{scopes.get(t.id) or '-'}")


def show_facts(eng, seen, instance=None):
    """The watched facts since position `seen` of the fact log."""
    print(f"{'seq':>4} {'at':11} {'kind':18} {'inst':4} {'track':5} {'node':12} details")
    for f in eng.facts[seen:]:
        if f.kind in WATCH and (instance is None or f.instance == instance):
            print(f"{f.seq:4} {f.at:%m-%d %H:%M} {f.kind:18} {f.instance or '-':4} "
                  f"{f.track or '-':5} {f.node or '-':12} {f.details}")

# %% [markdown]
# ## 1. A subprocess with a deadline
#
# An order is handled in a subprocess: Kim packs it, then Lee ships it. The whole of the
# handling — not one task — must be done within two days: an interrupting **timer boundary
# on the subprocess**. When it fires, whatever is going on inside (packing or shipping) is
# cancelled, and the desk calls the customer.

# %%
order = bpm.Process("order")
order.start("received")
with order.subprocess("handle", "Handle the order") as sp:
    sp.start("hs")
    sp.user_task("pack", assignee="kim")
    sp.user_task("ship", assignee="lee")
    sp.end("he")
    sp.flow("hs", "pack", "ship", "he")
order.timer_boundary("late", attached_to="handle", duration="P2D")
order.user_task("call", "Call the customer", assignee="desk")
order.end("shipped")
order.end("apologised")
order.flow("received", "handle", "shipped")
order.flow("late", "call", "apologised")
order.validate()

# %% [markdown]
# ### Dehydrated with a task inside the subprocess
#
# Two orders, A-1 and A-2. One hour in, each has two tracks: `t1` runs the subprocess
# (`handle`) and `t2`, origin `scope`, waits on Kim's task inside it. Both instances are
# dehydrated and the engine runs **no coroutine at all**.
#
# Why may an instance give up everything while a task inside a subprocess waits? Look at
# what could end each wait:
#
# - `t2`'s task is completed from the inbox — the inbox holds it (`task`, `node`);
# - `t1`'s deadline comes from the clock — the deadline heap holds it (`timer`, `boundary`,
#   registered on the track that runs the scope, with its absolute deadline);
# - `t1`'s wait on the scope itself needs no holder: nothing outside can end it. It ends
#   when a track inside reaches an end, and every track inside is already parked on a held
#   wait.
#
# Every wait that something *outside* the instance can end has a holder, so nothing is lost
# by letting the coroutines go.

# %%
eng = bpm.Engine()
a1 = eng.start(order, {"order": "A-1"})
a2 = eng.start(order, {"order": "A-2"})
eng.advance("PT1H")
show_holders(eng)
print()
show_tracks(eng, a2)

# %% [markdown]
# In the checkpoint, `t1` waits on a `scope` and carries the boundary with its resolved
# deadline; `t2` says which track runs its scope.

# %%
for t in a2.checkpoint()["tracks"]:
    print(t["id"], t["node"], "wait:", t["wait"]["kind"], "scope:", t.get("scope"),
          "boundaries:", {name: b["deadline"] for name, b in t["boundaries"].items()})

# %% [markdown]
# ### Kim packs both orders: a wake inside the scope
#
# Completing A-2's packing task hydrates A-2 (`outcome: continuation`): `t1` goes back to
# `waiting` on its scope, the continuation fork `t3` leaves `pack` and parks on `ship`, a
# new task is held, and the instance dehydrates again — with the deadline hold untouched,
# still on `t1`.

# %%
seen = len(eng.facts)
for task in eng.tasks():
    eng.complete_task(task.id, {"packed_by": "kim"})
eng.advance("PT1H")
show_facts(eng, seen, instance=a2.id)

# %% [markdown]
# ### Lee ships A-1 in time
#
# A-1's inner track reaches the subprocess's end `he`; the scope is done, so `t1` leaves
# `handle` and ends at `shipped`. The deadline hold goes with the scope
# (`reason: withdrawn`): it never fires.

# %%
seen = len(eng.facts)
(ship_a1,) = [t for t in eng.tasks() if t.instance == a1.id]
eng.complete_task(ship_a1.id, {"tracking": "TRK-1"})
eng.advance("PT1H")
show_facts(eng, seen, instance=a1.id)
show_tracks(eng, a1)

# %% [markdown]
# ### Nobody ships A-2: the deadline wakes it and cancels the scope
#
# We run the clock to one minute before the deadline, then take one `step()` at a time until
# A-2 dehydrates again. Each step is one scheduler event:
#
# 1. **the wake** — A-2's timer is due. Its holder hydrates the instance with
#    `outcome: boundary` (a boundary wake, not a continuation of the task). The boundary
#    hold is spent (`reason: fired`) and, since the boundary is interrupting, every hold
#    inside the scope is withdrawn: Lee's task leaves the inbox (`reason: cancelled`).
#    A-2 is resident now, `t1` and `t3` back to `waiting`;
# 2. **the cancellation** — the instance's loop cancels the scope from the inside out: `t3`
#    inside, then `t1` that ran it; the boundary fork `t4`, parent `t1`, is created;
# 3. **the new path and the dehydration** — `t4` leaves the boundary, parks on the desk's
#    task (a new hold) and the instance dehydrates again: `dehydrated`, one wait.

# %%
eng.run(until="2026-01-02T23:59:00Z")
for n in range(1, 10):
    seen = len(eng.facts)
    event = eng.step()
    if n > 1:
        print()
    print(f"step {n}: {event.at:%m-%d %H:%M} {event.kind} {event.instance} "
          f"{event.track or '-'} {event.node or '-'}")
    show_facts(eng, seen)
    print("  tracks:", ", ".join(f"{t.id} {t.state}" for t in a2.tracks), "|", a2.residency)
    if a2.residency == "dehydrated":
        break

# %%
show_tracks(eng, a2)
show_holders(eng)
print([(t.id, t.assignee) for t in eng.tasks()])

# %% [markdown]
# The lineage tells the same story: `t2` entered the scope from `t1`, `t3` continued it
# after Kim's wake, and `t4` forked at the boundary when `t1` was cancelled. (`t2` keeps the
# state `dehydrated`: that is where its part of the story ended, as in notebook 02.)

# %%
a2.lineage()

# %% [markdown]
# The dashboard shows this engine live — the holder table, the fact timeline with its
# dehydrations and wakes, the selected instance's lineage — with controls to step, advance and
# complete the desk's task.

# %%
eng.dashboard()

# %% [markdown]
# ### Another way out of a scope: an error thrown inside
#
# An error end event inside a subprocess is caught by an error boundary on the subprocess:
# the scope is cancelled the same way, and `error_caught` names the error and the boundary.
# An error boundary arms nothing (it is matched where the error is thrown), so it costs no
# hold.

# %%
stock = bpm.Process("stock")
stock.start("received")
with stock.subprocess("handle") as sp:
    sp.start("hs")
    sp.exclusive_gateway("in_stock", default="no_stock")
    sp.user_task("pack", assignee="kim")
    sp.end("he")
    sp.end("no_stock", error="OUT_OF_STOCK")
    sp.flow("hs", "in_stock")
    sp.flow("in_stock", "pack", "he", condition="available")
    sp.flow("in_stock", "no_stock")
stock.error_boundary("backorder", attached_to="handle", error="OUT_OF_STOCK")
stock.end("shipped")
stock.end("backordered")
stock.flow("received", "handle", "shipped")
stock.flow("backorder", "backordered")

eng_e = bpm.Engine()
none_left = eng_e.start(stock, {"order": "A-3", "available": False})
eng_e.run()
show_facts(eng_e, 0)
show_tracks(eng_e, none_left)

# %% [markdown]
# ## 2. An event subprocess that cancels
#
# A booking needs a hotel (Ana) and a flight (Ben), in parallel. Two event subprocesses
# live in the process's own scope:
#
# - **remind** — a *non-interrupting* timer start every 12 hours: it runs beside the
#   booking and leaves it alone;
# - **cancel** — an *interrupting* message start, correlated on the booking id: the
#   customer cancels, and everything else in the scope is cancelled — both tasks, a track
#   waiting at the join, and the other event subprocess's start — before the refund runs.

# %%
booking = bpm.Process("booking")
booking.start("requested")
booking.parallel_gateway("fork")
booking.user_task("hotel", "Book the hotel", assignee="ana")
booking.user_task("flight", "Book the flight", assignee="ben")
booking.parallel_gateway("join")
booking.end("booked")
booking.flow("requested", "fork", "hotel", "join", "booked")
booking.flow("fork", "flight", "join")
with booking.event_subprocess("remind", "Remind the desk") as ev:
    ev.timer_start("every_12h", cycle="R/PT12H", interrupting=False)
    ev.script_task("nag", fn=lambda data: {"reminders": data.get("reminders", 0) + 1})
    ev.end("nagged")
    ev.flow("every_12h", "nag", "nagged")
with booking.event_subprocess("cancel", "Customer cancels") as ev:
    ev.message_start("cancelled", message="cancel", key="booking", interrupting=True)
    ev.script_task("refund", fn=lambda data: {"refunded": True})
    ev.end("closed")
    ev.flow("cancelled", "refund", "closed")
booking.validate()

# %% [markdown]
# ### Armed while their scope runs
#
# Two bookings, B-7 and B-8. Each has four holds: its two tasks, and the two event starts.
# An event start is held like a boundary (`wait_kind` `boundary`), but on the scope rather
# than on a task; for the process's own scope there is no track to name, so the track is
# empty (`""`).

# %%
eng2 = bpm.Engine()
b7 = eng2.start(booking, {"booking": "B-7"})
b8 = eng2.start(booking, {"booking": "B-8"})
eng2.advance("PT1H")
show_holders(eng2)
print()
show_tracks(eng2, b7)

# %% [markdown]
# ### At 12:00 the reminder wakes both bookings, and interrupts nothing
#
# The timer's holder hydrates B-7 (`outcome: boundary`, `track: ""`). A track with origin
# `event` (`t3`) runs the event subprocess and `t4`, origin `scope`, runs inside it. The
# cycle re-arms at once (`wait_held` right after `wait_released`), the reminder ends, and B-7
# dehydrates again. Its two task tracks were woken with it and parked again as they were:
# a non-interrupting start cancels nothing, and their tasks never left the inbox.

# %%
seen = len(eng2.facts)
eng2.advance("PT11H")
show_facts(eng2, seen, instance=b7.id)
print(b7.data)

# %% [markdown]
# ### Ana books B-7's hotel
#
# The continuation fork `t5` reaches the parallel join before the flight is booked. A track
# at a join gives up its coroutine and waits there (its arrival is in the checkpoint); it is
# not a wait that needs a holder, so B-7 dehydrates again with three holds.

# %%
seen = len(eng2.facts)
(hotel,) = [t for t in eng2.tasks() if t.instance == b7.id and t.node == "hotel"]
eng2.complete_task(hotel.id, {"hotel": "Hotel du Lac"})
eng2.advance("PT30M")
show_facts(eng2, seen, instance=b7.id)

# %% [markdown]
# ### The customer cancels B-7
#
# The message finds its holder and hydrates B-7 (`outcome: boundary`). The event
# subprocess is interrupting, so the rest of its scope — here the whole process — is
# cancelled first: Ben's task leaves the inbox, the track waiting at the join is cancelled,
# and the reminder's start is withdrawn (`reason: cancelled`). Then `t6` (origin `event`)
# runs `cancel`, the refund is made, and the instance completes.

# %%
seen = len(eng2.facts)
print(eng2.publish_message("cancel", key="B-7", payload={"reason": "plans changed"}))
eng2.advance("PT30M")
show_facts(eng2, seen, instance=b7.id)

# %%
show_tracks(eng2, b7)
print(b7.data)
show_holders(eng2)

# %%
b7.lineage()

# %% [markdown]
# ### B-8 is booked: its event starts go with their scope
#
# Once B-8's process ends, nothing can start its event subprocesses: their holds are
# withdrawn, and a late cancellation finds no one (`publish_message` returns `None`).

# %%
for task in eng2.tasks():
    eng2.complete_task(task.id, {task.node: "done"})
eng2.advance("PT1H")
print(b8.state, b8.data)
show_holders(eng2)
print(eng2.publish_message("cancel", key="B-8"))

# %% [markdown]
# ## 3. A parallel review with a completion condition
#
# A paper goes to three reviewers at once: a **parallel multi-instance** user task over the
# list `reviewers`. Each item gets its own inner instance, with the item bound to the local
# variable `reviewer` (and `loopCounter` to its position). Each inner instance writes `vote`;
# the outputs are gathered into `votes` **in item order**, whatever the order of completion.
#
# The **completion condition** `numberOfCompletedInstances >= 2` is checked each time an
# inner instance completes. When it holds, the activity is done: the inner instances still
# running are cancelled (their tasks leave the inbox), and the body track goes on.

# %%
paper = bpm.Process("paper")
paper.start("submitted")
paper.user_task("review", "Review the paper")
paper.multi_instance("review", collection="reviewers", element="reviewer",
                     output_collection="votes", output_element="vote",
                     completion="numberOfCompletedInstances >= 2")
paper.script_task("decide", fn=lambda data: {
    "accepted": [v for v in data["votes"] if v is not None].count("accept") >= 2})
paper.end("decided")
paper.flow("submitted", "review", "decide", "decided")
paper.validate()

# %% [markdown]
# ### One hold per inner instance
#
# The body track `t1` waits on the activity; `t2`, `t3`, `t4` (origin `many`) each wait on
# their own task, each held on its own. The checkpoint names `t1` as the scope of each inner
# track and keeps each one's locals: its `reviewer` and its `loopCounter`.

# %%
eng3 = bpm.Engine()
p3 = eng3.start(paper, {"paper": "P-3", "reviewers": ["ann", "bob", "cy"]})
eng3.advance("PT1H")
show_holders(eng3)
print()
show_tracks(eng3, p3)
for t in eng3.checkpoint(p3.id)["tracks"]:
    print(t["id"], "wait:", t["wait"]["kind"], "locals:", t.get("locals", {}))

# %% [markdown]
# ### Whose task is whose
#
# The three tasks sit at one node, `review`. What tells them apart is what each one sees:
# `task_data` gives it for whoever completes the task — the instance data under the task's
# own locals, its `reviewer` and `loopCounter`. The instance is dehydrated, so this is read
# from its checkpoint; reading never wakes it.

# %%
tasks = {eng3.task_data(task.id)["reviewer"]: task for task in eng3.tasks()}
for name, task in tasks.items():
    print(name, task.id, task.track, eng3.task_data(task.id))
print(p3.residency)

# %% [markdown]
# ### Cy votes first: one inner instance completes
#
# The wake is a continuation of Cy's track `t4`; `t5` completes the task and ends. One
# completed instance is not enough, so the instance dehydrates again with two holds.

# %%
seen = len(eng3.facts)
eng3.complete_task(tasks["cy"].id, {"vote": "accept"})
eng3.advance("PT1H")
show_facts(eng3, seen)

# %% [markdown]
# ### Ann votes: the completion condition holds
#
# Two completed instances: Bob's inner instance `t3` is cancelled (`reason: cancelled`),
# `votes` is written in item order — Ann, Bob (never voted), Cy — and `t1` leaves `review`
# for `decide`.

# %%
seen = len(eng3.facts)
eng3.complete_task(tasks["ann"].id, {"vote": "accept"})
eng3.advance("PT1H")
show_facts(eng3, seen)
print(p3.state, p3.data)
print(eng3.tasks(), eng3.holders())

# %%
p3.lineage()

# %% [markdown]
# ### A hundred reviewers, no coroutine
#
# With a hundred reviewers the instance holds a hundred tasks, and still dehydrates: one
# `dehydrated` fact with `waits: 100` and `coroutines: 0`. Kept resident
# (`dehydrate=False`), the same instance costs 102 coroutines: its loop, the body track and
# one per reviewer, for as long as the reviews take.

# %%
crowd = {"paper": "P-4", "reviewers": [f"r{n:03}" for n in range(100)]}
eng4 = bpm.Engine()
p4 = eng4.start(paper, crowd)
eng4.advance("PT1H")
(dehydrated,) = [f for f in eng4.facts if f.kind == "dehydrated"]
print(p4.residency, dehydrated.details, eng4.stats()["holds"])

resident = bpm.Engine(dehydrate=False)
resident.start(paper, crowd)
resident.advance("PT1H")
print("resident:", resident.stats()["coroutines"], "coroutines")

# %% [markdown]
# Two votes end it. The other 98 inner instances are cancelled in the same wake, each task
# withdrawn from the inbox; the votes keep their place among the hundred.

# %%
reviews = eng4.tasks()
for task in (reviews[41], reviews[7]):
    eng4.complete_task(task.id, {"vote": "accept"})
    eng4.advance("PT1H")
cancelled = [f for f in eng4.facts
             if f.kind == "wait_released" and f.details["reason"] == "cancelled"]
print(p4.state, "accepted:", p4.data["accepted"], "cancelled holds:", len(cancelled))
print({n: vote for n, vote in enumerate(p4.data["votes"]) if vote is not None})
print(eng4.holders(), len(eng4.tasks()))
