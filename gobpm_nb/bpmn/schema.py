"""Validation against the OMG BPMN 2.0 XML Schema shipped in ``xsd/`` (see its README).
Without lxml (``xmllib.LXML`` false) there is no validation: a warning note says so.

Schema errors become notes: the element at the error's line (or its nearest ancestor with an
id) is named. The schema lets elements and attributes of foreign namespaces through, so vendor
extensions are valid.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from .names import BPMN, local, namespace
from .notes import Notes, owner_id
from .xmllib import LXML, etree

XSD = Path(__file__).resolve().parent / "xsd" / "BPMN20.xsd"
# the note a file read without lxml gets (Pyodide): what lxml would check is not checked
NOT_VALIDATED = ("not validated against the BPMN 2.0 XML Schema: lxml, which validates, "
                 "cannot be imported here; the file was read with the standard library "
                 "(hardened the same way), so only what this package reads is checked")


@functools.cache
def schema() -> etree.XMLSchema:
    """The BPMN 2.0 schema, loaded once (its imports resolve to the files beside it)."""
    xsd_parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.XMLSchema(etree.parse(str(XSD), xsd_parser))


def check(tree: etree._ElementTree, notes: Notes, process_of: dict[str, str],
          as_drawn: bool = False) -> None:
    """Validate ``tree``; each schema error is an error note (of the process it lies in), a
    warning in design-review mode (``as_drawn``: the file is read as drawn all the same).
    One is a warning as written too: ``<definitions>`` without its required
    ``targetNamespace``, which nothing in a run reads (SpiffWorkflow reads such files)."""
    root = tree.getroot()
    if namespace(root) != BPMN or local(root) != "definitions":
        notes.error(root, f"the root element is <{local(root)}> in namespace "
                          f"{namespace(root) or 'none'!r}, not BPMN 2.0 <definitions>", None)
        return
    if not LXML:
        notes.warning(root, NOT_VALIDATED, None)
        return
    validator = schema()
    if validator.validate(tree):
        return
    by_line: dict[int, etree._Element] = {}
    for node in root.iter():
        if isinstance(node.tag, str) and node.sourceline is not None:
            by_line.setdefault(node.sourceline, node)
    for entry in validator.error_log:
        node = _node_of(tree, entry, by_line.get(entry.line, root))
        owner = owner_id(node)
        message = f"not valid BPMN 2.0 XML: {entry.message}"
        where = process_of.get(owner) if owner is not None else None
        if as_drawn:
            notes.warning(node, f"as drawn: {message}; it is read all the same", where)
        elif node is root and "'targetNamespace' is required" in entry.message:
            notes.warning(node, f"{message}: a file's namespace names nothing a run reads, so "
                                "it is read all the same", where)
        else:
            notes.error(node, message, where)


def _node_of(tree: etree._ElementTree, entry: Any, fallback: etree._Element) -> etree._Element:
    """The element a schema error is about: by the error's path (the one on its line, when
    the path matches several), else the first element on its line."""
    try:
        found = tree.xpath(entry.path) if entry.path else []
    except etree.XPathError:
        found = []
    nodes = [n for n in found if isinstance(n, etree._Element)]
    on_line = [n for n in nodes if n.sourceline == entry.line]
    return (on_line or nodes or [fallback])[0]
