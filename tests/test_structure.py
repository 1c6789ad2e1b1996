"""The package's shape: no import cycle anywhere, small modules, short functions."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gobpm_nb"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def modules():
    """Module name -> parsed tree, for every module of the package."""
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


def test_no_import_cycle_in_the_package():
    """Walking every import (lazy ones too) finds no cycle among gobpm_nb's modules."""
    mods = modules()
    graph = {name: imports(name, path, tree, mods) for name, (path, tree) in mods.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert cycles == []


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
