"""Namespaces and tag names: one spelling for every XML name the package reads or writes."""

from __future__ import annotations

from .xmllib import etree

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
BPMNDI = "http://www.omg.org/spec/BPMN/20100524/DI"
DC = "http://www.omg.org/spec/DD/20100524/DC"
DI = "http://www.omg.org/spec/DD/20100524/DI"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
ZEEBE = "http://camunda.org/schema/zeebe/1.0"  # Camunda 8
CAMUNDA = ("http://camunda.org/schema/1.0/bpmn", "http://activiti.org/bpmn")  # Camunda 7
MODELER = "http://camunda.org/schema/modeler/1.0"
GOBPM = "urn:gobpm-nb:bpmn:1"  # our own extensions: payload fields, non-FEEL loop expressions

# Expression languages this package writes, besides FEEL (``=`` prefix).
SAFE_LANGUAGE = "urn:gobpm-nb:safe-expression"  # the safe evaluator's own syntax
CALLABLE_LANGUAGE = "urn:gobpm-nb:python-callable"  # a callable: a file cannot carry it

# Every element of BPMN's flowElement group: where a process's flow elements end, its
# artifacts begin (a writer inserts new flow elements before them).
FLOW_ELEMENTS = frozenset({
    "startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent",
    "boundaryEvent", "implicitThrowEvent", "task", "manualTask", "scriptTask", "serviceTask",
    "sendTask", "businessRuleTask", "userTask", "receiveTask", "exclusiveGateway",
    "parallelGateway", "eventBasedGateway", "inclusiveGateway", "complexGateway",
    "subProcess", "adHocSubProcess", "transaction", "callActivity", "callChoreography",
    "subChoreography", "choreographyTask", "sequenceFlow", "dataObject",
    "dataObjectReference", "dataStoreReference"})

# The prefixes of a file written from scratch, as Camunda Modeler spells them.
NSMAP = {"bpmn": BPMN, "bpmndi": BPMNDI, "dc": DC, "di": DI, "xsi": XSI, "zeebe": ZEEBE,
         "modeler": MODELER}


def bpmn(local: str) -> str:
    """The Clark name ``{ns}local`` of a BPMN model element."""
    return f"{{{BPMN}}}{local}"


def di(ns: str, local: str) -> str:
    return f"{{{ns}}}{local}"


def local(node: etree._Element) -> str:
    """The local name of an element (comments and processing instructions have none)."""
    tag = node.tag
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def namespace(node: etree._Element) -> str:
    tag = node.tag
    if not isinstance(tag, str) or not tag.startswith("{"):
        return ""
    return tag[1:].partition("}")[0]


def is_bpmn(node: etree._Element) -> bool:
    return namespace(node) == BPMN


def label(node: etree._Element) -> str:
    """How a report names a tag: ``subProcess``, or ``prefix:name`` outside BPMN."""
    name = local(node)
    if is_bpmn(node) or not name:
        return name
    prefix = node.prefix
    return f"{prefix}:{name}" if prefix else name


def camunda_attr(node: etree._Element, name: str) -> str | None:
    """A Camunda 7 attribute, in either of the namespaces Camunda 7 reads."""
    for ns in CAMUNDA:
        value: str | None = node.get(f"{{{ns}}}{name}")  # an attribute's value is text
        if value is not None:
            return value
    return None


def children(node: etree._Element, ns: str, name: str) -> list[etree._Element]:
    return [c for c in node if isinstance(c.tag, str) and c.tag == f"{{{ns}}}{name}"]


def extension(node: etree._Element, ns: str | tuple[str, ...], name: str
              ) -> etree._Element | None:
    """The first ``name`` extension element (in namespace ``ns``) of ``node``."""
    spaces = (ns,) if isinstance(ns, str) else ns
    for ext in children(node, BPMN, "extensionElements"):
        for c in ext:
            if namespace(c) in spaces and local(c) == name:
                return c
    return None
