"""The package's shape (docs/architecture.md): no import cycle anywhere at run time, the
engine layers never read the wall clock, small modules, short functions (the table of layers
itself is checked by tests/test_layers.py, type-only imports included)."""

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gobpm_nb"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


@functools.cache
def modules():
    """Module name -> (path, parsed tree), for every module of the package (parsed once per
    test run: callers only read it)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = (path, ast.parse(path.read_text()))
    return out


def imports(name, path, tree, known):
    """What a module imports from the package, lazy imports included; imports under
    ``if TYPE_CHECKING:`` (annotations only) do not count."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] \
                if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for t in [target] + [f"{target}.{a.name}" for a in node.names]:
                if t in known:
                    found.add(t)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
    # a package re-exporting its own children, or a module naming its own package, is no cycle
    return {t for t in found if t != name and not name.startswith(t + ".")
            and not (path.name == "__init__.py" and t.startswith(name + "."))}


@functools.cache
def import_graph():
    """Module name -> the package's modules it imports (``imports``), for every module."""
    mods = modules()
    return {name: imports(name, path, tree, mods) for name, (path, tree) in mods.items()}


def circles(graph):
    """Each circle found walking ``graph`` (as lists of modules, the first one repeated)."""
    state, found = {}, []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    return found


def test_no_import_cycle_in_the_package():
    """Walking every import (lazy ones too) finds no cycle among gobpm_nb's modules."""
    assert circles(import_graph()) == []


def test_the_walk_sees_a_cycle_when_there_is_one(tmp_path):
    """The import walk itself: two modules importing each other are found."""
    a = ast.parse("from . import b\n")
    b = ast.parse("def f():\n    from .a import x\n")
    pkg = tmp_path / "gobpm_nb" / "pkg"
    known = {"gobpm_nb.pkg.a": None, "gobpm_nb.pkg.b": None}
    assert imports("gobpm_nb.pkg.a", pkg / "a.py", a, known) == {"gobpm_nb.pkg.b"}
    assert imports("gobpm_nb.pkg.b", pkg / "b.py", b, known) == {"gobpm_nb.pkg.a"}


def test_modules_are_small_and_functions_short():
    """No module over 500 lines, no function over 60."""
    long_modules, long_functions = [], []
    for name, (path, tree) in modules().items():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            long_modules.append((name, lines))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long_functions.append((name, node.name, size))
    assert long_modules == [] and long_functions == []


#: What the engine layers never import: the wall clock, chance, threads and asyncio
#: (Invariants 14 and 18, docs/architecture.md).
NONDETERMINISTIC = {"time", "random", "uuid", "secrets", "threading", "asyncio"}
ENGINE_LAYERS = {"kernel", "model", "bpmn", "travel.tape", "engine", "persist", "observe",
                 "render"}


def test_the_engine_layers_never_read_the_wall_clock_or_draw_at_random():
    """No module of kernel, model, bpmn, engine (nor the tape it uses), persist, observe or
    render imports time, random, uuid, secrets, threading or asyncio, or asks datetime or
    date for now/today."""
    found = []
    for name, (_path, tree) in sorted(modules().items()):
        parts = name.split(".")[1:]  # gobpm_nb.travel.tape -> travel.tape, else its package
        row = "travel.tape" if parts[:2] == ["travel", "tape"] else (parts[0] if parts else "")
        if row not in ENGINE_LAYERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                heads = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                heads = {node.module.split(".")[0]}
            elif isinstance(node, ast.Attribute) and node.attr in {"now", "utcnow", "today"}:
                heads = {ast.unparse(node)}  # kernel.now is the virtual clock: allowed
            else:
                continue
            found += [f"{name}: {h}" for h in sorted(heads) if h in NONDETERMINISTIC
                      or h.endswith(("datetime.now", "datetime.utcnow", "date.today"))]
    assert found == []


def test_the_architecture_page_names_only_files_and_tests_that_exist():
    """Every module, test file and test docs/architecture.md names is there: the page says
    where each invariant is kept and checked, so a rename must take it along."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    tests_dir = ROOT / "tests"
    defined = {m for path in tests_dir.glob("*.py")
               for m in re.findall(r"^def (test_\w+)", path.read_text(), re.MULTILINE)}
    missing = []
    for name in sorted(set(re.findall(r"`([\w/.]+\.py)`", text))):
        path = ROOT / name if name.startswith("tests/") else PACKAGE / name
        if not path.is_file():
            missing.append(name)
    missing += sorted(set(re.findall(r"`(test_\w+)`", text)) - defined)
    assert missing == []
