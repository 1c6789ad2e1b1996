"""Run ``undo_trip`` on a SQLite store and die without any cleanup: between commands
(``between``: the compensation waits on the refund task) or inside one (``inside``: the
second handler's script kills the process after the refund task was completed)."""

import os
import sys

import recovery_processes

import gobpm_nb as bpm

eng = bpm.Engine(store=bpm.SQLiteStore(sys.argv[1]))
inst = eng.start(recovery_processes.undo_trip(), {})
eng.run()
sys.stdout.write(f"{inst.residency} {[t.id for t in eng.tasks()]}\n")
sys.stdout.flush()
if sys.argv[2] == "inside":
    recovery_processes.UNBOOK_CRASH = True
    eng.complete_task(eng.tasks()[0].id, {"refunded": True})
    eng.run()
os._exit(0)
