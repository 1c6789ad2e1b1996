"""The engine's words, one spelling each.

The engine, the observe layer, the views and the widgets' front end (through the contract
``gobpm_nb/ui/contract.py`` writes for it) use these constants; none spells these words
itself. This module imports nothing, so any layer may use it. The README's glossary says
what each word means.

Holds are *armed*, *released* (withdrawn or fired) and, while a trigger waits for its
instance to come back, *waking*. Instances *dehydrate* (their checkpoint goes to the store
and every coroutine ends) and *hydrate*; "released" is said of holds and waits, never of an
instance. A track is a thread of control; a wait is what a parked track waits for.
"""

from __future__ import annotations

from typing import Final

#: Track states. ``DEHYDRATED`` is also a residency (below): an instance is dehydrated when
#: its waiting tracks are.
READY: Final = "ready"
RUNNING: Final = "running"
WAITING: Final = "waiting"
DEHYDRATED: Final = "dehydrated"
MERGED: Final = "merged"
COMPLETED: Final = "completed"
WITHDRAWN: Final = "withdrawn"
CANCELLED: Final = "cancelled"
FAILED: Final = "failed"
#: Track states, in lifecycle order. A track in one of TERMINAL never runs again.
TRACK_STATES: Final = (READY, RUNNING, WAITING, DEHYDRATED, MERGED, COMPLETED, WITHDRAWN,
                       CANCELLED, FAILED)
TERMINAL: Final = frozenset({DEHYDRATED, MERGED, COMPLETED, WITHDRAWN, CANCELLED, FAILED})
#: States of a track that may still stand on a node (a token; a checkpoint keeps only these),
#: in lifecycle order.
LIVE: Final = (READY, RUNNING, WAITING, DEHYDRATED)

#: How a track came to be.
#: (scope: the first track inside a subprocess; event: the track that runs an event
#: subprocess its start's trigger opened; many: an inner instance of a multi-instance
#: activity; loop: one run of a standard loop; compensation: a compensation handler's run)
ORIGINS: Final = frozenset({"start", "fork", "join", "continuation", "boundary", "scope",
                            "event", "many", "loop", "compensation"})

#: What an engine holder keeps: the kinds of hold.
#: (a decision: a gateway where a person chooses the flow, design-review mode)
HOLD_KINDS: Final = ("timer", "message", "signal", "task", "call", "decision")
#: Where a held wait sits: on the node a track is parked on, or on a boundary over it.
NODE: Final = "node"
BOUNDARY: Final = "boundary"
#: A hold's state: armed and waiting for its trigger, or fired with its wake pending.
HELD: Final = "held"
WAKING: Final = "waking"
#: The id of the process's own scope where event subprocess starts are armed (no track runs
#: the process itself; a hold there names this as its track).
ROOT: Final = ""

#: Residency of an instance: in memory with its coroutines; in the store, none left (its
#: holds keep its waits); ended.
RESIDENT: Final = "resident"
FINISHED: Final = "finished"
RESIDENCIES: Final = (RESIDENT, DEHYDRATED, FINISHED)

#: The state of an instance that has not ended.
ACTIVE: Final = "active"
