"""The import report: one note per problem, each naming the element and its source line."""

from __future__ import annotations

from typing import NamedTuple

from .names import FLOW_ELEMENTS, is_bpmn, label, local
from .xmllib import etree

# what holds flow elements: a BPMN element with an id directly inside one is named by notes
# about it, even when its tag is not one this package knows
_CONTAINERS = frozenset({"process", "subProcess", "adHocSubProcess", "transaction"})


class Note(NamedTuple):
    """One finding of an import. ``severity`` is ``'error'`` (the process it concerns cannot
    run) or ``'warning'`` (it runs; something in the file is ignored or approximated)."""

    severity: str
    element: str | None  # the id of the element at fault (the nearest one with an id)
    tag: str  # its tag: ``subProcess``, ``zeebe:taskDefinition``
    line: int | None  # its line in the source (lxml's ``sourceline``)
    message: str  # what is unsupported or wrong, and why
    name: str | None = None  # the element's name in the file, when it has one
    process: str | None = None  # the id of the process it concerns (None: the document)

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "no line"
        if self.element is not None and repr(self.element) in self.message:
            return f"{where}: {self.message}"
        return f"{where}: {self.tag} {self.element!r}: {self.message}"


def owner(node: etree._Element) -> etree._Element | None:
    """The element a note about ``node`` names: ``node`` or its nearest ancestor that is a
    flow element (a timer's definition names its event, a condition its flow) or a root
    element; failing that, the nearest one with an id."""
    nearest = None
    here: etree._Element | None = node
    while here is not None:
        if here.get("id") is not None:
            parent = here.getparent()
            if local(here) in FLOW_ELEMENTS or parent is None or parent.getparent() is None \
                    or (is_bpmn(here) and is_bpmn(parent) and local(parent) in _CONTAINERS):
                return here
            nearest = nearest if nearest is not None else here
        here = here.getparent()
    return nearest


def owner_id(node: etree._Element) -> str | None:
    found = owner(node)
    return found.get("id") if found is not None else None


class Notes:
    """Collects notes while a document is read; each remembers which process it concerns."""

    def __init__(self) -> None:
        self.items: list[tuple[Note, str | None]] = []  # (note, process id or None)

    def add(self, severity: str, node: etree._Element, message: str,
            process: str | None) -> None:
        named = owner(node)
        tag = label(named) if named is not None else label(node)
        element = named.get("id") if named is not None else None
        name = named.get("name") if named is not None else None
        name = " ".join(name.split()) if name else None  # a name on one line, as drawn
        note = Note(severity, element, tag, node.sourceline, message, name, process)
        self.items.append((note, process))

    def error(self, node: etree._Element, message: str, process: str | None) -> None:
        self.add("error", node, message, process)

    def warning(self, node: etree._Element, message: str, process: str | None) -> None:
        self.add("warning", node, message, process)

    def _sorted(self) -> list[tuple[Note, str | None]]:
        return sorted(self.items, key=lambda item: item[0].line or 0)

    def report(self) -> list[Note]:
        """Every note, by source line (document notes without a line first), stable."""
        return [n for n, _ in self._sorted()]

    def pairs(self) -> list[tuple[Note, str | None]]:
        """Every note with the process it concerns (None: the document), as ``report``."""
        return self._sorted()

    def errors_of(self, process: str) -> list[Note]:
        """The error notes that concern ``process`` (its own and the document's), by line."""
        return [n for n, p in self._sorted()
                if n.severity == "error" and (p is None or p == process)]
