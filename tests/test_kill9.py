"""Kill -9 at random points of a run on SQLite: what a command acknowledged survives.

A child process (tests/scenarios/kill9_child.py) runs a fixed schedule of commands over eight
orders and prints ``ack <n> <clock> <outcome>`` right after command n returned. The parent
kills it with SIGKILL after a random number of acks plus a random 0-30 ms (so kills land
inside commands and SQLite transactions as well as between them), starts the next child from
the first unacknowledged command (which recovers with ``Engine.recover``), and so on until a
child finishes the schedule (the last command, which ends every order, is never killed). Each
trial is seeded; trials run two at a time until at least MIN_KILLS children were killed. The
outcome is compared with the same schedule run once without
interruption on an in-memory engine. Promises checked: an acknowledged start survives, an
acknowledged trigger is delivered exactly once (message ids are de-duplicated across
restarts), the clock recovers where the last acknowledged command left it, never earlier, and
instance ids are never reused. Work after the last checkpoint may be replayed.
"""

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import kill9_child as child  # conftest puts tests/scenarios on the path
import pytest

import gobpm_nb as bpm

pytestmark = pytest.mark.slow  # fifty children killed with SIGKILL

MIN_KILLS = 50            # kills per test run, across trials
TARGET_KILLS = 64         # trials are started (seeds 0, 1, 2…) until this many kills happened
MAX_TRIALS = 60
MAX_ACKS_BEFORE_KILL = 4  # a child is killed after 0..4 acks (0: right after it came up)…
MAX_DELAY = 0.030         # …plus 0-30 ms, log-uniform: a command takes about 1 ms, so
                          # short sleeps (kills inside the next command) are as common as
                          # long ones
LINE_TIMEOUT = 30.0       # seconds a child may stay silent
MAX_CHILDREN = 100        # per trial; a trial needing more is making no progress

ENV = {"PATH": os.environ.get("PATH", ""),
       "PYTHONPATH": os.pathsep.join([str(Path(child.__file__).parent),
                                      str(Path(bpm.__file__).parent.parent)])}
STARTS = {n: c[1] for n, c in enumerate(child.SCHEDULE) if c[0] == "start"}
AUDITS = [n for n, c in enumerate(child.SCHEDULE) if c[0] == "audit"]


def at(text):
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class Reference:
    """The uninterrupted run: the clock and outcome after each command, and the end."""

    clocks: list[datetime]
    outcomes: list[Any]
    summary: dict[str, Any]


def uninterrupted():
    eng = bpm.Engine()
    clocks, outcomes = [], []
    for n, command in enumerate(child.SCHEDULE):
        outcomes.append(child.execute(eng, n, command))
        clocks.append(eng.now)
    return Reference(clocks, outcomes, child.summary(eng))


@dataclass
class Recovery:
    first: int                   # the first unacknowledged command when this child came up
    clock: datetime              # the clock Engine.recover resumed at
    last_ack: datetime | None    # the clock printed with the last acknowledgement
    instances: dict[str, str]    # id -> state of every instance the recovered engine knows


@dataclass
class Trial:
    seed: int
    kills: int = 0
    children: int = 0
    next: int = 0
    last_ack: datetime | None = None
    recoveries: list[Recovery] = field(default_factory=list)
    acks: dict[int, tuple[datetime, Any]] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    broken: list[str] = field(default_factory=list)

    def take(self, line):
        """Record one line of a child's output; return its kind."""
        try:
            return self._take(line)
        except ValueError:  # json.JSONDecodeError included
            self.broken.append(f"unreadable output {line[:200]!r}")
            return "unreadable"

    def _take(self, line):
        kind, _, rest = line.partition(" ")
        if kind == "recovered":
            clock, _, view = rest.partition(" ")
            self.recoveries.append(Recovery(self.next, at(clock), self.last_ack,
                                            json.loads(view)["instances"]))
        elif kind == "ack":
            n, clock, outcome = rest.split(" ", 2)
            if int(n) != self.next:
                self.broken.append(f"ack {n} while command {self.next} was next")
            self.acks[int(n)] = (at(clock), json.loads(outcome))
            self.next, self.last_ack = int(n) + 1, at(clock)
        elif kind == "summary":
            self.summary = json.loads(rest)
        elif kind not in ("fresh", "gate"):
            self.broken.append(f"unexpected output {line[:200]!r}")
        return kind


