"""An engine's state opened on a store: its options read and checked once, its core, fact
log and tape made (``Engine()`` and ``Engine.recover`` open one; a rewind rebuilds one
aside from a state it has)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TypedDict

from ..engine.core import Core
from ..engine.durability.damage import reading
from ..engine.durability.journal import Store
from ..errors import EngineError, shown
from ..kernel import to_us
from ..observe import FactLog
from ..persist import codec
from ..when import fixed_span, instant
from .state import EngineState
from .tape import Tape, TapedStore

#: Where a new engine's clock starts when it is not told.
DEFAULT_START = "2026-01-01T00:00:00Z"


class Options(TypedDict, total=False):
    """The engine's options (``Engine``'s keyword arguments; ``Engine.recover`` takes any)."""

    min_dehydrate_wait: str | timedelta
    wake_retry_backoff: str | timedelta
    dehydrate: bool
    keep_facts: int | None
    max_steps_without_wait: int
    max_call_depth: int
    seed: int
    keep_history: bool


#: The engine's options, and what ``Engine.recover`` takes when one is not given.
DEFAULTS: Options = {"min_dehydrate_wait": "PT1H", "wake_retry_backoff": "PT15S",
                     "dehydrate": True, "keep_facts": 100_000,
                     "max_steps_without_wait": 10_000, "max_call_depth": 100, "seed": 0,
                     "keep_history": True}


#: The most facts an engine may be asked to keep: more is every fact (``None``)
MOST_FACTS = 10 ** 12


def with_stored_seed(meta: Mapping[str, str], given: Options) -> Options:
    """``given`` with the seed the store recorded (a recovered engine draws its decisions as
    the one that wrote the store did): a different seed given is an EngineError."""
    if "seed" not in meta:
        return given
    with reading("seed"):
        stored = int(meta["seed"])
    if "seed" in given and given["seed"] != stored:
        raise EngineError(f"the store was written by an engine with seed {stored}, not "
                          f"{given['seed']!r}: recover with seed={stored} or no seed")
    return given | {"seed": stored}


def open_state(store: Store, start: str | datetime, given: Options) -> EngineState:
    """A new engine's state on ``store``, its clock at ``start``, with the ``given`` options
    (the others as ``DEFAULTS``; each checked here, or by the core)."""
    options = DEFAULTS | given
    begin = instant(start, "start")
    min_wait = fixed_span(options["min_dehydrate_wait"], "min_dehydrate_wait")
    backoff = fixed_span(options["wake_retry_backoff"], "wake_retry_backoff")
    if backoff <= timedelta(0):
        raise EngineError(f"wake_retry_backoff {options['wake_retry_backoff']!r} must be "
                          "longer than zero")
    keep_facts = options["keep_facts"]
    if keep_facts is not None and (isinstance(keep_facts, bool) or not isinstance(
            keep_facts, int) or not 0 <= keep_facts <= MOST_FACTS):
        raise EngineError(f"keep_facts must be None (every fact) or a count from 0 to "
                          f"{MOST_FACTS:,}, got {shown(keep_facts)}")
    for name in ("dehydrate", "keep_history"):  # "no" or "False" would have meant yes
        if not isinstance(options[name], bool):
            raise EngineError(f"{name} must be True or False, got {shown(options[name])}")
    facts = FactLog(keep_facts)
    tape = Tape()  # what user callables answer and which store calls fail (a replay's)
    core = Core(now=to_us(begin), facts=facts, dehydrate=options["dehydrate"],
                min_dehydrate_wait=min_wait // timedelta(microseconds=1),
                wake_retry_backoff=backoff // timedelta(microseconds=1),
                store=TapedStore(store, tape), tape=tape, codec=codec,
                max_steps_without_wait=options["max_steps_without_wait"],
                max_call_depth=options["max_call_depth"], seed=options["seed"])
    state = EngineState(core, facts, store, keep_facts)
    state.history.wanted = options["keep_history"]
    return state
