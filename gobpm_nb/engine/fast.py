"""The engine's fast paths, behind one switch.

A fast path does what the general path does, in fewer steps, for a case that is common and
simple: the timer plans (``plans``: a timer handed on to the next timer or to an end event
without resuming the track's coroutine) and the scheduler's inline next-event rule in
``Kernel.run``. Each must give the same facts, in the same order, with the same state as the
general path; the transparency and plan tests run both ways to show it.

``GOBPM_NB_FAST_PATHS=0`` in the environment turns every fast path off for the engines made
after it is set (an engine reads the switch once, when it is made).
"""

from __future__ import annotations

import os

#: The environment variable that turns the fast paths off ("0") or on (anything else).
SWITCH = "GOBPM_NB_FAST_PATHS"


def enabled() -> bool:
    """Whether an engine made now takes its fast paths."""
    return os.environ.get(SWITCH, "1").strip() != "0"