class Child:
    """One run of kill9_child.py, its stdout read line by line on a thread."""

    def __init__(self, db, first, err):
        self.err = open(err, "w")
        self.path = err
        self.proc = subprocess.Popen(
            [sys.executable, child.__file__, str(db), str(first)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.err, text=True, env=ENV, cwd=db.parent)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.endswith("\n"):  # a line the kill cut short was never acknowledged
                self.lines.put(line[:-1])
        self.lines.put(None)

    def line(self):
        try:
            return self.lines.get(timeout=LINE_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"child silent for {LINE_TIMEOUT} s") from None

    def go(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL

    def stderr(self):
        self.err.flush()
        return Path(self.path).read_text()[-2000:]

    def close(self):
        self.kill()
        self.proc.wait(timeout=10)
        self.reader.join(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.err.close()


def run_trial(seed, workdir, total):
    """Kill and restart children until one finishes the schedule; ``total`` counts kills."""
    rng = random.Random(seed)
    trial = Trial(seed)
    db = workdir / "run.db"
    while trial.summary is None and not trial.broken:
        if trial.children >= MAX_CHILDREN:
            trial.broken.append(f"no end after {MAX_CHILDREN} children")
            break
        acks_before_kill = rng.randint(0, MAX_ACKS_BEFORE_KILL)
        delay = MAX_DELAY * 2 ** -rng.uniform(0, 10)  # log-uniform 0.03-30 ms
        proc = Child(db, trial.next, workdir / f"child-{trial.children}.err")
        trial.children += 1
        try:
            run_child(trial, proc, acks_before_kill, delay, total)
        except AssertionError as exc:  # a silent child
            trial.broken.append(f"child {trial.children} from command {trial.next}: {exc}")
        finally:
            proc.close()
    return trial


def run_child(trial, proc, acks_before_kill, delay, total):
    """Read the child's lines; kill it after ``acks_before_kill`` acks and ``delay``."""
    acks, killed, final = 0, False, False
    while (line := proc.line()) is not None:
        kind = trial.take(line)
        acks += kind == "ack"
        due = acks == acks_before_kill if kind == "ack" else (
            kind in ("fresh", "recovered") and acks_before_kill == 0)
        if kind == "gate":  # the last command is never killed: see kill9_child.py
            final = True
            proc.go()
        elif due and not final:
            time.sleep(delay)
            proc.kill()
            killed = True
            break
    proc.proc.wait(timeout=10)
    while killed and (line := proc.line()) is not None:  # printed before it died
        trial.take(line)
    if killed and proc.proc.returncode == -9:
        trial.kills += 1
        total.add()
    elif proc.proc.returncode != 0 or trial.summary is None:
        trial.broken.append(f"child {trial.children} from command {trial.next} "
                            f"exited {proc.proc.returncode}:\n{proc.stderr()}")


class Counted:
    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def add(self):
        with self.lock:
            self.n += 1


@pytest.fixture(scope="module")
def reference():
    return uninterrupted()


def run_trials(mktemp):
    """Trials two at a time, seeds 0, 1, 2…, until TARGET_KILLS kills happened."""
    total = Counted()
    done = []
    seeds = iter(range(MAX_TRIALS))

    def worker():
        for seed in seeds:  # the iterator is shared: each seed runs once
            if total.n >= TARGET_KILLS:
                return
            done.append(run_trial(seed, mktemp(f"trial{seed}"), total))

    with ThreadPoolExecutor(max_workers=2) as pool:
        for f in [pool.submit(worker), pool.submit(worker)]:
            f.result(timeout=600)
    return sorted(done, key=lambda t: t.seed)


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    return run_trials(tmp_path_factory.mktemp)


def problems_message(problems):
    shown = "\n".join(problems[:20])
    more = f"\n… and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{len(problems)} problem(s):\n{shown}{more}"


def orders(summary):
    return {k: v for k, v in summary["instances"].items() if k in child.ORDERS}


def test_the_uninterrupted_schedule_ends_each_order_as_computed_by_hand(reference):
    """Without a crash the schedule ends each order as worked out from its deadlines."""
    ends = {k: v["ends"] for k, v in orders(reference.summary).items()}
    assert ends == {"o1": ["paid"], "o2": ["paid"], "o3": ["recalled"], "o4": ["paid"],
                    "o5": ["unpaid"], "o6": ["escalated"], "o7": ["paid"], "o8": ["paid"]}
    o1 = reference.summary["instances"]["o1"]["data"]
    assert (o1["payments"], o1["total"], o1["approved_cmd"]) == (["m-8", "m-23"], 110, 4)
    o5 = reference.summary["instances"]["o5"]["data"]
    assert (o5["payments"], o5["total"]) == (["m-24"], 10)
    assert reference.outcomes[29] == "absent" and reference.outcomes[17] == 1
    assert [reference.outcomes[n] for n in AUDITS] == ["i1", "i2", "i3"]
    assert all(s["state"] == "completed" for s in reference.summary["instances"].values())


def test_kill9_runs_kill_at_least_fifty_children_and_every_trial_reaches_the_end(trials):
    """The trials killed at least MIN_KILLS children and each trial's last child finished."""
    kills = sum(t.kills for t in trials)
    broken = [f"seed {t.seed}: {b}" for t in trials for b in t.broken]
    assert not broken, problems_message(broken)
    assert kills >= MIN_KILLS, f"only {kills} kills in {len(trials)} trials"
    assert all(t.summary is not None for t in trials)


def test_kill9_recovery_never_resumes_the_clock_before_the_last_acknowledged_command(
        trials, reference):
    """Each recovered clock lies between the last acknowledged clock and the end of the
    command in flight, and every acknowledged clock is the uninterrupted run's."""
    problems = []
    for t in trials:
        for r in t.recoveries:
            if r.last_ack is not None and r.clock < r.last_ack:
                problems.append(f"seed {t.seed}: clock earlier: recovered {r.clock.isoformat()}"
                                f" < {r.last_ack.isoformat()} acknowledged with command "
                                f"{r.first - 1} {child.SCHEDULE[r.first - 1]}")
            if r.first < len(child.SCHEDULE) and r.clock > reference.clocks[r.first]:
                problems.append(f"seed {t.seed}: clock later: recovered {r.clock.isoformat()}"
                                f" > {reference.clocks[r.first].isoformat()}, the end of "
                                f"command {r.first}")
        for n, (clock, _) in sorted(t.acks.items()):
            if clock != reference.clocks[n]:
                problems.append(f"seed {t.seed}: ack {n} {child.SCHEDULE[n]} at "
                                f"{clock.isoformat()}, uninterrupted "
                                f"{reference.clocks[n].isoformat()}")
    assert not problems, problems_message(problems)


def test_kill9_an_acknowledged_start_survives_every_crash(trials):
    """Every order whose start was acknowledged exists after each recovery and at the end."""
    problems = []
    for t in trials:
        seen = set()
        for r in t.recoveries:
            lost = [k for n, k in STARTS.items() if n < r.first and k not in r.instances]
            if set(lost) - seen:
                problems.append(f"seed {t.seed}: lost instance(s) {lost} on recovery before "
                                f"command {r.first} {child.SCHEDULE[r.first]}: start(s) "
                                f"{[n for n, k in STARTS.items() if k in lost]} were acknowledged")
            seen.update(lost)
        if t.summary is not None:
            lost = sorted(set(child.ORDERS) - set(t.summary["instances"]))
            if lost:
                problems.append(f"seed {t.seed}: lost instance(s) {lost} at the end")
    assert not problems, problems_message(problems)


def test_kill9_every_acknowledged_trigger_is_delivered_exactly_once(trials, reference):
    """Task completions, the recall signal and each message id reach each order exactly as
    often as without a crash: none lost, none delivered twice (redeliveries are dropped)."""
    problems = []
    want = orders(reference.summary)
    for t in trials:
        got = orders(t.summary) if t.summary is not None else {}
        for key, ref in want.items():
            if key not in got:
                continue  # a lost instance: reported by the test above
            data, expected = got[key]["data"], ref["data"]
            if data.get("approved_cmd") != expected.get("approved_cmd"):
                problems.append(f"seed {t.seed}: {key}: task completion of command "
                                f"{expected.get('approved_cmd')} lost or misplaced "
                                f"(approved_cmd {data.get('approved_cmd')})")
            paid, should = Counter(data["payments"]), Counter(expected["payments"])
            if should - paid:
                problems.append(f"seed {t.seed}: {key}: lost message(s) "
                                f"{sorted(should - paid)}; delivered {data['payments']}")
            twice = sorted(m for m in paid - should if m in data["payments"] and m in should)
            if twice:
                problems.append(f"seed {t.seed}: {key}: message id(s) delivered twice {twice}; "
                                f"delivered {data['payments']}")
            stray = sorted(m for m in paid - should if m not in should)
            if stray:
                problems.append(f"seed {t.seed}: {key}: message(s) {stray} delivered, which the "
                                f"uninterrupted run dropped; delivered {data['payments']}")
            if (expected.get("outcome") == "recalled") != (data.get("outcome") == "recalled"):
                problems.append(f"seed {t.seed}: {key}: recall signal lost or misdelivered "
                                f"(outcome {data.get('outcome')})")
    assert not problems, problems_message(problems)


def test_kill9_every_order_ends_as_in_the_uninterrupted_run(trials, reference):
    """Same order ids, same state, same end event and same data as the uninterrupted run."""
    problems = []
    want = orders(reference.summary)
    for t in trials:
        if t.summary is None:
            problems.append(f"seed {t.seed}: no end (see the trial test)")
            continue
        got = orders(t.summary)
        if sorted(got) != sorted(want):
            problems.append(f"seed {t.seed}: orders {sorted(got)}, uninterrupted {sorted(want)}")
        for key in sorted(set(got) & set(want)):
            for part in ("state", "ends", "data"):
                if got[key][part] != want[key][part]:
                    problems.append(f"seed {t.seed}: wrong end: {key} {part} "
                                    f"{got[key][part]!r}, uninterrupted {want[key][part]!r}")
    assert not problems, problems_message(problems)


def test_kill9_never_reuses_an_instance_id(trials, reference):
    """An engine-given id (of the audit instances, which end and leave the store) that a
    start acknowledged is never handed out again after a restart."""
    assert [reference.outcomes[n] for n in AUDITS] == ["i1", "i2", "i3"]
    problems = []
    for t in trials:
        ids = [t.acks[n][1] for n in AUDITS if n in t.acks]
        reused = sorted(i for i, c in Counter(ids).items() if c > 1)
        if reused:
            problems.append(f"seed {t.seed}: instance id(s) {reused} handed out twice: the "
                            f"audit starts {AUDITS} acknowledged {ids}")
    assert not problems, problems_message(problems)
