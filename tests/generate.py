"""Random processes for the transparency property test (tests/test_transparency.py).

A drawn process is a tree of plain tuples (so Hypothesis shrinks it towards fewer and
simpler blocks, and prints it readably); ``build`` turns it into a validated ``Process`` and
the processes its call activities call, and ``describe`` prints a built process as an
indented list of elements and flows, for a failure message.

What it draws, by scope (the process, a subprocess, an event subprocess, a called process):

- waits: timer, message and signal catches, receive tasks, user tasks (with a timer, cycle,
  message or signal boundary, interrupting or not), conditional catches;
- work and throws: script tasks (adding to ``total``; some with a compensation handler, a
  script or a user task), none throws (milestones), escalation, compensation, signal and
  message throws, link throw/catch pairs, an exclusive split that ends the path by an error
  end, an escalation end, a terminate end, a message end (sending ``total``) or a signal end
  when ``total`` is high enough;
- gateways: parallel, exclusive, inclusive (conditions over ``total``), event-based races;
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
- a script whose own flows split: a condition over ``total``, else its default flow.

Never drawn: a loop of flows (every flow goes forward; a link goes forward), a call of a
process by itself, and a throw or a throwing end inside an event subprocess or on a
boundary's path (a non-interrupting handler of signal ``sa`` that throws ``sa`` would start
itself forever): those run only quiet blocks. Conditional start events do not exist.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from describing import describe as describe
from hypothesis import strategies as st

import gobpm_nb as bpm

DURATIONS = ["PT10M", "PT2H", "P1D"]
CYCLES = ["R2/PT2H", "R3/PT20M"]
MESSAGES = ["ma", "mb"]
SIGNALS = ["sa", "sb"]
ERRORS = ["ea", "eb"]
ESCALATIONS = ["xa", "xb"]
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
              st.integers(0, 4)))
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
    )


#: A whole process: (blocks, event subprocesses of the process).
processes = st.tuples(blocks(DEPTH, max_size=4), events)


def apart(tree):
    """``tree`` with instances that never touch each other: each call activity becomes a
    subprocess running what it called (with its boundaries and event subprocesses), each
    message or signal throw a script, each message or signal end a plain end. For a failing
    store, whose retried wakes delay one
    instance by seconds: another instance's timer at the same instant may then go first."""
    if isinstance(tree, list):
        return [apart(t) for t in tree]
    if not isinstance(tree, tuple) or not tree:
        return tree
    if tree[0] == "call":
        (inside, handlers), guards = tree[1], tree[2]
        return ("sub", apart(inside), apart(guards), apart(handlers))
    if tree[0] == "send":
        return ("script", 1)
    if tree[0] == "raise" and tree[1] in ("message", "signal"):
        return ("raise", "plain", None, tree[3])
    return tuple(apart(t) for t in tree)


def defs(drawn) -> list[dict[str, str]]:
    """The builder's definitions of a multiple event drawn as ``several``."""
    return [{"timer": what} if kind == "timer" else {"message": what, "key": "k"}
            if kind == "message" else {"signal": what} for kind, what in drawn]


def adder(field: str, amount: int):
    def script(data):
        return {field: data.get(field, 0) + amount}
    script.__name__ = f"{field}+={amount}"
    return script


def setter(field: str, value: int):
    def script(data):
        return {field: value}
    script.__name__ = f"{field}={value}"
    return script


