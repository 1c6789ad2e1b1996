"""Reading for ``plaintree``: expat, hardened as ``source.py`` configures lxml. A DOCTYPE, an
entity declaration or an external entity is an ``XMLSyntaxError`` (nothing is expanded or
fetched); elements nest at most 256 deep and a text holds at most 10,000,000 characters
(libxml2's limits without ``huge_tree``). Each element's ``sourceline`` is the line its start
tag ends on, as libxml2 gives it; CDATA sections are remembered, to be written back as such."""

from __future__ import annotations

import codecs
import re
from typing import Any
from xml.parsers import expat

from .plainnodes import (
    MAX_DEPTH,
    MAX_TEXT,
    UNSET,
    Comment,
    ProcessingInstruction,
    XMLParser,
    XMLSyntaxError,
    _Element,
    _ElementTree,
)

# --- reading -----------------------------------------------------------------------------

_START_TAG = re.compile(rb"""<[^\s/>]+(?:\s+[^\s=>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*/?>""")
_NEWLINES = re.compile(rb"\r\n|\r|\n")
_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*\?>")
_WIDE = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _bytes_to_scan(data: bytes) -> bytes:
    """``data`` in an encoding where markup is one byte a character (so the end of a start
    tag can be found in the bytes): a UTF-16 or UTF-32 document as UTF-8, its declaration
    (which names the old encoding) dropped, the line it was on kept."""
    for bom, encoding in _WIDE:
        if data.startswith(bom):
            try:
                text = data.decode(encoding).lstrip("\ufeff").encode("utf-8")
            except UnicodeDecodeError as exc:
                raise XMLSyntaxError(f"not valid {encoding}: {exc.reason}", 1) from None
            return _DECLARATION.sub(b"", text, count=1)
    return data


class _Builder:
    """Builds the tree from expat's events; refuses a DOCTYPE and any entity declaration."""

    def __init__(self, data: bytes):
        self.data = _bytes_to_scan(data)
        self.stack: list[_Element] = []
        self.around: tuple[list[_Element], list[_Element]] = ([], [])
        self.root: _Element | None = None
        self.declared: dict[str | None, str] = {}
        p = self.parser = expat.ParserCreate(namespace_separator=" ")
        p.namespace_prefixes = True
        p.ordered_attributes = True
        p.buffer_text = True
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        p.StartDoctypeDeclHandler = self.refuse("a DOCTYPE is refused")
        p.EntityDeclHandler = self.refuse("an entity declaration is refused")
        p.ExternalEntityRefHandler = self.refuse("an external entity is refused")
        p.StartCdataSectionHandler = lambda: self.cdata(True)
        p.EndCdataSectionHandler = lambda: self.cdata(False)
        self.sections: dict[tuple[_Element, str], list[tuple[int, int]]] = {}
        self.opened = 0
        p.StartNamespaceDeclHandler = self.declare
        p.StartElementHandler = self.start
        p.EndElementHandler = self.end
        p.CharacterDataHandler = self.chars
        p.CommentHandler = lambda text: self.leaf(Comment(text))
        p.ProcessingInstructionHandler = \
            lambda target, text: self.leaf(ProcessingInstruction(target, text))

    def refuse(self, what: str) -> Any:
        def handler(*_: Any) -> None:
            raise XMLSyntaxError(what, self.parser.CurrentLineNumber)
        return handler

    def declare(self, prefix: str | None, uri: str | None) -> None:
        self.declared[prefix or None] = uri or ""

    def start(self, name: str, attributes: list[str]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise XMLSyntaxError(f"elements nest more than {MAX_DEPTH} deep",
                                 self.parser.CurrentLineNumber)
        node = _Element(_clark(name))
        node._decl, self.declared = self.declared, {}
        node._hint = _prefix(name)
        for key, value in zip(attributes[::2], attributes[1::2], strict=True):
            clark = _clark(key)
            node._attrib[clark] = value
            if clark.startswith("{"):
                node._ahints[clark] = _prefix(key)
        at = self.parser.CurrentByteIndex
        tag = _START_TAG.match(self.data, at)
        extra = len(_NEWLINES.findall(tag.group())) if tag else 0
        node.sourceline = self.parser.CurrentLineNumber + extra
        if self.stack:
            parent = self.stack[-1]
            node._parent = parent
            parent._children.append(node)
        else:
            self.root = node
        self.stack.append(node)

    def end(self, name: str) -> None:
        self.stack.pop()

    def _target(self) -> tuple[_Element, str, str]:
        """Where character data goes now: (node, "text" or "tail", what it holds so far)."""
        parent = self.stack[-1]
        if parent._children:
            return parent._children[-1], "tail", parent._children[-1]._tail or ""
        return parent, "text", parent._text or ""

    def cdata(self, start: bool) -> None:
        """Remember where a CDATA section begins and ends in its text (written back so)."""
        if not self.stack:
            return
        node, part, text = self._target()
        if start:
            self.opened = len(text)
        else:
            self.sections.setdefault((node, part), []).append((self.opened, len(text)))

    def chars(self, data: str) -> None:
        if not self.stack:
            return  # whitespace around the root
        parent = self.stack[-1]
        if parent._children:
            last = parent._children[-1]
            last._tail = (last._tail or "") + data
            size = len(last._tail)
        else:
            parent._text = (parent._text or "") + data
            size = len(parent._text)
        if size > MAX_TEXT:
            raise XMLSyntaxError(f"a text longer than {MAX_TEXT} characters",
                                 self.parser.CurrentLineNumber)

    def leaf(self, node: _Element) -> None:
        node.sourceline = self.parser.CurrentLineNumber
        if self.stack:
            node._parent = self.stack[-1]
            self.stack[-1]._children.append(node)
        else:
            self.around[self.root is not None].append(node)

    def build(self) -> _Element:
        try:
            self.parser.Parse(self.data, True)
        except expat.ExpatError as exc:
            raise XMLSyntaxError(expat.ErrorString(exc.code) or "not well-formed",
                                 exc.lineno) from None
        assert self.root is not None  # expat refuses a document without one
        for (node, part), spans in self.sections.items():
            node._cdata[part] = (getattr(node, part), spans)
        _ElementTree(self.root, *self.around)
        return self.root


def _clark(name: str) -> str:
    parts = name.split(" ")
    return f"{{{parts[0]}}}{parts[1]}" if len(parts) > 1 else parts[0]


def _prefix(name: str) -> Any:
    parts = name.split(" ")
    if len(parts) == 1:
        return UNSET
    return parts[2] if len(parts) == 3 else None


def fromstring(data: bytes | str, parser: XMLParser | None = None) -> _Element:
    """The root of the document in ``data``; XMLSyntaxError when it is not well-formed or has
    a DOCTYPE (``parser`` is accepted for lxml's signature: the hardening is always on)."""
    if isinstance(data, str):
        data = _DECLARATION.sub(b"", data.encode("utf-8"), count=1)
    return _Builder(data).build()
