"""Random processes for the transparency property test (tests/test_transparency.py).

A drawn process is a tree of plain tuples (so Hypothesis shrinks it towards fewer and
simpler blocks, and prints it readably); ``build`` turns it into a validated ``Process`` and
the processes its call activities call, and ``describe`` prints a built process as an
indented list of elements and flows, for a failure message.

What it draws, by scope (the process, a subprocess, an event subprocess, a called process):

- waits: timer, message and signal catches, receive tasks, user tasks (with a timer, cycle,
  message or signal boundary, interrupting or not), conditional catches;
- work and throws: script tasks (adding to ``total``; some with a compensation handler, a
  script or a user task), none throws (milestones), escalation, compensation (waiting for
  the handlers or not), signal and message throws, a throw of a message and a signal
  (several definitions, in either order, sending ``total``), link throw/catch pairs, an
  exclusive split that ends the path by an error end, an escalation end, a terminate end, a
  message end (sending ``total``), a signal end or an end throwing a message and a signal
  when ``total`` is high enough;
- gateways: parallel, exclusive, inclusive (conditions over ``total``), event-based races,
  complex (split on conditions over ``total``, its first branch always taken or the
  default; join on an activation condition over ``arrived`` and ``total``, so the tokens
  arriving after it fired are taken in by its reset);
- subprocesses, nested (up to ``DEPTH`` scopes), with boundaries (timer, cycle, message,
  signal, error, escalation; the boundary's path may wait before it ends) and event
  subprocesses (timer, message, signal, conditional (over ``total``), error or escalation
  start; interrupting or not);
  the process and called processes have event subprocesses too;
- multi-instance user, receive and script tasks, subprocesses and call activities (parallel
  or sequential, cardinality 1-3, with or without a completion condition);
- standard loops on the same tasks and subprocesses (tested before or after, a condition
  over ``loopCounter`` or ``total``, which the body's scripts may raise, and a maximum of
  1-3 runs, so every loop ends);
- call activities (all data in, all data out) of a called process drawn the same way, with
  timer, message, signal and error boundaries;
- a "pair": a boundary and a catch on one trigger in two parallel branches, which fire at
  one instant;
- events with several definitions (two or three of a timer, a message and a signal): catches
  (multiple and parallel multiple), user task boundaries and event subprocess starts;
- a script whose own flows split: a condition over ``total``, else its default flow;
- drawn after the rest of a process (so the processes drawn before keep their shapes), put in
  at a drawn place of its chain: ad-hoc subprocesses (pieces of quiet blocks or compensation
  ends; a completion condition over ``total`` or none; sequential or parallel; a collection
  of some pieces, or none: the schedule's ``activate`` is a person's ``Engine.activate``;
  a boundary), compensation ends (waiting for the handlers or not);
- how the process starts: a none start (``Engine.start``) or, one time in three, an
  event-based gateway that creates instances (exclusive or parallel; its first arm a message,
  which the test publishes with the instance's data as payload to start it; one or two more
  message or signal arms).

Never drawn: a loop of flows (every flow goes forward; a link goes forward), a call of a
process by itself, and a throw or a throwing end inside an event subprocess or on a
boundary's path (a non-interrupting handler of signal ``sa`` that throws ``sa`` would start
itself forever): those run only quiet blocks. A process's own conditional start is not
drawn (event subprocesses' are).
"""

from __future__ import annotations

import os

from building import Drawn as Drawn
from building import adder as adder
from building import begin as begin
from building import build as build
from building import setter as setter
from describing import describe as describe
from hypothesis import strategies as st

DURATIONS = ["PT10M", "PT2H", "P1D"]
CYCLES = ["R2/PT2H", "R3/PT20M"]
MESSAGES = ["ma", "mb"]
SIGNALS = ["sa", "sb"]
ERRORS = ["ea", "eb"]
ESCALATIONS = ["xa", "xb"]
ACTIVATIONS = ["arrived >= 1", "arrived >= 2", "arrived >= 1 and total >= 2"]
DEPTH = int(os.environ.get("TRANSPARENCY_DEPTH", "2"))  # scopes below the process

timer = st.tuples(st.just("timer"), st.sampled_from(DURATIONS))
message = st.tuples(st.just("message"), st.sampled_from(MESSAGES))
signal = st.tuples(st.just("signal"), st.sampled_from(SIGNALS))
# the definitions of a multiple event: two or three, one of each kind at most
several = st.lists(st.one_of(timer, message, signal), min_size=2, max_size=3,
                   unique_by=lambda a: a[0])
