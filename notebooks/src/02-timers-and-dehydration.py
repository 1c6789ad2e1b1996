# %% [markdown]
# # 2. Timers on virtual time, and dehydration
#
# A wait is not work. An instance that waits a week for a timer has nothing to execute, so
# it should not keep anything running: no loop, no track coroutine, no per-timer sleeper.
# This engine **dehydrates** such an instance: at a quiet point — every track parked,
# nothing running — it writes the instance's **checkpoint** to the store, marks the parked
# tracks `dehydrated`, and ends every coroutine the instance owned. What stays in memory is
# the instance's id, the history of its ended tracks, and its **holders**.
#
# A holder is what will wake the instance. For a timer it is the engine's one deadline heap:
# the hold is registered the moment the wait is *armed*, long before the instance
# dehydrates, so a trigger never arrives at an instance that has gone. When the deadline
# comes, the holder **hydrates** the instance from its checkpoint and continues the woken
# wait as a **continuation fork**: a new track whose parent is the dehydrated track,
# re-entering the timer node with the trigger in hand and leaving by its outgoing flow.
#
# > **Semantics:** [Residency](../docs/semantics.md#residency) (the `dehydrated` track state),
# > [the quiet point](../docs/semantics.md#the-quiet-point),
# > [wait holders](../docs/semantics.md#wait-holders) (a timer's holder is the deadline heap),
# > [continuation fork](../docs/semantics.md#continuation-fork),
# > [two halves](../docs/semantics.md#two-halves) (eligibility and holdability; a short timer
# > stays resident) and [residency facts](../docs/semantics.md#residency-facts).
#
# A resident instance runs as coroutines driven by the engine's own scheduler;
# `eng.stats()["coroutines"]` counts the live ones.

# %%
import json

import gobpm_nb as bpm


def show_holders(eng):
    for h in eng.holders():
        deadline = f"{h.deadline:%Y-%m-%d %H:%M}" if h.deadline else "-"
        print(f"{h.instance:3} {h.track:3} {h.kind:7} {h.wait_kind:8} {h.node:12} {deadline}")


def show_stats(eng):
    s = eng.stats()
    print(f"{eng.now:%Y-%m-%d %H:%M}  instances {s['instances']}  coroutines {s['coroutines']}"
          f"  holds {s['holds']['timer']} timer")

# %% [markdown]
# ## A process with a short wait and a long one
#
# A reminder: wait a ten-minute grace period, send a reminder, then wait a week.
# The engine's `min_dehydrate_wait` (default one hour) decides which waits are worth a
# checkpoint-and-hydrate round trip: a timer shorter than that, when it is armed, keeps its
# instance resident. A timer node is *eligible* in principle; the threshold is applied at arm
# time, where the deadline is known.

# %%
reminder = bpm.Process("reminder")
reminder.start("start")
reminder.timer_catch("grace", duration="PT10M")
reminder.script_task("remind", fn=lambda data: {"reminded": True})
reminder.timer_catch("a_week", duration="P7D")
reminder.end("done")
reminder.flow("start", "grace", "remind", "a_week", "done")

eng = bpm.Engine()   # dehydrate=True, min_dehydrate_wait="PT1H", MemoryStore
insts = [eng.start(reminder, {"customer": name}) for name in ("ada", "bob", "cy")]
show_stats(eng)

# %% [markdown]
# ## Before dehydration: resident, two coroutines each
#
# One minute in, each instance sits on its ten-minute grace timer. It owns its loop
# coroutine and one coroutine for its one track, so three instances own six. The three
# timers are already held by the deadline heap — holding is about *arming*, not dehydrating.

# %%
eng.advance("PT1M")
show_stats(eng)
show_holders(eng)
print([(i.id, i.residency) for i in insts])

# %% [markdown]
# ## After dehydration: zero coroutines
#
# At 00:10 the grace timers fire, the reminders run, and each track arms the one-week
# timer. That wait is long enough, every live track is parked on a held wait, so each
# instance dehydrates: one `dehydrated` fact per instance, and the live coroutine count drops
# to zero.

# %%
eng.advance("PT10M")
show_stats(eng)
show_holders(eng)
for f in eng.facts:
    if f.kind in ("dehydrated", "track_state") and f.details.get("state", "") in ("", "dehydrated"):
        print(f.seq, f.kind, f.instance, f.track or "", f.details)

# %% [markdown]
# ## The holder table and the checkpoint document
#
# The holder table is the only thing that still points at the instances: instance, track,
# kind of wait, what it belongs to (`node`: the wait the track is parked on; `boundary`:
# an event guarding it), the node, the deadline.
#
# The checkpoint is a small, versioned JSON document: the instance data, the process it is
# pinned to, and for each parked track its position, lineage and wait descriptor. The timer's
# deadline is recorded as an absolute time — it is never recomputed on a wake or restart.
# Reading it (or `inst.tracks`, `inst.data`) does not wake the instance.

# %%
ada = insts[0]
print(json.dumps(ada.checkpoint(), indent=2, sort_keys=True))

# %%
print(ada.residency, ada.data)
print(ada.tracks)
print(eng.store.get(ada.id)[:80], b"...")  # the store keeps encoded bytes, not live objects
show_stats(eng)

# %%
ada.lineage()

# %% [markdown]
# ## The wake: a continuation fork
#
# Run to just before the deadline, then take one step. Nothing is ready at 00:09, so the
# step moves the clock to the first deadline and fires `i1`'s timer through its holder:
# the instance is hydrated from its checkpoint, and a new track `t2` whose parent is the
# dehydrated `t1` enters `a_week` with the trigger in hand, leaves it and — still within the
# timer's one event — enters `done`, which ends the instance. `t1` stays
# `dehydrated` forever: that is where its part of the story ended. The other two instances
# are still dehydrated; their timers are next in the heap.

# %%
eng.run(until="2026-01-08T00:09:00Z")
show_stats(eng)
seen = len(eng.facts)
ev = eng.step()
print(f"step: {ev.at:%Y-%m-%d %H:%M} {ev.kind} {ev.instance} {ev.track} {ev.node}")
for f in eng.facts[seen:]:
    print(f"  {f.seq:3} {f.kind:15} {f.instance} {f.track or '':3} {f.node or '':7} {f.details}")
show_stats(eng)
print([(i.id, i.residency) for i in insts])

# %%
eng.run()
for i in insts:
    print(i.id, i.state, i.data, [(t.id, t.node, t.state, t.parents, t.origin) for t in i.tracks])
show_stats(eng)

# %%
ada.lineage()

# %% [markdown]
# The hydrated fact says what woke the instance and how it continued; one `dehydrated` fact
# per dehydration and one `hydrated` fact per wake, with names and counts only — never payload
# values.

# %%
for f in eng.facts:
    if f.kind in ("dehydrated", "hydrated") and f.instance == "i1":
        print(f"{f.at:%Y-%m-%d %H:%M} {f.kind:10} {f.details}")

# %% [markdown]
# ## The same run, resident
#
# With `dehydrate=False` nothing dehydrates: the outcome is identical (dehydration is
# transparent), but while they wait the three instances keep six coroutines alive for a
# week.

# %%
resident = bpm.Engine(dehydrate=False)
for name in ("ada", "bob", "cy"):
    resident.start(reminder, {"customer": name})
resident.advance("PT11M")
show_stats(resident)
resident.run()
print([i.data for i in resident.instances()] == [i.data for i in insts])
print([f.node for f in resident.facts if f.kind == "node_left"] ==
      [f.node for f in eng.facts if f.kind == "node_left"])
