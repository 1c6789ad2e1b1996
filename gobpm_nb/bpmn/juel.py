"""What JUEL's method calls and Flowable's variable functions mean, in the safe evaluator's
syntax (``expressions.py`` parses the text; this reads a call it meets).

- A method on a value in a condition: ``x.equals(v)`` is ``x == v``, ``x.isEmpty()``
  ``len(x) == 0``, ``x.size()`` and ``x.length()`` ``len(x)``, ``x.contains(v)`` ``v in x``
  (a string's substring, a list's item, a dict's key), ``x.startsWith(v)`` and
  ``x.endsWith(v)`` the string methods; ``execution.getVariable('x')`` the variable ``x``,
  None when it is missing, as JUEL's null (``variable('x')``); Camunda Spin's JSON
  ``customer.prop("age").numberValue()`` the field ``customer['age']`` (a JSON variable is
  a dict here; ``numberValue``, ``stringValue`` and ``boolValue`` give the value itself).
- Flowable's functions of a variable, under the prefixes ``var``, ``vars`` and
  ``variables``: the comparisons (``var:equals(x, 1)``: ``x == 1``), ``get`` (``variable``),
  ``getOrDefault`` (``variable('x', default)``), ``exists`` (``defined('x')``),
  ``isEmpty``/``empty`` and ``isNotEmpty``/``notEmpty`` (missing, None, '', [] or {}),
  ``contains`` and ``containsAny`` (every or any of the values in it).

Anything else (a bean's method, ``variables:base64``...) is refused, naming it.
"""

from __future__ import annotations

import keyword
import re
from typing import Any, Protocol

Node = tuple[Any, ...]  # ("or"|"and", [nodes]) | ("not", node) | ("cmp", op, a, b) | ...

#: Flowable's JUEL functions comparing a variable with a value, ``var:equals(name, 1)``
#: (under the prefixes var, vars and variables): the comparison each reads as
COMPARISONS = {
    "equals": "==", "eq": "==", "notEquals": "!=", "ne": "!=", "lowerThan": "<", "lt": "<",
    "lowerThanOrEquals": "<=", "lte": "<=", "greaterThan": ">", "gt": ">",
    "greaterThanOrEquals": ">=", "gte": ">="}
PREFIXES = ("var", "vars", "variables")
RESERVED = {"for", "some", "every", "if", "then", "else", "in", "between", "instance", "of",
            "function", "return", "satisfies", "empty", "div", "mod", "instanceof"}
#: what a variable that Flowable calls empty may hold
_EMPTY: Node = ("lit", (None, "", [], {}))
_METHODS = "equals, isEmpty, size, length, contains, startsWith, endsWith, Spin's prop('k')"
#: Camunda Spin's JSON node values: a node read by ``prop`` is the data's own value here
_SPIN_VALUES = ("numberValue", "stringValue", "boolValue")


class Refused(Exception):
    """Why a text does not translate."""


class Reader(Protocol):
    """What of the parser a call needs: its tokens and its expressions."""

    def peek(self) -> tuple[str, str] | None: ...
    def take(self) -> tuple[str, str]: ...
    def disjunction(self) -> Node: ...


def string(text: str) -> str:
    """A quoted literal's value: a backslash escapes the character after it."""
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def plain(name: str) -> bool:
    return name.isidentifier() and name not in RESERVED and not keyword.iskeyword(name) \
        and not name.startswith("__")


def arguments(p: Reader) -> list[Node]:
    """``(a, b)`` after a call's name: the expressions, in order."""
    if p.take() != ("op", "("):
        raise Refused("a call's '(' is missing")
    out: list[Node] = []
    if p.peek() == ("op", ")"):
        p.take()
        return out
    while True:
        out.append(p.disjunction())
        token = p.take()
        if token == ("op", ")"):
            return out
        if token != ("other", ","):
            raise Refused("a call's arguments are not closed")


def method(p: Reader, target: Node, name: str, shown: str) -> Node:
    """``target.name(...)``: what it reads as; refused when it is not one of ``_METHODS``."""
    args = arguments(p)
    one = len(args) == 1
    if name == "equals" and one:
        return ("cmp", "==", target, args[0])
    if name == "isEmpty" and not args:
        return ("cmp", "==", ("call", "len", [target]), ("lit", 0))
    if name in ("size", "length") and not args:
        return ("call", "len", [target])
    if name == "contains" and one:
        return ("in", args[0], target)
    if name in ("startsWith", "endsWith") and one:
        return ("method", target, name.lower(), args)
    if name == "prop" and one and args[0][0] == "lit" and isinstance(args[0][1], str):
        return ("item", target, args[0][1])
    if name in _SPIN_VALUES and not args:
        return target
    if target == ("name", "execution") and name == "getVariable" and one and \
            args[0][0] == "lit" and isinstance(args[0][1], str) and plain(args[0][1]):
        return ("call", "variable", args)
    raise Refused(f"it calls {name!r} on {shown!r}; only a field (a.b), a JUEL index "
                  f"(a[0], a['b']), the methods {_METHODS} and execution.getVariable('x') "
                  "are read")


def variable_function(p: Reader, prefix: str) -> Node:
    """Flowable's ``var:fn(name, values...)`` (see the module's docstring)."""
    p.take()  # the ':'
    kind, fn = p.take()
    if p.peek() != ("op", "("):
        raise Refused(f"it names {prefix}:{fn} without calling it")
    args = arguments(p)
    name = _variable(args[0] if args else ("lit", None), prefix, fn)
    rest = args[1:]
    if any(a[0] != "lit" for a in rest):
        raise Refused(f"{prefix}:{fn} takes literal values after the variable")
    value: Node = ("call", "variable", [("lit", name)])
    if fn in COMPARISONS and len(rest) == 1:
        return ("cmp", COMPARISONS[fn], ("name", name), rest[0])
    found = {"get": value, "getOrDefault": ("call", "variable", [("lit", name), *rest]),
             "exists": ("call", "defined", [("lit", name)]),
             "isEmpty": ("in", value, _EMPTY), "empty": ("in", value, _EMPTY),
             "isNotEmpty": ("notin", value, _EMPTY), "notEmpty": ("notin", value, _EMPTY)}
    if fn in found and len(rest) == (1 if fn == "getOrDefault" else 0):
        return found[fn]
    if fn in ("contains", "containsAny") and rest:
        held: Node = ("call", "variable", [("lit", name), ("lit", ())])
        parts = [("in", v, held) for v in rest]
        return parts[0] if len(parts) == 1 else ("and" if fn == "contains" else "or", parts)
    raise Refused(f"it calls {prefix}:{fn}; of the prefix {prefix!r} only the comparisons "
                  "(equals, lowerThan...), get, getOrDefault, exists, isEmpty, isNotEmpty, "
                  "contains and containsAny are read")


def _variable(arg: Node, prefix: str, fn: str) -> str:
    """The variable a function names: a plain name, or its name in quotes."""
    name = arg[1] if arg[0] in ("name", "lit") else None
    if not isinstance(name, str) or not plain(name):
        raise Refused(f"{prefix}:{fn} names no plain variable ({name!r})")
    return name
