# %% [markdown]
# # 7. Crash and recovery with `SQLiteStore`
#
# Dehydration and restart recovery are one mechanism at two levels. A dehydrated instance is
# already nothing but its checkpoint and its holders; with a **durable** store
# (`SQLiteStore`: WAL, one transaction per checkpoint) the engine writes a checkpoint at
# *every* quiet point, resident instances included. If the process dies,
# `Engine.recover(store, processes=[...])` in a new process rebuilds every instance from
# the store:
#
# - the virtual clock resumes where the store recorded it at the end of the last command
#   that returned (every command records it), never earlier;
# - each waiting track keeps its id and **re-arms** its wait — *trigger absent*: no
#   continuation fork, because nothing has happened to it yet;
# - every deadline is the **recorded** one, never recomputed from the restore time — an
#   escalation "24 h after the task was created" stays 24 h after the task was created, no
#   matter how often the engine restarts; an overdue timer fires once;
# - tasks keep their ids, and subscriptions keep the order they were armed in.
#
# > **Semantics:** [Trigger-absent re-arm](../docs/semantics.md#trigger-absent-re-arm) — a
# > trigger present continues, a trigger absent re-arms; [recovery](../docs/semantics.md#recovery)
# > — a restart rebuilds from the store with no trigger, and work done after the last quiet
# > point is done again (at least once);
# > [durable deadlines](../docs/semantics.md#durable-deadlines) — deadlines are recorded, never
# > recomputed, and an overdue timer fires once; [failed wakes](../docs/semantics.md#failed-wakes)
# > — a hold is removed only once its wake has succeeded.
#
# We work in a temporary folder, so nothing is left behind.

# %%
import contextlib
import gc
import io
import os
import runpy
import shutil
import subprocess
import sys
import tempfile

import gobpm_nb as bpm

home = os.getcwd()
workdir = tempfile.mkdtemp(prefix="gobpm-recovery-")
os.chdir(workdir)


def show_holders(eng):
    for h in eng.holders():
        deadline = f"{h.deadline:%m-%d %H:%M}" if h.deadline else "-"
        print(f"{h.instance} {h.track} {h.kind:7} {h.wait_kind:8} {h.node:8} {deadline}")

# %% [markdown]
# ## The processes, in a module both sides import
#
# The process that crashes and the one that recovers must deploy the same definitions (a
# checkpoint names its process, version and a signature of the graph).

# %%
# %%writefile procs.py
import gobpm_nb as bpm


def reminder():
    p = bpm.Process("reminder")
    p.start("start")
    p.timer_catch("wait", duration="PT2H")
    p.end("sent")
    p.flow("start", "wait", "sent")
    return p


def approval():
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("late", attached_to="approve", duration="PT24H")
    p.end("approved")
    p.end("escalated")
    p.flow("start", "approve", "approved")
    p.flow("late", "escalated")
    return p


def payment():
    p = bpm.Process("payment")
    p.start("start")
    p.message_catch("paid", message="payment", key="order")
    p.end("booked")
    p.flow("start", "paid", "booked")
    return p


def pickup():
    p = bpm.Process("pickup")
    p.start("start")
    p.timer_catch("courier", duration="PT20M")
    p.end("picked_up")
    p.flow("start", "courier", "picked_up")
    return p


ALL = [reminder(), approval(), payment(), pickup()]

# %% [markdown]
# ## A process that dies
#
# `crash.py` starts a reminder (a two-hour timer), an approval (a task with a 24-hour
# escalation), a payment wait, and at 00:30 a courier pickup whose twenty-minute timer is
# too short to dehydrate on. At 00:35 it dies with `os._exit`: no cleanup, no close, nothing
# flushed — as if the machine lost power.
#
# It runs as a process of its own — except where Python cannot start one: in JupyterLite the
# kernel is the browser's only Python (Pyodide). There `run_until_it_dies` runs `crash.py` in
# this kernel, its `os._exit` ends the script rather than the kernel, and the engine and
# store it made are dropped without a close. That leaves the file as the dead process leaves
# it — every command commits before it returns, so nothing was in flight — and everything
# below prints the same.

# %%
# %%writefile crash.py
import os

import gobpm_nb as bpm
from procs import approval, payment, pickup, reminder

eng = bpm.Engine(store=bpm.SQLiteStore("run.db"))
eng.start(reminder(), {"to": "ada"})
eng.start(approval(), {"amount": 120})
eng.start(payment(), {"order": "o-1"})
eng.advance("PT30M")
eng.start(pickup(), {"parcel": "p-9"})
eng.advance("PT5M")
print("dying at", eng.now.isoformat(), eng.stats()["instances"])
for h in eng.holders():
    deadline = h.deadline.isoformat() if h.deadline else "-"
    print(" ", h.instance, h.track, h.kind, h.wait_kind, h.node, deadline)
os._exit(1)

# %%
class ScriptExit(BaseException):
    """``os._exit`` called by a script run in this kernel."""


