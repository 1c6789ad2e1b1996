"""Dehydration is transparent (DESIGN.md §4, invariant 13): for random processes and random
schedules of triggers, the observable outcome — node completions in order, final data, end
states — is the same with dehydration on and off, and across a crash and Engine.recover."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gobpm_nb as bpm

DURATIONS = ["PT10M", "PT2H", "P1D"]
MESSAGES = ["ma", "mb"]
SIGNALS = ["sa", "sb"]
EXAMPLES = int(os.environ.get("TRANSPARENCY_EXAMPLES", "300"))

simple = st.one_of(
    st.tuples(st.just("timer"), st.sampled_from(DURATIONS)),
    st.tuples(st.just("message"), st.sampled_from(MESSAGES)),
    st.tuples(st.just("signal"), st.sampled_from(SIGNALS)),
    st.tuples(st.just("receive"), st.sampled_from(MESSAGES)),
    st.tuples(st.just("script"), st.integers(1, 3)),
    st.tuples(st.just("cond"), st.integers(1, 4)),
    st.tuples(st.just("user"), st.one_of(
        st.none(),
        st.tuples(st.just("timer"), st.sampled_from(DURATIONS), st.booleans()),
        st.tuples(st.just("cycle"), st.sampled_from(["R2/PT2H", "R3/PT20M"]), st.just(False)),
        st.tuples(st.just("message"), st.sampled_from(MESSAGES), st.booleans()),
        st.tuples(st.just("signal"), st.sampled_from(SIGNALS), st.booleans()))),
)
branch = st.lists(simple, min_size=1, max_size=3)
block = st.one_of(
    simple,
    st.tuples(st.just("parallel"), st.lists(branch, min_size=2, max_size=3)),
    st.tuples(st.just("xor"), st.integers(0, 4), st.tuples(branch, branch)),
    st.tuples(st.just("race"), st.lists(st.one_of(
        st.tuples(st.just("timer"), st.sampled_from(DURATIONS)),
        st.tuples(st.just("message"), st.sampled_from(MESSAGES)),
        st.tuples(st.just("signal"), st.sampled_from(SIGNALS))),
        min_size=2, max_size=3, unique_by=lambda a: a[1])),
)
action = st.one_of(
    st.tuples(st.just("advance"), st.sampled_from(["PT5M", "PT1H", "PT3H", "P1D"])),
    st.tuples(st.just("message"), st.sampled_from(MESSAGES), st.integers(0, 1)),
    st.tuples(st.just("signal"), st.sampled_from(SIGNALS)),
    st.tuples(st.just("task"), st.integers(0, 2)),
)


def adder(field: str, amount: int):
    def script(data):
        return {field: data.get(field, 0) + amount}
    return script


class Builder:
    """Builds a valid process from a list of drawn blocks."""

    def __init__(self, blocks):
        self.p = bpm.Process("random")
        self.n = 0
        prev = self.p.start("start")
        for b in blocks:
            first, last = self.block(b)
            self.p.flow(prev, first)
            prev = last
        self.p.flow(prev, self.p.end("end"))

    def name(self, kind):
        self.n += 1
        return f"{kind}{self.n}"

    def chain(self, items):
        ends = [self.block(i) for i in items]
        for (_, a), (b, _) in zip(ends, ends[1:], strict=False):
            self.p.flow(a, b)
        return ends[0][0], ends[-1][1]

    def block(self, b):
        p, kind = self.p, b[0]
        if kind == "timer":
            node = p.timer_catch(self.name("timer"), duration=b[1])
        elif kind == "message":
            node = p.message_catch(self.name("msg"), message=b[1], key="k")
        elif kind == "signal":
            node = p.signal_catch(self.name("sig"), signal=b[1])
        elif kind == "receive":
            node = p.receive_task(self.name("recv"), message=b[1], key="k")
        elif kind == "cond":
            node = p.conditional_catch(self.name("cond"), condition=f"total >= {b[1]}")
        elif kind == "script":
            node = p.script_task(self.name("script"), fn=adder("total", b[1]))
        elif kind == "user":
            node = p.user_task(self.name("user"))
            if b[1] is not None:
                self.boundary(node, *b[1])
        elif kind == "parallel":
            fork, join = p.parallel_gateway(self.name("fork")), p.parallel_gateway(
                self.name("join"))
            for br in b[1]:
                first, last = self.chain(br)
                p.flow(fork, first)
                p.flow(last, join)
            return fork, join
        elif kind == "xor":
            split, merge = p.exclusive_gateway(self.name("xor")), p.exclusive_gateway(
                self.name("merge"))
            (a1, a2), (b1, b2) = self.chain(b[2][0]), self.chain(b[2][1])
            p.flow(split, a1, condition=f"total >= {b[1]}")
            p.flow(split, b1)
            p.flow(a2, merge)
            p.flow(b2, merge)
            return split, merge
        else:  # race
            gw, merge = p.event_gateway(self.name("race")), p.exclusive_gateway(
                self.name("after"))
            for arm in b[1]:
                first, last = self.block(arm)
                p.flow(gw, first)
                p.flow(last, merge)
            return gw, merge
        return node, node

    def boundary(self, task, kind, what, interrupting):
        b = self.name("bnd")
        if kind == "timer":
            self.p.timer_boundary(b, attached_to=task, duration=what, interrupting=interrupting)
        elif kind == "cycle":
            self.p.timer_boundary(b, attached_to=task, cycle=what, interrupting=interrupting)
        elif kind == "message":
            self.p.message_boundary(b, attached_to=task, message=what, key="k",
                                    interrupting=interrupting)
        else:
            self.p.signal_boundary(b, attached_to=task, signal=what, interrupting=interrupting)
        self.p.flow(b, self.p.end(self.name("bend")))


def apply(eng, act, n):
    if act[0] == "advance":
        eng.advance(act[1])
    elif act[0] == "message":
        eng.publish_message(act[1], key=act[2], payload={f"m{n}": n})
    elif act[0] == "signal":
        eng.broadcast_signal(act[1], {f"s{n}": n})
    else:
        tasks = eng.tasks()
        if tasks:
            eng.complete_task(tasks[act[1] % len(tasks)].id, {f"t{n}": n})
    eng.run(until=eng.now)  # let what the call started settle at this instant


def outcome(eng):
    done = {}
    for f in eng.facts:
        if f.kind == "node_left":
            done.setdefault(f.instance, []).append(f.node)
    return {i.id: (done.get(i.id, []), i.state, i.data) for i in eng.instances()}


def play(proc, schedule, **options):
    eng = bpm.Engine(**options)
    for k in range(2):
        eng.start(proc, {"k": k, "total": 0})
    eng.run(until=eng.now)
    for n, act in enumerate(schedule):
        apply(eng, act, n)
    eng.advance("P3D")
    return outcome(eng), eng


def play_with_crash(proc, schedule, cut, path):
    eng = bpm.Engine(store=bpm.SQLiteStore(path))
    for k in range(2):
        eng.start(proc, {"k": k, "total": 0})
    eng.run(until=eng.now)
    for n, act in enumerate(schedule[:cut]):
        apply(eng, act, n)
    before = eng.facts
    ended = {i.id: (i.state, i.data) for i in eng.instances() if i.residency == "finished"}
    clock = eng.now
    eng.store.close()
    del eng
    eng2 = bpm.Engine.recover(bpm.SQLiteStore(path), processes=[proc])
    eng2.run(until=clock)  # the clock resumes at the last checkpoint; catch up to the cut
    for n, act in enumerate(schedule[cut:], start=cut):
        apply(eng2, act, n)
    eng2.advance("P3D")
    merged: dict = {}
    for f in before + eng2.facts:
        if f.kind == "node_left":
            merged.setdefault(f.instance, []).append(f.node)
    ended.update({i.id: (i.state, i.data) for i in eng2.instances()})
    return {i: (merged.get(i, []), *ended[i]) for i in sorted(ended)}


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(block, min_size=1, max_size=4),
       schedule=st.lists(action, max_size=8), cut=st.integers(0, 8))
def test_dehydration_is_transparent(tmp_path_factory, blocks, schedule, cut):
    """Same outcome with dehydration on and off, and across a crash and recovery."""
    proc = Builder(blocks).p.validate()
    off, _ = play(proc, schedule, dehydrate=False)
    on, eng = play(proc, schedule)
    assert on == off
    path = tmp_path_factory.mktemp("crash") / "run.db"
    assert play_with_crash(proc, schedule, min(cut, len(schedule)), path) == off
