"""Conditions and keys written in a file, translated to the safe evaluator's syntax.

What translates, in FEEL (``= amount > 100``; ``=`` compares), JUEL (``${amount > 100}``,
``&&``, ``||``, ``!``, ``==``, ``eq``...) and plain text (a condition with neither marker):
names, string/number/boolean/null literals, one comparison per operand pair, ``and``/``or``/
``not`` and parentheses, arithmetic (``+``, ``-``, ``*``, ``/``, JUEL's ``div``; ``/``
divides as JUEL does, to a fraction); in a condition, a path into the data
(``order.price``, JUEL's ``items[0]``: ``order['price']``, ``items[0]``), a few JUEL
methods and Flowable's variable functions (``juel.py``). Everything else (other calls,
paths elsewhere, remainders, ternaries, names with spaces) is refused with a ModelError
naming the expression — nothing is ever ``eval``'d: the text is tokenized and parsed here,
and the result is the safe evaluator's own syntax.
"""

from __future__ import annotations

import ast
import keyword
import re

from ..errors import ModelError
from ..model.expr import shown
from . import feel, juel
from .juel import PREFIXES, Node
from .juel import RESERVED as _RESERVED
from .juel import Refused as _Refused
from .juel import string as _string
from .names import CALLABLE_LANGUAGE, SAFE_LANGUAGE

