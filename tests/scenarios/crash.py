"""Start instances on a SQLite store, move the clock, then die without any cleanup."""

import os
import sys

from recovery_processes import approval, timer

import gobpm_nb as bpm

eng = bpm.Engine(store=bpm.SQLiteStore(sys.argv[1]))
eng.start(timer("PT2H"), {"n": 1})
eng.start(approval(), {"amount": 5})
eng.advance("PT30M")
sys.stdout.write(f"{len(eng.holders())} holds, now {eng.now.isoformat()}\n")
sys.stdout.flush()
os._exit(0)
