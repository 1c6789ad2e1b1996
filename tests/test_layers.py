"""The engine as layers: which part of gobpm_nb may import which.

Every import counts: at the top of a module, lazy ones inside functions, and type-only ones
under ``if TYPE_CHECKING:`` (a type-only import is a dependency too: an annotation names
what it needs). A part is a subpackage or a top-level module of ``gobpm_nb``; the package
root (``gobpm_nb/__init__.py``) and ``__main__`` sit on top and may import anything.

Lowest first; a part may import only the parts listed for it (never one above it):

=========== ===============================================================================
part        may import
=========== ===============================================================================
vocabulary  nothing
errors      nothing
files       nothing (reading a file a person named, bounded)
kernel      vocabulary, errors
model       errors
when        model, errors (a time or a span as the facade reads it)
persist     errors
observe     kernel, vocabulary
render      observe, vocabulary
bpmn        model, files, errors
engine      kernel, model, vocabulary, errors (its store, fact log and tape are handed to
            it: ``Core(store=..., facts=..., tape=...)``; it names what it needs of them
            with protocols, ``engine.runtime.outside.Outside``,
            ``engine.durability.journal.Store``)
travel      engine, kernel, model, observe, persist, vocabulary, when, errors
instance    engine (records), model, errors (a handle reads its engine through
            ``instance.Reader``)
reads       travel, engine, persist, errors (what ``Engine``'s readers say of an instance
            or a task, resident, dehydrated or finished)
api         reads, travel, instance, engine, kernel, model, observe, persist, vocabulary, when,
            errors (the widgets ``Engine.dashboard`` and ``Instance.lineage`` open are
            found through ``instance.views()``, which the package root registers)
ui          api, instance, travel, engine, bpmn, render, observe, model, vocabulary, errors
cli         bpmn, errors
population  api, kernel, model, observe, when, files, errors (a scenario's run drives the public
            ``Engine``; its draws are the kernel's ``unit``)
=========== ===============================================================================

``test_no_part_imports_above_its_layer`` fails naming each offending module, line and
import; ``test_the_check_sees_a_planted_violation`` checks the check.
"""

import ast
import functools
import re

import test_structure
from test_structure import PACKAGE

#: Every module of the package, parsed once for all the checks here.
modules = functools.cache(test_structure.modules)

#: part -> the parts it may import. Lowest first (the order is the layering).
LAYERS: dict[str, set[str]] = {
    "vocabulary": set(),
    "errors": set(),
    "files": set(),
    "kernel": {"vocabulary", "errors"},
    "model": {"errors"},
    "when": {"model", "errors"},
    "persist": {"errors"},
    "observe": {"kernel", "vocabulary"},
    "render": {"observe", "vocabulary"},
    "bpmn": {"model", "files", "errors"},
    "engine": {"kernel", "model", "vocabulary", "errors"},
    "travel": {"engine", "kernel", "model", "observe", "persist", "vocabulary", "when",
               "errors"},
    "instance": {"engine", "model", "errors"},
    "reads": {"travel", "engine", "persist", "errors"},
    "api": {"reads", "travel", "instance", "engine", "kernel", "model", "observe", "persist",
            "vocabulary", "when", "errors"},
    "ui": {"api", "instance", "travel", "engine", "bpmn", "render", "observe", "model",
           "vocabulary", "errors"},
    "cli": {"bpmn", "errors"},
    "population": {"api", "kernel", "model", "observe", "when", "files", "errors"},
}
#: The package root and ``python -m gobpm_nb``: on top, they may import anything.
TOP = {"", "__main__"}


def part(module):
    """The part a module belongs to: ``gobpm_nb.engine.core`` -> ``engine``, the root ->
    ``""``."""
    names = module.split(".")
    return names[1] if len(names) > 1 else ""


