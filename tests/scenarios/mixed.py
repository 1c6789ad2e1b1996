"""A scenario with parallel branches, timers, a message and a user task; prints the fact log."""

import gobpm_nb as bpm

p = bpm.Process("mixed")
p.start("s")
p.parallel_gateway("fork")
p.timer_catch("wait", duration="PT2H")
p.message_catch("paid", message="payment", key="order")
p.user_task("check", assignee="ann")
p.timer_boundary("late", attached_to="check", duration="PT3H", interrupting=False)
p.parallel_gateway("join")
p.end("e")
p.end("nudged")
p.flow("s", "fork", "wait", "join", "e")
p.flow("fork", "paid", "join")
p.flow("fork", "check", "join")
p.flow("late", "nudged")
eng = bpm.Engine()
for n in range(3):
    eng.start(p, {"order": f"o-{n}", "tags": {"b": 1, "a": 2}})
eng.advance("PT1H")
eng.publish_message("payment", key="o-1", payload={"sum": 5})
eng.advance("PT4H")
for task in eng.tasks():
    eng.complete_task(task.id, {"ok": True})
eng.run()
for fact in eng.facts:
    print(fact.to_json())
