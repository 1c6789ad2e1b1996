"""Deployment: versions, and refusing invalid processes and bad starts."""

import linecache
import os
import subprocess
import sys
import types

import pytest
from conftest import snapshot

import gobpm_nb as bpm


def simple(duration="PT1H"):
    p = bpm.Process("v")
    p.start("s")
    p.timer_catch("t", duration=duration)
    p.end("e")
    p.flow("s", "t", "e")
    return p


def test_a_changed_definition_deploys_as_the_next_version_and_instances_stay_pinned():
    """Same graph, same version; a changed graph is version 2; old instances keep version 1."""
    eng = bpm.Engine()
    a = eng.start(simple())
    b = eng.start(simple())
    c = eng.start(simple("PT5H"))
    assert (a.version, b.version, c.version) == (1, 1, 2)
    eng.run()
    assert a.state == b.state == c.state == "completed"


def test_instance_ids_are_sequential_or_given():
    """Ids are i1, i2… unless the caller gives a key; a used key is refused."""
    eng = bpm.Engine()
    assert eng.start(simple()).id == "i1"
    assert eng.start(simple(), key="order-7").id == "order-7"
    assert eng.start(simple()).id == "i2"
    with pytest.raises(bpm.EngineError, match="order-7"):
        eng.start(simple(), key="order-7")


@pytest.mark.parametrize("call, error", [
    (lambda e: e.start(bpm.Process("empty")), bpm.ModelError),
    (lambda e: e.start(simple(), data=[1]), bpm.EngineError),
    (lambda e: e.start(simple(), data={"x": float("nan")}), bpm.EngineError),
    (lambda e: e.start("approval"), bpm.EngineError),
    (lambda e: e.instance("i99"), bpm.EngineError),
])
def test_starting_an_invalid_process_or_bad_data_changes_nothing(call, error):
    """An invalid process or bad data raises a typed error; the engine is exactly as before."""
    eng = bpm.Engine()
    eng.start(simple())
    eng.step()
    before = snapshot(eng)
    with pytest.raises(error):
        call(eng)
    assert snapshot(eng) == before


def test_every_error_is_a_gobpm_error():
    """ModelError, EngineError and CheckpointError share the GobpmError base."""
    assert issubclass(bpm.ModelError, bpm.GobpmError)
    assert issubclass(bpm.EngineError, bpm.GobpmError)
    assert issubclass(bpm.CheckpointError, bpm.GobpmError)
    assert issubclass(bpm.ScenarioError, bpm.GobpmError)


def test_the_public_surface():
    """The package exports exactly its public names."""
    assert sorted(bpm.__all__) == ["CheckpointError", "Engine", "EngineError", "Fact",
                                   "GobpmError", "Instance", "MemoryStore", "ModelError",
                                   "NO_KEY", "Population", "Process", "SQLiteStore", "Scenario",
                                   "ScenarioError", "StoreError", "compare", "load_bpmn"]


def cell(ns, src, name, source=True):
    """Run ``src`` in ``ns`` the way a notebook runs a cell: compiled under its own file name,
    its text kept in ``linecache`` as IPython keeps it, so ``inspect`` reads its functions'
    source (``source=False``: not kept, as for a string given to ``exec``)."""
    if source:
        linecache.cache[name] = (len(src), None, src.splitlines(keepends=True), name)
    else:
        linecache.cache.pop(name, None)
    exec(compile(src, name, "exec"), ns)
    return ns


def notebook():
    return {"__name__": "__main__"}


CALC = """
import gobpm_nb as bpm

def compute(d):
    return {"v": 1}

def build():
    p = bpm.Process("calc")
    p.start("s")
    p.script_task("x", fn=compute)
    p.end("e")
    p.flow("s", "x", "e")
    return p
"""

FIXED = """
def compute(d):
    return {"v": 2}
"""


def test_rerun_cell_with_fixed_function_deploys_next_version():
    """Re-running a cell with a fixed function deploys version 2, which runs the fixed code."""
    ns = cell(notebook(), CALC, "<cell-1>")
    eng = bpm.Engine()
    a = eng.start(ns["build"]())
    eng.run()
    cell(ns, FIXED, "<cell-2>")
    b = eng.start(ns["build"]())
    eng.run()
    cell(ns, "\n" + FIXED, "<cell-3>")
    c = eng.start(ns["build"]())
    eng.run()
    assert (a.version, b.version, c.version) == (1, 2, 2)
    assert (a.data, b.data, c.data) == ({"v": 1}, {"v": 2}, {"v": 2})