# a boundary: (kind, what, interrupting)
task_guard = st.one_of(
    st.tuples(st.just("multi"), several, st.booleans()),
    st.tuples(st.just("timer"), st.sampled_from(DURATIONS), st.booleans()),
    st.tuples(st.just("cycle"), st.sampled_from(CYCLES), st.just(False)),
    st.tuples(st.just("message"), st.sampled_from(MESSAGES), st.booleans()),
    st.tuples(st.just("signal"), st.sampled_from(SIGNALS), st.booleans()))
error_guard = st.tuples(st.just("error"), st.sampled_from([None, *ERRORS]), st.just(True))
escalation_guard = st.tuples(st.just("escalation"), st.sampled_from([None, *ESCALATIONS]),
                             st.booleans())

# Simple blocks that neither throw nor jump: what handlers and boundary paths run.
quiet = st.one_of(
    timer, message, signal,
    st.tuples(st.just("receive"), st.sampled_from(MESSAGES)),
    st.tuples(st.just("script"), st.integers(1, 3)),
    st.tuples(st.just("milestone")),
    st.tuples(st.just("cond"), st.integers(1, 4)),
    st.tuples(st.just("any"), several), st.tuples(st.just("all"), several),
    st.tuples(st.just("undoable"), st.integers(1, 3), st.booleans()),
    st.tuples(st.just("user"), st.one_of(st.none(), task_guard)))
# a throw or end with several definitions: (message, signal, the signal thrown first)
both = st.tuples(st.sampled_from(MESSAGES), st.sampled_from(SIGNALS), st.booleans())
loud = st.one_of(
    st.tuples(st.just("escalate"), st.sampled_from(ESCALATIONS)),
    st.tuples(st.just("send"), st.sampled_from(["signal"]), st.sampled_from(SIGNALS)),
    st.tuples(st.just("send"), st.sampled_from(["message"]), st.sampled_from(MESSAGES)),
    st.tuples(st.just("link")), st.tuples(st.just("compensate")),
    st.tuples(st.just("raise"), st.sampled_from(["error"]), st.sampled_from(ERRORS),
              st.integers(0, 4)),
    st.tuples(st.just("raise"), st.sampled_from(["escalation"]),
              st.sampled_from(ESCALATIONS), st.integers(0, 4)),
    st.tuples(st.just("raise"), st.just("terminate"), st.none(), st.integers(0, 4)),
    st.tuples(st.just("raise"), st.just("message"), st.sampled_from(MESSAGES),
              st.integers(0, 4)),
    st.tuples(st.just("raise"), st.just("signal"), st.sampled_from(SIGNALS),
              st.integers(0, 4)),
    # drawn after the others, so that the earlier draws keep their shapes
    st.tuples(st.just("send"), st.just("multiple"), both),
    st.tuples(st.just("raise"), st.just("multiple"), both, st.integers(0, 4)),
    st.tuples(st.just("compensate"), st.just("no wait")))
simple = st.one_of(quiet, loud)
path = st.lists(quiet, max_size=2)  # a boundary's path, before its end
event = st.one_of(  # an event subprocess: (start, interrupting, what it runs)
    st.tuples(st.just("event"), st.one_of(timer, message, signal), st.booleans(), path),
    st.tuples(st.just("event"), st.tuples(st.just("multi"), several), st.booleans(), path),
    st.tuples(st.just("event"), st.tuples(st.just("error"), st.sampled_from([None, *ERRORS])),
              st.just(True), path),
    st.tuples(st.just("event"), st.tuples(st.just("escalation"),
                                          st.sampled_from([None, *ESCALATIONS])),
              st.booleans(), path),
    st.tuples(st.just("event"), st.tuples(st.just("cond"), st.integers(1, 4)),
              st.booleans(), path))
events = st.lists(event, max_size=2)
# Two triggers for one dehydrated instance at one instant: a parallel block whose branches are
# a user task with a boundary on X and a catch of the same X followed by two scripts, the
# second setting x = 1, which an exclusive gateway behind the boundary reads.
# ("pair", (kind, X), interrupting, catch branch first)
pair = st.tuples(st.just("pair"), st.one_of(signal, message, timer), st.booleans(),
                 st.booleans())


# An ad-hoc subprocess: (pieces, each a chain of quiet blocks whose first node is activatable;
# its completion condition ``total >= n`` or none; sequential; the pieces its collection
# activates on entry (indices) or none: a person activates them (``Engine.activate``); its
# boundaries)
adhoc = st.tuples(st.just("adhoc"), st.lists(st.lists(
                      st.one_of(quiet, st.tuples(st.just("raise"), st.just("compensate"),
                                                 st.booleans(), st.integers(0, 4))),
                      min_size=1, max_size=2), min_size=1, max_size=3),
                  st.one_of(st.none(), st.integers(1, 4)), st.booleans(),
                  st.one_of(st.none(), st.lists(st.integers(0, 2), max_size=2)),
                  st.lists(st.tuples(task_guard, path), max_size=1))


