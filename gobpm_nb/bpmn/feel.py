"""FEEL's built-in functions in a file's expressions, read for ``expressions.py``'s parser.

What is read: ``is defined(a.b)``, ``count(list)``, ``string length(s)``, ``contains(s, m)``,
``starts with(s, m)``, ``ends with(s, m)``, ``upper case(s)``, ``lower case(s)``,
``list contains(list, v)`` and ``matches(s, pattern, flags?)`` whose pattern and flags are
written as strings (checked as they are read); ``if c then a else b``; list literals
``[1, "a"]`` and context literals ``{a: 1, "b": x}``.
Each call becomes the safe evaluator's function of the same meaning (``model/feelfns.py``,
``defined``). Any other function is refused, naming it.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from ..model.feelfns import FLAGS

Node = tuple[Any, ...]

#: FEEL's name -> (the safe evaluator's, the counts of arguments it takes)
FUNCTIONS: dict[str, tuple[str, tuple[int, ...]]] = {
    "is defined": ("defined", (1,)), "count": ("count", (1,)),
    "string length": ("string_length", (1,)), "contains": ("contains", (2,)),
    "starts with": ("starts_with", (2,)), "ends with": ("ends_with", (2,)),
    "upper case": ("upper_case", (1,)), "lower case": ("lower_case", (1,)),
    "list contains": ("list_contains", (2,)), "matches": ("matches", (2, 3)),
}
_COMMA, _OPEN, _CLOSE = ("other", ","), ("op", "("), ("op", ")")
#: The words that end a part of ``if c then a else b``
CLAUSES = ("then", "else")


class Parser(Protocol):
    """What is used of ``expressions._Parser``."""

    tokens: list[tuple[str, str]]
    at: int
    depth: int

    def peek(self) -> tuple[str, str] | None: ...
    def take(self) -> tuple[str, str]: ...
    def disjunction(self) -> Node: ...
    def deeper(self) -> None: ...


class Refused(Exception):
    """Why a call does not translate (the parser reports it as its own refusal)."""


def called(parser: Parser, first: str) -> str | None:
    """The FEEL function whose name starts at ``first`` (the name just taken) and is followed
    by a parenthesis, its name's other words taken; None when there is none."""
    follow = parser.peek()
    if follow is not None and follow[0] == "name" and f"{first} {follow[1]}" in FUNCTIONS \
            and parser.tokens[parser.at + 1:parser.at + 2] == [_OPEN]:
        parser.take()
        return f"{first} {follow[1]}"
    return first if first in FUNCTIONS and follow == _OPEN else None


def call(parser: Parser, name: str) -> Node:
    """The call of FEEL function ``name``, its arguments read: ``("call", fn, args)``."""
    parser.take()  # the parenthesis
    args: list[Node] = []
    while parser.peek() != _CLOSE:
        if args and parser.take() != _COMMA:
            raise Refused(f"the arguments of {name}(...) are not separated by commas")
        args.append(argument(parser))
    parser.take()
    fn, counts = FUNCTIONS[name]
    if len(args) not in counts:
        raise Refused(f"{name}(...) takes {' or '.join(map(str, counts))} arguments, "
                      f"not {len(args)}")
    if name == "is defined":
        return ("call", fn, [("lit", step) for step in _path(args[0], name)])
    if name == "matches":
        _check_pattern(args[1:])
    return ("call", fn, args)


def conditional(parser: Parser) -> Node:
    """FEEL's ``if c then a else b`` (``if`` taken): ``a`` when ``c`` is true, else ``b`` —
    also when ``c`` is null or not a boolean, as FEEL has it."""
    parser.deeper()
    condition = parser.disjunction()
    if parser.take() != ("name", "then"):
        raise Refused("its if has no then")
    yes = parser.disjunction()
    if parser.take() != ("name", "else"):
        raise Refused("its if has no else")
    no = parser.disjunction()
    parser.depth -= 1
    return ("if", condition, yes, no)


def argument(parser: Parser) -> Node:
    """One argument: an expression (a list literal among them)."""
    return parser.disjunction()


def collection(parser: Parser, opening: str) -> Node:
    """A list literal ``[1, "a"]`` or a context literal ``{a: 1, "b": x}`` (its opening
    taken): a list, a dict of the values by their keys (names or strings)."""
    parser.deeper()
    closing = ("other", "]" if opening == "[" else "}")
    items: list[Any] = []
    while parser.peek() != closing:
        if items and parser.take() != _COMMA:
            raise Refused(f"the items of a {'list' if opening == '[' else 'context'} are not "
                          "separated by commas")
        if opening == "[":
            items.append(parser.disjunction())
            continue
        kind, key = parser.take()
        if kind not in ("name", "string") or parser.take() != ("other", ":"):
            raise Refused("a context's entries are written key: value (a name or a string)")
        items.append((re.sub(r"\\(.)", r"\1", key[1:-1]) if kind == "string" else key,
                      parser.disjunction()))
    parser.take()
    parser.depth -= 1
    return ("list", items) if opening == "[" else ("context", items)


def _path(node: Node, name: str) -> list[str]:
    """The fields a name or path reads (``a.b``: a, b)."""
    if node[0] == "name":
        return [node[1]]
    if node[0] == "item" and isinstance(node[2], str):
        return _path(node[1], name) + [node[2]]
    raise Refused(f"{name}(...) takes a name or a path (a.b)")


def _check_pattern(args: list[Node]) -> None:
    """A pattern and flags written as strings, which Python's expressions read alike."""
    if any(a[0] != "lit" or not isinstance(a[1], str) for a in args):
        raise Refused("matches(...) takes its pattern and flags as strings")
    pattern, flags = args[0][1], args[1][1] if len(args) > 1 else ""
    if any(f not in FLAGS for f in flags):
        raise Refused(f"matches(...) flag {flags!r} is not made of i, s, m, x")
    if re.search(r"\\[pPk]|\(\?[<P]|\[\w*-\[", pattern):
        raise Refused(f"matches(...) pattern {pattern!r} uses what FEEL and Python read "
                      "differently")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise Refused(f"matches(...) pattern {pattern!r} is not a regular expression "
                      f"({exc})") from None
