"""Processes shared by the crash script and the recovery tests."""

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
