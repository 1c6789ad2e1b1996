# %% [markdown]
# # 6. User tasks and worker jobs: one lets the instance dehydrate, the other keeps it resident
#
# Both look alike in a diagram — a box that waits for someone outside the engine — but they
# are different kinds of waiting.
#
# - A **user task** waits for a person. The task sits in the engine's **inbox**, with an id
#   that survives dehydration and restart. The inbox is the holder: completing the task wakes
#   the instance, and the completion outputs are what the continuation fork binds. A person
#   may take three days; nothing needs to run meanwhile, so the instance dehydrates.
# - A **worker job** (a service task with a `topic`) is work in flight: a worker fetches and
#   locks the job, performs it, and reports back. Its node says it is *not* dehydratable:
#   "a job in flight is active work, not a passive wait". The instance stays resident, with
#   its coroutines, until the job is reported — and it stays resident however long that
#   takes.
#
# > **Semantics:** [Wait holders](../docs/semantics.md#wait-holders) — a user task's holder
# > is the inbox; [eligibility](../docs/semantics.md#eligibility) — a user task is eligible, a
# > worker service task is not (a job in flight is active work, so it stays resident);
# > [holdability](../docs/semantics.md#holdability) — a worker job has no holder.

# %%
import gobpm_nb as bpm


def show_stats(eng):
    s = eng.stats()
    print(f"{eng.now:%m-%d %H:%M} instances {s['instances']} coroutines {s['coroutines']} "
          f"tasks {s['tasks']} jobs {s['jobs']}")

# %% [markdown]
# ## Side by side
#
# Two one-step processes: an expense approved by a person, and a card charge performed by a
# payment worker. Three instances of each; two days pass with nobody acting.

# %%
expense = bpm.Process("expense")
expense.start("start")
expense.user_task("approve", assignee="finance")
expense.end("done")
expense.flow("start", "approve", "done")

charge = bpm.Process("charge")
charge.start("start")
charge.service_task("charge_card", topic="payments")
charge.end("done")
charge.flow("start", "charge_card", "done")

eng = bpm.Engine()
for n in range(3):
    eng.start(expense, {"amount": 100 + n})
for n in range(3):
    eng.start(charge, {"amount": 200 + n})
eng.advance("P2D")
show_stats(eng)
for i in eng.instances():
    print(i.id, i.process, i.residency)
print(eng.holders()[0])
print(eng.tasks()[0].id, "| holder kinds:", sorted({h.kind for h in eng.holders()}))

# %% [markdown]
# The three expenses own no coroutine and are held by the inbox. The three charges own two
# coroutines each (loop and track) and have no holder at all: the job queue is not a holder,
# it is the work.
#
# ## The worker reports; the person acts
#
# A worker fetches and locks the jobs, then completes them: each charge wakes up in place
# (it never left) and finishes. Completing an expense task, by the id it has had since it
# was created, hydrates that instance and binds the outputs.

# %%
jobs = eng.fetch_jobs("payments", worker="w-1")
print([(j.id, j.instance, j.worker, j.data) for j in jobs])
for job in jobs:
    eng.complete_job(job.id, {"charged": True})
eng.run()
show_stats(eng)

seen = len(eng.facts)
eng.complete_task("i1:approve:1", {"approved": True})
eng.run()
for f in eng.facts[seen:]:
    if f.kind in ("hydrated", "task_completed", "data_changed", "instance_completed"):
        print(f.kind, f.instance, f.track, f.details)
print(eng.instance("i1").data, [(t.id, t.state, t.origin) for t in eng.instance("i1").tracks])
show_stats(eng)

# %% [markdown]
# ## Both in one instance
#
# An insurance claim: an adjuster assesses it (a user task) while a worker fetches the
# police report (a job), in parallel. While the job is open, the whole instance stays
# resident — the user task beside it does not change that. Once the worker reports, the
# only wait left is the user task, and the instance dehydrates.

# %%
claim = bpm.Process("claim")
claim.start("start")
claim.parallel_gateway("split")
claim.user_task("assess", assignee="adjuster")
claim.service_task("police_report", topic="reports")
claim.parallel_gateway("join")
claim.end("settled")
claim.flow("start", "split", "assess", "join")
claim.flow("split", "police_report", "join")
claim.flow("join", "settled")

eng2 = bpm.Engine()
c = eng2.start(claim, {"claim": "c-7"})
eng2.advance("P1D")
print(c.residency)
show_stats(eng2)
print([(t.id, t.node, t.state) for t in c.tracks])

# %%
(job,) = eng2.fetch_jobs("reports", worker="w-2")
eng2.complete_job(job.id, {"report": "no fault"})
eng2.advance("PT1M")
print(c.residency)
show_stats(eng2)
print([(t.id, t.node, t.state) for t in c.tracks])
for f in eng2.facts:
    if f.kind == "dehydrated":
        print(f"{f.at:%m-%d %H:%M}", f.kind, f.details)

# %% [markdown]
# The report's track waits at the join; the checkpoint records that arrival, so the
# merge can finish after a wake. The adjuster decides three days later:

# %%
eng2.advance("P3D")
(task,) = eng2.tasks()
print(task.id, task.assignee, f"{task.created:%m-%d %H:%M}")
eng2.complete_task(task.id, {"payout": 1200})
eng2.run()
print(c.state, c.data)
print([(t.id, t.node, t.state, t.parents, t.origin) for t in c.tracks])

# %%
c.lineage()
