# %% [markdown]
# # 12. What if? Rewind, branch and replay
#
# An engine on a memory store records every command it ran (its **history**) and every
# answer user Python gave (its **tape**). With those it can go back: `eng.rewind(to)` puts
# the whole engine — instances, tasks, holders, the clock, the store — back to the state
# right after an earlier fact; `eng.branch()` makes an independent engine from a point for a
# what-if; `eng.replay()` runs again what a rewind went back over and gives the same facts,
# byte for byte, without calling any user function twice.
#
# > **Reference:** [Rewind and branch](../README.md#rewind-and-branch) — where a rewind
# > stops, what the history keeps, why a durable store refuses a rewind;
# > [Boundary fork](../docs/semantics.md#boundary-fork) — what the deadline does to the task.

# %%
import gobpm_nb as bpm


def show_facts(facts):
    for f in facts:
        print(f"{f.seq:3} {f.at:%m-%d %H:%M} {f.kind:17} {f.node or '':9} {f.details}")


def show_history(eng):
    for c in eng.history():
        print(f"{c.name:9} facts {c.first:2} -> {c.last:2}  began {c.at:%m-%d %H:%M}  "
              f"done={c.done}")


def end_of(inst):
    """The end event an instance reached (None while it runs)."""
    ends = [t.node for t in inst.tracks if t.state == "completed"]
    return ends[0] if ends else None

# %% [markdown]
# ## The approval: approve within 24 hours or escalate
#
# Alice has a task; an interrupting timer on its edge fires after 24 hours, cancels the
# task and ends the instance at `escalated` (notebook 04 shows this in detail).

# %%
approval = bpm.Process("approval")
approval.start("start")
approval.user_task("approve", assignee="alice")
approval.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
approval.end("approved")
approval.end("escalated")
approval.flow("start", "approve", "approved")
approval.flow("late", "escalated")
approval.validate()

# %% [markdown]
# ## Nobody acts: it escalates
#
# We start one request and let two virtual days pass. Alice never opens her task.

# %%
eng = bpm.Engine()
inst = eng.start(approval, {"request": "r-1"})
eng.advance("P2D")
print(inst.state, "at", end_of(inst), "| open tasks:", eng.tasks())
show_facts(eng.facts)
original = list(eng.facts)

# %% [markdown]
# ## The history
#
# `eng.history()` lists the commands that changed the engine, with the fact numbers each
# began and ended at. Two commands: the start (facts 1-2) and the two-day advance, which
# ran the rest.

# %%
show_history(eng)

# %% [markdown]
# ## Rewind to before the deadline
#
# `rewind` takes a fact number or a virtual time. A time means "the last fact at or before
# it": nothing happened between midnight and the deadline, so 20:00 on the first day goes
# back to fact 10, where the instance had just dehydrated to wait, and the clock with
# it (midnight: the state right after fact 10). The advance that ran past the deadline is
# now **interrupted**: the part after fact 10 has not run.

# %%
r = eng.rewind("2026-01-01T20:00:00Z")
print(r)
print("the last fact kept:", eng.facts[-1].seq, eng.facts[-1].kind)

# %% [markdown]
# Everything is as it was there: the instance is active and dehydrated again, Alice's task is
# back in the inbox, the deadline's holder is armed. The same `inst` handle still works.
# The history marks the advance as not done: it waits for `replay()`.

# %%
print(inst.state, inst.residency, [(t.id, t.assignee) for t in eng.tasks()])
for h in eng.holders():
    print(h.kind, h.wait_kind, h.node, h.deadline)
show_history(eng)

# %% [markdown]
# ## Branch: what if Alice had approved at 20:00?
#
# `eng.branch()` is a second, independent engine at this point, on its own memory store.
# In the branch, four hours before the deadline, Alice approves. The original engine is not
# touched by anything the branch does.

# %%
b = eng.branch()
b.advance("PT20H")
(task,) = b.tasks()
b.complete_task(task.id, {"approved": True})
b.run()
what_if = b.instance(inst.id)
print("branch:  ", what_if.state, "at", end_of(what_if))
print("original:", inst.state, "| facts:", len(eng.facts))

# %% [markdown]
# ## Replay: the original comes back
#
# `eng.replay()` runs the rest of the interrupted advance again. The timer fires at the
# deadline, as it did the first time, and the facts are the same ones, byte for byte.

# %%
print(eng.replay())
print(inst.state, "at", end_of(inst))
print("facts identical to the first run:", list(eng.facts) == original)
show_history(eng)

# %% [markdown]
# ## The two lineages, one above the other
#
# First the original: the deadline fired, the boundary forked `t2` over Alice's track `t1`
# (cancelled) and ended at `escalated`. Then the branch (its title says so): Alice's
# completion continued her track to `approved`.

# %%
print("original:", end_of(inst), "| branch:", end_of(what_if))
display(inst.lineage(), what_if.lineage())