_TOKEN = re.compile(r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>=!()+*/%-])
  | (?P<other>\S)
)""", re.VERBOSE)

_WORD_OPS = {"and": "and", "or": "or", "not": "not"}
_JUEL_WORDS = {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">="}
_LITERALS = {"true": True, "false": False, "null": None}
_FEEL_RESERVED = _RESERVED | {"and", "or", "not", "true", "false", "null"}

# dialect -> symbol -> what it means here (``None``: refused, with why)
_SYMBOLS: dict[str, dict[str, str | None]] = {
    "feel": {"=": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
             "==": None, "&&": None, "||": None, "!": None},
    "juel": {"==": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
             "&&": "and", "||": "or", "!": "not", "=": None},
    "plain": {"==": "==", "=": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
              "&&": "and", "||": "or", "!": "not"},
}
_WHY = {"==": "FEEL compares with '=', not '=='", "&&": "FEEL writes 'and'",
        "||": "FEEL writes 'or'", "!": "FEEL writes 'not(...)'",
        "=": "'=' alone is an assignment in JUEL; compare with '=='"}


#: How deeply parentheses and negations may nest in a file's expression: each level is five
#: frames of the parser below, read inside as many subprocesses as the XML parser allows.
MAX_NESTING = 50


def dialect(text: str, language: str | None) -> str:
    """``feel``, ``juel``, ``plain``, ``safe``, ``callable`` or ``other:<language>``."""
    stripped = text.strip()
    lang = (language or "").strip()
    if lang == SAFE_LANGUAGE:
        return "safe"
    if lang == CALLABLE_LANGUAGE:
        return "callable"
    if stripped.startswith("="):
        return "feel"
    if "${" in stripped or "#{" in stripped:
        return "juel"
    low = lang.lower()
    if "feel" in low:
        return "feel"
    if "juel" in low or low.endswith("/el"):
        return "juel"
    if not lang or "xpath" in low:
        return "plain"
    return f"other:{lang}"


def translate(text: str, language: str | None = None, what: str = "condition") -> str:
    """The safe evaluator's source for ``text``; ModelError naming it when it does not
    translate (see the module docstring for what does)."""
    kind = dialect(text, language)
    if kind == "safe":
        return text.strip()
    if kind == "callable":
        raise ModelError(f"{what} {shown(text)} is a Python callable, which a file cannot "
                         "carry: attach it in Python")
    if kind.startswith("other:"):
        raise ModelError(f"{what} {shown(text)} is written in {kind[6:]!r}; only FEEL, "
                         "JUEL and plain comparisons are translated")
    try:
        body = _unwrap(text.strip(), kind)
        return _render(_Parser(body, kind, paths=True).parse())
    except RecursionError:  # read deep inside nested subprocesses: still a refusal
        why: Exception = _Refused("it nests too deeply to be read here")
    except _Refused as refused:
        why = refused
    raise ModelError(f"{what} {shown(text)} ({kind.upper()}) does not translate: "
                     f"{why}; only names, literals, comparisons, arithmetic and and/or/not "
                     "do") from None


def _unwrap(text: str, kind: str) -> str:
    if kind == "feel":
        return text[1:] if text.startswith("=") else text
    if kind == "juel" and ("${" in text or "#{" in text):
        inner = text[2:-1]
        if not text.startswith(("${", "#{")) or not text.endswith("}") or "}" in inner or \
                "${" in inner or "#{" in inner:
            raise _Refused("it mixes text and expressions")
        return inner
    return text


class _Parser:
    """Recursive descent: or > and > comparison > not > atom. Parentheses and negations nest
    at most ``MAX_NESTING`` levels."""

    def __init__(self, text: str, kind: str, paths: bool = False):
        self.kind = kind
        self.paths = paths  # a condition reads paths; a key or a collection is a field
        self.tokens = self._tokens(text)
        self.at = 0
        self.depth = 0

    def deeper(self) -> None:
        """One more level of parentheses or negation; refused past ``MAX_NESTING``."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _Refused(f"it nests deeper than {MAX_NESTING} levels (parentheses or "
                           "negations)")

    def _tokens(self, text: str) -> list[tuple[str, str]]:
        out = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            if kind is None:
                continue
            out.append((kind, m.group(kind)))
        if not out:
            raise _Refused("it is empty")
        return out

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _Refused("it ends too early")
        self.at += 1
        return token

    def symbol(self, token: tuple[str, str] | None) -> str | None:
        """What a token means as an operator here (``and``, ``==``, ...), if it is one."""
        if token is None:
            return None
        kind, text = token
        if kind == "name":
            if text in _WORD_OPS:
                return _WORD_OPS[text]
            return _JUEL_WORDS.get(text) if self.kind != "feel" else None
        if kind != "op" or text in _ARITHMETIC:
            return None
        meaning = _SYMBOLS[self.kind].get(text)
        if meaning is None:
            raise _Refused(_WHY.get(text, f"{text!r} is not allowed"))
        return meaning

    def parse(self) -> Node:
        node = self.disjunction()
        token = self.peek()
        if token is not None:
            raise _Refused(_unexpected(token))
        return node

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.symbol(self.peek()) == "or":
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def conjunction(self) -> Node:
        parts = [self.comparison()]
        while self.symbol(self.peek()) == "and":
            self.take()
            parts.append(self.comparison())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def comparison(self) -> Node:
        left = self.additive()
        op = self.symbol(self.peek())
        if op not in ("==", "!=", "<", ">", "<=", ">="):
            return left
        self.take()
        right = self.additive()
        if self.symbol(self.peek()) in ("==", "!=", "<", ">", "<=", ">="):
            raise _Refused("it chains comparisons")
        return ("cmp", op, left, right)

    def additive(self) -> Node:
        node = self.multiplicative()
        while self.peek() in (("op", "+"), ("op", "-")):
            node = ("arith", self.take()[1], node, self.multiplicative())
        return node

    def multiplicative(self) -> Node:
        """``*`` and ``/`` (JUEL's ``div``); a remainder is refused: Java rounds it towards
        zero, Python down, so they differ for a negative number."""
        node = self.unary()
        while True:
            token = self.peek()
            if token in (("op", "%"), ("name", "mod")):
                raise _Refused("it takes a remainder, which Java and Python round "
                               "differently for negative numbers")
            if token not in (("op", "*"), ("op", "/")) and \
                    (self.kind != "juel" or token != ("name", "div")):
                return node
            self.take()
            node = ("arith", "*" if token == ("op", "*") else "/", node, self.unary())

    def unary(self) -> Node:
        """``not`` binds tighter than a comparison, as JUEL's ``!`` does; FEEL's ``not`` is a
        function, so it must be followed by a parenthesis."""
        if self.symbol(self.peek()) != "not":
            return self.atom()
        self.take()
        if self.kind == "feel" and self.peek() != ("op", "("):
            raise _Refused("FEEL negates with the function not(...)")
        self.deeper()
        node = ("not", self.unary())
        self.depth -= 1
        return node

    def atom(self) -> Node:
        kind, text = self.take()
        follow = self.peek()
        if kind == "op" and text == "(":
            self.deeper()
            inner = self.disjunction()
            if self.peek() != ("op", ")"):
                raise _Refused("a parenthesis is not closed")
            self.take()
            self.depth -= 1
            return inner
        if kind == "op" and text == "-" and follow is not None and follow[0] == "number":
            return ("lit", -_number(self.take()[1]))
        if kind == "op" and text == "-":
            self.deeper()
            node = ("neg", self.unary())
            self.depth -= 1
            return node
        if kind == "number":
            return ("lit", _number(text))
        if kind == "string":
            if self.kind == "feel" and text.startswith("'"):
                raise _Refused("FEEL strings are in double quotes")
            return ("lit", _string(text))
        if kind == "name":
            return self.name(text)
        if self.kind == "feel" and text in "[{":
            return self.feel_call(text)
        raise _Refused(_unexpected((kind, text)))

    def name(self, text: str) -> Node:
        literal = _LITERALS.get(text)
        if text in _LITERALS:
            return ("lit", literal)
        if self.kind == "plain" and text in ("True", "False", "None"):
            return ("lit", {"True": True, "False": False, "None": None}[text])
        if self.kind == "feel" and text == "if":
            return self.feel_call("if")
        fn = feel.called(self, text) if self.kind == "feel" else None
        if fn is not None:
            return self.feel_call(fn)
        if text in _RESERVED or keyword.iskeyword(text) or text.startswith("__"):
            raise _Refused(f"it uses {text!r}, which is not a plain name")
        follow = self.peek()
        if follow == ("op", "("):
            raise _Refused(f"it calls {text!r}")
        if follow is not None and follow[0] == "other" and follow[1] in ".[":
            if not self.paths:
                raise _Refused(f"it reads a path or an index from {text!r}")
            return self.path(("name", text))
        if follow == ("other", ":") and self.kind == "juel" and text in PREFIXES:
            return juel.variable_function(self, text)
        if follow == ("other", ":") and self.kind != "feel":
            raise _Refused(f"it calls a function of the prefix {text!r}")
        if follow is not None and follow[0] == "name" and self.symbol(follow) is None and \
                not (self.kind == "juel" and follow[1] in ("div", "mod")) and \
                not (self.kind == "feel" and follow[1] in feel.CLAUSES):
            if follow[1] in _RESERVED or keyword.iskeyword(follow[1]):
                raise _Refused(f"it uses {follow[1]!r}, which is not a plain name")
            raise _Refused(f"it has a name with spaces ({text} {follow[1]} ...)")
        return ("name", text)


    def feel_call(self, fn: str) -> Node:
        """A FEEL built-in function's call, ``if``, a list or a context (``feel.py``), its
        first token taken."""
        try:
            if fn in ("[", "{"):
                return feel.collection(self, fn)
            return feel.conditional(self) if fn == "if" else feel.call(self, fn)
        except feel.Refused as why:
            raise _Refused(str(why)) from None

    def path(self, node: Node) -> Node:
        """A JUEL or FEEL path into the data, ``order.price``, and a JUEL index, ``items[0]``
        or ``order["price"]``: the value under that key of a dict (a list's item), as JUEL
        reads a Map, FEEL a context (and SpiffWorkflow's Python a Box). No method call, no
        negative index; FEEL's ``[..]`` (a filter, or an index from 1) is refused."""
        while self.peek() in (("other", "."), ("other", "[")):
            _, step = self.take()
            kind, text = self.take()
            if step == "." and kind == "name" and not text.startswith("_") and \
                    self.peek() != ("op", "("):
                node = ("item", node, text)
                continue
            if step == "." and kind == "name" and self.kind == "juel" and \
                    not text.startswith("_") and self.peek() == ("op", "("):
                node = juel.method(self, node, text, _render(node))
                if node[0] in ("name", "item"):  # a JSON node read on: prop('k').prop(...)
                    continue
                return node
            if step == "[" and self.kind == "feel" and kind == "number" and \
                    text.isdigit() and int(text) >= 1 and self.peek() == ("other", "]"):
                self.take()  # FEEL counts a list's items from 1
                node = ("item", node, int(text) - 1)
                continue
            if step == "[" and self.kind != "feel" and kind in ("number", "string") and \
                    "." not in text[:1] + (text if kind == "number" else "") and \
                    self.peek() == ("other", "]"):
                self.take()
                node = ("item", node, _number(text) if kind == "number" else _string(text))
                continue
            what = f"calls {text!r} on" if self.peek() == ("op", "(") else \
                f"reads {step}{text} from"
            raise _Refused(f"it {what} {_render(node)!r}; only a field (a.b), a JUEL index "
                           "(a[0], a['b']) or a FEEL index from 1 (a[1]) is read")
        return node


