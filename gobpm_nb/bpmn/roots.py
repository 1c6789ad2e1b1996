"""What a writer shares across one document: fresh ids, and the root elements that events
refer to (messages with their correlation key, signals, errors and escalations by code),
each made once and found again by name."""

from __future__ import annotations

import re

from ..model.expr import Expr
from .expressions import to_feel
from .names import (
    BPMN,
    CALLABLE_LANGUAGE,
    GOBPM,
    SAFE_LANGUAGE,
    XSI,
    ZEEBE,
    bpmn,
    children,
    extension,
    local,
)
from .xmllib import etree

NCNAME = re.compile(r"^[^\W\d][\w.\-]*$")


def slug(text: str) -> str:
    """``text`` made into an XML id (an NCName)."""
    out = re.sub(r"[^\w.\-]", "_", text)
    return out if NCNAME.match(out) else f"_{out}"


def _id(node: etree._Element) -> str:
    """An element's id, "" when it has none (an XML attribute's value is text)."""
    value: str = node.get("id", "")
    return value


def expression(expr: Expr) -> tuple[str, str | None]:
    """The text and language of a condition or key: FEEL when it translates."""
    if callable(expr.source):
        return expr.describe(), CALLABLE_LANGUAGE
    feel = to_feel(str(expr.source))
    if feel is not None:
        return feel, None
    return str(expr.source), SAFE_LANGUAGE


class RootElements:
    """One document's ids and root elements, as a writer adds to it."""

    def __init__(self, root: etree._Element):
        self.root = root
        self.ids = {n.get("id", "") for n in root.iter() if isinstance(n.tag, str)}
        self.prefix = next((k for k, v in root.nsmap.items() if v == BPMN), None)

    def nsmap(self, ns: str) -> dict[str | None, str]:
        """A declaration of ``ns`` for a new element, unless the document has one."""
        if ns in self.root.nsmap.values():
            return {}
        return {"gobpm" if ns == GOBPM else "zeebe": ns}

    def fresh(self, base: str) -> str:
        candidate, n = base, 2
        while candidate in self.ids:
            candidate, n = f"{base}_{n}", n + 1
        self.ids.add(candidate)
        return candidate

    def formal(self, parent: etree._Element, tag: str, text: str,
               language: str | None) -> etree._Element:
        """A ``tFormalExpression`` child: ``<tag xsi:type="bpmn:tFormalExpression">``."""
        node = etree.SubElement(parent, bpmn(tag))
        node.set(f"{{{XSI}}}type", f"{self.prefix}:tFormalExpression" if self.prefix
                 else "tFormalExpression")
        if language is not None:
            node.set("language", language)
        node.text = text
        return node

    def message(self, name: str, key: Expr | None) -> str:
        """The id of the ``<message>`` with this name and correlation key (made if new)."""
        key_text = None if key is None else expression(key)[0]
        for m in children(self.root, BPMN, "message"):
            sub = extension(m, ZEEBE, "subscription")
            if m.get("name") == name and \
                    (sub.get("correlationKey") if sub is not None else None) == key_text:
                return _id(m)
        node = self._root_element("message", name)
        if key_text is not None:
            ext = etree.SubElement(node, bpmn("extensionElements"))
            etree.SubElement(ext, f"{{{ZEEBE}}}subscription", correlationKey=key_text,
                             nsmap=self.nsmap(ZEEBE))
        return _id(node)

    def start_message(self, name: str) -> str:
        """The id of a ``<message>`` with this name, for a message start of the process (a
        correlation key means nothing there): the first one, else a new one with no key."""
        for m in children(self.root, BPMN, "message"):
            if m.get("name") == name:
                return _id(m)
        return self.message(name, None)

    def global_(self, tag: str, name: str) -> str:
        """The id of the ``<signal>`` (or other named root element) called ``name``."""
        for node in children(self.root, BPMN, tag):
            if node.get("name") == name:
                return _id(node)
        return _id(self._root_element(tag, name))

    def error(self, code: str) -> str:
        """The id of the ``<error>`` with this ``errorCode`` (made if new)."""
        return self._coded("error", code)

    def escalation(self, code: str) -> str:
        """The id of the ``<escalation>`` with this ``escalationCode`` (made if new)."""
        return self._coded("escalation", code)

    def _coded(self, tag: str, code: str) -> str:
        for node in children(self.root, BPMN, tag):
            if node.get(f"{tag}Code") == code:
                return _id(node)
        node = self._root_element(tag, code)
        node.set(f"{tag}Code", code)
        return _id(node)

    def _root_element(self, tag: str, name: str) -> etree._Element:
        node = etree.Element(bpmn(tag), id=self.fresh(f"{tag.capitalize()}_{slug(name)}"),
                             name=name)
        diagrams = [i for i, c in enumerate(self.root) if local(c) == "BPMNDiagram"]
        self.root.insert(diagrams[0] if diagrams else len(self.root), node)
        return node
