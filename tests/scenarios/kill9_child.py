"""The kill -9 target: run the order schedule on SQLite from a command index, acking each.

Usage: ``python kill9_child.py DB FIRST``. A fresh engine when DB does not exist, else
``Engine.recover``; then commands FIRST.. of ``SCHEDULE``, printing (flushed) one line
``ack <n> <clock> <outcome json>`` right after command n returned. Before the last command it
prints ``gate`` and waits for a line on stdin (the parent never kills that command, so every
instance is still in the store when the last child recovers), and after it ``summary <json>``.
The test imports this module for the processes, the schedule and the command semantics, and
runs the same schedule uninterrupted in memory as the expected outcome.
"""

import json
import os
import sys

import gobpm_nb as bpm

ARCHIVE = "2026-01-10T00:00:00+00:00"  # every order is held here, so none leaves the store early
FINAL = "2026-01-16T00:00:00+00:00"    # the last schedule time plus P10D
ENDS = ("paid", "unpaid", "escalated", "recalled")


def mark(outcome):
    def fn(data):
        return {"outcome": outcome}
    fn.__name__ = fn.__qualname__ = f"mark_{outcome}"
    return fn


def book(data):
    """An installment arrived: keep the message id, add the part to the total."""
    return {"payments": data["payments"] + [data["msg"]], "total": data["total"] + data["part"]}


def order_process():
    """approve within 24 h (or escalate; a 'recall' signal withdraws it), then installments on
    'paid' keyed by the order until the amount is reached, each within 48 h (or unpaid); every
    outcome is held until ARCHIVE and then ends at the node named after it."""
    p = bpm.Process("order")
    p.start("s")
    p.user_task("approve", assignee="clerk")
    p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
    p.signal_boundary("recall", attached_to="approve", signal="recall", interrupting=True)
    p.receive_task("pay", message="paid", key="order")
    p.timer_boundary("overdue", attached_to="pay", duration="PT48H", interrupting=True)
    p.script_task("book", fn=book)
    p.exclusive_gateway("enough", default="pay")
    p.exclusive_gateway("collect")
    p.timer_catch("archive", date=ARCHIVE)
    p.exclusive_gateway("route")
    for outcome in ENDS:
        p.script_task(f"mark_{outcome}", fn=mark(outcome))
        p.end(outcome)
        p.flow(f"mark_{outcome}", "collect")
        p.flow("route", outcome, condition=f"outcome == '{outcome}'")
    p.flow("s", "approve", "pay", "book", "enough")
    p.flow("enough", "mark_paid", condition="total >= amount")
    p.flow("enough", "pay")
    p.flow("late", "mark_escalated")
    p.flow("recall", "mark_recalled")
    p.flow("overdue", "mark_unpaid")
    p.flow("collect", "archive", "route")
    return p.validate()


def audit_process():
    """A one-step instance with an engine-given id (i1, i2…) that ends at the next run."""
    p = bpm.Process("audit")
    p.start("s")
    p.end("e")
    p.flow("s", "e")
    return p.validate()


def processes():
    return [order_process(), audit_process()]


def _orders():
    amounts = {"o1": 100, "o2": 50, "o3": 80, "o4": 40, "o5": 30, "o6": 70, "o7": 20, "o8": 90}
    return {k: {"order": k, "amount": a, "total": 0, "payments": []} for k, a in amounts.items()}


ORDERS = _orders()

