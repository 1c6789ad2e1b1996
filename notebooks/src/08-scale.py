# %% [markdown]
# # 8. Scale: twelve thousand orders, most of them dehydrated
#
# The point of dehydration is arithmetic. A resident instance waiting on anything owns at
# least two coroutines (its loop and one per live track), their frames, and everything they
# reference. Ten thousand orders waiting for a payment that takes hours would keep twenty
# thousand coroutines alive doing nothing. Dehydrated, each costs a small record, a checkpoint
# (encoded bytes in the store) and its holders.
#
# This notebook runs one working day of an order desk on virtual time: 300 orders arrive
# every 15 minutes for ten hours. Each waits a 30-minute grace period (too short to be worth
# dehydrating: it stays **resident**), is confirmed, then waits for its payment (a message
# wait: **dehydrated**), which arrives twelve hours after the order; then a 20-minute dispatch
# timer (resident again) and it ships. We count instances by residency and live coroutines
# every 15 minutes, once with dehydration on and once with it off. Each quarter hour's 300
# orders arrive in one call, `eng.start_many(order, [data, ...])`: the same instances, ids
# and facts as 300 `eng.start` calls, and on a durable store one transaction for all their
# first checkpoints instead of 300.
#
# > **Semantics:** [A wait is not work](../docs/semantics.md#a-wait-is-not-work);
# > [residency](../docs/semantics.md#residency) and
# > [residency facts](../docs/semantics.md#residency-facts) — how many instances are dehydrated
# > is a question the counters answer; [eligibility](../docs/semantics.md#eligibility) — the
# > short timers stay resident.

# %%
import gc
import pathlib
import tempfile
import tracemalloc

import gobpm_nb as bpm

order = bpm.Process("order")
order.start("received")
order.timer_catch("grace", duration="PT30M")
order.script_task("confirm", fn=lambda data: {"confirmed": True})
order.message_catch("paid", message="payment", key="order")
order.timer_catch("dispatch", duration="PT20M")
order.end("shipped")
order.flow("received", "grace", "confirm", "paid", "dispatch", "shipped")
order.validate()

PER_TICK = 300        # orders arriving every 15 minutes
ARRIVAL_TICKS = 40    # for ten hours: 12,000 orders
PAY_AFTER = 48        # a payment comes twelve hours (48 ticks) after its order
TICKS = 96            # one day of virtual time


def simulate(dehydrate):
    """Run the day; return the engine and one row per tick."""
    eng = bpm.Engine(dehydrate=dehydrate, keep_facts=10_000)
    rows = []
    for tick in range(TICKS + 1):
        if tick < ARRIVAL_TICKS:
            eng.start_many(order, [{"order": f"o-{tick}-{n}"} for n in range(PER_TICK)])
        if PAY_AFTER <= tick < PAY_AFTER + ARRIVAL_TICKS:
            for n in range(PER_TICK):
                eng.publish_message("payment", key=f"o-{tick - PAY_AFTER}-{n}",
                                    payload={"paid": True})
        eng.advance("PT15M")
        s = eng.stats()
        rows.append((eng.now, s["instances"]["resident"], s["instances"]["dehydrated"],
                     s["instances"]["finished"], s["coroutines"]))
    return eng, rows

# %% [markdown]
# ## The day, with dehydration on and off

# %%
dehydrating_eng, dehydrating = simulate(dehydrate=True)
resident_eng, resident = simulate(dehydrate=False)
print(dehydrating_eng.stats())
print(resident_eng.stats())
print("same outcome:", [i.data for i in dehydrating_eng.instances()] ==
      [i.data for i in resident_eng.instances()])
del dehydrating_eng, resident_eng  # keep the rows, free the 24,000 finished instances

# %% [markdown]
# The numbers behind the plot, every two hours (these are compared when the notebook is
# tested; they are the same on every machine):

# %%
print("time         | dehydrate=True                        | dehydrate=False")
print("             | resident dehydrated finished coroutines | resident coroutines")
for (at, res, dry, done, coros), (_, res_off, _, _, coros_off) in zip(dehydrating[::8],
                                                                       resident[::8], strict=True):
    print(f"{at:%m-%d %H:%M}  | {res:8} {dry:10} {done:8} {coros:10} | {res_off:8} "
          f"{coros_off:10}")
peak = max(dehydrating, key=lambda row: row[2])
print(f"peak: {peak[2]} instances dehydrated at {peak[0]:%H:%M}, {peak[4]} live coroutines; "
      f"resident mode then: {resident[dehydrating.index(peak)][4]} coroutines")

# %% [markdown]
# ## The plot
#
# Left: instances by residency over the day, dehydration on. Only the orders in their
# 30-minute grace or 20-minute dispatch window are resident; everything waiting for a
# payment is dehydrated. Right: live coroutines, dehydration on and off.
#
# The chart is SVG written by the few lines below rather than a plotting library's picture:
# it is the same text on every machine, so it is compared when the notebook is tested, and
# it draws wherever the notebook runs — in the browser too (JupyterLite), where matplotlib
# cannot be installed.

# %%
from IPython.display import SVG

WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 440, 290, 62, 30, 42


def nice_step(top, ticks=5):
    """A round step (1, 2 or 5 times a power of ten) giving about ``ticks`` grid lines."""
    power = 1
    while power * 10 <= top / ticks:
        power *= 10
    return next(m * power for m in (1, 2, 5, 10) if m * power >= top / ticks)


