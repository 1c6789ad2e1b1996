"""Writing processes as BPMN 2.0 XML, with the vendor extensions Camunda 8 reads.

A process built in Python becomes a new file: ``incoming``/``outgoing`` on every flow node,
worker topics as ``zeebe:taskDefinition``, assignees as ``zeebe:assignmentDefinition``,
message keys as ``zeebe:subscription``, conditions in FEEL when they translate (otherwise in
the safe evaluator's own syntax, language ``urn:gobpm-nb:safe-expression``), and a diagram
(``diagram.py``). An imported process writes its file back as it was read, plus the elements
and flows it gained since, placed below the existing diagram.
"""

from __future__ import annotations

import re

from lxml import etree

from ..errors import ModelError
from ..model import Process
from ..model import elements as el
from ..model.expr import Expr
from .diagram import add_to_diagram, new_diagram
from .expressions import to_feel
from .names import (
    BPMN,
    CALLABLE_LANGUAGE,
    FLOW_ELEMENTS,
    GOBPM,
    NSMAP,
    SAFE_LANGUAGE,
    XSI,
    ZEEBE,
    bpmn,
    children,
    extension,
    local,
)

NCNAME = re.compile(r"^[^\W\d][\w.\-]*$")
TAGS = {"start": "startEvent", "end": "endEvent", "script_task": "scriptTask",
        "service_task": "serviceTask", "user_task": "userTask", "receive_task": "receiveTask",
        "timer_catch": "intermediateCatchEvent", "message_catch": "intermediateCatchEvent",
        "signal_catch": "intermediateCatchEvent",
        "conditional_catch": "intermediateCatchEvent",
        "message_throw": "intermediateThrowEvent", "signal_throw": "intermediateThrowEvent",
        "exclusive_gateway": "exclusiveGateway", "parallel_gateway": "parallelGateway",
        "event_gateway": "eventBasedGateway"}


def slug(text: str) -> str:
    """``text`` made into an XML id (an NCName)."""
    out = re.sub(r"[^\w.\-]", "_", text)
    return out if NCNAME.match(out) else f"_{out}"


def expression(expr: Expr) -> tuple[str, str | None]:
    """The text and language of a condition or key: FEEL when it translates."""
    if callable(expr.source):
        return expr.describe(), CALLABLE_LANGUAGE
    feel = to_feel(str(expr.source))
    if feel is not None:
        return feel, None
    return str(expr.source), SAFE_LANGUAGE


def new_document(p: Process) -> etree._ElementTree:
    """A new BPMN file holding ``p`` and a left-to-right diagram of it."""
    ids = [p.id] + [e.id for e in p.elements]
    problems = [f"id {i!r} is not a valid XML id (a BPMN file needs NCNames: a letter or "
                "'_' first, then letters, digits, '_', '-', '.')"
                for i in ids if not NCNAME.match(i)]
    problems += [f"id {i!r} is used twice (the process and an element, or two elements); "
                 "a BPMN file needs unique ids" for i in sorted(set(ids)) if ids.count(i) > 1]
    if problems:
        raise ModelError(problems)
    root = etree.Element(bpmn("definitions"), nsmap={**NSMAP, "gobpm": GOBPM})
    root.set("id", next(c for c in (f"Definitions_{slug(p.id)}", "Definitions",
                                    "Definitions_1") if c not in ids))
    root.set("targetNamespace", "http://bpmn.io/schema/bpmn")
    root.set("exporter", "gobpm_nb")
    root.set(f"{{{NSMAP['modeler']}}}executionPlatform", "Camunda Cloud")
    proc = etree.SubElement(root, bpmn("process"), id=p.id)
    if p.name:
        proc.set("name", p.name)
    proc.set("isExecutable", "true")
    writer = Writer(root)
    flow_ids = writer.add(proc, p, p.elements, p.flows)
    new_diagram(root, p, flow_ids, writer.fresh)
    etree.cleanup_namespaces(root)  # declare only the prefixes used
    etree.indent(root, space="  ")
    return root.getroottree()