# (command, args...). "pay" is (key, part, message id, ttl); a repeated message id is a
# producer's redelivery, which must be dropped as a duplicate even across a restart.
SCHEDULE = [
    ("start", "o1"),                                        # 0
    ("start", "o2"),                                        # 1
    ("start", "o3"),                                        # 2
    ("run", "2026-01-01T01:00:00+00:00"),                   # 3
    ("approve", "o1"),                                      # 4
    ("approve", "o2"),                                      # 5
    ("audit",),                                             # 6  -> i1
    ("run", "2026-01-01T02:00:00+00:00"),                   # 7
    ("pay", "o1", 60, "m-8", None),                         # 8  o1: 60 of 100
    ("pay", "o2", 50, "m-9", None),                         # 9  o2 paid
    ("start", "o4"),                                        # 10
    ("pay", "o4", 40, "m-11", "PT30H"),                     # 11 buffered until o4 waits
    ("run", "2026-01-01T06:00:00+00:00"),                   # 12
    ("pay", "o1", 60, "m-8", None),                         # 13 redelivery: dropped
    ("approve", "o4"),                                      # 14 o4 takes m-11: paid
    ("audit",),                                             # 15 -> i2
    ("run", "2026-01-01T12:00:00+00:00"),                   # 16
    ("recall",),                                            # 17 o3 (still at approve) recalled
    ("start", "o5"),                                        # 18
    ("start", "o6"),                                        # 19
    ("run", "2026-01-02T00:30:00+00:00"),                   # 20
    ("approve", "o5"),                                      # 21
    ("run", "2026-01-02T06:00:00+00:00"),                   # 22
    ("pay", "o1", 50, "m-23", None),                        # 23 o1: 110, paid
    ("pay", "o5", 10, "m-24", None),                        # 24 o5: 10 of 30
    ("start", "o7"),                                        # 25
    ("start", "o8"),                                        # 26
    ("audit",),                                             # 27 -> i3
    ("run", "2026-01-02T12:30:00+00:00"),                   # 28 o6 escalated at 12:00
    ("approve", "o6"),                                      # 29 absent: escalated
    ("approve", "o7"),                                      # 30
    ("pay", "o5", 10, "m-24", None),                        # 31 redelivery: dropped
    ("run", "2026-01-03T00:00:00+00:00"),                   # 32
    ("pay", "o7", 25, "m-33", None),                        # 33 o7 paid
    ("approve", "o8"),                                      # 34 in time (late at 03T06:00)
    ("run", "2026-01-04T12:00:00+00:00"),                   # 35 o5 overdue at 04T06:00
    ("pay", "o5", 20, "m-36", None),                        # 36 too late: no subscriber
    ("pay", "o8", 45, "m-37", None),                        # 37 o8: 45 of 90
    ("run", "2026-01-05T00:00:00+00:00"),                   # 38
    ("pay", "o8", 45, "m-37", None),                        # 39 redelivery: dropped
    ("pay", "o8", 45, "m-40", None),                        # 40 o8: 90, paid
    ("run", "2026-01-06T00:00:00+00:00"),                   # 41
    ("run", FINAL),                                         # 42 the archive timers fire
]

# Engine refusals that only a re-run of a command that had already taken effect may meet.
RERUN_REFUSALS = {"start": "already used", "approve": "already", "run": "before the clock"}


def execute(eng, n, command, rerun=False):
    """Run command n; return a JSON-able outcome. An EngineError is accepted only for the
    documented re-run cases, and only when this command may already have taken effect."""
    op, *args = command
    try:
        if op == "start":
            return eng.start(order_process(), ORDERS[args[0]], key=args[0]).id
        if op == "audit":
            if rerun:  # an audit start that took effect is still known
                mine = [i.id for i in eng.instances() if i.data.get("cmd") == n]
                if mine:
                    return mine[0]
            return eng.start(audit_process(), {"cmd": n}).id
        if op == "approve":
            mine = [t for t in eng.tasks() if t.instance == args[0] and t.node == "approve"]
            if not mine:
                return "absent"
            eng.complete_task(mine[0].id, {"approved_cmd": n})
            return mine[0].id
        if op == "pay":
            key, part, mid, ttl = args
            return eng.publish_message("paid", key=key, payload={"part": part, "msg": mid},
                                       message_id=mid, ttl=ttl)
        if op == "recall":
            return eng.broadcast_signal("recall")
        if op == "run":
            eng.run(until=args[0])
            return None
    except bpm.EngineError as exc:
        if rerun and op in RERUN_REFUSALS and RERUN_REFUSALS[op] in str(exc):
            return f"refused: {exc}"
        raise
    raise ValueError(f"unknown command {command!r}")


def summary(eng):
    """Every instance the engine knows: state, the end events its tracks completed, data."""
    instances = {}
    for inst in eng.instances():
        ends = [t.node for t in inst.tracks if t.state == "completed" and t.node in ENDS]
        instances[inst.id] = {"state": inst.state, "ends": ends, "data": inst.data}
    return {"ids": sorted(instances), "instances": instances}


def recovered_view(eng):
    return {"instances": {i.id: i.state for i in eng.instances()}}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(db, first):
    fresh = not os.path.exists(db)
    store = bpm.SQLiteStore(db)
    if fresh:
        eng = bpm.Engine(store=store)
        say(f"fresh {eng.now.isoformat()}")
    else:
        eng = bpm.Engine.recover(store, processes=processes())
        say(f"recovered {eng.now.isoformat()} {json.dumps(recovered_view(eng))}")
    for n in range(first, len(SCHEDULE)):
        if n == len(SCHEDULE) - 1:
            say("gate")
            sys.stdin.readline()
        outcome = execute(eng, n, SCHEDULE[n], rerun=not fresh and n == first)
        say(f"ack {n} {eng.now.isoformat()} {json.dumps(outcome)}")
    say(f"summary {json.dumps(summary(eng), sort_keys=True)}")


if __name__ == "__main__":
    import kill9_child  # the module's own functions, so a process's signature names kill9_child

    kill9_child.main(sys.argv[1], int(sys.argv[2]))