@st.composite
def opening(draw):
    """An event-based gateway that creates instances, as the process's start: ("opens",
    parallel, the message of its first arm (what starts an instance: ``building.begin``),
    its other arms (messages and signals, one or two))."""
    first = draw(st.sampled_from(MESSAGES))
    others = [("message", m) for m in MESSAGES if m != first] + \
        [("signal", s) for s in SIGNALS]
    return ("opens", draw(st.booleans()), first,
            draw(st.lists(st.sampled_from(others), min_size=1, max_size=2, unique=True)))


def blocks(depth: int, min_size: int = 1, max_size: int = 3):
    """A chain of blocks; ``depth`` scopes (subprocesses, calls) may still nest below."""
    return st.lists(block(depth), min_size=min_size, max_size=max_size)


def block(depth: int):
    if depth <= 0:
        return st.one_of(simple, pair)
    inner = blocks(depth - 1)
    branch = blocks(depth - 1, max_size=2)
    sub = st.tuples(st.just("sub"), inner,
                    st.lists(st.tuples(st.one_of(task_guard, error_guard, escalation_guard),
                                       path), max_size=2),
                    events)
    call = st.tuples(st.just("call"), st.tuples(inner, events),
                     st.lists(st.tuples(st.one_of(task_guard, error_guard), path), max_size=2))
    many_body = st.one_of(
        st.tuples(st.just("user"), st.none()),
        st.tuples(st.just("receive"), st.sampled_from(MESSAGES)),
        st.tuples(st.just("script"), st.integers(1, 3)),
        sub)
    many = st.tuples(st.just("many"), st.one_of(many_body, call), st.booleans(),
                     st.integers(1, 3), st.booleans())
    # a standard loop: (body, test_before, condition over loopCounter or total, maximum)
    loop = st.tuples(st.just("loop"), many_body, st.booleans(),
                     st.sampled_from(["loopCounter < 2", "loopCounter < 3", "total < 3"]),
                     st.integers(1, 3))
    return st.one_of(
        simple, pair, sub, many, many,  # many instances twice: they have the most to find
        loop,
        call,
        st.tuples(st.just("parallel"), st.lists(branch, min_size=2, max_size=3)),
        st.tuples(st.just("or"), st.lists(st.tuples(st.integers(0, 4), branch),
                                          min_size=2, max_size=3)),
        st.tuples(st.just("xor"), st.integers(0, 4), st.tuples(branch, branch)),
        st.tuples(st.just("fallback"), st.integers(0, 4), st.tuples(branch, branch)),
        st.tuples(st.just("race"), st.lists(st.one_of(timer, message, signal), min_size=2,
                                            max_size=3, unique_by=lambda a: a[1])),
        # (activation of the join, the first branch is the split's default, branches)
        st.tuples(st.just("complex"), st.sampled_from(ACTIVATIONS), st.booleans(),
                  st.lists(st.tuples(st.integers(0, 4), branch), min_size=2, max_size=3)),
    )


# Drawn after the rest of a process, so that the processes drawn before these were added keep
# their shapes: an ad-hoc subprocess or a compensation end (waiting for the handlers or not),
# put in at a drawn place of the process's chain (or of an ad-hoc subprocess's first piece).
later = st.one_of(
    adhoc, adhoc,
    st.tuples(st.just("raise"), st.just("compensate"), st.booleans(), st.integers(0, 4)))


@st.composite
def whole(draw):
    """A whole process: (blocks, event subprocesses of the process, how it starts: None
    for a none start (``Engine.start``), else an event-based gateway that creates
    instances)."""
    items = draw(blocks(DEPTH, max_size=4))
    handlers = draw(events)
    for extra in draw(st.lists(later, max_size=2)):
        items.insert(draw(st.integers(0, len(items))), extra)
    return items, handlers, draw(st.one_of(st.none(), st.none(), opening()))


processes = whole()


def apart(tree):
    """``tree`` with instances that never touch each other: each call activity becomes a
    subprocess running what it called (with its boundaries and event subprocesses), each
    message or signal throw (or both) a script, each message or signal end (or both) a plain
    end. For a failing store, whose retried wakes delay one instance by seconds: another
    instance's timer at the same instant may then go first."""
    if isinstance(tree, list):
        return [apart(t) for t in tree]
    if not isinstance(tree, tuple) or not tree:
        return tree
    if tree[0] == "call":
        (inside, handlers), guards = tree[1], tree[2]
        return ("sub", apart(inside), apart(guards), apart(handlers))
    if tree[0] == "send":
        return ("script", 1)
    if tree[0] == "raise" and tree[1] in ("message", "signal", "multiple"):
        return ("raise", "plain", None, tree[3])
    return tuple(apart(t) for t in tree)
