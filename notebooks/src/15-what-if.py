# %% [markdown]
# # 15. What if orders double? A population on the real engine
#
# A design review asks two questions about the order desk: "what happens to our SLA if orders
# double in December?" and "is a third clerk worth it?". One instance at a time cannot answer
# them: they are about a **population** — orders arriving through the week, clerks who work
# office hours, tasks that take longer or shorter, a queue in front of the desk.
#
# A `Scenario` says who arrives and when, how long each task takes, which **pool** of
# resources does it and when they work. `run()` drives the real engine on virtual time with
# that population: the escalation timer on the clerk's task is the engine's own boundary
# timer, so a case that waits too long is escalated exactly as a single instance would be.
# The answers are pandas DataFrames and matplotlib figures. Every random draw is keyed by the
# seed, so the whole notebook gives the same figures every time it runs.
#
# (This notebook needs the `population` extra: `pip install 'gobpm_nb[population]'`, which
# brings pandas and matplotlib. It does not run in the browser-only JupyterLite site, which has
# neither.)
#
# > **Reference:** the README's [Populations](../README.md#populations-what-ifs-with-arrivals-staff-and-calendars);
# > [docs/scenario.md](../docs/scenario.md) (every key of a scenario, the distributions, how
# > the run, calendars and KPIs are defined); [Boundary fork](../docs/semantics.md#boundary-fork)
# > — what the escalation timer does to the clerk's task.

# %%
import matplotlib.pyplot as plt
import pandas as pd

import gobpm_nb as bpm

pd.set_option("display.precision", 2)
plt.rcParams["figure.dpi"] = 72  # small images keep the notebook small
HOUR = pd.Timedelta(hours=1)


def in_hours(frame):
    """A KPI table with its durations as hours (numbers read better than Timedeltas) and
    its instants to the second."""
    frame = frame.copy()
    for column in frame.columns:
        if pd.api.types.is_datetime64_any_dtype(frame[column]):
            frame[column] = frame[column].dt.floor("s")
        elif pd.api.types.is_timedelta64_dtype(frame[column]):
            frame[column] = frame[column] / HOUR
            frame = frame.rename(columns={column: f"{column}_h"})
    return frame

# %% [markdown]
# ## The order desk
#
# An order is checked by a clerk, then invoiced by a clerk. The check has an SLA: if it has not
# been done **four hours** after the order arrived, an interrupting timer on the task's edge
# withdraws it and the order goes to the supervisor as an escalated check; after that it is
# invoiced as usual.

# %%
desk = bpm.Process("order_to_cash")
desk.start("received", name="Order received")
desk.user_task("check", name="Check order")
desk.timer_boundary("sla", attached_to="check", duration="PT4H", interrupting=True)
desk.user_task("escalate", name="Escalated check")
desk.user_task("invoice", name="Send invoice")
desk.end("invoiced", name="Invoiced")
desk.flow("received", "check", "invoice", "invoiced")
desk.flow("sla", "escalate", "invoice")
desk.validate()

# %% [markdown]
# ## The scenario: one working week
#
# - **Arrivals**: from Monday 5 January 2026, three orders an hour on average (a Poisson
#   process) from 08:00 to 17:00 on weekdays, none at night or at the weekend.
# - **Durations**: a check takes 15 minutes on average (lognormal, so a few take much longer),
#   an invoice 10 minutes (exponential), an escalated check 20 minutes.
# - **Pools**: two clerks and one supervisor, all on the office calendar (09:00-17:00 on
#   weekdays), at 30 and 50 an hour. Work that does not fit the day pauses overnight.
# - **SLA**: an order should be invoiced within eight hours of its arrival.
#
# Orders from 08:00 wait for the office to open: the calendar is a real constraint, and so is
# the escalation timer, which keeps running at night.

# %%
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")


def per_hour(n):
    """n orders an hour, 08:00-17:00 on weekdays."""
    return {"schedule": {day: {f"{h:02d}": n for h in range(8, 17)} for day in WEEKDAYS}}


def staff(clerks):
    return {"clerks": {"size": clerks, "calendar": "office", "cost_per_hour": 30},
            "supervisor": {"size": 1, "calendar": "office", "cost_per_hour": 50}}


base = bpm.Scenario(
    desk, start="2026-01-05T00:00:00", horizon="P5D", seed=7, sla="PT8H",
    arrivals=per_hour(3),
    durations={"check": {"lognormal": {"mean": "PT15M", "sd": "PT8M"}},
               "invoice": {"exponential": {"mean": "PT10M"}},
               "escalate": {"fixed": "PT20M"}},
    pools=staff(2),
    calendars={"office": {day: ["09:00-17:00"] for day in WEEKDAYS}},
    assign={"check": "clerks", "invoice": "clerks", "escalate": "supervisor"})
base  # base.to_json() is the same scenario as a JSON document (docs/scenario.md)

# %% [markdown]
# ## Run it
#
# `run()` starts each order at its arrival on a fresh engine, puts each task in its pool's
# queue, hands it to a free clerk while the office is open and completes it after its drawn
# duration. It returns a `Population`. (`progress=False`: no progress bar; a run this small
# takes well under a second anyway.)

# %%
now = base.run(progress=False)
now

# %% [markdown]
# ## The KPIs: cases, tasks, pools
#
# Per case: when it arrived and ended, its cycle time, how much of it was waiting and how much
# processing, its cost, which end it reached and whether it breached the SLA.

# %%
cases = in_hours(now.cases())
cases.head()

# %% [markdown]
# The week in one line per KPI: `summary()` gives the means (hours) and shares.