def add_changes(tree: etree._ElementTree, p: Process, elements: tuple[str, ...],
                flows: tuple[str, ...]) -> None:
    """Write into ``tree`` what ``p`` gained since it was read (``elements`` and ``flows``
    are the ids it had then): new elements, new flows, their references and diagram."""
    old_elements, old_flows = set(elements), set(flows)
    new_elements = [e for e in p.elements if e.id not in old_elements]
    new_flows = [f for f in p.flows if f.id not in old_flows]
    if not new_elements and not new_flows:
        return
    root = tree.getroot()
    proc = next((c for c in children(root, BPMN, "process") if c.get("id") == p.id), None)
    if proc is None:
        return
    writer = Writer(root)
    flow_ids = writer.add(proc, p, new_elements, new_flows)
    add_to_diagram(root, p, new_elements, new_flows, flow_ids, writer.fresh)


class Writer:
    """Adds elements to one document: fresh ids, shared messages/signals/errors."""

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

    def add(self, proc: etree._Element, p: Process, elements: list[el.Element],
            flows: list[el.Flow]) -> dict[str, str]:
        """Add ``elements`` and ``flows`` to ``proc``; the XML id of each flow."""
        self.ids.update(e.id for e in p.elements)
        flow_ids = {}
        for f in flows:
            ok = NCNAME.match(f.id) and f.id not in self.ids
            flow_ids[f.id] = f.id if ok else self.fresh(f"Flow_{slug(f.source)}_"
                                                        f"{slug(f.target)}")
            self.ids.add(flow_ids[f.id])
        xml_id = {f.id: flow_ids.get(f.id, f.id) for f in p.flows}
        new = {e.id for e in elements}
        made = [self.element(e, [xml_id[f.id] for f in p.flows if f.target == e.id],
                             [xml_id[f.id] for f in p.flows if f.source == e.id],
                             self._default(e, p.flows, xml_id)) for e in elements]
        for f in flows:
            made.append(self.flow(f, flow_ids[f.id]))
            for end, ref in ((f.source, "outgoing"), (f.target, "incoming")):
                node = next((c for c in proc if c.get("id") == end), None)
                if end not in new and node is not None:
                    _insert_ref(node, ref, flow_ids[f.id])
        at = max((i + 1 for i, c in enumerate(proc) if local(c) in FLOW_ELEMENTS),
                 default=_after_header(proc))
        for offset, node in enumerate(made):
            proc.insert(at + offset, node)
        return flow_ids

    @staticmethod
    def _default(e: el.Element, flows: list[el.Flow], xml_id: dict[str, str]) -> str | None:
        if isinstance(e, el.ExclusiveGateway) and e.default is not None:
            for f in flows:
                if f.source == e.id and f.target == e.default:
                    return xml_id[f.id]
        return None

    def element(self, e: el.Element, ins: list[str], outs: list[str],
                default: str | None) -> etree._Element:
        """One flow node, its children in the schema's order: extensions, incoming,
        outgoing, event definition."""
        node = etree.Element(bpmn(self._tag(e)), id=e.id)
        if e.name:
            node.set("name", e.name)
        if isinstance(e, el.Boundary):
            node.set("attachedToRef", e.attached_to)
            if not e.interrupting and not isinstance(e, el.ErrorBoundary):
                node.set("cancelActivity", "false")
        if default is not None:
            node.set("default", default)
        if isinstance(e, el.ReceiveTask):
            node.set("messageRef", self.message(e.message, e.key))
        self._extensions(node, e)
        for ref in ins:
            etree.SubElement(node, bpmn("incoming")).text = ref
        for ref in outs:
            etree.SubElement(node, bpmn("outgoing")).text = ref
        self._definition(node, e)
        return node

    @staticmethod
    def _tag(e: el.Element) -> str:
        if isinstance(e, el.Boundary):
            return "boundaryEvent"
        if isinstance(e, el.Unsupported):
            return e.tag if re.match(r"^[A-Za-z]+$", e.tag) else "task"
        return TAGS[e.kind]

    def _extensions(self, node: etree._Element, e: el.Element) -> None:
        found: list[tuple[str, str, dict[str, str]]] = []
        if isinstance(e, el.ServiceTask) and e.topic is not None:
            found.append((ZEEBE, "taskDefinition", {"type": e.topic}))
        if isinstance(e, el.UserTask) and e.assignee is not None:
            found.append((ZEEBE, "assignmentDefinition", {"assignee": e.assignee}))
        if isinstance(e, (el.MessageThrow, el.SignalThrow)) and e.payload:
            found.append((GOBPM, "payload", {"fields": " ".join(e.payload)}))
        if not found:
            return
        ext = etree.SubElement(node, bpmn("extensionElements"))
        for ns, name, attrs in found:
            etree.SubElement(ext, f"{{{ns}}}{name}", attrs, nsmap=self.nsmap(ns))

    def _definition(self, node: etree._Element, e: el.Element) -> None:
        def sub(kind: str, **attrs: str) -> etree._Element:
            return etree.SubElement(node, bpmn(f"{kind}EventDefinition"), attrs)

        if isinstance(e, el.EndEvent) and e.terminate:
            sub("terminate")
        if isinstance(e, el.EndEvent) and e.error is not None:
            sub("error", errorRef=self.error(e.error))
        if isinstance(e, el.ErrorBoundary):
            sub("error", **({"errorRef": self.error(e.error)} if e.error else {}))
        if isinstance(e, (el.TimerCatch, el.TimerBoundary)) and e.timer is not None:
            tag = {"duration": "timeDuration", "date": "timeDate", "cycle": "timeCycle"}
            self.formal(sub("timer"), tag[e.timer.kind], e.timer.text, None)
        if isinstance(e, (el.MessageCatch, el.MessageBoundary, el.MessageThrow)):
            sub("message", messageRef=self.message(e.message, e.key))
        if isinstance(e, (el.SignalCatch, el.SignalBoundary, el.SignalThrow)):
            sub("signal", signalRef=self.global_("signal", e.signal))
        if isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary)) and e.condition:
            self.formal(sub("conditional"), "condition", *expression(e.condition))

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

    def flow(self, f: el.Flow, fid: str) -> etree._Element:
        node = etree.Element(bpmn("sequenceFlow"), id=fid, sourceRef=f.source,
                             targetRef=f.target)
        if f.condition is not None:
            self.formal(node, "conditionExpression", *expression(f.condition))
        return node

    # -- root elements: messages, signals, errors, shared by name ------------------------
    def message(self, name: str, key: Expr | None) -> str:
        """The id of the ``<message>`` with this name and correlation key (made if new)."""
        key_text = None if key is None else expression(key)[0]
        for m in children(self.root, BPMN, "message"):
            sub = extension(m, ZEEBE, "subscription")
            if m.get("name") == name and \
                    (sub.get("correlationKey") if sub is not None else None) == key_text:
                return m.get("id", "")
        node = self._root_element("message", name)
        if key_text is not None:
            ext = etree.SubElement(node, bpmn("extensionElements"))
            etree.SubElement(ext, f"{{{ZEEBE}}}subscription", correlationKey=key_text,
                             nsmap=self.nsmap(ZEEBE))
        return node.get("id", "")

    def global_(self, tag: str, name: str) -> str:
        for node in children(self.root, BPMN, tag):
            if node.get("name") == name:
                return node.get("id", "")
        return self._root_element(tag, name).get("id", "")

    def error(self, code: str) -> str:
        for node in children(self.root, BPMN, "error"):
            if node.get("errorCode") == code:
                return node.get("id", "")
        node = self._root_element("error", code)
        node.set("errorCode", code)
        return node.get("id", "")

    def _root_element(self, tag: str, name: str) -> etree._Element:
        node = etree.Element(bpmn(tag), id=self.fresh(f"{tag.capitalize()}_{slug(name)}"),
                             name=name)
        diagrams = [i for i, c in enumerate(self.root) if local(c) == "BPMNDiagram"]
        self.root.insert(diagrams[0] if diagrams else len(self.root), node)
        return node


def _after_header(proc: etree._Element) -> int:
    """Where the first flow element goes: after documentation, extensions, lanes, ..."""
    header = ("documentation", "extensionElements", "auditing", "monitoring", "property",
              "laneSet")
    return max((i + 1 for i, c in enumerate(proc) if local(c) in header), default=0)


def _insert_ref(node: etree._Element, ref: str, flow_id: str) -> None:
    """An ``incoming``/``outgoing`` reference in its place among ``node``'s children."""
    before = ("documentation", "extensionElements", "auditing", "monitoring",
              "categoryValueRef", "incoming") + (("outgoing",) if ref == "outgoing" else ())
    at = max((i + 1 for i, c in enumerate(node) if local(c) in before), default=0)
    child = etree.Element(bpmn(ref))
    child.text = flow_id
    node.insert(at, child)