def every_import(name, path, tree, known):
    """(line, imported module, the import's text) for each import of the package in a
    module: top-level, lazy and type-only alike. ``from X import y`` imports ``X.y`` when
    that is a module (``from .. import vocabulary``), else ``X``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] \
                if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                hit = sub if sub in known else target if target in known else None
                if hit is not None:
                    out.append((node.lineno, hit, ast.unparse(node)))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, ast.unparse(node))
                       for a in node.names if a.name in known)
    return out


def violations(mods, layers=LAYERS, top=TOP, root=PACKAGE.parent):
    """``path:line: import`` for each import of a part its layer does not allow (paths
    from ``root``)."""
    found = []
    for name, (full, tree) in mods.items():
        path = full.relative_to(root)
        mine = part(name)
        for line, target, text in every_import(name, full, tree, mods):
            theirs = part(target)
            if mine in top or theirs == mine:
                continue
            if mine not in layers:
                found.append(f"{path}:{line}: {name} is in no layer ({text})")
            elif theirs not in layers[mine]:
                found.append(f"{path}:{line}: {mine} may not import {theirs or 'the root'}: "
                             f"{text}")
    return sorted(set(found))


def test_the_table_is_a_layering():
    """Each part imports only parts listed before it: no circle between parts can pass."""
    order = list(LAYERS)
    for mine, allowed in LAYERS.items():
        assert all(order.index(a) < order.index(mine) for a in allowed), mine


def test_every_part_is_in_the_table():
    parts = {part(name) for name in modules()}
    assert parts - TOP == set(LAYERS)


def test_no_part_imports_above_its_layer():
    """Every import of gobpm_nb (lazy and type-only ones too) goes down the table."""
    found = violations(modules())
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_the_check_sees_a_planted_violation(tmp_path):
    """A low part importing a high one, lazily or for types only, is named with its line."""
    pkg = tmp_path / "gobpm_nb"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    files = {
        "low/__init__.py": "",
        "low/a.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                    "    from ..high.b import B\n",
        "low/c.py": "def f():\n    from ..high import b\n",
        "high/__init__.py": "",
        "high/b.py": "from ..low.a import x\nfrom .. import low\n",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    mods = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = (path, ast.parse(path.read_text()))
    found = violations(mods, {"low": set(), "high": {"low"}}, {""}, tmp_path)
    assert found == ["gobpm_nb/low/a.py:4: low may not import high: from ..high.b import B",
                     "gobpm_nb/low/c.py:2: low may not import high: from ..high import b"]


def test_the_package_is_where_the_check_looks():
    assert (PACKAGE / "engine" / "core.py").exists()



#: Inside the engine, part -> the parts it may import (lowest first); a part is a subpackage
#: of ``gobpm_nb.engine`` or one of its own modules. ``core`` builds the engine from all of
#: them and sits on top (with the package's ``__init__``).
ENGINE_LAYERS: dict[str, set[str]] = {
    "fast": set(),
    "state": set(),
    "runtime": {"state"},
    "elements": {"runtime", "state"},
    "durability": {"runtime", "state"},
    "residency": {"durability", "elements", "runtime", "state"},
}
ENGINE = f"{PACKAGE.name}.engine"
ENGINE_TOP = {"", "core"}


def engine_part(module):
    """``gobpm_nb.engine.state.waits`` -> ``state``; the engine package itself -> ``""``."""
    names = module.split(".")
    return names[2] if len(names) > 2 else ""


def engine_violations(mods, layers=ENGINE_LAYERS):
    """``module:line: import`` for each import between two parts of the engine that its
    table does not allow."""
    found = []
    for name, (full, tree) in mods.items():
        if not name.startswith(ENGINE + ".") or engine_part(name) in ENGINE_TOP:
            continue
        mine = engine_part(name)
        for line, target, text in every_import(name, full, tree, mods):
            if not target.startswith(ENGINE + "."):
                continue
            theirs = engine_part(target)
            if theirs != mine and theirs not in layers.get(mine, ()):
                found.append(f"{name}:{line}: {mine} may not import {theirs}: {text}")
    return sorted(set(found))


def test_the_engine_table_is_a_layering():
    order = list(ENGINE_LAYERS)
    for mine, allowed in ENGINE_LAYERS.items():
        assert all(order.index(a) < order.index(mine) for a in allowed), mine


def test_every_part_of_the_engine_is_in_its_table():
    parts = {engine_part(n) for n in modules() if n.startswith(ENGINE + ".")}
    assert parts - ENGINE_TOP == set(ENGINE_LAYERS)


def test_no_part_of_the_engine_imports_above_its_layer():
    """Inside the engine too, every import (lazy and type-only ones) goes down the table: no
    part imports ``core``, which builds them (each names what it needs of the engine with a
    protocol, or is handed its collaborators)."""
    found = engine_violations(modules())
    assert not found, "imports against the engine's layers:\n" + "\n".join(found)


def test_the_engine_check_sees_a_planted_violation():
    """The engine's check names a low part importing a higher one."""
    mods = {name: mod for name, mod in modules().items()
            if name.startswith(ENGINE + ".state")}
    found = engine_violations(mods, {"state": set(), "runtime": {"state"}})
    assert found == []
    flipped = engine_violations(modules(), {"state": {"runtime"}, "runtime": set()})
    assert any(f.startswith(f"{ENGINE}.runtime.run:") and "runtime may not import state" in f
               for f in flipped), flipped