# %%
now.summary().to_frame("two clerks")

# %% [markdown]
# Per task: how many were created, done, and withdrawn (by the escalation timer), with the mean
# waiting and processing. Processing runs from the start of the work to its end, so a task
# begun at 16:50 and paused overnight counts its night too: that is why the invoice's mean
# processing is longer than its ten minutes of work.

# %%
in_hours(now.tasks())

# %% [markdown]
# Per pool: utilisation is the time worked over the time the pool was available (its size
# times its calendar's open hours), the mean and longest queue, and the cost.

# %%
now.pools()

# %% [markdown]
# ## The figures
#
# The cycle-time histogram, with the SLA dashed, and each pool's utilisation and queue over the
# week, hour by hour.

# %%
fig, ax = plt.subplots(figsize=(8, 3))
now.plot_cycle_times(ax=ax)
plt.show()
now.plot_pools()
plt.show()

# %% [markdown]
# **What they say.** Two clerks keep up: most orders are invoiced within two hours, the clerks
# are busy about two thirds of the office hours, and their queue empties every day. The few
# orders to the right of the SLA line are the ones that arrived late in the day and waited
# overnight (the last of Friday's waited the weekend: the clerks' work on Monday the 12th).
# The supervisor has nothing to do: no check waited four hours.

# %% [markdown]
# ## What if orders double?
#
# `replace` gives the same scenario with one change: six orders an hour instead of three.

# %%
double = base.replace(arrivals=per_hour(6)).run(progress=False)
in_hours(double.tasks())

# %% [markdown]
# ## And with a third clerk?

# %%
third = base.replace(arrivals=per_hour(6), pools=staff(3)).run(progress=False)
in_hours(third.tasks())

# %% [markdown]
# ## The three side by side
#
# The KPIs of the three runs in one table.

# %%
pd.concat([now.summary(), double.summary(), third.summary()], axis=1,
          keys=["now", "orders x2", "orders x2, 3 clerks"])

# %% [markdown]
# `bpm.compare` draws two populations side by side: their cycle times overlaid, and each
# one's pools over the week. First twice the orders with two clerks against today...

# %%
fig = bpm.compare(now, double, labels=("now", "orders x2"))
plt.show()

# %% [markdown]
# ... then twice the orders, with two clerks and with three.

# %%
fig = bpm.compare(double, third, labels=("orders x2", "orders x2, 3 clerks"))
plt.show()

# %% [markdown]
# **What they say.** With twice the orders, two clerks are busy all the office hours and their
# queue grows each day faster than they empty it: a check waits so long that the escalation
# timer fires for more than a quarter of the orders, and the supervisor's queue — empty
# before — grows as well. Escalation does not relieve the clerks, because every order still
# comes back to them to be invoiced. The histogram falls into humps a day apart: orders done
# the same day, the next day, and — the ones still queued on Friday evening — after the
# weekend, three or four days later. About half the orders breach the eight-hour SLA, and the
# mean cycle time goes from under two hours to most of a day.
#
# A third clerk brings the picture back to about today's: the clerks are busy a bit over
# four fifths of the time, the queue empties every day, only a handful of checks are
# escalated and the SLA is breached about as rarely as now. Each case costs a little more
# than today, but less than the doubled week with two clerks, where the supervisor's
# escalated checks and the overnight pauses add up. These are one week and one seed each: to
# tell a real difference from luck, `Scenario.replicate(n)` runs `n` replications (on Dask)
# and gives each KPI's mean with its 95 % confidence interval.

# %% [markdown]
# ## On the dashboard: where does the week stand?
#
# The tables and figures are about the whole week, after it ended. To watch a population
# **while it runs**, give `run()` a dashboard: `dashboard=True` shows one in the cell's output,
# follows the run a few times a second and is left showing where the run ended. It counts the
# cases (started, still running, completed, past the SLA), shows each pool's busy resources,
# its waiting work and whether its calendar is open, and draws the process with each element
# shaded by the **tokens standing on it now**, the count written on it. (`sc.dashboard()`
# makes one to display in a cell of its own, then `run(dashboard=board)`;
# `population.dashboard()` shows a finished run's end.)
#
# Twice the orders with two clerks again, but stopped on Friday at noon (arrivals for four and
# a half days, no `drain` after them): what is on the desk at that moment?

# %%
friday = base.replace(arrivals=per_hour(6), horizon="P4DT12H", drain="PT0S")
noon = friday.run(progress=False, dashboard=True)

# %% [markdown]
# **What it says.** On Friday at noon forty orders are open: fourteen checks, twelve
# escalated checks and fourteen invoices. Both clerks and the supervisor are busy, and 26
# pieces of work wait for the clerks and 11 for the supervisor. Almost half the orders of
# the week are already past the SLA, open ones included (an open order is past it once it is
# eight hours old). The same numbers are in the tables: `noon.cases()` has 40 orders not
# ended, and each counter is computed from the run exactly as its table is.

# %%
noon.final.counters

# %% [markdown]
# ## The event log
#
# `event_log()` is the run as process mining reads it: a `start` and a `complete` row per
# piece of work, in XES column names, with the resource that did it. A withdrawn check has its
# `start` only, if it had started at all.

# %%
in_hours(third.event_log()).head(8)

# %% [markdown]
# `third.to_xes("orders.xes")` writes the same log as an XES file through pm4py (the `xes`
# extra: `pip install 'gobpm_nb[xes]'`), for a process-mining tool to discover the process
# from the simulated log and check it against the model.
