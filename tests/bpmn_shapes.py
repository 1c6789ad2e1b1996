"""What two imports of a model must agree on, as plain data the BPMN tests compare."""

import ast
import dataclasses
from pathlib import Path

from lxml import etree

from gobpm_nb.model.expr import Expr
from gobpm_nb.model.timers import TimerSpec

DATA = Path(__file__).resolve().parent / "data"
BPMN_DIR = DATA / "bpmn"
MIWG_DIR = DATA / "miwg"
NS = {"bpmn": "http://www.omg.org/spec/BPMN/20100524/MODEL",
      "bpmndi": "http://www.omg.org/spec/BPMN/20100524/DI",
      "dc": "http://www.omg.org/spec/DD/20100524/DC",
      "di": "http://www.omg.org/spec/DD/20100524/DI"}


def canon(value):
    """A field's value as it must survive a round trip: an expression by its syntax tree
    (``a>1`` and ``a > 1`` agree), a timer by kind and text, a callable by being one."""
    if isinstance(value, Expr):
        if callable(value.source):
            return "<callable>"
        return ast.dump(ast.parse(str(value.source).strip(), mode="eval"))
    if isinstance(value, TimerSpec):
        return (value.kind, value.text)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a loop: Many
        return tuple((f.name, canon(getattr(value, f.name))) for f in dataclasses.fields(value))
    if callable(value):
        return "<callable>"
    return value


def elements(process):
    """(id, kind, every field but the function) for each element, in order."""
    out = []
    for e in process.elements:
        fields = tuple((f.name, canon(getattr(e, f.name))) for f in dataclasses.fields(e)
                       if f.name not in ("fn",))
        out.append((e.id, e.kind, fields))
    return out


def flows(process, ids=True):
    """(id, source, target, condition) for each flow, in document order."""
    return [((f.id,) if ids else ()) + (f.source, f.target, canon(f.condition))
            for f in process.flows]


def diagram(xml):
    """Every DI shape and edge of a document (bytes or text): bounds, label bounds,
    isExpanded, waypoints."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    shapes, edges = {}, {}
    for shape in root.iterfind(".//bpmndi:BPMNShape", NS):
        bounds = [tuple(b.get(k) for k in ("x", "y", "width", "height"))
                  for b in shape.iterfind(".//dc:Bounds", NS)]
        shapes[shape.get("bpmnElement")] = (shape.get("id"), shape.get("isExpanded"), bounds)
    for edge in root.iterfind(".//bpmndi:BPMNEdge", NS):
        points = [(p.get("x"), p.get("y")) for p in edge.iterfind("di:waypoint", NS)]
        edges[edge.get("bpmnElement")] = (edge.get("id"), points)
    return shapes, edges


def ids_and_tags(xml):
    """(id, tag) of every element that has an id, in document order."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    return [(e.get("id"), e.tag) for e in root.iter() if isinstance(e.tag, str) and e.get("id")]


def c14n(xml):
    """The canonical form of a document: equal when nothing it says changed."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    return etree.tostring(root, method="c14n")
