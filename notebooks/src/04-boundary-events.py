# %% [markdown]
# # 4. Boundary events: "approve within 24 h or escalate"
#
# A **boundary event** hangs on the edge of an activity and waits while the activity runs.
# When it fires, a new track forks *at the boundary* with the guarded track as its parent:
#
# - an **interrupting** boundary cancels the guarded activity (the task leaves the inbox,
#   every other hold of that track is withdrawn);
# - a **non-interrupting** one leaves the activity as it is and runs its own path beside it.
#
# "Approve within 24 h or escalate" is therefore *two* waits, not one: the task and the
# deadline. An instance may only dehydrate when every wait guarding its tracks has a
# holder — otherwise the deadline would pass with nothing to fire it, silently. Here each
# boundary registers its own holder (`wait_kind="boundary"`), and its deadline is recorded
# in the checkpoint as an absolute time.
#
# A boundary's trigger is not the guarded node's trigger. When a boundary fires while the
# instance is dehydrated, the instance is rebuilt *without* a trigger for the task; the
# boundary then fires over the guarded track exactly as it would on a resident instance.
#
# > **Semantics:** [Boundary fork](../docs/semantics.md#boundary-fork) — a boundary's trigger
# > never travels as the guarded node's; [holdability](../docs/semantics.md#holdability) — a
# > guarded activity has more waits than its token shows, each with its own holder
# > (`wait_kind` `node` or `boundary`);
# > [durable deadlines](../docs/semantics.md#durable-deadlines) — a boundary's deadline is
# > recorded, never recomputed.

# %%
import json

import gobpm_nb as bpm


def show_holders(eng):
    for h in eng.holders():
        deadline = f"{h.deadline:%m-%d %H:%M}" if h.deadline else "-"
        print(f"{h.instance} {h.track} {h.kind:7} {h.wait_kind:8} {h.node:9} {deadline:11} "
              f"{h.keys}")


def show_tracks(inst):
    for t in inst.tracks:
        print(f"{t.id} at {t.node:9} {t.state:10} origin={t.origin:8} parents={t.parents}")


def facts_since(eng, seen, kinds):
    for f in eng.facts[seen:]:
        if f.kind in kinds:
            print(f"{f.at:%m-%d %H:%M} {f.kind:15} {f.track or '':3} {f.node or '':9} {f.details}")

# %% [markdown]
# ## The approval process
#
# Alice approves. After 8 hours a **non-interrupting** reminder is sent (the task stays
# open); after 24 hours an **interrupting** timer cancels the task and escalates to a
# manager. The requester may also withdraw the request with a message — an interrupting
# **message boundary** correlated on the request id.

# %%
approval = bpm.Process("approval")
approval.start("start")
approval.user_task("approve", assignee="alice")
approval.timer_boundary("remind", attached_to="approve", duration="PT8H", interrupting=False)
approval.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
approval.message_boundary("withdraw", attached_to="approve", message="withdraw",
                          key="request")
approval.script_task("send_reminder",
                     fn=lambda data: {"reminders": data.get("reminders", 0) + 1})
approval.user_task("escalate", assignee="manager")
approval.end("approved")
approval.end("reminded")
approval.end("escalated")
approval.end("withdrawn")
approval.flow("start", "approve", "approved")
approval.flow("remind", "send_reminder", "reminded")
approval.flow("late", "escalate", "escalated")
approval.flow("withdraw", "withdrawn")
approval.validate()

# %% [markdown]
# ## Dehydrated, with four holds
#
# The track parks on the task; its three boundaries are armed with it. Four waits, four
# holders — so the instance can dehydrate, and it does.

# %%
eng = bpm.Engine()
nobody = eng.start(approval, {"request": "r-1"})
eng.advance("PT1M")
print(nobody.residency, "coroutines:", eng.stats()["coroutines"])
show_holders(eng)

# %% [markdown]
# The checkpoint records the task id and each boundary with its *resolved* deadline.

# %%
print(json.dumps(nobody.checkpoint()["tracks"], indent=2, sort_keys=True))

# %%
nobody.process_view()

# %% [markdown]
# ## Nobody acts: the reminder, while dehydrated
#
# At 08:00 the reminder's holder fires. The instance is hydrated (`outcome: boundary` — not a
# continuation of the task), the boundary forks `t2` over the guarded `t1`, the reminder is
# sent, and since the boundary is non-interrupting `t1` keeps waiting on the task. The
# instance dehydrates again at once, now with three holds.

# %%
seen = len(eng.facts)
eng.advance("PT8H")
facts_since(eng, seen, {"timer_fired", "hydrated", "wait_released", "track_state",
                        "dehydrated"})
show_tracks(nobody)
print(nobody.residency, nobody.data, [t.id for t in eng.tasks()])
show_holders(eng)

# %% [markdown]
# ## Nobody acts: the escalation
#
# At 24:00 the interrupting boundary fires. It cancels the guarded track: Alice's task
# leaves the inbox and the withdraw-message hold is released with it (`reason: cancelled`).
# The fork `t3` runs to the manager's task, and the instance dehydrates again.

# %%
seen = len(eng.facts)
eng.advance("PT16H")
facts_since(eng, seen, {"timer_fired", "hydrated", "wait_released", "track_state",
                        "task_created", "dehydrated"})
show_tracks(nobody)
print([(t.id, t.assignee) for t in eng.tasks()])
show_holders(eng)

# %%
nobody.lineage()

# %% [markdown]
# ## Alice approves in time
#
# A second request, approved at 06:00, before the reminder. Completing the task wakes the
# instance (the task inbox is the holder); the continuation fork ends at `approved`, and
# the three boundary holds are withdrawn — advancing well past their deadlines fires
# nothing.

# %%
eng2 = bpm.Engine()
quick = eng2.start(approval, {"request": "r-2"})
eng2.advance("PT6H")
print(quick.residency, quick.data)
seen = len(eng2.facts)
(task,) = eng2.tasks()
eng2.complete_task(task.id, {"approved": True})
eng2.advance("P2D")
facts_since(eng2, seen, {"hydrated", "wait_released", "timer_fired", "instance_completed"})
print(quick.state, quick.data)
show_tracks(quick)
print(eng2.holders())

# %% [markdown]
# ## The requester withdraws, while dehydrated
#
# A message boundary wakes the instance through its message holder. The wake is a
# *boundary* wake: the message is not handed to the task node (that would approve the
# request!) — the boundary forks over the guarded track and, being interrupting, cancels
# it. The message payload is bound by the boundary.

# %%
eng3 = bpm.Engine()
gone = eng3.start(approval, {"request": "r-3"})
eng3.advance("PT2H")
print(gone.residency)
seen = len(eng3.facts)
print(eng3.publish_message("withdraw", key="r-3", payload={"reason": "duplicate"}))
eng3.run()
facts_since(eng3, seen, {"message_correlated", "hydrated", "wait_released", "track_state",
                         "instance_completed"})
print(gone.state, gone.data, eng3.tasks(), eng3.holders())
show_tracks(gone)
