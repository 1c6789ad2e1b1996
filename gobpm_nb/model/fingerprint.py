"""Fingerprints of callables: a changed function makes a changed process signature.

``fingerprint(fn)`` is a short hex digest, the same in every process, under any
``PYTHONHASHSEED`` and on every Python version the package supports (3.11 to Pyodide's
3.14): the same process built from the same source has the same signature everywhere, so a
store written under one Python recovers under another. It covers:

- a Python function: its module and qualified name; its **source text** (as ``inspect``
  reads it, dedented, trailing spaces dropped), which includes its nested functions,
  lambdas and comprehensions, its decorators, its docstring and its comments; its defaults
  and keyword defaults; the values in its closure. A lambda's source text is the whole
  statement it is written in;
- ``functools.partial``: the function, the positional arguments and the keywords;
- a bound method: the function and the qualified name of the type it is bound to;
- a callable instance: its class's qualified name and the fingerprint of ``__call__``;
- a class, builtin or other C function: its module and qualified name only.

Defaults, closure values and partial arguments count by value when they are None, bool,
int, float, str, bytes, or tuples, lists and dicts of those; a callable by its fingerprint;
anything else by its type's qualified name only.

Why the source and not the code object: bytecode belongs to the interpreter (opcodes,
constant folding, what lands in ``co_consts`` and ``co_varnames`` change with every minor
version), so a fingerprint of the code made one process two versions on two Pythons. The
source is what the user wrote: it changes exactly when the function was edited. A function
whose source cannot be read (made by ``exec`` of a string Python's ``linecache`` does not
hold, ``python -c``, a package shipped without its ``.py`` files) falls back to its code
object — bytecode, constants, names, argument counts, flags, nested code — which still
changes whenever the function does, but differs between Python minor versions. A weaker
fallback (the name and constants) would let an edited function keep its signature, and a
checkpoint recover onto code that is not the code that wrote it. Notebook cells (IPython
keeps their source) and modules read from files always have their source.

Not covered: file names and line numbers (a re-run notebook cell, or a function moved down
a line, is the same function); the values of globals a function reads, so a changed helper
it calls by name or a changed module-level constant does not count; the attributes of a
callable instance; the contents of other objects; what a builtin does. A changed comment or
docstring does count. The source is read where Python's tools read it: a module file edited
after it was imported is read as edited (reload the module, or restart, after editing one).
Two lambdas written in the same statement have the same text, so the same fingerprint.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import textwrap
import types
from collections.abc import Callable
from typing import Any

SIMPLE = (type(None), bool, int, float, str)


def fingerprint(fn: Callable[..., Any]) -> str:
    """A stable digest of what ``fn`` does, for process signatures."""
    text = json.dumps(_callable(fn, ()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"


def _callable(fn: Any, stack: tuple[Any, ...]) -> Any:
    """A JSON tree for a callable; ``stack`` holds the callables being described."""
    if any(fn is seen for seen in stack):
        return ["cycle", _name(fn)]
    stack = stack + (fn,)
    if isinstance(fn, types.FunctionType):
        return _function(fn, stack)
    if isinstance(fn, functools.partial):
        return ["partial", _callable(fn.func, stack), [_value(a, stack) for a in fn.args],
                _pairs(fn.keywords, stack)]
    if isinstance(fn, types.MethodType):
        return ["method", _callable(fn.__func__, stack), _name(type(fn.__self__))]
    if isinstance(fn, (type, types.BuiltinFunctionType, types.BuiltinMethodType,
                       types.WrapperDescriptorType, types.MethodWrapperType,
                       types.MethodDescriptorType, types.ClassMethodDescriptorType)):
        return ["named", _name(fn)]
    return ["instance", _name(type(fn)), _callable(type(fn).__call__, stack)]


def _function(fn: types.FunctionType, stack: tuple[Any, ...]) -> Any:
    closure = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            closure.append([name, _value(cell.cell_contents, stack)])
        except ValueError:
            closure.append([name, ["empty"]])
    source = _source(fn)
    body = ["source", source] if source is not None else _code(fn.__code__)
    return ["function", _name(fn), body, [_value(d, stack) for d in fn.__defaults__ or ()],
            _pairs(fn.__kwdefaults__ or {}, stack), closure]


def _source(fn: types.FunctionType) -> str | None:
    """The function's source text, dedented, each line's trailing spaces dropped; None if
    Python cannot read it."""
    try:
        text = inspect.getsource(fn)
    except Exception:  # OSError, TypeError; a tokenizer error on a damaged or edited file
        return None
    lines = textwrap.dedent(text).splitlines()
    return "\n".join(line.rstrip() for line in lines).strip("\n") or None


def _code(co: types.CodeType) -> Any:
    """Everything in a code object but its file name and line numbers (for a function whose
    source cannot be read)."""
    return ["code", co.co_name, co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount,
            co.co_flags, co.co_code.hex(), co.co_exceptiontable.hex(), list(co.co_names),
            list(co.co_varnames), list(co.co_freevars), list(co.co_cellvars),
            [_const(c) for c in co.co_consts]]


def _const(c: Any) -> Any:
    """A code constant: nested code, a tuple or frozenset of constants, or a literal."""
    if isinstance(c, types.CodeType):
        return _code(c)
    if type(c) is tuple:
        return ["tuple", [_const(x) for x in c]]
    if type(c) is frozenset:
        return ["frozenset", sorted((_const(x) for x in c), key=_text)]
    if type(c) is complex:
        return ["complex", c.real, c.imag]
    return _value(c, ())


def _value(v: Any, stack: tuple[Any, ...]) -> Any:
    """A default, closure value or partial argument: by value, by fingerprint, or by type."""
    if type(v) in SIMPLE:
        return [type(v).__name__, v]
    if type(v) is bytes:
        return ["bytes", v.hex()]
    if type(v) in (tuple, list):
        if any(v is seen for seen in stack):
            return ["cycle", type(v).__name__]
        return [type(v).__name__, [_value(x, stack + (v,)) for x in v]]
    if type(v) is dict:
        if any(v is seen for seen in stack):
            return ["cycle", "dict"]
        return ["dict", _pairs(v, stack + (v,))]
    if callable(v):
        return _callable(v, stack)
    return ["object", _name(type(v))]


def _pairs(mapping: dict[Any, Any], stack: tuple[Any, ...]) -> list[Any]:
    """Key-value pairs sorted by their text, so equal dicts give equal trees."""
    return sorted(([_value(k, stack), _value(x, stack)] for k, x in mapping.items()),
                  key=_text)


def _text(tree: Any) -> str:
    return json.dumps(tree, separators=(",", ":"))
