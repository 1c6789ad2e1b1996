"""Elements and documents for ``plaintree`` (lxml's ``_Element`` and ``_ElementTree`` for the
methods this package calls), and how a name finds its namespace prefix, as libxml2 finds it:
the prefix it was read with while still in scope, else the nearest declaration."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_XML_NS = "http://www.w3.org/XML/1998/namespace"
_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
UNSET: Any = object()
MAX_DEPTH = 256
MAX_TEXT = 10_000_000


def _checked(value: str) -> str:
    if _INVALID.search(value):
        raise ValueError("All strings must be XML compatible: Unicode or ASCII, no NULL bytes "
                         "or control characters")
    return value


class XMLSyntaxError(Exception):
    """A document that is not well-formed, or that the hardening refuses."""

    def __init__(self, msg: str, lineno: int):
        super().__init__(f"{msg}, line {lineno}")
        self.msg, self.lineno = msg, lineno


class XMLParser:
    """lxml's parser options, accepted and kept: this parser is always the hardened one."""

    def __init__(self, **options: Any):
        self.options = options


class _Element:
    """An element (or, with ``tag`` ``Comment`` or ``ProcessingInstruction``, a comment or a
    processing instruction): lxml's ``_Element`` for the methods the package calls."""

    def __init__(self, tag: Any, attrib: dict[str, str] | None = None,
                 nsmap: dict[str | None, str] | None = None, **extra: str):
        self.tag = tag
        self._attrib: dict[str, str] = {}
        self._decl: dict[str | None, str] = dict(nsmap or {})  # declared on this element
        self._children: list[_Element] = []
        self._parent: _Element | None = None
        self._tree: _ElementTree | None = None  # the document, for a root
        self._text: str | None = None
        self._tail: str | None = None
        self.sourceline: int | None = None
        self._hint: Any = UNSET  # the prefix it was read with
        self._ahints: dict[str, str] = {}  # attribute -> the prefix it was read with
        # "text"/"tail" -> (its value as read, the spans of it that were CDATA sections)
        self._cdata: dict[str, tuple[str, list[tuple[int, int]]]] = {}
        for key, value in extra.items():
            self.set(key, value)
        for key, value in (attrib or {}).items():
            if key not in extra:
                self.set(key, value)

    # text, attributes
    @property
    def text(self) -> str | None:
        return self._text

    @text.setter
    def text(self, value: str | None) -> None:
        self._text = None if value is None else _checked(value)

    @property
    def tail(self) -> str | None:
        return self._tail

    @tail.setter
    def tail(self, value: str | None) -> None:
        self._tail = None if value is None else _checked(value)

    @property
    def attrib(self) -> dict[str, str]:
        return self._attrib

    def get(self, key: str, default: Any = None) -> Any:
        return self._attrib.get(key, default)

    def set(self, key: str, value: str) -> None:
        self._attrib[key] = _checked(value)

    def keys(self) -> list[str]:
        return list(self._attrib)

    def items(self) -> list[tuple[str, str]]:
        return list(self._attrib.items())

    # children
    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[_Element]:
        return iter(list(self._children))

    def __getitem__(self, index: Any) -> Any:
        return self._children[index]

    def _adopt(self, child: _Element) -> _Element:
        if child._parent is not None:
            child._parent._children.remove(child)
        child._parent, child._tree = self, None
        return child

    def append(self, child: _Element) -> None:
        self._children.append(self._adopt(child))

    def insert(self, index: int, child: _Element) -> None:
        self._children.insert(index, self._adopt(child))

    def remove(self, child: _Element) -> None:
        self._children.remove(child)
        child._parent = None

    def index(self, child: _Element) -> int:
        return self._children.index(child)

    def addnext(self, other: _Element) -> None:
        """``other`` as the next sibling (after this element's tail, as lxml puts it)."""
        if self._parent is None:
            raise TypeError("addnext at the root level is not supported here")
        parent = self._parent
        parent._adopt(other)
        parent._children.insert(parent._children.index(self) + 1, other)

    def getparent(self) -> _Element | None:
        return self._parent

    def _siblings(self) -> list[_Element]:
        if self._parent is not None:
            return self._parent._children
        if self._tree is not None:
            return [*self._tree._before, self, *self._tree._after]
        return [self]

    def itersiblings(self, preceding: bool = False) -> Iterator[_Element]:
        row = self._siblings()
        at = row.index(self)
        return iter(row[at - 1::-1] if preceding and at else [] if preceding else row[at + 1:])

    def iterchildren(self, tag: Any = None) -> Iterator[_Element]:
        return (c for c in list(self._children) if tag is None or c.tag == tag)

    def iter(self, tag: Any = None, *tags: Any) -> Iterator[_Element]:
        wanted = None if tag is None and not tags else {tag, *tags} - {None}
        stack = [self]
        while stack:
            node = stack.pop()
            if wanted is None or node.tag in wanted:
                yield node
            stack.extend(reversed(node._children))

    def find(self, path: str) -> _Element | None:
        return next(iter(self.findall(path)), None)

    def findall(self, path: str) -> list[_Element]:
        if path.startswith(".//"):
            return [n for n in self.iter(path[3:]) if n is not self]
        if "/" in path.replace("}", "").partition("{")[0] or "/" in path.rpartition("}")[2]:
            raise NotImplementedError(f"path {path!r}: only a tag, or './/' and a tag")
        return [c for c in self._children if c.tag == path]

    def getroottree(self) -> _ElementTree:
        top = self
        while top._parent is not None:
            top = top._parent
        if top._tree is None:
            top._tree = _ElementTree(top)
        return top._tree

    # namespaces
    @property
    def nsmap(self) -> dict[str | None, str]:
        """The namespaces in scope: this element's declarations first, then its parent's..."""
        out: dict[str | None, str] = {}
        here: _Element | None = self
        while here is not None:
            for prefix, uri in here._decl.items():
                out.setdefault(prefix, uri)
            here = here._parent
        return out

    @property
    def prefix(self) -> str | None:
        if not isinstance(self.tag, str) or not self.tag.startswith("{"):
            return None
        return binding(self, self.tag[1:].partition("}")[0], self._hint, False)[1]

    def __deepcopy__(self, memo: dict[int, Any]) -> _Element:
        copied = _copy(self)
        if self._parent is not None:  # the namespaces it had from its ancestors
            for prefix, uri in self._parent.nsmap.items():
                copied._decl.setdefault(prefix, uri)
        return copied

    def __repr__(self) -> str:
        return f"<Element {self.tag} at {id(self):#x}>"


