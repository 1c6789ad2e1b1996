"""Conditions and keys from users: Python callables, field names, or safe expressions.

String expressions are parsed once and evaluated by ``simpleeval`` over the instance data:
names resolve to data fields, there are no attribute lookups on private names, no imports
and no calls except a few harmless builtins and two that read a field by its name:
``variable('x')`` (its value, None or the default given when it is missing, as JUEL's
``execution.getVariable``) and ``defined('x')`` (whether it is there; ``defined('a', 'b')``
whether ``a`` holds a field ``b``, FEEL's ``is defined(a.b)``). ``eval``/``exec``
are never used.
"""

from __future__ import annotations

import ast
import copy
import keyword
from collections.abc import Callable, Mapping
from typing import Any

from simpleeval import EvalWithCompoundTypes, NameNotDefined

from ..errors import ModelError
from .feelfns import FUNCTIONS as FEEL_FUNCTIONS
from .feelfns import defined
from .fingerprint import fingerprint

SAFE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": len, "min": min, "max": max, "abs": abs, "round": round,
    "str": str, "int": int, "float": float, "bool": bool,
    **FEEL_FUNCTIONS,
}
#: ``defined('a', 'b')``: whether the field ``a`` holds one named ``b`` (FEEL's ``is
#: defined(a.b)``); given the data each time an expression is evaluated
DEFINED = "defined"

#: The functions that read the data by a field's name (``Expr.__call__`` binds them).
DATA_FUNCTIONS = ("variable", DEFINED)

#: The correlation key of a message wait that correlates by the message's name alone
#: (``key=NO_KEY``): its value is None, the key of a message published without one
#: (``publish_message(name)``, or thrown by an event with no key), so such a message reaches
#: the first of these waits armed, in arming order. Design-review mode gives it to a message
#: catch whose file names no key; ``key=None`` (no key given) is still refused.
NO_KEY = "None"


class Expr:
    """A compiled condition or key: evaluate with ``expr(data)``."""

    __slots__ = ("source", "_fn", "_tree", "_field", "_defined")

    def __init__(self, source: str | Callable[[dict[str, Any]], Any]):
        self.source = source
        self._fn: Callable[[dict[str, Any]], Any] | None = None
        self._tree: Any = None
        self._field: str | None = None
        self._defined = False
        if callable(source):
            self._fn = source
        elif isinstance(source, str) and source.isidentifier() and \
                not keyword.iskeyword(source):
            self._field = source
        elif isinstance(source, str):
            try:
                self._tree = ast.parse(source.strip(), mode="eval").body
            except SyntaxError as exc:
                raise ModelError(f"expression {shown(source)} does not parse: "
                                 f"{exc.msg}") from None
            except (RecursionError, MemoryError):  # Python's parser gave up on the nesting
                raise ModelError(f"expression {shown(source)} nests deeper than "
                                 f"{MAX_DEPTH} levels") from None
            _refuse_deep(source, self._tree)
            _refuse_unsafe(source, self._tree)
            self._defined = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                                n.func.id in DATA_FUNCTIONS for n in ast.walk(self._tree))
        else:
            raise ModelError(f"expression {source!r} is neither a string nor a callable")

    @property
    def python(self) -> bool:
        """Whether it calls a Python callable (an engine records what such a call answered,
        so that a replay is served the answer and never calls it again)."""
        return self._fn is not None

    @property
    def field(self) -> str | None:
        """The data field named, when the source is a bare field name."""
        return self._field

    def __call__(self, data: Mapping[str, Any]) -> Any:
        if self._fn is not None:
            return self._fn(copy.deepcopy(dict(data)))
        if self._field is not None:
            if self._field not in data:
                raise KeyError(self._field)
            return data[self._field]
        # A deep copy: methods such as ``items.append(1)`` must not change the instance data.
        names = copy.deepcopy(dict(data))
        functions = {**SAFE_FUNCTIONS, **_data_functions(names)} if self._defined \
            else SAFE_FUNCTIONS
        ev = EvalWithCompoundTypes(names=names, functions=functions)
        try:
            return ev.eval(str(self.source), previously_parsed=self._tree)
        except NameNotDefined as exc:
            raise KeyError(exc.name) from None

    def describe(self) -> str:
        """A stable text for views and messages: the source, or a callable's name."""
        if self._fn is not None:
            fn = self._fn
            return f"<fn {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}>"
        return str(self.source)

    def fingerprint(self) -> str:
        """A stable text for signatures: the source, or a callable's fingerprint."""
        if self._fn is not None:
            return f"<fn {fingerprint(self._fn)}>"
        return str(self.source)

    def __repr__(self) -> str:
        return f"Expr({self.describe()!r})"


def _data_functions(names: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """``variable`` and ``defined`` over one evaluation's copy of the data."""

    def variable(name: str, default: Any = None) -> Any:
        return names.get(name, default)

    return {"variable": variable, DEFINED: defined(names)}


#: How deeply an expression may nest (parentheses, ``not``, operators): the evaluator walks
#: the tree recursively, so a deeper one would fail with RecursionError when it runs.
MAX_DEPTH = 100


def shown(source: str, width: int = 60) -> str:
    """How a message quotes an expression: its repr, cut to ``width`` characters."""
    text = source.strip()
    return repr(text) if len(text) <= width else repr(text[:width]) + "..."


def _refuse_deep(source: str, tree: ast.AST) -> None:
    """Refuse a tree more than ``MAX_DEPTH`` levels deep (measured without recursion)."""
    todo = [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise ModelError(f"expression {shown(source)} nests deeper than {MAX_DEPTH} "
                             "levels")
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _refuse_unsafe(source: str, tree: ast.AST) -> None:
    """Refuse dunders, private attributes and unknown functions when built, not when run."""
    for node in ast.walk(tree):
        bad = None
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            bad = node.id
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            bad = node.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id not in SAFE_FUNCTIONS and node.func.id not in DATA_FUNCTIONS:
            bad = node.func.id
        if bad is not None:
            raise ModelError(f"expression {source!r} uses {bad!r}, which is not allowed")