def exit_script(code):
    raise ScriptExit(code)


def run_until_it_dies(script):
    """Run ``script`` as a process; its exit code and output (stdout, then stderr). Where
    no process can be started (Pyodide), run it in this kernel until its ``os._exit``."""
    if sys.platform != "emscripten":
        done = subprocess.run([sys.executable, script], capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr
    out, real_exit = io.StringIO(), os._exit
    os._exit = exit_script
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_path(script, run_name="__main__")
        code = 0
    except ScriptExit as exc:
        code = exc.args[0]
    finally:
        os._exit = real_exit
    gc.collect()  # what the script made, dropped unclosed: its store's lock goes with it
    return code, out.getvalue()


code, output = run_until_it_dies("crash.py")
print("exit code", code)
print(output)

# %% [markdown]
# ## Recovery in a fresh engine
#
# The store holds one checkpoint per unfinished instance and a little metadata: the clock
# as the last command left it, the next instance number, the deployed process signatures,
# and any trigger accepted but not yet covered by a checkpoint. The last command,
# `advance("PT5M")`, returned at 00:35, so that is where the clock resumes.

# %%
from procs import ALL

store = bpm.SQLiteStore("run.db")
print(store.ids(), store.meta()["next_instance"])
eng = bpm.Engine.recover(store, processes=ALL)
print(eng.now)
print(eng.stats())
for f in eng.facts:
    if f.kind == "recovered":
        print(f.kind, f.instance, f.details)

# %% [markdown]
# ## Trigger absent: every wait re-armed, at its recorded deadline
#
# Each track has its old id and no new child: recovery re-armed the waits, it did not fire
# them. The reminder is still due at 02:00, the escalation at 00:00 the next day — 24 hours
# after the task was created, not after the restart. The task has its old id. The pickup
# instance could not dehydrate before the crash, so it comes back resident, with its
# coroutines.

# %%
show_holders(eng)
for i in eng.instances():
    print(i.id, i.process, i.residency, [(t.id, t.node, t.state) for t in i.tracks])
print([(t.id, t.assignee, f"{t.created:%m-%d %H:%M}") for t in eng.tasks()])

# %% [markdown]
# Now time moves on in the new engine. Each timer fires at its recorded time; the payment
# arrives and finds its subscription; the approval escalates at 00:00 on day two.

# %%
print(eng.publish_message("payment", key="o-1", payload={"amount": 75}))
eng.advance("P1D")
for f in eng.facts:
    if f.kind in ("timer_fired", "hydrated", "instance_completed"):
        print(f"{f.at:%m-%d %H:%M} {f.kind:18} {f.instance} {f.node or ''} {f.details}")
for i in eng.instances():
    print(i.id, i.state, i.data, [t.node for t in i.tracks if t.state == "completed"])
print("a new instance gets the id", eng.start(ALL[0], {"to": "cy"}).id)  # numbering goes on
store.close()

# %% [markdown]
# ## A wake that fails keeps its hold; an overdue timer fires once
#
# A store can fail. Here its reads fail from 00:01 on (think of a disk that went away):
# at 02:00 the reminder's wake cannot load the checkpoint. The engine keeps the hold, emits
# `wake_failed` and retries every `wake_retry_backoff` (15 s) of virtual time — it never
# drops the wait. At 03:00 another instance is started (writes still work), then the
# process is lost. The recovered clock starts at 03:02, where the last command left it; the
# reminder's deadline is behind it, so the timer fires once, at once: its holder wakes the
# dehydrated instance.

# %%
class FlakyDisk(bpm.SQLiteStore):
    """A durable store whose reads fail while ``broken`` is set."""

    broken = False

    def get(self, instance):
        if self.broken:
            raise OSError("read error")
        return super().get(instance)


flaky = FlakyDisk("flaky.db")
eng = bpm.Engine(store=flaky)
eng.start(ALL[0], {"to": "bob"})
eng.advance("PT1M")
flaky.broken = True
eng.advance("PT3H")
failed = [f for f in eng.facts if f.kind == "wake_failed"]
print(len(failed), "failed wakes, first", failed[0].at.time(), "last", failed[-1].at.time(),
      failed[0].details)
print(eng.instance("i1").residency)
show_holders(eng)
eng.start(ALL[1], {"amount": 9})
eng.advance("PT1M")
flaky.close()  # the engine is dropped here, as if its process had died

# %%
eng = bpm.Engine.recover(bpm.SQLiteStore("flaky.db"), processes=ALL)
print(eng.now)
eng.advance("PT1H")
for f in eng.facts:
    if f.instance == "i1" and f.kind in ("timer_fired", "hydrated", "instance_completed"):
        print(f"{f.at:%m-%d %H:%M} {f.kind:18} {f.details}")
print(eng.instance("i1").state, eng.instance("i2").residency)
eng.store.close()

# %%
os.chdir(home)
shutil.rmtree(workdir)
