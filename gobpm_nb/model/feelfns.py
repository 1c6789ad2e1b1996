"""FEEL's built-in functions that a file's expressions call, as the safe evaluator's
functions (``bpmn/feel.py`` translates the calls to these names).

Each does what FEEL's does for the values it takes. Where FEEL gives null (an argument that
is null or of another type), these raise TypeError instead: the expression then stops its
instance with an incident, where FEEL's null would have made a condition false, or, under
``not(...)``, true — a run that stops never goes a way FEEL would not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

#: FEEL's regular-expression flags that Python's read the same way
FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}


def _text(value: Any, fn: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{fn} takes a string, not {type(value).__name__}")
    return value


def _items(value: Any, fn: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{fn} takes a list, not {type(value).__name__}")
    return value


def count(items: Any) -> int:
    """FEEL ``count(list)``: how many items."""
    return len(_items(items, "count"))


def string_length(text: Any) -> int:
    """FEEL ``string length(string)``: how many characters."""
    return len(_text(text, "string length"))


def contains(text: Any, match: Any) -> bool:
    """FEEL ``contains(string, match)``."""
    return _text(match, "contains") in _text(text, "contains")


def starts_with(text: Any, match: Any) -> bool:
    """FEEL ``starts with(string, match)``."""
    return _text(text, "starts with").startswith(_text(match, "starts with"))


def ends_with(text: Any, match: Any) -> bool:
    """FEEL ``ends with(string, match)``."""
    return _text(text, "ends with").endswith(_text(match, "ends with"))


def upper_case(text: Any) -> str:
    return _text(text, "upper case").upper()


def lower_case(text: Any) -> str:
    return _text(text, "lower case").lower()


def list_contains(items: Any, value: Any) -> bool:
    """FEEL ``list contains(list, element)``: whether an item equals ``element`` (a number
    equals a number of the same value; true is not 1)."""
    return any(type(v) is type(value) and v == value or
               _number(v) and _number(value) and v == value for v in _items(items,
                                                                            "list contains"))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def matches(text: Any, pattern: Any, flags: Any = "") -> bool:
    """FEEL ``matches(input, pattern, flags?)``: whether the pattern matches anywhere in
    the input (XPath's ``fn:matches``)."""
    how = 0
    for flag in _text(flags, "matches"):
        if flag not in FLAGS:
            raise ValueError(f"matches: flag {flag!r} is not one of i, s, m, x")
        how |= FLAGS[flag]
    return re.search(_text(pattern, "matches"), _text(text, "matches"), how) is not None


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "count": count, "string_length": string_length, "contains": contains,
    "starts_with": starts_with, "ends_with": ends_with, "upper_case": upper_case,
    "lower_case": lower_case, "list_contains": list_contains, "matches": matches,
}


def defined(names: Mapping[str, Any]) -> Callable[..., bool]:
    """FEEL ``is defined(a.b)`` over the data ``names``, called as ``defined('a', 'b')``:
    whether the field (and each field on its path) exists; a field that holds null is
    defined."""
    def is_defined(*path: Any) -> bool:
        value: Any = names
        for step in path:
            if not isinstance(value, Mapping) or step not in value:
                return False
            value = value[step]
        return True
    return is_defined