class Builder:
    """Builds a valid process (``self.p``) from a drawn ``(blocks, events)``; the processes
    its call activities call are in ``self.called`` (callees before callers)."""

    def __init__(self, tree, pid: str = "random", counter: list[int] | None = None,
                 once: dict[str, set[str]] | None = None):
        self.p = bpm.Process(pid)
        self.n = 0
        self.counter = counter if counter is not None else [0]  # names of called processes
        self.called: list[bpm.Process] = []
        #: By process: the nodes an instance leaves at most once (no loop is drawn): each
        #: block's first and last node, outside multi-instance bodies, event subprocesses
        #: and the paths of non-interrupting boundaries (what may run more than once).
        self.once = once if once is not None else {}
        self.once[pid] = set()
        self.repeat = 0  # > 0 while building what may run more than once
        self.many: set[str] = set()  # the multi-instance nodes
        self.scope(self.p, *tree)

    def name(self, kind: str) -> str:
        self.n += 1
        return f"{kind}{self.n}"

    def scope(self, sc, items, handlers) -> None:
        """A start, ``items`` in a chain, an end, and the event subprocesses ``handlers``."""
        prev = sc.start(self.name("start"))
        if items:
            first, last = self.chain(sc, items)
            sc.flow(prev, first)
            prev = last
        sc.flow(prev, sc.end(self.name("end")))
        for h in handlers:
            self.event_subprocess(sc, *h[1:])

    def chain(self, sc, items):
        ends = [self.block(sc, i) for i in items]
        if not self.repeat:
            self.once[self.p.id].update(node for pair in ends for node in pair
                                        if node not in self.many)  # left once per body
        for (_, a), (b, _) in zip(ends, ends[1:], strict=False):
            sc.flow(a, b)
        return ends[0][0], ends[-1][1]

    def block(self, sc, b):
        kind = b[0]
        simple = self.simple(sc, b)
        if simple is not None:
            return simple, simple
        if kind == "sub":
            node = self.subprocess(sc, *b[1:])
            return node, node
        if kind == "many":
            self.repeat += 1
            node = self.block(sc, b[1])[0]
            self.repeat -= 1
            self.many.add(node)
            sc.multi_instance(node, sequential=b[2], cardinality=str(b[3]),
                              completion="numberOfCompletedInstances >= 1" if b[4] else None)
            return node, node
        if kind == "loop":
            self.repeat += 1
            node = self.block(sc, b[1])[0]
            self.repeat -= 1
            self.many.add(node)  # left once per run
            sc.loop(node, test_before=b[2], condition=b[3], maximum=b[4])
            return node, node
        if kind == "call":
            return self.call(sc, *b[1:])
        if kind in ("parallel", "or", "xor"):
            return self.split(sc, b)
        if kind == "fallback":
            return self.fallback(sc, *b[1:])
        if kind == "race":
            gw, merge = sc.event_gateway(self.name("race")), sc.exclusive_gateway(
                self.name("after"))
            for arm in b[1]:
                sc.flow(gw, self.simple(sc, arm), merge)
            return gw, merge
        if kind == "pair":
            return self.pair(sc, *b[1:])
        if kind == "link":
            link = self.name("L")
            return sc.link_throw(self.name("goto"), link=link), sc.link_catch(
                self.name("label"), link=link)
        assert kind == "raise", b
        return self.raiser(sc, *b[1:])

    def simple(self, sc, b):
        """The one node of a one-node block, or None for any other block."""
        kind = b[0]
        if kind == "timer":
            return sc.timer_catch(self.name("timer"), duration=b[1])
        if kind == "message":
            return sc.message_catch(self.name("msg"), message=b[1], key="k")
        if kind == "signal":
            return sc.signal_catch(self.name("sig"), signal=b[1])
        if kind == "receive":
            return sc.receive_task(self.name("recv"), message=b[1], key="k")
        if kind == "cond":
            return sc.conditional_catch(self.name("cond"), condition=f"total >= {b[1]}")
        if kind in ("any", "all"):
            return sc.catch(self.name(kind), **{kind + "_of": defs(b[1])})
        if kind == "script":
            return sc.script_task(self.name("script"), fn=adder("total", b[1]))
        if kind == "milestone":
            return sc.throw(self.name("milestone"))
        if kind == "undoable":  # its handler: a user task, or a script counting ``undone``
            node = sc.script_task(self.name("booked"), fn=adder("total", b[1]))
            undo = self.name("undo")
            if b[2]:
                sc.user_task(undo, for_compensation=True)
            else:
                sc.script_task(undo, fn=adder("undone", 1), for_compensation=True)
            sc.compensation_boundary(self.name("comp"), attached_to=node, handler=undo)
            return node
        if kind == "compensate":
            return sc.compensation_throw(self.name("compensate"))
        if kind == "escalate":
            return sc.escalation_throw(self.name("escalate"), escalation=b[1])
        if kind == "send" and b[1] == "signal":
            return sc.signal_throw(self.name("throw"), signal=b[2])
        if kind == "send":
            return sc.message_throw(self.name("send"), message=b[2], key="k")
        if kind == "user":
            node = sc.user_task(self.name("user"))
            if b[1] is not None:
                sc.flow(self.boundary(sc, node, *b[1]), sc.end(self.name("bend")))
            return node
        return None

    def split(self, sc, b):
        """A parallel, inclusive or exclusive split of branches and its join."""
        kind = b[0]
        make = {"parallel": sc.parallel_gateway, "or": sc.inclusive_gateway,
                "xor": sc.exclusive_gateway}[kind]
        split, join = make(self.name(kind)), make(self.name(kind + "join"))
        if kind == "parallel":
            arms = [(None, br) for br in b[1]]
        elif kind == "or":
            arms = [(f"total >= {t}" if n else None, br) for n, (t, br) in enumerate(b[1])]
        else:
            arms = [(f"total >= {b[1]}", b[2][0]), (None, b[2][1])]
        for condition, br in arms:
            first, last = self.chain(sc, br)
            sc.flow(split, first, condition=condition)
            sc.flow(last, join)
        return split, join

    def fallback(self, sc, threshold, branches):
        """A script whose own flows split: the first branch when ``total >= threshold``,
        else the second by its default flow; an exclusive gateway merges them."""
        node = sc.script_task(self.name("script"), fn=adder("total", 1))
        merge = sc.exclusive_gateway(self.name("merged"))
        (a, a_end), (b, b_end) = (self.chain(sc, br) for br in branches)
        sc.flow(node, a, condition=f"total >= {threshold}")
        sc.flow(node, b)
        sc.default_flow(node, b)
        sc.flow(a_end, merge)
        sc.flow(b_end, merge)
        return node, merge

    def raiser(self, sc, what, code, threshold):
        """An exclusive split that ends the path by an error, escalation, terminate, message
        (sending ``total``), signal or plain end when ``total >= threshold``, and goes on
        otherwise."""
        split, on = sc.exclusive_gateway(self.name("if")), sc.exclusive_gateway(
            self.name("else"))
        sends = {"message": {"message": code, "key": "k", "payload": ["total"]},
                 "signal": {"signal": code}}.get(what, {})
        end = sc.end(self.name(what), terminate=what == "terminate",
                     error=code if what == "error" else None,
                     escalation=code if what == "escalation" else None, **sends)
        sc.flow(split, end, condition=f"total >= {threshold}")
        sc.flow(split, on)
        return split, on

    def boundary(self, sc, node, kind, what, interrupting):
        name = self.name("b" + kind)
        if kind == "multi":
            return sc.boundary(name, attached_to=node, any_of=defs(what),
                               interrupting=interrupting)
        if kind in ("timer", "cycle"):
            when = {"duration": what} if kind == "timer" else {"cycle": what}
            return sc.timer_boundary(name, attached_to=node, interrupting=interrupting, **when)
        if kind == "message":
            return sc.message_boundary(name, attached_to=node, message=what, key="k",
                                       interrupting=interrupting)
        if kind == "signal":
            return sc.signal_boundary(name, attached_to=node, signal=what,
                                      interrupting=interrupting)
        if kind == "error":
            return sc.error_boundary(name, attached_to=node, error=what)
        return sc.escalation_boundary(name, attached_to=node, escalation=what,
                                      interrupting=interrupting)

    def guard(self, sc, node, guards) -> None:
        """Boundaries on ``node``, each on a path of quiet blocks to an end."""
        for spec, steps in guards:
            repeat = not spec[2]  # a non-interrupting boundary may fire again
            self.repeat += repeat
            prev = self.boundary(sc, node, *spec)
            if not self.repeat:
                self.once[self.p.id].add(prev)
            if steps:
                first, last = self.chain(sc, steps)
                sc.flow(prev, first)
                prev = last
            sc.flow(prev, sc.end(self.name("bend")))
            self.repeat -= repeat

    def subprocess(self, sc, inside, guards, handlers):
        node = sc.subprocess(self.name("sub"))
        self.scope(node, inside, handlers)
        self.guard(sc, node, guards)
        return node

    def event_subprocess(self, sc, start, interrupting, steps) -> None:
        """An event subprocess of ``sc`` that adds 1000 to the total, then runs ``steps``."""
        self.repeat += 1
        ev = sc.event_subprocess(self.name("event"))
        name, (kind, what) = self.name("on" + start[0]), start
        if kind == "timer":
            first = ev.timer_start(name, duration=what, interrupting=interrupting)
        elif kind == "message":
            first = ev.message_start(name, message=what, key="k", interrupting=interrupting)
        elif kind == "signal":
            first = ev.signal_start(name, signal=what, interrupting=interrupting)
        elif kind == "multi":
            first = ev.start_on(name, any_of=defs(what), interrupting=interrupting)
        elif kind == "cond":  # opens when the total reaches ``what`` (it only grows)
            first = ev.conditional_start(name, condition=f"total >= {what}",
                                         interrupting=interrupting)
        elif kind == "error":
            first = ev.error_start(name, error=what)
        else:
            first = ev.escalation_start(name, escalation=what, interrupting=interrupting)
        items = [("script", 1000), *steps]
        a, b = self.chain(ev, items)
        ev.flow(first, a)
        ev.flow(b, ev.end(self.name("evend")))
        self.repeat -= 1

    def call(self, sc, tree, guards):
        self.counter[0] += 1
        child = Builder(tree, f"called{self.counter[0]}", self.counter, self.once)
        self.called.extend([*child.called, child.p.validate()])
        node = sc.call_activity(self.name("call"), process=child.p.id)
        self.guard(sc, node, guards)
        return node, node

    def pair(self, sc, trigger, interrupting, catch_first):
        """The branches of a pair (see ``pair``). The boundary leads to an exclusive gateway
        on ``x == 1``: interrupting, both of its paths go on to the join in place of the
        user task; non-interrupting, they end."""
        fork, join = sc.parallel_gateway(self.name("fork")), sc.parallel_gateway(
            self.name("join"))
        user = sc.user_task(self.name("user"))
        bnd = self.boundary(sc, user, trigger[0], trigger[1], interrupting)
        catch = self.simple(sc, trigger)
        gw = sc.exclusive_gateway(self.name("xor"))
        for arm in ([catch, user] if catch_first else [user, catch]):
            sc.flow(fork, arm)
        sc.flow(catch, sc.script_task(self.name("script"), fn=adder("total", 1)),
                sc.script_task(self.name("script"), fn=setter("x", 1)), join)
        sc.flow(bnd, gw)
        if interrupting:
            merge = sc.exclusive_gateway(self.name("merge"))
            seen = sc.script_task(self.name("seen"), fn=adder("total", 10))
            unseen = sc.script_task(self.name("unseen"), fn=adder("total", 100))
            sc.flow(gw, seen, condition="x == 1")
            sc.flow(gw, unseen)
            sc.flow(seen, merge)
            sc.flow(unseen, merge)
            sc.flow(user, merge, join)
        else:
            sc.flow(gw, sc.end(self.name("seen")), condition="x == 1")
            sc.flow(gw, sc.end(self.name("unseen")))
            sc.flow(user, join)
        return fork, join


class Drawn(NamedTuple):
    proc: bpm.Process  # validated
    called: list[bpm.Process]  # what its call activities call, callees first
    once: dict[str, set[str]]  # by process id: nodes an instance leaves at most once


def build(tree) -> Drawn:
    """The process drawn as ``tree`` (validated), the processes it calls, and the nodes
    each instance leaves at most once."""
    b = Builder(tree)
    return Drawn(b.p.validate(), b.called, b.once)