RICH = """
import functools
import gobpm_nb as bpm

def shout(word, *, suffix="!"):
    return word.upper() + suffix

def make_scale(factor):
    def scale(x):
        return x * factor
    return scale

class Settings:
    pass

def compute(d, bonus=1, *, cap=100, settings=Settings()):
    scale = make_scale(3)
    picks = [n for n in d["items"] if n in {"a", "b", "c", "d", "e"}]
    total = sum(map(lambda n: len(n) + bonus, picks))
    return {"total": min(scale(total), cap), "loud": shout(d["word"])}

def make_walk():
    def walk(d):
        return walk({"n": d["n"] - 1}) if d["n"] > 0 else {}
    return walk

class Doubler:
    def __call__(self, d):
        return {"twice": d["total"] * 2}

class Rules:
    def big(self, d):
        return d["total"] > 10

def build():
    p = bpm.Process("rich")
    p.start("s")
    p.script_task("x", fn=compute)
    p.service_task("y", fn=functools.partial(shout, "hi", suffix="?"))
    p.service_task("z", fn=Doubler())
    p.script_task("w", fn=make_walk())
    p.exclusive_gateway("gw", default="c")
    p.end("a")
    p.end("b")
    p.end("c")
    p.flow("s", "x", "y", "z", "w", "gw")
    p.flow("gw", "a", condition=lambda d: d["total"] > 3)
    p.flow("gw", "b", condition=Rules().big)
    p.flow("gw", "c")
    return p
"""


def signature(src, name="<cell-1>", source=True):
    return cell(notebook(), src, name, source)["build"]().definition().signature


@pytest.mark.parametrize("old, new", [
    ('shout(d["word"])}', 'shout(d["word"]).lower()}'),
    ("make_scale(3)", "make_scale(4)"),
    ("min(scale(total), cap)", "max(scale(total), cap)"),
    ("bonus=1", "bonus=2"),
    ("cap=100", "cap=99"),
    ("len(n) + bonus", "len(n) * bonus"),
    ("[n for n in", "[n.strip() for n in"),
    ('"d", "e"}', '"d", "f"}'),
    ('"hi", suffix="?"', '"ho", suffix="?"'),
    ('suffix="?"', 'suffix="."'),
    ('d["total"] * 2', 'd["total"] * 3'),
    ('d["n"] - 1', 'd["n"] - 2'),
    ('d["total"] > 10', 'd["total"] > 11'),
    ('d["total"] > 3', 'd["total"] > 4'),
], ids=["body", "constant", "name-used", "default", "keyword-default", "nested-lambda",
        "comprehension", "frozenset-constant", "partial-argument", "partial-keyword",
        "callable-instance", "recursive-closure", "bound-method", "flow-lambda-condition"])
@pytest.mark.parametrize("source", [True, False], ids=["source", "no-source"])
def test_a_changed_function_changes_the_signature(old, new, source):
    """One changed detail of any callable in the graph gives a different signature, whether
    the functions' source can be read (a notebook cell, a module) or not (their code)."""
    assert RICH.count(old) == 1
    assert signature(RICH, source=source) == signature(RICH, "<cell-2>", source)
    assert signature(RICH.replace(old, new), source=source) != signature(RICH, source=source)


def test_identical_rerun_of_a_cell_reuses_the_version():
    """The same cell run again, under a new file name and moved down a line, is the same."""
    first = cell(notebook(), RICH, "<cell-1>")
    second = cell(notebook(), "\n" + RICH, "<cell-2>")
    assert first["compute"] is not second["compute"]
    assert first["compute"].__code__.co_firstlineno != second["compute"].__code__.co_firstlineno
    eng = bpm.Engine()
    versions = [eng.start(ns["build"]()).version for ns in (first, second)]
    assert versions == [1, 1]


def scaled(factor):
    """A process whose script task multiplies by ``factor``, a value in its closure."""
    def scale(d):
        return {"v": d["n"] * factor}
    p = bpm.Process("scale")
    p.start("s")
    p.script_task("x", fn=scale)
    p.end("e")
    p.flow("s", "x", "e")
    return p


def test_a_changed_closure_value_deploys_the_next_version():
    """A function closing over a different value is version 2; the same value reuses 1."""
    eng = bpm.Engine()
    a = eng.start(scaled(2), data={"n": 5})
    b = eng.start(scaled(2), data={"n": 5})
    c = eng.start(scaled(3), data={"n": 5})
    eng.run()
    assert (a.version, b.version, c.version) == (1, 1, 2)
    assert (a.data["v"], c.data["v"]) == (10, 15)


