"""Run the ``retries`` loop on a SQLite store and die without any cleanup: between commands
(``between``: the second attempt waits on its task) or inside one (``inside``: the second
attempt's script kills the process after the first attempt's task was completed)."""

import os
import sys

import recovery_processes

import gobpm_nb as bpm

eng = bpm.Engine(store=bpm.SQLiteStore(sys.argv[1]))
inst = eng.start(recovery_processes.retries(), {"n": 0, "ok": False})
eng.run()
if sys.argv[2] == "inside":
    recovery_processes.CRASH_AT = 2
eng.complete_task(eng.tasks()[0].id, {"ok": False})
eng.run()
sys.stdout.write(f"{inst.residency} {[t.id for t in eng.tasks()]}\n")
sys.stdout.flush()
os._exit(0)
