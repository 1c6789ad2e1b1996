"""The engine's words, one spelling each.

Holds are *armed*, *released* (withdrawn or fired) and, while a trigger waits for its
instance to come back, *waking*. Instances *dehydrate* and *hydrate*; they are never
"released". A track is a thread of control; a wait is what a parked track waits for.
"""

from __future__ import annotations

from typing import Final

#: Track states, in lifecycle order. A track in one of TERMINAL never runs again.
TRACK_STATES: Final = ("ready", "running", "waiting", "dehydrated", "merged", "completed",
                       "withdrawn", "cancelled", "failed")
TERMINAL: Final = frozenset({"dehydrated", "merged", "completed", "withdrawn", "cancelled",
                             "failed"})
RUNNING: Final = "running"
WAITING: Final = "waiting"
#: States a track may have in a checkpoint (it is live there).
LIVE: Final = frozenset({"ready", "running", "waiting", "dehydrated"})

#: How a track came to be.
#: (scope: the first track inside a subprocess; event: the track that runs an event
#: subprocess its start's trigger opened; many: an inner instance of a multi-instance
#: activity)
ORIGINS: Final = frozenset({"start", "fork", "join", "continuation", "boundary", "scope",
                            "event", "many"})

#: What an engine holder keeps: the kinds of hold.
HOLD_KINDS: Final = ("timer", "message", "signal", "task", "call")
#: Where a held wait sits: on the node a track is parked on, or on a boundary over it.
NODE: Final = "node"
BOUNDARY: Final = "boundary"
#: A hold's state: armed and waiting for its trigger, or fired with its wake pending.
HELD: Final = "held"
WAKING: Final = "waking"

#: Wait kinds: what a parked track may wait for.
WAIT_KINDS: Final = ("timer", "message", "signal", "task", "job", "conditional", "join",
                     "gateway", "scope", "many", "call")
#: The id of the process's own scope where event subprocess starts are armed (no track runs
#: the process itself; a hold there names this as its track).
ROOT: Final = ""

#: Residency of an instance.
RESIDENT: Final = "resident"
DEHYDRATED: Final = "dehydrated"
FINISHED: Final = "finished"

#: Instance states.
ACTIVE: Final = "active"
INSTANCE_STATES: Final = ("active", "completed", "terminated", "failed")

#: Kinds of scheduler event ``step()`` reports.
EVENT_KINDS: Final = ("track", "loop", "timer", "expiry", "retry")