_ARITHMETIC = "()+-*/%"


def _unexpected(token: tuple[str, str]) -> str:
    kind, text = token
    if text in "+-*/%":
        return f"it uses arithmetic ({text!r}) where a value is expected"
    if text in "?:":
        return "it uses a conditional ('? :')"
    return f"{text!r} is not allowed here"


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "in": 4, "notin": 4, "arith": 5,
               "neg": 7, "name": 8, "lit": 8, "item": 8, "call": 8, "method": 8, "list": 8,
               "context": 8, "if": 0}  # Python's


def _render(node: Node, outer: int = 0) -> str:
    """The safe evaluator's (Python) spelling of a parsed condition, parenthesized only where
    precedence needs it."""
    kind = node[0]
    level = _PRECEDENCE[kind] + (kind == "arith" and node[1] in "*/")
    if kind == "name":
        text = node[1]
    elif kind == "item":
        text = f"{_render(node[1], 8)}[{node[2]!r}]"
    elif kind == "lit":
        text = repr(node[1])
    elif kind == "call":
        text = f"{node[1]}({', '.join(_render(a) for a in node[2])})"
    elif kind == "if":  # FEEL takes the else branch for a condition that is not true
        text = (f"{_render(node[2], 1)} if {_render(node[1], 5)} is True else "
                f"{_render(node[3], 0)}")
    elif kind == "list":
        text = f"[{', '.join(_render(a) for a in node[1])}]"
    elif kind == "context":
        text = "{" + ", ".join(f"{k!r}: {_render(v)}" for k, v in node[1]) + "}"
    elif kind == "cmp":
        text = f"{_render(node[2], 5)} {node[1]} {_render(node[3], 5)}"
    elif kind in ("in", "notin"):
        text = f"{_render(node[1], 5)} {'not in' if kind == 'notin' else 'in'} " \
               f"{_render(node[2], 5)}"
    elif kind == "arith":
        text = f"{_render(node[2], level)} {node[1]} {_render(node[3], level + 1)}"
    elif kind == "neg":
        text = f"-{_render(node[1], 7)}"
    elif kind == "method":
        text = f"{_render(node[1], 8)}.{node[2]}({', '.join(_render(a) for a in node[3])})"
    elif kind == "not":
        text = f"not {_render(node[1], 3)}"
    else:
        text = f" {kind} ".join(_render(part, _PRECEDENCE[kind] + 1) for part in node[1])
    return f"({text})" if level < outer else text