def _copy(node: _Element) -> _Element:
    out = _Element(node.tag)
    out._attrib, out._decl = dict(node._attrib), dict(node._decl)
    out._text, out._tail, out.sourceline = node._text, node._tail, node.sourceline
    out._hint, out._ahints, out._cdata = node._hint, dict(node._ahints), dict(node._cdata)
    for child in node._children:
        kid = _copy(child)
        kid._parent = out
        out._children.append(kid)
    return out


class _DocInfo:
    doctype = ""  # never one: a DOCTYPE is refused
    internalDTD = None


class _ElementTree:
    """A document: its root and the comments and processing instructions around it."""

    def __init__(self, root: _Element, before: list[_Element] | None = None,
                 after: list[_Element] | None = None):
        self._root, self._before, self._after = root, before or [], after or []
        self.docinfo = _DocInfo()
        root._tree = self

    def getroot(self) -> _Element:
        return self._root

    def __deepcopy__(self, memo: dict[int, Any]) -> _ElementTree:
        return _ElementTree(_copy(self._root), [_copy(n) for n in self._before],
                            [_copy(n) for n in self._after])


def Element(tag: str, attrib: dict[str, str] | None = None,  # noqa: N802 (lxml's name)
            nsmap: dict[str | None, str] | None = None, **extra: str) -> _Element:
    return _Element(tag, attrib, nsmap, **extra)


def SubElement(parent: _Element, tag: str,  # noqa: N802 (lxml's name)
               attrib: dict[str, str] | None = None,
               nsmap: dict[str | None, str] | None = None, **extra: str) -> _Element:
    child = _Element(tag, attrib, nsmap, **extra)
    parent.append(child)
    return child


def Comment(text: str | None = None) -> _Element:  # noqa: N802 (lxml's name)
    node = _Element(Comment)
    node.text = text
    return node


def ProcessingInstruction(target: str, text: str | None = None) -> _Element:  # noqa: N802
    node = _Element(ProcessingInstruction)
    node._attrib["target"] = target
    node.text = text
    return node


PI = ProcessingInstruction


def binding(node: _Element, uri: str, hint: Any, attribute: bool
             ) -> tuple[_Element | None, str | None]:
    """The declaration a name in ``uri`` uses on ``node``: (the element declaring it, the
    prefix). The prefix it was read with when still in scope; else the nearest declaration
    (an attribute never takes the default namespace); else a new ``nsN`` on ``node``."""
    if uri == _XML_NS:
        return None, "xml"
    if hint is not UNSET:
        here: _Element | None = node
        while here is not None:
            if hint in here._decl:
                if here._decl[hint] == uri:
                    return here, hint
                break
            here = here._parent
    shadowed: set[str | None] = set()
    here = node
    while here is not None:
        for prefix, ns in here._decl.items():
            if ns == uri and prefix not in shadowed and not (attribute and prefix is None):
                return here, prefix
        shadowed.update(here._decl)
        here = here._parent
    taken = node.nsmap
    n = 0
    while f"ns{n}" in taken:
        n += 1
    node._decl[f"ns{n}"] = uri
    return node, f"ns{n}"