#: Type-only imports that close a circle between modules, each with why it is still there.
#: A fix removes its line here (``test_the_known_type_only_circles_are_still_there`` says
#: when one is gone); a new one fails ``test_no_type_only_circle_between_modules``.
KNOWN_TYPE_ONLY: dict[tuple[str, str], str] = {
    ("gobpm_nb.engine.state.records", "gobpm_nb.engine.state.waits"):
        "a Track names its Wait; the waits are built on records (Task, Job) and holders",
    ("gobpm_nb.travel.history", "gobpm_nb.travel.state"):
        "the history records an EngineState's commands; EngineState holds its History",
    ("gobpm_nb.model.interchange", "gobpm_nb.model.process"):
        "a codec reads and writes a Process, which finds its codec in the registry",
}


def module_graph(type_only=True):
    """Module -> the modules of the package it imports (lazy ones included; type-only ones
    when ``type_only``), without a package's own children or a module's own package."""
    mods = modules()
    graph = {}
    for name, (path, tree) in mods.items():
        skip = set()
        if not type_only:
            for node in ast.walk(tree):
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    skip.update(n.lineno for b in node.body for n in ast.walk(b)
                                if isinstance(n, (ast.Import, ast.ImportFrom)))
        graph[name] = {t for line, t, _ in every_import(name, path, tree, mods)
                       if line not in skip and t != name and not name.startswith(t + ".")
                       and not (path.name == "__init__.py" and t.startswith(name + "."))}
    return graph


def test_no_type_only_circle_between_modules():
    """Counting type-only imports too, no circle between modules, but for the known ones."""
    graph = module_graph()
    for (a, b) in KNOWN_TYPE_ONLY:
        graph[a].discard(b)
    found = test_structure.circles(graph)
    assert not found, "circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_known_type_only_circles_are_still_there():
    """Each known exception is a type-only import that closes a circle today."""
    typed, run = module_graph(), module_graph(type_only=False)
    for a, b in KNOWN_TYPE_ONLY:
        assert b in typed[a] and b not in run[a], (a, b)
        assert any(a in c and b in c for c in test_structure.circles(typed)), (a, b)


def page_table():
    """docs/architecture.md's table of layers: row -> what it may import (None: anything)."""
    text = test_structure.ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str] | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        may = None if cells[-1] == "anything" else set(re.findall(r"`([\w.]+)`", cells[-1]))
        for name in re.findall(r"`([\w.]+)`", cells[0]):
            table[name] = may
    return table


def test_the_architecture_page_shows_the_table_this_checks():
    """docs/architecture.md's table of layers is this one, row for row, in the same order."""
    table = page_table()
    top = {name for name, may in table.items() if may is None}
    assert top == {"gobpm_nb", "__main__"}, top
    assert [n for n in table if n not in top] == list(LAYERS)
    assert {n: may for n, may in table.items() if n not in top} == LAYERS


def test_the_architecture_page_shows_the_engine_table_this_checks():
    """docs/architecture.md's table of the engine's parts is ENGINE_LAYERS, in its order,
    and its tree names every module of the engine."""
    text = test_structure.ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Inside the engine", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 2:
            rows[cells[0].strip("`")] = (None if cells[1] == "anything"
                                         else set(re.findall(r"`(\w+)`", cells[1])))
    assert [n for n in rows if rows[n] is not None] == list(ENGINE_LAYERS)
    assert {n: m for n, m in rows.items() if m is not None} == ENGINE_LAYERS
    tree = section.split("```", 2)[1]
    named = set(re.findall(r"(\w+)\.py", tree))
    files = {n.rpartition(".")[2] for n in modules() if n.startswith(ENGINE + ".")}
    assert files - named - set(ENGINE_LAYERS) - {"engine"} == set()
