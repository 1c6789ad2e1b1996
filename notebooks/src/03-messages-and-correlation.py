# %% [markdown]
# # 3. Messages and correlation
#
# A message is addressed by a **name** and a **correlation key**: "payment for order o-2".
# An instance waiting on a message catch says which message it wants and which of its data
# fields holds its key. When that wait is armed, the engine's message index gets a holder
# for *(name, key value)*. A message is delivered by looking up that holder — so matching
# happens on the holder, not inside the instance. A message whose key matches nothing never
# touches a dehydrated instance; the right one wakes it and its payload is bound into the
# instance data by the continuation fork, once.
#
# Messages can also arrive *before* anyone waits for them. Published with a time-to-live,
# a message is buffered and given to the first matching wait that opens before it expires;
# without one (or after it) the message is dropped, with a fact that says why. A message id
# makes delivery idempotent: the same id twice is delivered once.
#
# > **Semantics:** [Wait holders](../docs/semantics.md#wait-holders) and
# > [correlation on the holder](../docs/semantics.md#correlation-on-the-holder) — a message
# > whose key matches no holder never wakes the instance, and a message id is delivered once;
# > [continuation fork](../docs/semantics.md#continuation-fork) — the payload is bound once;
# > [eligibility](../docs/semantics.md#eligibility) — a message catch is a pure wait,
# > arbitrarily long and driven from outside.

# %%
import gobpm_nb as bpm


def show_holders(eng):
    for h in eng.holders():
        print(f"{h.instance:3} {h.track:3} {h.kind:8} {h.wait_kind:5} {h.node:8} keys={h.keys}")


def residency(eng):
    return {i.id: i.residency for i in eng.instances()}


def facts_since(eng, seen, kinds=None):
    for f in eng.facts[seen:]:
        if kinds is None or f.kind in kinds:
            print(f"{f.at:%H:%M} {f.kind:18} {f.instance or '-':3} {f.track or '':3} {f.details}")

# %% [markdown]
# ## Two orders waiting for their payment
#
# `key="order"` names the data field whose value is the instance's correlation value.

# %%
payment = bpm.Process("payment")
payment.start("start")
payment.message_catch("paid", message="payment", key="order")
payment.script_task("book", fn=lambda data: {"booked": data["amount"]})
payment.end("done")
payment.flow("start", "paid", "book", "done")

eng = bpm.Engine()
o1 = eng.start(payment, {"order": "o-1"})
o2 = eng.start(payment, {"order": "o-2"})
eng.advance("PT1M")
print(residency(eng), "coroutines:", eng.stats()["coroutines"])
show_holders(eng)

# %% [markdown]
# ## The wrong key stays asleep
#
# A payment for `o-3`: no holder has that key, so nothing is hydrated and the message is
# dropped (`publish_message` returns `None`: it reached no instance). A payment with the
# right key but the wrong message name is just as foreign.

# %%
seen = len(eng.facts)
print(eng.publish_message("payment", key="o-3", payload={"amount": 30}))
print(eng.publish_message("refund", key="o-1", payload={"amount": 30}))
facts_since(eng, seen)
print(residency(eng), "coroutines:", eng.stats()["coroutines"])

# %% [markdown]
# ## The right key wakes it and binds the payload
#
# `publish_message` returns the instance the message reached: it has accepted the message
# for `i2`. The wake is the next scheduler event (`eng.step()` reports it as kind `wake`),
# where a resident instance's track would resume: the holder for `("payment", "o-2")`
# hydrates `i2`; the continuation fork re-enters `paid` with the message in hand, merges the
# payload into the data and moves on. `i1` is not touched.

# %%
seen = len(eng.facts)
print(eng.publish_message("payment", key="o-2", payload={"amount": 40}))
eng.run()
facts_since(eng, seen, {"message_correlated", "hydrated", "wait_released", "track_state",
                        "data_changed", "instance_completed"})
print(o2.state, o2.data)
print(o1.residency, o1.data)

# %%
o2.lineage()

# %% [markdown]
# ## The same message twice
#
# A message id makes the delivery idempotent. Two instances wait for the payment of `o-5`
# (say a retry started a second one); the broker delivers message `m-77` twice. The first
# copy reaches the first subscriber; the second copy is recognised and dropped instead of
# waking the other instance.

# %%
o5a = eng.start(payment, {"order": "o-5"})
o5b = eng.start(payment, {"order": "o-5"})
eng.run()
seen = len(eng.facts)
print(eng.publish_message("payment", key="o-5", payload={"amount": 5}, message_id="m-77"))
print(eng.publish_message("payment", key="o-5", payload={"amount": 5}, message_id="m-77"))
eng.run()
facts_since(eng, seen, {"message_correlated", "message_dropped"})
print(o5a.id, o5a.state, "|", o5b.id, o5b.state, o5b.residency)

# %% [markdown]
# ## A message published early, with a time-to-live
#
# The payment for `o-9` arrives before its order instance exists. Published with
# `ttl="PT1H"` it is buffered (`message_buffered`). Thirty minutes later the instance starts;
# the moment its message wait is armed, the buffered message is delivered — the instance
# never even parks, so it never dehydrates.

# %%
seen = len(eng.facts)
print(eng.publish_message("payment", key="o-9", payload={"amount": 90}, ttl="PT1H"))
eng.advance("PT30M")
o9 = eng.start(payment, {"order": "o-9"})
eng.run()
facts_since(eng, seen, {"message_buffered", "message_correlated", "dehydrated",
                        "instance_completed"})
print(o9.state, o9.data, [(t.id, t.node, t.state) for t in o9.tracks])

# %% [markdown]
# Past its time-to-live a buffered message is dropped (`ttl expired`), and an instance that
# starts afterwards waits — dehydrated — for a payment that will have to be sent again.

# %%
seen = len(eng.facts)
eng.publish_message("payment", key="o-10", payload={"amount": 10}, ttl="PT1H")
eng.advance("PT2H")
o10 = eng.start(payment, {"order": "o-10"})
eng.advance("PT1M")
facts_since(eng, seen, {"message_buffered", "message_dropped", "dehydrated"})
print(o10.state, o10.residency)
show_holders(eng)

# %% [markdown]
# ## Signals: one broadcast, every waiter
#
# A signal has no key: `broadcast_signal` reaches every wait on that signal name, resident or
# dehydrated, and returns how many there were. Its holders live in the signal index.

# %%
closing = bpm.Process("closing")
closing.start("start")
closing.signal_catch("close", signal="end_of_day")
closing.end("closed")
closing.flow("start", "close", "closed")
shops = [eng.start(closing, {"shop": name}) for name in ("north", "south")]
eng.advance("PT1M")
print([(s.id, s.residency) for s in shops])
print(eng.broadcast_signal("end_of_day", {"day": "2026-01-01"}))
eng.run()
print([(s.id, s.state, s.data) for s in shops])
print(eng.broadcast_signal("end_of_day"))
print(eng.stats())
