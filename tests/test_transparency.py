"""Dehydration is transparent (DESIGN.md §4, invariant 13): for random processes and random
schedules of triggers, the observable outcome — node completions in order, final data, end
states — is the same with dehydration on and off, across a crash and Engine.recover, across a
crash after every step, and on a store that fails at random (invariant 10)."""

from __future__ import annotations

import os
from collections import Counter

from flaky import Flaky, bounded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gobpm_nb as bpm

DURATIONS = ["PT10M", "PT2H", "P1D"]
MESSAGES = ["ma", "mb"]
SIGNALS = ["sa", "sb"]
EXAMPLES = int(os.environ.get("TRANSPARENCY_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
START = {"total": 0, "x": 0}  # each instance also gets its correlation value k

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
# Two triggers for one released instance at one instant: a parallel block whose branches are
# a user task with a boundary on X and a catch of the same X followed by two scripts, the
# second setting x = 1, which an exclusive gateway behind the boundary reads.
# ("pair", (kind, X), interrupting, catch branch first)
pair = st.tuples(st.just("pair"), st.one_of(
    st.tuples(st.just("signal"), st.sampled_from(SIGNALS)),
    st.tuples(st.just("message"), st.sampled_from(MESSAGES)),
    st.tuples(st.just("timer"), st.sampled_from(DURATIONS))), st.booleans(), st.booleans())
branch = st.lists(simple, min_size=1, max_size=3)
guard = st.one_of(  # a boundary on a subprocess, or the start of an event subprocess in it
    st.none(),
    st.tuples(st.just("timer"), st.sampled_from(DURATIONS), st.booleans()),
    st.tuples(st.just("message"), st.sampled_from(MESSAGES), st.booleans()),
    st.tuples(st.just("signal"), st.sampled_from(SIGNALS), st.booleans()))
# ("sub", inside, boundary on it, event subprocess in it); ("or", [(threshold, branch)...])
scoped = st.tuples(st.just("sub"), branch, guard, guard)
inclusive = st.tuples(st.just("or"), st.lists(st.tuples(st.integers(0, 4), branch),
                                               min_size=2, max_size=3))
# ("many", inner block, sequential, cardinality, ends early after the first completes)
many = st.tuples(st.just("many"), st.one_of(
    st.tuples(st.just("user"), st.none()),
    st.tuples(st.just("receive"), st.sampled_from(MESSAGES)),
    st.tuples(st.just("sub"), st.lists(st.tuples(st.just("timer"), st.sampled_from(DURATIONS)),
                                       min_size=1, max_size=2), st.none(), st.none())),
    st.booleans(), st.integers(1, 3), st.booleans())
block = st.one_of(
    scoped, scoped, inclusive, many,
    simple,  # seven kinds of simple block (one_of flattens)
    *(pair.map(tuple) for _ in range(3)),  # pairs often: ~45% of processes have one
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
# Store failures: one boolean per get/put/delete call, never more than 3 failures in a row.
# Only a failed get (a wake) delays an instance, by the backoff PT1S per retry; Flaky lets
# the gets of one instance fail at most 6 times in all, so its delays add up to at most 6 s.
# Every timer duration and clock move is a multiple of 5 minutes and the actions are 7 s
# apart, so a deadline and an action instant differ by 7j + 300m seconds (j <= 9 actions),
# never by 1..6 s: a delayed wake cannot move a timer across an action.
failure_plan = st.lists(st.booleans(), min_size=6, max_size=60).map(bounded)
GET_BUDGET = 6


def adder(field: str, amount: int):
    def script(data):
        return {field: data.get(field, 0) + amount}
    return script


def setter(field: str, value: int):
    def script(data):
        return {field: value}
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
                self.boundary_end(node, *b[1])
        elif kind == "pair":
            return self.pair(*b[1:])
        elif kind == "sub":
            return self.subprocess(*b[1:])
        elif kind == "many":
            node = self.block(b[1])[0]
            p.multi_instance(node, sequential=b[2], cardinality=str(b[3]),
                             completion="numberOfCompletedInstances >= 1" if b[4] else None)
            return node, node
        elif kind == "or":
            split, join = p.inclusive_gateway(self.name("or")), p.inclusive_gateway(
                self.name("orjoin"))
            for n, (threshold, br) in enumerate(b[1]):
                first, last = self.chain(br)
                p.flow(split, first, condition=f"total >= {threshold}" if n else None)
                p.flow(last, join)
            return split, join
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

    def subprocess(self, inside, boundary, event):
        """A subprocess running ``inside``; a boundary on it whose path ends at once; an
        event subprocess in it that adds 1000 to the total."""
        outer = self.p
        sp = self.p = outer.subprocess(self.name("sub"))
        first, last = self.chain(inside)
        sp.flow(sp.start(self.name("in")), first)
        sp.flow(last, sp.end(self.name("out")))
        if event is not None:
            kind, what, interrupting = event
            ev = sp.event_subprocess(self.name("ev"))
            starts = {"timer": lambda n: ev.timer_start(n, duration=what,
                                                        interrupting=interrupting),
                      "message": lambda n: ev.message_start(n, message=what, key="k",
                                                            interrupting=interrupting),
                      "signal": lambda n: ev.signal_start(n, signal=what,
                                                          interrupting=interrupting)}
            ev.flow(starts[kind](self.name("evs")),
                    ev.script_task(self.name("evw"), fn=adder("total", 1000)),
                    ev.end(self.name("eve")))
        self.p = outer
        if boundary is not None:
            self.boundary_end(sp, *boundary)
        return sp, sp

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
        return b

    def pair(self, trigger, interrupting, catch_first):
        """fork → user task (boundary on X) → join; fork → catch X → s1 → s2 (x = 1) → join.
        The boundary leads to an exclusive gateway on ``x == 1``: interrupting, both of its
        paths go on to the join in place of the user task; non-interrupting, they end."""
        p = self.p
        fork, join = p.parallel_gateway(self.name("fork")), p.parallel_gateway(self.name("join"))
        user = p.user_task(self.name("user"))
        bnd = self.boundary(user, trigger[0], trigger[1], interrupting)
        catch = self.block(trigger)[0]
        s1 = p.script_task(self.name("script"), fn=adder("total", 1))
        s2 = p.script_task(self.name("script"), fn=setter("x", 1))
        gw = p.exclusive_gateway(self.name("xor"))
        for arm in ([catch, user] if catch_first else [user, catch]):
            p.flow(fork, arm)
        p.flow(catch, s1, s2, join)
        p.flow(bnd, gw)
        if interrupting:
            merge = p.exclusive_gateway(self.name("merge"))
            seen, unseen = p.script_task(self.name("seen"), fn=adder("total", 10)), \
                p.script_task(self.name("unseen"), fn=adder("total", 100))
            p.flow(gw, seen, condition="x == 1")
            p.flow(gw, unseen)
            p.flow(seen, merge)
            p.flow(unseen, merge)
            p.flow(user, merge, join)
        else:
            p.flow(gw, p.end(self.name("seen")), condition="x == 1")
            p.flow(gw, p.end(self.name("unseen")))
            p.flow(user, join)
        return fork, join

    def boundary_end(self, task, *spec):
        """A boundary whose path ends at once (user tasks of simple blocks)."""
        self.p.flow(self.boundary(task, *spec), self.p.end(self.name("bend")))


def direct(command):
    return command()


def insisting(store, tally):
    """Run a public command (start or a trigger); while the engine refuses it because the
    store failed during the call (EngineError: nothing changed), call it again, as a user
    would. Any other error, or a refusal without a store failure, is raised."""
    def call(command):
        for _ in range(len(store.plan) + 1):
            failed = sum(store.failures.values())
            try:
                return command()
            except bpm.EngineError:
                if sum(store.failures.values()) == failed:
                    raise
                tally["refused"] += 1
        raise AssertionError("the store never let the command through")
    return call


def apply(eng, act, n, settle=None, call=direct, by_instance=False):
    """One action; then let what it started settle: at this instant (``settle`` None) or
    over ``settle`` of virtual time. ``by_instance`` picks the task from the inbox grouped by
    instance (each instance's tasks in inbox order): where a wake may be delayed, the tasks
    of two instances may be created in the other order, and that is no change in outcome."""
    if act[0] == "advance":
        eng.advance(act[1])
    elif act[0] == "message":
        call(lambda: eng.publish_message(act[1], key=act[2], payload={f"m{n}": n}))
    elif act[0] == "signal":
        call(lambda: eng.broadcast_signal(act[1], {f"s{n}": n}))
    else:
        tasks = eng.tasks()
        if by_instance:
            tasks.sort(key=lambda t: t.instance)  # stable: each instance keeps its order
        if tasks:
            task = tasks[act[1] % len(tasks)].id
            call(lambda: eng.complete_task(task, {f"t{n}": n}))
    if settle is None:
        eng.run(until=eng.now)
    else:
        eng.advance(settle)


def completions(facts, into=None):
    done = {} if into is None else into
    for f in facts:
        if f.kind == "node_left":
            done.setdefault(f.instance, []).append(f.node)
    return done


def outcome(eng):
    done = completions(eng.facts)
    return {i.id: (done.get(i.id, []), i.state, i.data) for i in eng.instances()}


def begin(eng, proc, settle=None, call=direct):
    for k in range(2):
        call(lambda k=k: eng.start(proc, {"k": k, **START}))
    if settle is None:
        eng.run(until=eng.now)
    else:
        eng.advance(settle)


def play(proc, schedule, settle=None, by_instance=False, **options):
    eng = bpm.Engine(**options)
    begin(eng, proc, settle)
    for n, act in enumerate(schedule):
        apply(eng, act, n, settle, by_instance=by_instance)
    eng.advance("P3D")
    return outcome(eng), eng


def play_with_crash(proc, schedule, cut, path):
    eng = bpm.Engine(store=bpm.SQLiteStore(path))
    begin(eng, proc)
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
    merged = completions(before + eng2.facts)
    ended.update({i.id: (i.state, i.data) for i in eng2.instances()})
    return {i: (merged.get(i, []), *ended[i]) for i in sorted(ended)}


def play_crashing_every_step(proc, schedule, path):
    """Crash (close the store, drop the engine) and ``Engine.recover`` after starting and
    after every action and the final advance; the recovered clock must be the clock at the
    crash — no catch-up run. Facts and instance ends are merged across the engines."""
    done: dict = {}
    ended: dict = {}
    step = ["start"]

    def crash(eng):
        completions(eng.facts, done)
        ended.update({i.id: (i.state, i.data) for i in eng.instances()})
        clock = eng.now
        eng.store.close()
        eng = bpm.Engine.recover(bpm.SQLiteStore(path), processes=[proc])
        assert eng.now == clock, f"recovered after {step[0]} at {eng.now}, crashed at {clock}"
        return eng

    eng = bpm.Engine(store=bpm.SQLiteStore(path))
    begin(eng, proc)
    eng = crash(eng)
    for n, act in enumerate(schedule):
        step[0] = f"action {n} {act}"
        apply(eng, act, n)
        eng = crash(eng)
    step[0] = "the final advance"
    eng.advance("P3D")
    eng = crash(eng)
    completions(eng.facts, done)
    ended.update({i.id: (i.state, i.data) for i in eng.instances()})
    eng.store.close()
    return {i: (done.get(i, []), *ended[i]) for i in sorted(ended)}


def waking(eng):
    """Holds whose trigger came and whose wake is still pending (HoldView.state)."""
    return [h for h in eng.holders() if h.state == "waking"]


def stranded(eng):
    """Active instances that nothing can move on: released and without a hold."""
    held = {h.instance for h in eng.holders()}
    return [i.id for i in eng.instances()
            if i.state == "active" and i.residency != "resident" and i.id not in held]


@SETTINGS
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


def test_boundary_and_catch_on_one_signal_end_alike_resident_and_released():
    """A signal reaching a user task's boundary and a catch of the same signal at one instant
    ends the same whether the instance was resident or released when it came."""
    def process():
        p = bpm.Process("boundary_and_catch")
        p.start("start")
        p.parallel_gateway("split")
        p.user_task("u")
        p.signal_boundary("sb", attached_to="u", signal="stop")
        p.exclusive_gateway("gw", default="end_b")
        p.signal_catch("sc", signal="stop")
        p.script_task("s1", fn=adder("n", 1))
        p.script_task("s2", fn=setter("x", 1))
        for end in ("end_a", "end_b", "end_u", "end_s"):
            p.end(end)
        p.flow("start", "split", "u", "end_u")
        p.flow("sb", "gw")
        p.flow("gw", "end_a", condition="x == 1")
        p.flow("gw", "end_b")
        p.flow("split", "sc", "s1", "s2", "end_s")
        return p.validate()

    def outcome_of(**options):
        eng = bpm.Engine(**options)
        inst = eng.start(process(), {"x": 0})
        eng.run()
        residency = inst.residency
        eng.broadcast_signal("stop")
        eng.run()
        return residency, outcome(eng)

    resident, off = outcome_of(dehydrate=False)
    released, on = outcome_of()
    assert (resident, released) == ("resident", "dehydrated")  # the case is what it says
    assert on == off


@st.composite
def pair_cases(draw):
    """A process with at least one boundary-and-catch pair, and a schedule that fires its X
    (twice at one instant for a message: one publish reaches one subscriber)."""
    blocks = draw(st.lists(block, max_size=3))
    chosen = draw(pair)
    blocks.insert(draw(st.integers(0, len(blocks))), chosen)
    schedule = draw(st.lists(action, max_size=6))
    kind, what = chosen[1]
    if kind == "signal":
        hit = [("signal", what)]
    elif kind == "message":
        key = draw(st.integers(0, 1))
        hit = [("message", what, key), ("message", what, key)]
    else:
        hit = [("advance", "P1D")]
    at = draw(st.integers(0, len(schedule)))
    return blocks, schedule[:at] + hit + schedule[at:]


@SETTINGS
@given(case=pair_cases())
def test_two_triggers_at_one_instant_are_transparent(case):
    """A boundary and a catch on one trigger of a released instance, fired at one instant:
    the same outcome with dehydration on and off."""
    blocks, schedule = case
    proc = Builder(blocks).p.validate()
    off, _ = play(proc, schedule, dehydrate=False)
    on, eng = play(proc, schedule)
    assert on == off
    assert stranded(eng) == []


def test_flaky_store_is_transparent(tmp_path_factory):
    """A store whose get/put/delete fail at random (never more than 3 in a row) changes
    nothing a user sees: a failed put keeps the instance resident, a failed delete is retried,
    a failed wake keeps its hold and retries after wake_retry_backoff, later triggers queue
    behind the first; a command refused because the store failed changed nothing and is
    called again. Both runs settle over PT7S after each action."""
    tally: Counter[str] = Counter()

    @SETTINGS
    @given(blocks=st.lists(block, min_size=1, max_size=4),
           schedule=st.lists(action, max_size=8), plan=failure_plan, sqlite=st.booleans())
    def prop(blocks, schedule, plan, sqlite):
        proc = Builder(blocks).p.validate()
        off, _ = play(proc, schedule, settle="PT7S", by_instance=True, dehydrate=False)
        inner = bpm.SQLiteStore(tmp_path_factory.mktemp("flaky") / "run.db") if sqlite \
            else bpm.MemoryStore()
        store = Flaky(inner, plan, get_budget=GET_BUDGET)
        try:
            eng = bpm.Engine(store=store, wake_retry_backoff="PT1S")
            call = insisting(store, tally)
            begin(eng, proc, "PT7S", call)
            for n, act in enumerate(schedule):
                apply(eng, act, n, "PT7S", call, by_instance=True)
                assert waking(eng) == [], f"a wake still pending 7 s after action {n}"
            eng.advance("P3D")
            store.calm()  # reading a released instance's data reads the store
            tally.update(store.failures)
            tally.update(f.kind for f in eng.facts
                         if f.kind in ("wake_failed", "checkpoint_failed"))
            on = outcome(eng)
            assert on == off
            assert stranded(eng) == []
            assert waking(eng) == []
        finally:
            store.close()

    prop()
    if EXAMPLES >= 100:  # the harness really failed the engine's store calls
        assert all(tally[m] > 0 for m in ("get", "put", "delete")), tally
        assert tally["wake_failed"] > 0, tally


@SETTINGS
@given(blocks=st.lists(block, min_size=1, max_size=4), schedule=st.lists(action, max_size=8))
def test_crash_after_every_step_resumes_at_its_clock(tmp_path_factory, blocks, schedule):
    """Crash and Engine.recover after every public command: the clock resumes exactly where
    it stood, and the outcome is the one without dehydration."""
    proc = Builder(blocks).p.validate()
    off, _ = play(proc, schedule, dehydrate=False)
    path = tmp_path_factory.mktemp("crashes") / "run.db"
    assert play_crashing_every_step(proc, schedule, path) == off
