"""Processes shared by the crash scripts and the recovery tests."""

import os

import gobpm_nb as bpm


def timer(duration):
    p = bpm.Process("timer")
    p.start("s")
    p.timer_catch("wait", duration=duration)
    p.end("e")
    p.flow("s", "wait", "e")
    return p


def approval():
    p = bpm.Process("approval")
    p.start("start")
    p.user_task("approve", assignee="alice")
    p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
    p.end("done")
    p.end("escalated")
    p.flow("start", "approve", "done")
    p.flow("late", "escalated")
    return p.validate()


#: The count at which ``count`` kills its process (the crash script sets it; None: never).
CRASH_AT = None


def count(d):
    n = d["n"] + 1
    if n == CRASH_AT:
        os._exit(0)  # dies inside the command that runs this attempt
    return {"n": n}


def retries():
    """Attempts in a loop until one is checked ok (at most five): each counts ``n`` and
    waits on the user task ``check``."""
    p = bpm.Process("retries")
    p.start("s")
    with p.subprocess("attempt") as sp:
        sp.flow(sp.start("a"), sp.script_task("count", fn=count), sp.user_task("check"),
                sp.end("z"))
    p.loop("attempt", condition="not ok", maximum=5)
    p.end("e")
    p.flow("s", "attempt", "e")
    return p.validate()


UNBOOK_CRASH = False


def unbook(d):
    if UNBOOK_CRASH:
        os._exit(0)  # dies inside the command that runs the second handler
    return {"booked": False}


def undo_trip():
    """Book and pay, then compensate both: ``refund`` (a user task) undoes ``pay`` first,
    then the script ``unbook`` undoes ``book``."""
    p = bpm.Process("undo_trip")
    p.start("s")
    p.script_task("book", fn=lambda d: {"booked": True})
    p.compensation_boundary("b_book", attached_to="book", handler="unbook")
    p.script_task("unbook", fn=unbook, for_compensation=True)
    p.script_task("pay", fn=lambda d: {"paid": True})
    p.compensation_boundary("b_pay", attached_to="pay", handler="refund")
    p.user_task("refund", for_compensation=True)
    p.compensation_throw("undo")
    p.end("e")
    p.flow("s", "book", "pay", "undo", "e")
    return p
