# %% [markdown]
# # 5. The event-based gateway: a race
#
# An **event-based gateway** waits for whichever of several events comes first: the
# customer accepts the quote, the quote expires, or a price change recalls it. Each arm is
# armed at once, and each registers its own holder — a message holder, a timer holder, a
# signal holder — all owned by the one track parked on the gateway.
#
# The gateway itself is the wait node. It is always *eligible* to dehydrate (it exists only
# to wait), and it is *holdable* when every arm has a holder. When one arm's trigger
# arrives, that arm wins: the instance is hydrated, a continuation fork re-enters the
# gateway and leaves through the winning arm, and every sibling hold is **withdrawn** at
# once. A loser never fires — not later, not after a restart.
#
# > **Semantics:** [Event-based gateway](../docs/semantics.md#event-based-gateway) — the
# > gateway is the wait node, not its arms; one holder per arm; the first trigger wins and
# > every sibling hold of the track is withdrawn at once;
# > [holdability](../docs/semantics.md#holdability) — one conditional arm keeps the gateway
# > resident.

# %%
import gobpm_nb as bpm


def show_holders(eng):
    for h in eng.holders():
        deadline = f"{h.deadline:%m-%d %H:%M}" if h.deadline else "-"
        print(f"{h.instance} {h.track} {h.kind:7} {h.node:9} {deadline:11} {h.keys}")


def race_facts(eng, seen, instance):
    for f in eng.facts[seen:]:
        if f.instance == instance and f.kind in ("message_correlated", "timer_fired",
                                                 "signal_broadcast", "hydrated",
                                                 "wait_released", "node_entered"):
            print(f"{f.at:%m-%d %H:%M} {f.kind:18} {f.track or '':3} {f.node or '':9} "
                  f"{f.details}")

# %% [markdown]
# ## Three arms, three holders

# %%
quote = bpm.Process("quote")
quote.start("start")
quote.event_gateway("race")
quote.message_catch("accepted", message="accept", key="quote")
quote.timer_catch("expired", duration="P3D")
quote.signal_catch("recalled", signal="price_change")
quote.end("won")
quote.end("lapsed")
quote.end("pulled")
quote.flow("start", "race", "accepted", "won")
quote.flow("race", "expired", "lapsed")
quote.flow("race", "recalled", "pulled")

eng = bpm.Engine()
q1 = eng.start(quote, {"quote": "q-1"})
q2 = eng.start(quote, {"quote": "q-2"})
eng.advance("PT1H")
print([(q.id, q.residency) for q in (q1, q2)], "coroutines:", eng.stats()["coroutines"])
show_holders(eng)

# %% [markdown]
# ## The message wins for q-1
#
# The customer accepts `q-1`. Its message holder hydrates the instance; the timer and the
# signal holds of the same track are withdrawn in the same moment; the fork `t2` enters the
# gateway, leaves it through `accepted` (where the payload is bound) and ends at `won`.

# %%
seen = len(eng.facts)
print(eng.publish_message("accept", key="q-1", payload={"price": 990}))
eng.run(until="2026-01-01T02:00:00Z")
race_facts(eng, seen, "i1")
print(q1.state, q1.data)
print([(t.id, t.node, t.state, t.parents, t.origin) for t in q1.tracks])
show_holders(eng)

# %%
q1.lineage()

# %% [markdown]
# ## The signal wins for q-2
#
# On day two prices change. The broadcast reaches every instance still waiting on that
# signal — here only `q-2`; `q-1`'s signal hold was withdrawn when it lost. A late
# acceptance for `q-2` finds no holder any more and is dropped.

# %%
eng.run(until="2026-01-02T09:00:00Z")
seen = len(eng.facts)
print(eng.broadcast_signal("price_change", {"new_list": "2026-B"}))
eng.run(until="2026-01-02T10:00:00Z")
race_facts(eng, seen, "i2")
print(eng.publish_message("accept", key="q-2"))
print(q2.state, q2.data, [t.node for t in q2.tracks if t.state == "completed"])

# %% [markdown]
# ## The timer wins for q-3
#
# A quote issued after the price change: nobody answers, and after three days the timer
# arm wins. Its message and signal holds are withdrawn.

# %%
q3 = eng.start(quote, {"quote": "q-3"})
seen = len(eng.facts)
eng.advance("P4D")
race_facts(eng, seen, "i3")
print(q3.state, [t.node for t in q3.tracks if t.state == "completed"])

# %% [markdown]
# ## Losers never fire
#
# `q-1`'s three-day timer would have been due on 01-04 00:00 — the clock is now past it.
# Exactly one arm fired per instance:

# %%
print(eng.now)
for q in (q1, q2, q3):
    fired = [f.kind for f in eng.facts if f.instance == q.id and
             f.kind in ("message_correlated", "timer_fired")]
    withdrawn = [f.node for f in eng.facts if f.instance == q.id and
                 f.kind == "wait_released" and f.details["reason"] == "withdrawn"]
    got_signal = [f.node for f in eng.facts if f.instance == q.id and
                  f.kind == "node_entered" and f.node == "recalled"]
    print(q.id, "fired:", fired + got_signal, "withdrawn:", withdrawn)
print(eng.stats())

# %% [markdown]
# ## One arm without a holder keeps the race resident
#
# A conditional arm ("as soon as the stock is in") has no engine holder — its trigger is the
# instance's own data, so dehydrating the instance would destroy what fires it. The gateway is
# still *eligible*, but not *holdable*: the instance stays resident, and the engine logs one
# warning naming the arm. (The warning is the text on stderr below the cell.)

# %%
restock = bpm.Process("restock")
restock.start("start")
restock.event_gateway("race")
restock.timer_catch("give_up", duration="P7D")
restock.conditional_catch("in_stock", condition="stock > 0")
restock.end("cancelled")
restock.end("shipped")
restock.flow("start", "race", "give_up", "cancelled")
restock.flow("race", "in_stock", "shipped")

eng2 = bpm.Engine()
r = eng2.start(restock, {"stock": 0})
eng2.advance("PT1H")
print(r.residency, "coroutines:", eng2.stats()["coroutines"])
show_holders(eng2)