def test_a_changed_lambda_condition_on_a_flow_deploys_the_next_version():
    """A flow whose lambda condition changed is version 2 and routes by the new condition."""
    def gated(limit_src):
        p = bpm.Process("gate")
        p.start("s")
        p.exclusive_gateway("gw", default="low")
        p.end("high")
        p.end("low")
        p.flow("s", "gw")
        p.flow("gw", "high", condition=cell({}, f"f = lambda d: d['n'] > {limit_src}",
                                            "<cell>")["f"])
        p.flow("gw", "low")
        return p
    eng = bpm.Engine()
    a = eng.start(gated("3"), data={"n": 5})
    b = eng.start(gated("9"), data={"n": 5})
    eng.run()
    assert (a.version, b.version) == (1, 2)
    assert (a.tracks[0].node, b.tracks[0].node) == ("high", "low")


@pytest.mark.parametrize("source", [True, False], ids=["source", "no-source"])
def test_function_signatures_are_the_same_across_processes_and_hash_seeds(source):
    """Fresh interpreters with different PYTHONHASHSEED give this process's signature."""
    script = (f"import linecache\nSRC = {RICH!r}\n"
              + ("linecache.cache['<c>'] = (len(SRC), None, SRC.splitlines(True), '<c>')\n"
                 if source else "")
              + "ns = {'__name__': '__main__'}\nexec(compile(SRC, '<c>', 'exec'), ns)\n"
              "print(ns['build']().definition().signature)\n")
    outs = set()
    for seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True, timeout=60)
        outs.add(done.stdout.strip())
    assert outs == {signature(RICH, source=source)}


def test_with_its_source_a_function_is_known_by_its_text_not_its_code():
    """Where the source can be read, the code object does not count (bytecode belongs to
    the Python version: the same text must sign the same on every Python); without the
    source, the code is what is left, and it counts."""
    from gobpm_nb.model.fingerprint import fingerprint

    def recompiled(fn):
        code = fn.__code__.replace(co_consts=fn.__code__.co_consts + ("not in the text",))
        twin = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        twin.__qualname__, twin.__kwdefaults__ = fn.__qualname__, fn.__kwdefaults__
        return twin

    with_text = cell(notebook(), RICH, "<cell-1>")["compute"]
    assert fingerprint(recompiled(with_text)) == fingerprint(with_text)
    without = cell(notebook(), RICH, "<cell-2>", source=False)["compute"]
    assert fingerprint(recompiled(without)) != fingerprint(without)
    assert fingerprint(without) != fingerprint(with_text)


PINNED = """
import gobpm_nb as bpm

def total(d, *, rate=0.2):
    \"\"\"Net plus tax.\"\"\"
    return {"total": round(d["net"] * (1 + rate), 2)}

def build():
    p = bpm.Process("invoice")
    p.start("s")
    p.script_task("sum", fn=total)
    p.exclusive_gateway("big", default="done")
    p.end("done")
    p.end("review")
    p.flow("s", "sum", "big", "done")
    p.flow("big", "review", condition=lambda d: d["total"] > 1000)
    return p
"""


def test_a_signature_is_pinned_across_python_versions():
    """The signature of a process built from this source, with a function and a lambda,
    is this value on every Python the package supports: it reads the source text, never
    bytecode. (Pyodide's Python 3.14 in the browser gives it too: lite/test_site.py runs
    notebook 02, which prints a signature, there.)"""
    assert signature(PINNED, "<cell-9>") == "a526fa4aa72540b3"


WAITING = """
import gobpm_nb as bpm

def total(d):
    return {"t": d["n"] * 2}

def build():
    p = bpm.Process("order")
    p.start("s")
    p.script_task("calc", fn=total)
    p.user_task("approve", assignee="ada")
    p.end("e")
    p.flow("s", "calc", "approve", "e")
    return p
"""


def test_a_checkpoint_signed_by_code_is_never_recovered_onto_a_process_signed_by_source(
        tmp_path):
    """A store written when signatures read a function's code (as gobpm_nb did before they
    read its source, and still does without it) does not match the same process signed by
    its source: recovery deploys that as a new version, the stored instance gets no
    version, its wake fails with EngineError and it stays where it was — it never runs on
    a definition its checkpoint was not written by."""
    db = tmp_path / "run.db"
    old = cell(notebook(), WAITING, "<old>", source=False)["build"]()
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(old, {"n": 2})
    eng.run()
    eng.store.close()
    new = cell(notebook(), WAITING, "<new>")["build"]()
    assert new.definition().signature != old.definition().signature
    eng = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[new])
    (inst,) = eng.instances()
    assert (inst.id, inst.version, inst.residency) == ("i1", None, "dehydrated")
    assert eng.start(new, {"n": 1}).version == 2
    eng.complete_task("i1:approve:1", {"ok": True})
    eng.advance("PT1M")
    failed = [f for f in eng.facts if f.kind == "wake_failed" and f.instance == "i1"]
    assert failed and {f.details["cause"] for f in failed} == {"EngineError"}
    assert (eng.instance("i1").data, eng.instance("i1").state) == ({"n": 2, "t": 4}, "active")
    eng.store.close()
