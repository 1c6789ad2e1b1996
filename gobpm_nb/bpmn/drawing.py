"""The BPMN XML a diagram viewer draws for a deployed definition, and the XML id of each flow.

Which diagram:

- a process read from a file that draws it is shown as the file draws it: the diagram the
  user made (what ``to_bpmn()`` gives back, so elements added with the builder since are laid
  out below it);
- a process built in Python, or read from a file with no diagram of it, gets the exporter's
  left-to-right layout (:mod:`.layout`); an element without a name is labelled with its id,
  as the Graphviz view labels it (a label only: the XML is for drawing, not for saving);
- ``None`` when no file can be written (an id that is not an XML name): the caller falls back
  to Graphviz.

Element ids in the XML are the engine's node ids. Flow ids may differ (a flow built in
Python is ``a->b``, not an XML name; the file calls it ``Flow_a_b``): :attr:`Drawing.flows`
maps each flow of the definition to the id of its ``sequenceFlow``, and
:attr:`Drawing.names` to the name the file gives it (a decision's buttons are labelled by it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from ..model import Process
from .document import Origin, serialize
from .names import BPMN, BPMNDI, FLOW_ELEMENTS, children, local
from .source import parse
from .writer import new_document
from .xmllib import etree


@dataclass(frozen=True)
class Drawing:
    """A BPMN document to draw one process with, and where it came from."""

    xml: str
    flows: Mapping[str, str]  # flow id in the definition -> id of its sequenceFlow
    source: str  # "file": the diagram of the file read; "layout": drawn by the exporter
    names: Mapping[str, str] = field(default_factory=dict)  # flow id -> its name, if named


def drawing(definition: Any) -> Drawing | None:
    """The document a viewer draws ``definition`` (a deployed ``Definition``) with."""
    origin = definition.origin
    if isinstance(origin, Origin):
        xml = origin.model.to_bpmn()
        tree = parse(xml)
        if draws(tree, definition):
            if join_collaboration(tree, definition.id):
                xml = serialize(tree)
            ids = flow_ids(tree, definition)
            return Drawing(xml, ids, "file", flow_names(tree, definition, ids))
    try:
        tree = new_document(Process.of(definition))
    except ModelError:
        return None
    _label_unnamed(tree, definition)
    ids = flow_ids(tree, definition)
    return Drawing(serialize(tree), ids, "layout", flow_names(tree, definition, ids))


def draws(tree: etree._ElementTree, definition: Any) -> bool:
    """Whether a diagram of the file has a shape for a node of ``definition``."""
    nodes = definition.nodes
    return any(shape.get("bpmnElement") in nodes
               for shape in tree.getroot().iter(f"{{{BPMNDI}}}BPMNShape"))


def join_collaboration(tree: etree._ElementTree, pid: str) -> bool:
    """Make a diagram of a collaboration draw process ``pid`` too: a viewer draws only the
    processes of its participants, so a process of the file that no participant names (its
    shapes are in the diagram all the same: MIWG B.1.0's first process) gets a participant
    of its own, with no pool shape, after the pools (its shapes then lie on the diagram's
    plane, drawn over the pools' shapes: B.1.0 draws them inside an expanded call activity,
    whose fill would hide them). True when the tree changed."""
    root = tree.getroot()
    drawn = {plane.get("bpmnElement") for plane in root.iter(f"{{{BPMNDI}}}BPMNPlane")}
    for collaboration in children(root, BPMN, "collaboration"):
        if collaboration.get("id") not in drawn:
            continue
        named = {p.get("processRef") for p in children(collaboration, BPMN, "participant")}
        if pid in named:
            return False
        participant = etree.Element(f"{{{BPMN}}}participant",
                                    id=f"gobpm_participant_{pid}", processRef=pid)
        pools = children(collaboration, BPMN, "participant")
        if pools:  # after the pools: its shapes are drawn over theirs, never under a fill
            pools[-1].addnext(participant)
        else:
            collaboration.insert(0, participant)
        return True
    return False


def _process(tree: etree._ElementTree, pid: str) -> etree._Element | None:
    return next((p for p in children(tree.getroot(), BPMN, "process") if p.get("id") == pid),
                None)


def flow_ids(tree: etree._ElementTree, definition: Any) -> dict[str, str]:
    """Each flow of ``definition`` -> the id of its ``sequenceFlow`` in ``tree``: the flow of
    the same id, else the first one left between the same two nodes (document order)."""
    proc = _process(tree, definition.id)
    if proc is None:
        return {}
    free = [(n.get("id", ""), n.get("sourceRef"), n.get("targetRef"))
            for n in proc.iter(f"{{{BPMN}}}sequenceFlow")]  # inside subprocesses too
    out: dict[str, str] = {}
    for f in definition.flows:
        match = next((x for x in free if x[0] == f.id), None) or \
            next((x for x in free if x[1:] == (f.source, f.target)), None)
        if match is not None:
            free.remove(match)
            out[f.id] = match[0]
    return out


def flow_names(tree: etree._ElementTree, definition: Any, ids: Mapping[str, str]
               ) -> dict[str, str]:
    """Each flow of ``definition`` whose ``sequenceFlow`` in ``tree`` (``ids``: from
    :func:`flow_ids`) has a name -> that name."""
    proc = _process(tree, definition.id)
    if proc is None:
        return {}
    named = {n.get("id", ""): (n.get("name") or "").strip()
             for n in proc.iter(f"{{{BPMN}}}sequenceFlow")}
    return {fid: named[xid] for fid, xid in ids.items() if named.get(xid)}


def _label_unnamed(tree: etree._ElementTree, definition: Any) -> None:
    """Give every unnamed flow node of the drawn process (at any depth) its id as a name."""
    proc = _process(tree, definition.id)
    if proc is None:
        return
    for node in proc.iter():
        if local(node) in FLOW_ELEMENTS and local(node) != "sequenceFlow" and \
                node.get("id") in definition.nodes and not node.get("name"):
            node.set("name", node.get("id", ""))