# -- the way back: the safe evaluator's syntax as FEEL ----------------------------------------
_FEEL_OPS = {ast.Eq: "=", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
             ast.GtE: ">="}


def to_feel(source: str) -> str | None:
    """``source`` (the safe evaluator's syntax) as FEEL with its ``=`` prefix, when it uses
    only what ``translate`` reads back; None otherwise."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
        return "=" + _feel(tree, 0)
    except (SyntaxError, _Refused, RecursionError, MemoryError):
        return None


def _feel(node: ast.AST, outer: int) -> str:
    if isinstance(node, ast.BoolOp):
        kind = "and" if isinstance(node.op, ast.And) else "or"
        inner = _PRECEDENCE[kind]
        text = f" {kind} ".join(_feel(v, inner + 1) for v in node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner, text = _PRECEDENCE["not"], f"not({_feel(node.operand, 0)})"
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FEEL_OPS:
        inner = _PRECEDENCE["cmp"]
        text = (f"{_feel(node.left, 5)} {_FEEL_OPS[type(node.ops[0])]} "
                f"{_feel(node.comparators[0], 5)}")
    else:
        return _feel_atom(node)
    return f"({text})" if inner < outer else text


def _feel_atom(node: ast.AST) -> str:
    if isinstance(node, ast.Name) and node.id not in _FEEL_RESERVED and \
            not node.id.startswith("__"):
        return node.id
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return f"-{_feel_atom(node.operand)}"
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or type(value) is bool:
            return {None: "null", True: "true", False: "false"}[value]
        if type(value) in (int, float) and re.fullmatch(r"\d+(\.\d+)?", repr(value)):
            return repr(value)  # a literal the way back reads (no exponent, nan or inf)
        if type(value) is str:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise _Refused("not FEEL we read back")
