"""Turns a process drawn by ``generate`` (a tree of plain tuples) into a validated ``Process``
and the processes its call activities call: ``build``. What each drawn block becomes is in
``generate``'s docstring; ``Builder`` makes it element by element."""

from __future__ import annotations

from typing import NamedTuple

import gobpm_nb as bpm


def defs(drawn) -> list[dict[str, str]]:
    """The builder's definitions of a multiple event drawn as ``several``."""
    return [{"timer": what} if kind == "timer" else {"message": what, "key": "k"}
            if kind == "message" else {"signal": what} for kind, what in drawn]


def throws(drawn) -> list[dict[str, str]]:
    """The definitions of a throw or end drawn with several: ``(message, signal, signal
    first)``."""
    message, signal, signal_first = drawn
    both = [{"message": message, "key": "k"}, {"signal": signal}]
    return both[::-1] if signal_first else both


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

    def scope(self, sc, items, handlers, opening=None) -> None:
        """A start (``opening``: an event-based gateway that creates instances), ``items`` in
        a chain, an end, and the event subprocesses ``handlers``."""
        prev = sc.start(self.name("start")) if opening is None else self.opens(sc, *opening[1:])
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
        if kind in ("parallel", "or", "xor", "complex"):
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
        if kind == "adhoc":
            return self.adhoc(sc, *b[1:])
        if kind == "link":
            link = self.name("L")
            return sc.link_throw(self.name("goto"), link=link), sc.link_catch(
                self.name("label"), link=link)
        assert kind == "raise", b
        return self.raiser(sc, *b[1:])

    def opens(self, sc, parallel, first, others):
        """An event-based gateway that creates instances (its first arm a message catch of
        ``first``), its arms merged: by a parallel join when ``parallel`` (the instance waits
        for every arm), else by an exclusive gateway."""
        gw = sc.event_gateway(self.name("opens"), instantiate=True, parallel=parallel)
        merge = (sc.parallel_gateway if parallel else sc.exclusive_gateway)(self.name("opened"))
        for arm in [("message", first), *others]:
            sc.flow(gw, self.simple(sc, arm), merge)
        return merge

    def adhoc(self, sc, pieces, completion, sequential, collected, guards):
        """An ad-hoc subprocess of ``pieces`` (chains; each first node is activatable), with
        a completion condition on ``total`` (or none), sequential or parallel, a collection
        of the pieces ``collected`` (a callable naming them) or none, and its boundaries."""
        ids: list[str] = []

        def collection(data):
            return list(ids)
        node = sc.adhoc_subprocess(
            self.name("adhoc"), collection=None if collected is None else collection,
            completion=None if completion is None else f"total >= {completion}",
            ordering="Sequential" if sequential else "Parallel")
        self.repeat += 1  # an element may be activated any number of times
        firsts = []
        for piece in pieces:
            first, last = self.chain(node, piece)
            node.flow(last, node.end(self.name("aend")))
            firsts.append(first)
        self.repeat -= 1
        if collected is not None:
            ids.extend(dict.fromkeys(firsts[i % len(firsts)] for i in collected))
            collection.__name__ = "[" + ", ".join(ids) + "]"
        self.guard(sc, node, guards)
        return node, node

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
        if kind == "compensate":  # ("compensate", "no wait"): it goes on at once
            return sc.compensation_throw(self.name("compensate"), wait=len(b) == 1)
        if kind == "escalate":
            return sc.escalation_throw(self.name("escalate"), escalation=b[1])
        if kind == "send" and b[1] == "multiple":
            return sc.throw(self.name("throws"), events=throws(b[2]), payload=["total"])
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
        """A parallel, inclusive, exclusive or complex split of branches and its join. The
        complex split's first branch has no condition: with ``default`` it is the default
        flow (taken when no other condition holds), else it is always taken."""
        kind = b[0]
        if kind == "complex":
            split = sc.complex_gateway(self.name(kind))
            join = sc.complex_gateway(self.name(kind + "join"), activation=b[1])
        else:
            make = {"parallel": sc.parallel_gateway, "or": sc.inclusive_gateway,
                    "xor": sc.exclusive_gateway}[kind]
            split, join = make(self.name(kind)), make(self.name(kind + "join"))
        if kind == "parallel":
            arms = [(None, br) for br in b[1]]
        elif kind in ("or", "complex"):
            arms = [(f"total >= {t}" if n else None, br) for n, (t, br) in enumerate(b[-1])]
        else:
            arms = [(f"total >= {b[1]}", b[2][0]), (None, b[2][1])]
        for n, (condition, br) in enumerate(arms):
            first, last = self.chain(sc, br)
            sc.flow(split, first, condition=condition)
            sc.flow(last, join)
            if kind == "complex" and b[2] and n == 0:
                sc.default_flow(split, first)
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
        (sending ``total``), signal, message-and-signal (``multiple``), compensation
        (waiting for the handlers or not) or plain end when ``total >= threshold``, and goes
        on otherwise."""
        split, on = sc.exclusive_gateway(self.name("if")), sc.exclusive_gateway(
            self.name("else"))
        sends: dict = {"message": {"message": code, "key": "k", "payload": ["total"]},
                       "signal": {"signal": code}}.get(what, {})
        if what == "multiple":  # code: (message, signal, signal first)
            sends = {"events": throws(code), "payload": ["total"]}
        if what == "compensate":  # code: whether it waits for the handlers
            sends = {"compensate": True, "wait": code}
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


def opener(proc: bpm.Process) -> str | None:
    """The message that creates an instance of ``proc`` when it starts with an event-based
    gateway that creates instances (its first arm's); None: ``Engine.start`` starts it."""
    nodes = {e.id: e for e in proc.elements}
    for e in proc.elements:
        if e.kind == "event_gateway" and e.instantiate and e.within is None:
            first = next(f.target for f in proc.flows if f.source == e.id)
            return nodes[first].message
    return None


def begin(eng: bpm.Engine, proc: bpm.Process, data: dict):
    """Start an instance of ``proc`` with ``data``: by ``Engine.start``, or, for a process
    that starts with an event-based gateway, by its first arm's message keyed by ``k`` with
    ``data`` as its payload (deployed first)."""
    first = opener(proc)
    if first is None:
        return eng.start(proc, data)
    eng.deploy(proc)
    return eng.publish_message(first, key=data["k"], payload=data)


def build(tree) -> Drawn:
    """The process drawn as ``tree`` (validated), the processes it calls, and the nodes
    each instance leaves at most once."""
    b = Builder(tree)
    return Drawn(b.p.validate(), b.called, b.once)