def panel(x0, title, hours, lines, y_label):
    """One line chart at ``x0``; ``lines``: (label, values, colour, dashed) each."""
    top_value = max(max(values) for _, values, _, _ in lines)
    step = nice_step(top_value)
    y_max, x_max = -(-top_value // step) * step, 24

    def px(hour):
        return x0 + LEFT + (WIDTH - LEFT - 12) * hour / x_max

    def py(value):
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - value / y_max)

    out = [f'<text x="{x0 + WIDTH / 2:.0f}" y="18" text-anchor="middle" '
           f'font-weight="bold">{title}</text>']
    for v in range(0, y_max + 1, step):
        out.append(f'<line x1="{px(0):.1f}" x2="{px(x_max):.1f}" y1="{py(v):.1f}" '
                   f'y2="{py(v):.1f}" stroke="#ddd"/><text x="{px(0) - 5:.1f}" '
                   f'y="{py(v) + 4:.1f}" text-anchor="end">{v:,}</text>')
    for hour in range(0, x_max + 1, 4):
        out.append(f'<text x="{px(hour):.1f}" y="{HEIGHT - BOTTOM + 16}" '
                   f'text-anchor="middle">{hour}</text>')
    out.append(f'<text x="{px(x_max / 2):.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
               f'virtual hours</text><text transform="translate({x0 + 14} {py(y_max / 2):.1f})'
               f' rotate(-90)" text-anchor="middle">{y_label}</text>')
    for n, (label, values, colour, dashed) in enumerate(lines):
        dash = ' stroke-dasharray="6 3"' if dashed else ""
        points = " ".join(f"{px(h):.1f},{py(v):.1f}" for h, v in zip(hours, values, strict=True))
        y = TOP + 14 + 16 * n
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                   f'stroke-width="1.5"{dash}/><line x1="{px(0.6):.1f}" x2="{px(2):.1f}" '
                   f'y1="{y - 4}" y2="{y - 4}" stroke="{colour}" stroke-width="1.5"{dash}/>'
                   f'<text x="{px(2.3):.1f}" y="{y}">{label}</text>')
    return "".join(out)


hours = [(row[0] - dehydrating[0][0]).total_seconds() / 3600 + 0.25 for row in dehydrating]
left = panel(0, "instances by residency (dehydrate=True)", hours, [
    ("resident", [r[1] for r in dehydrating], "#d62728", False),
    ("dehydrated", [r[2] for r in dehydrating], "#1f77b4", False),
    ("finished", [r[3] for r in dehydrating], "#7f7f7f", True)], "instances")
right = panel(WIDTH, "live coroutines", hours, [
    ("dehydrate=False", [r[4] for r in resident], "#d62728", False),
    ("dehydrate=True", [r[4] for r in dehydrating], "#1f77b4", False)], "coroutines")
SVG(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * WIDTH}" height="{HEIGHT}" '
    f'font-family="sans-serif" font-size="12">{left}{right}</svg>')

# %% [markdown]
# ## Memory per waiting instance
#
# Two thousand orders parked on their payment wait, measured with `tracemalloc` (Python's
# own allocation tracer: every object the engine keeps for them), dehydrated and resident, on
# a SQLite store in a temporary folder: the checkpoints are on disk, and an engine on a
# durable store keeps no command history (see the README's "Rewind and branch"), so what is
# counted is what the engine itself holds per instance. The fact log is switched off
# (`keep_facts=0`) so that it does not count. (Tracing every allocation is slow; two
# thousand are plenty for a per-instance figure.)

# %%
def bytes_per_waiting_instance(dehydrate, n=2_000):
    gc.collect()
    tracemalloc.start()
    store = bpm.SQLiteStore(pathlib.Path(tempfile.mkdtemp()) / "orders.db")
    eng = bpm.Engine(store, dehydrate=dehydrate, keep_facts=0)
    before = tracemalloc.get_traced_memory()[0]
    for k in range(n):
        eng.start(order, {"order": f"m-{k}"})
    eng.advance("PT1H")          # past the grace period: every order waits for its payment
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    stats = eng.stats()
    store.close()
    return used / n, stats


dry_bytes, dry_stats = bytes_per_waiting_instance(dehydrate=True)
wet_bytes, wet_stats = bytes_per_waiting_instance(dehydrate=False)
print("dehydrated:", dry_stats["instances"], "coroutines", dry_stats["coroutines"])
print("resident:  ", wet_stats["instances"], "coroutines", wet_stats["coroutines"])
print("a dehydrated instance costs less than half of a resident one:",
      dry_bytes < wet_bytes / 2)

# %%
# NBVAL_IGNORE_OUTPUT
# Why ignored: byte counts depend on the Python version and build (object and frame
# sizes); the comparison that matters is printed, and compared, in the cell above.
print(f"dehydrated: {dry_bytes:,.0f} bytes per waiting instance")
print(f"resident:   {wet_bytes:,.0f} bytes per waiting instance")
print(f"ratio:      {wet_bytes / dry_bytes:.1f}x")

# %% [markdown]
# `benchmarks/memory.py` measures the same thing at 100,000 instances with the process's
# resident set size, on SQLite too, and beside SimPy.
