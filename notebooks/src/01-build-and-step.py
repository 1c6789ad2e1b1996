# %% [markdown]
# # 1. Build a process, validate it, step through it
#
# A **process** is a graph: events, tasks and gateways joined by sequence flows. You build
# one here cell by cell; every builder method returns the id of the element it added.
# `validate()` checks the whole graph and lists *every* problem it finds at once.
#
# An **engine** runs instances of a process on a **virtual clock**. Nothing happens by
# itself: `step()` runs exactly one scheduler event (a track entering or leaving a node, a
# timer firing, an instance loop turn), `run()` runs until nothing is scheduled, and
# `advance("PT2H")` moves the clock. The same cells give the same result every time, which
# is why this notebook's outputs can be checked byte for byte.
#
# A **track** is a thread of control (a token): it has an id, a position (a node), a state
# and a parent link. The lineage of the tracks is the story of the instance: which track
# forked which, which tracks merged into which.
#
# > **Semantics:** [Tracks and checkpoints](../docs/semantics.md#tracks-and-checkpoints) — a
# > track's continuation is fully described by its position, its state, the data and its
# > lineage; there is no hidden token state.
#
# This notebook keeps every instance in memory (`dehydrate=False`) so that we watch plain
# tokens; notebook 2 turns on the engine's defining feature, dehydration.

# %%
import gobpm_nb as bpm


def show_tracks(inst):
    """One line per track: id, node, state, how it came to be, its parents."""
    for t in inst.tracks:
        parents = ",".join(t.parents) or "-"
        print(f"{t.id:3} at {t.node:9} {t.state:9} origin={t.origin:12} parents={parents}")


def show_event(ev):
    """What one step() ran: the virtual time, the kind of event, where."""
    if ev is None:
        print("nothing is scheduled")
    else:
        print(f"{ev.at:%H:%M} {ev.kind:5} {ev.track or '':3} {ev.node or ''}")

# %% [markdown]
# ## A broken process first
#
# An order process: price the order, then pack it. Three slips: the script task has no
# function, the condition on a flow does not parse, and a flow points to an element that
# does not exist. `validate()` raises one `bpm.ModelError` that names each problem and the
# element it belongs to — and also the consequences: `pack` has no way out, and `done` can
# never be reached.

# %%
broken = bpm.Process("order")
broken.start("start")
broken.script_task("price")
broken.exclusive_gateway("big")
broken.user_task("pack")
broken.end("done")
broken.flow("start", "price", "big")
broken.flow("big", "pack", condition="total >")
broken.flow("pack", "shipped")

try:
    broken.validate()
except bpm.ModelError as err:
    print(type(err).__name__)
    for problem in str(err).split("; "):
        print(" -", problem)

# %% [markdown]
# ## The process, fixed
#
# Price the order with a script task (a Python function over a copy of the data that
# returns the fields to merge in), then fork with a parallel gateway: one branch waits for
# the warehouse to pack (a user task), the other waits two hours for the customer's
# cancellation window (a timer). A second parallel gateway joins them.

# %%
order = bpm.Process("order")
order.start("start")
order.script_task("price", fn=lambda data: {"total": data["qty"] * 12})
order.parallel_gateway("split")
order.user_task("pack", assignee="warehouse")
order.timer_catch("window", duration="PT2H")
order.parallel_gateway("join")
order.end("done")
order.flow("start", "price", "split")
order.flow("split", "pack", "join")
order.flow("split", "window", "join")
order.flow("join", "done")
order.validate()

# %% [markdown]
# ## Start an instance: nothing runs yet
#
# `eng.start` deploys the process and schedules the instance. Instance ids are
# deterministic (`i1`, `i2`, …), so are track ids (`t1`, `t2`, … per instance).

# %%
eng = bpm.Engine(dehydrate=False)
inst = eng.start(order, data={"qty": 3})
print(eng)
print(inst)
show_tracks(inst)

# %% [markdown]
# The lineage view below shows the instance as this cell leaves it — one track, `t1`, ready
# at the start — and stays on that moment, whatever the cells after it do: its header names
# the fact and the virtual time it shows. Its **follow live** button makes it follow the
# engine while you step the cells below (**freeze here** stops it again), and
# `inst.lineage(live=True)` makes a view that follows from the start. (A notebook opened
# without a kernel shows the drawing stored with each view.)

# %%
inst.lineage()

# %% [markdown]
# ## Step, one event at a time
#
# The first step is the instance loop's first turn. Then each step moves track `t1` one node
# on: through the script (which sets `total`), through the parallel gateway, to `pack`.

# %%
for _ in range(4):
    show_event(eng.step())
print(inst.data)
show_tracks(inst)

# %% [markdown]
# The fork: `t1` continues on the first outgoing flow (to `pack`), and a new track `t2`
# whose parent is `t1` takes the other one (to `window`). Two more steps park both.

# %%
for _ in range(2):
    show_event(eng.step())
show_tracks(inst)
print(eng.tasks())
print(eng.holders())

# %% [markdown]
# Both tracks wait. Each wait registered an engine **holder** the moment it was armed — the
# task inbox holds `pack`, the engine's one deadline heap holds `window`. Nothing is ready
# now, so the next `step()` first moves the virtual clock to the next deadline (02:00) and
# fires the timer there. `run()` then runs what that made ready, until nothing is left.

# %%
show_event(eng.step())
print(eng.now)
print(eng.run(), "more events")
show_tracks(inst)

# %% [markdown]
# `t2` reached the join and waits there for its sibling. Completing the warehouse task
# releases `t1`; when it arrives the join merges both and a new track, whose parents are
# *both* arrivals, continues to `done`.

# %%
(task,) = eng.tasks()
print(task.id, task.assignee)
eng.complete_task(task.id, {"packed": True})
eng.run()
print(inst.state, inst.residency, inst.data)
show_tracks(inst)

# %%
inst.lineage()

# %% [markdown]
# The process view draws the process graph with the path this instance took.

# %%
inst.process_view()

# %% [markdown]
# ## Facts: what the engine did, in order
#
# Every change is a `Fact` on the engine's fact stream. They carry names and counts, never
# payload values, so they are safe to log.

# %%
for f in eng.facts:
    if f.kind in ("node_left", "track_state", "task_created", "task_completed", "timer_fired"):
        print(f"{f.seq:3} {f.at:%H:%M} {f.kind:14} {f.track or '':3} {f.node or '':7}",
              f.details)
