"""Writing processes as BPMN 2.0 XML, with the vendor extensions Camunda 8 reads.

A process built in Python becomes a new file: ``incoming``/``outgoing`` on every flow node,
worker topics as ``zeebe:taskDefinition``, assignees as ``zeebe:assignmentDefinition``,
message keys as ``zeebe:subscription``, multi-instance as ``multiInstanceLoopCharacteristics``
with ``zeebe:loopCharacteristics`` (``loops.py``), call activities with
``zeebe:calledElement`` and ``zeebe:ioMapping`` (``calls.py``), conditions in FEEL when they
translate (otherwise in the safe evaluator's own syntax, language
``urn:gobpm-nb:safe-expression``), and a diagram (``diagram.py``). An imported process writes
its file back as it was read, plus the elements and flows it gained since, placed below the
existing diagram.

Subprocesses are nested: each element is written inside the ``<subProcess>`` of its scope
(``triggeredByEvent="true"`` for an event subprocess), and each flow in the scope of the
elements it joins, so the file has the structure modelers draw.
"""

from __future__ import annotations

from collections import Counter

from ..errors import ModelError
from ..model import Process
from ..model import elements as el
from ..model.adhoc import AdHocSubProcess
from ..model.multiple import THROWS
from ..model.placeholders import Unsupported, UnsupportedBoundary
from .adhoc import write_adhoc, write_completion
from .calls import write_call
from .diagram import add_to_diagram, new_diagram
from .expressions import to_feel
from .loops import write_loop, write_standard
from .mappings import write_mapping
from .multiple import write_multiple
from .names import (
    BPMN,
    FLOW_ELEMENTS,
    GOBPM,
    NSMAP,
    SAFE_LANGUAGE,
    ZEEBE,
    bpmn,
    children,
    local,
)
from .roots import NCNAME, RootElements, expression, slug
from .scopes import scope_of
from .timertext import timer_text
from .xmllib import etree

TAGS = {"start": "startEvent", "end": "endEvent", "message_end": "endEvent",
        "signal_end": "endEvent", "none_throw": "intermediateThrowEvent",
        "script_task": "scriptTask",
        "service_task": "serviceTask", "user_task": "userTask", "receive_task": "receiveTask",
        "timer_catch": "intermediateCatchEvent", "message_catch": "intermediateCatchEvent",
        "signal_catch": "intermediateCatchEvent",
        "conditional_catch": "intermediateCatchEvent", "link_catch": "intermediateCatchEvent",
        "message_throw": "intermediateThrowEvent", "signal_throw": "intermediateThrowEvent",
        "escalation_throw": "intermediateThrowEvent", "link_throw": "intermediateThrowEvent",
        "message_start": "startEvent", "timer_start": "startEvent",
        "signal_start": "startEvent", "error_start": "startEvent",
        "escalation_start": "startEvent", "conditional_start": "startEvent",
        "subprocess": "subProcess",
        "event_subprocess": "subProcess", "call_activity": "callActivity",
        "exclusive_gateway": "exclusiveGateway",
        "inclusive_gateway": "inclusiveGateway", "parallel_gateway": "parallelGateway",
        "complex_gateway": "complexGateway",
        "event_gateway": "eventBasedGateway", "transaction": "transaction",
        "adhoc_subprocess": "adHocSubProcess",
        "compensation_throw": "intermediateThrowEvent", "compensation_end": "endEvent",
        "cancel_end": "endEvent", "compensation_start": "startEvent",
        "multiple_catch": "intermediateCatchEvent", "multiple_start": "startEvent",
        "multiple_throw": "intermediateThrowEvent", "multiple_end": "endEvent"}
#: The elements that hold flow elements of their own.
SCOPE_TAGS = ("subProcess", "transaction", "adHocSubProcess")
# flow elements a placeholder is not written as (it is a flow node: else a <task>)
_NOT_NODES = frozenset({"sequenceFlow", "boundaryEvent", "dataObject", "dataObjectReference",
                        "dataStoreReference"})
TIMER_TAGS = {"duration": "timeDuration", "date": "timeDate", "cycle": "timeCycle"}


def new_document(p: Process) -> etree._ElementTree:
    """A new BPMN file holding ``p`` and a left-to-right diagram of it."""
    ids = [p.id] + [e.id for e in p.elements]
    check_ids(ids, set())
    root = etree.Element(bpmn("definitions"), nsmap={**NSMAP, "gobpm": GOBPM})
    root.set("id", next(c for c in (f"Definitions_{slug(p.id)}", "Definitions",
                                    "Definitions_1") if c not in ids))
    root.set("targetNamespace", "http://bpmn.io/schema/bpmn")
    root.set("exporter", "gobpm_nb")
    root.set(f"{{{NSMAP['modeler']}}}executionPlatform", "Camunda Cloud")
    proc = etree.SubElement(root, bpmn("process"), id=p.id)
    if p.name:
        proc.set("name", p.name)
    runs = _validates(p)
    proc.set("isExecutable", "true" if runs else "false")
    writer = Writer(root)
    if not runs:
        write_problems(writer, proc, p, p.problems)
    flow_ids = writer.add(proc, p, p.elements, p.flows)
    new_diagram(root, p, flow_ids, writer.fresh)
    etree.cleanup_namespaces(root)  # declare only the prefixes used
    etree.indent(root, space="  ")
    return root.getroottree()


def _validates(p: Process) -> bool:
    try:
        p.definition()
    except ModelError:
        return False
    return True


def write_problems(w: RootElements, proc: etree._Element, p: Process,
                   problems: list[str]) -> None:
    """Each of ``problems`` (recorded outside the builder's checks) that the file would not
    carry otherwise, as ``gobpm:problem`` in the process's extensionElements: the file reads
    back refused, naming it. A refused condition is carried by its flow instead."""
    carried = {f.id for f in p.flows if f.refused is not None}
    kept = [x for x in problems if x.partition(": condition: ")[0] not in carried]
    if not kept:
        return
    ext = next(iter(children(proc, BPMN, "extensionElements")), None)
    if ext is None:
        ext = etree.Element(bpmn("extensionElements"))
        proc.insert(max((i + 1 for i, c in enumerate(proc) if local(c) == "documentation"),
                        default=0), ext)
    for problem in kept:
        etree.SubElement(ext, f"{{{GOBPM}}}problem", nsmap=w.nsmap(GOBPM)).text = problem


def check_ids(ids: list[str], taken: set[str]) -> None:
    """ModelError naming every id a BPMN file cannot hold: one that is not an NCName, one
    given twice, one already ``taken`` by the document."""
    problems = [f"id {i!r} is not a valid XML id (a BPMN file needs NCNames: a letter or "
                "'_' first, then letters, digits, '_', '-', '.')"
                for i in ids if not NCNAME.match(i)]
    counts = Counter(ids)
    problems += [f"id {i!r} is used twice (the process and an element, or two elements); "
                 "a BPMN file needs unique ids" for i in sorted(counts) if counts[i] > 1]
    problems += [f"id {i!r} is already the id of something else in the file; a BPMN file "
                 "needs unique ids" for i in sorted(set(ids) & taken)]
    if problems:
        raise ModelError(problems)


def add_changes(tree: etree._ElementTree, p: Process, elements: tuple[str, ...],
                flows: tuple[str, ...], loops: dict[str, el.Many | el.Loop | None],
                problems: list[str]) -> None:
    """Write into ``tree`` what ``p`` gained since it was read (``elements`` and ``flows``
    are the ids it had then, ``loops`` their multi-instance loops, ``problems`` what it has
    recorded since): new elements, new flows, their references and diagram, the loop of an
    element read whose loop changed, the new problems. ModelError naming every new id a
    BPMN file cannot hold, as for a new file."""
    old_elements, old_flows = set(elements), set(flows)
    new_elements = [e for e in p.elements if e.id not in old_elements]
    new_flows = [f for f in p.flows if f.id not in old_flows]
    looped = [e for e in p.elements if e.id in old_elements and e.repeats
              and (e.many or e.loop) != loops.get(e.id)]
    if not new_elements and not new_flows and not looped and not problems:
        return
    root = tree.getroot()
    proc = next((c for c in children(root, BPMN, "process") if c.get("id") == p.id), None)
    if proc is None:
        return
    check_ids([e.id for e in new_elements],
              {n.get("id", "") for n in root.iter() if isinstance(n.tag, str)})
    writer = Writer(root)
    write_problems(writer, proc, p, problems)
    if looped:
        index = {n.get("id"): n for n in proc.iter() if isinstance(n.tag, str)}
        for e in looped:
            if e.id in index:
                _replace_loop(writer, index[e.id], e)
    flow_ids = writer.add(proc, p, new_elements, new_flows)
    add_to_diagram(root, p, new_elements, new_flows, flow_ids, writer.fresh)


def _replace_loop(w: RootElements, node: etree._Element, e: el.Element) -> None:
    """``node``'s loop characteristics become ``e``'s, in their place in the schema's order
    (after its data associations and performers, before a subprocess's flow elements)."""
    for old in [c for c in node if local(c) in ("multiInstanceLoopCharacteristics",
                                                 "standardLoopCharacteristics")]:
        node.remove(old)
    if e.many is not None:
        loop = write_loop(w, node, e.many)
    elif e.loop is not None:
        loop = write_standard(w, node, e.loop)
    else:
        return
    at = max((i + 1 for i, c in enumerate(node) if local(c) in _BEFORE_LOOP), default=0)
    node.insert(at, loop)  # moved from the end, where write_loop put it
    if at > 0:  # on a line of its own, indented as its siblings
        before = node[at - 1]
        loop.tail = before.tail
        if at == len(node) - 1:  # the last child now: the one before it takes their indent
            before.tail = node.text


class Writer(RootElements):
    """Adds elements to one document: fresh ids, shared messages/signals/errors."""

    def add(self, proc: etree._Element, p: Process, elements: list[el.Element],
            flows: list[el.Flow]) -> dict[str, str]:
        """Add ``elements`` and ``flows`` to ``proc``, each in its scope's ``<subProcess>``;
        the XML id of each flow. Linear in the size of the process."""
        self.ids.update(e.id for e in p.elements)
        flow_ids = {}
        for f in flows:
            ok = NCNAME.match(f.id) and f.id not in self.ids
            flow_ids[f.id] = f.id if ok else self.fresh(f"Flow_{slug(f.source)}_"
                                                        f"{slug(f.target)}")
            self.ids.add(flow_ids[f.id])
        ins: dict[str, list[str]] = {}
        outs: dict[str, list[el.Flow]] = {}
        for f in p.flows:
            ins.setdefault(f.target, []).append(flow_ids.get(f.id, f.id))
            outs.setdefault(f.source, []).append(f)
        scope = scope_of(p.elements)
        index = {n.get("id", ""): n for n in proc.iter()
                 if isinstance(n.tag, str) and n.get("id") is not None}
        new = {e.id for e in elements}
        waiting: dict[str | None, list[tuple[int, etree._Element]]] = {}
        for i, f in enumerate(flows):
            waiting.setdefault(scope.get(f.source), []).append((i, self.flow(f, flow_ids[f.id])))
            for end, ref in ((f.source, "outgoing"), (f.target, "incoming")):
                node = index.get(end)
                if end not in new and node is not None:
                    _insert_ref(node, ref, flow_ids[f.id])
        for e in elements:  # all made first: a scope may come after what it holds
            mine = outs.get(e.id, [])
            index[e.id] = self.element(e, ins.get(e.id, []),
                                       [flow_ids.get(f.id, f.id) for f in mine],
                                       self._default(e, mine, flow_ids))
        first = _first_flows(flows, scope)
        slots = _Slots(proc, index)
        for e in elements:
            held = scope.get(e.id)
            if e.id in first:  # its scope's flows made before its own go before it
                queue = waiting.get(held, [])
                while queue and queue[0][0] < first[e.id]:
                    slots.append(held, queue.pop(0)[1])
            slots.append(held, index[e.id])
        for held, rest in waiting.items():
            for _, node in rest:
                slots.append(held, node)
        for e in elements:  # after what it holds, where the schema puts it
            if isinstance(e, AdHocSubProcess):
                write_completion(self, index[e.id], e)
        for e in elements:  # a compensation handler is linked by an association (an artifact)
            if isinstance(e, el.CompensationBoundary):
                aid = flow_ids[f"{e.id}->{e.handler}"] = self.fresh(f"Association_{slug(e.id)}")
                slots.container(scope.get(e.id)).append(etree.Element(
                    bpmn("association"), id=aid, associationDirection="One", sourceRef=e.id,
                    targetRef=e.handler))
        return flow_ids

    @staticmethod
    def _default(e: el.Element, outs: list[el.Flow], xml_id: dict[str, str]) -> str | None:
        """The XML id of a gateway's or an activity's default flow (``outs``: the flows
        leaving it)."""
        if e.default is not None:
            for f in outs:
                if f.target == e.default:
                    return xml_id.get(f.id, f.id)
        return None

    def element(self, e: el.Element, ins: list[str], outs: list[str],
                default: str | None) -> etree._Element:
        """One flow node, its children in the schema's order: extensions, incoming,
        outgoing, event definition or multi-instance loop (a subprocess's inside is added
        after them)."""
        node = etree.Element(bpmn(self._tag(e)), id=e.id)
        if e.name:
            node.set("name", e.name)
        if isinstance(e, el.Boundary):
            node.set("attachedToRef", e.attached_to)
            if not e.interrupting and not isinstance(e, el.ErrorBoundary):
                node.set("cancelActivity", "false")
        if isinstance(e, el.TriggeredStart) and not e.interrupting:
            node.set("isInterrupting", "false")
        if isinstance(e, el.EventSubProcess):
            node.set("triggeredByEvent", "true")
        if isinstance(e, el.EventGateway) and e.instantiate:
            node.set("instantiate", "true")
        if isinstance(e, el.EventGateway) and e.parallel:
            node.set("eventGatewayType", "Parallel")
        if e.for_compensation:
            node.set("isForCompensation", "true")
        if default is not None:
            node.set("default", default)
        if isinstance(e, el.ReceiveTask):
            node.set("messageRef", self.message(e.message, e.key))
        self._extensions(node, e)
        if isinstance(e, AdHocSubProcess):
            write_adhoc(self, node, e)
        for ref in ins:
            etree.SubElement(node, bpmn("incoming")).text = ref
        for ref in outs:
            etree.SubElement(node, bpmn("outgoing")).text = ref
        self._definition(node, e)
        if isinstance(e, el.ComplexGateway) and e.activation is not None:
            self.formal(node, "activationCondition", *expression(e.activation))
        if e.many is not None:
            write_loop(self, node, e.many)
        elif e.loop is not None:
            write_standard(self, node, e.loop)
        return node

    @staticmethod
    def _tag(e: el.Element) -> str:
        if isinstance(e, el.Boundary):
            return "boundaryEvent"
        if isinstance(e, Unsupported):  # its tag is in gobpm:unsupported too
            return e.tag if e.tag in FLOW_ELEMENTS and e.tag not in _NOT_NODES else "task"
        return TAGS[e.kind]

    def _extensions(self, node: etree._Element, e: el.Element) -> None:
        if isinstance(e, el.CallActivity):
            write_call(self, node, e)
            return
        found: list[tuple[str, str, dict[str, str]]] = []
        if isinstance(e, el.ServiceTask) and e.topic is not None:
            found.append((ZEEBE, "taskDefinition", {"type": e.topic}))
        if isinstance(e, el.ServiceTask) and e.topic_from is not None and \
                to_feel(str(e.topic_from.source)) is not None:
            found.append((ZEEBE, "taskDefinition",
                          {"type": to_feel(str(e.topic_from.source)) or ""}))
        if isinstance(e, el.UserTask) and e.assignee is not None:
            found.append((ZEEBE, "assignmentDefinition", {"assignee": e.assignee}))
        if isinstance(e, (el.MessageThrow, el.SignalThrow, el.MessageEnd, el.SignalEnd,
                          *THROWS)) and e.payload:
            found.append((GOBPM, "payload", {"fields": " ".join(e.payload)}))
        if isinstance(e, (Unsupported, UnsupportedBoundary)):  # read back as it is
            marker = {"tag": e.tag, "reason": e.reason}
            if isinstance(e, Unsupported) and e.activity:
                marker["activity"] = "true"
            found.append((GOBPM, "unsupported", marker))
        if not found and e.io is None:
            return
        ext = etree.SubElement(node, bpmn("extensionElements"))
        for ns, name, attrs in found:
            etree.SubElement(ext, f"{{{ns}}}{name}", attrs, nsmap=self.nsmap(ns))
        if e.io is not None:
            write_mapping(self, ext, e.io)

    def _definition(self, node: etree._Element, e: el.Element) -> None:
        def sub(kind: str, **attrs: str) -> etree._Element:
            return etree.SubElement(node, bpmn(f"{kind}EventDefinition"), attrs)

        if isinstance(e, el.EndEvent) and e.terminate:
            sub("terminate")
        if isinstance(e, el.EndEvent) and e.error is not None:
            sub("error", errorRef=self.error(e.error))
        if isinstance(e, (el.EndEvent, el.EscalationThrow)) and e.escalation is not None:
            sub("escalation", escalationRef=self.escalation(e.escalation))
        if isinstance(e, (el.ErrorBoundary, el.ErrorStart)):
            sub("error", **({"errorRef": self.error(e.error)} if e.error else {}))
        if isinstance(e, (el.EscalationBoundary, el.EscalationStart)):
            sub("escalation", **({"escalationRef": self.escalation(e.escalation)}
                                 if e.escalation else {}))
        if isinstance(e, (el.TimerCatch, el.TimerBoundary, el.TimerStart)) and \
                e.timer is not None:
            self.formal(sub("timer"), TIMER_TAGS[e.timer.kind], *timer_text(e.timer))
        if isinstance(e, el.MessageStart) and e.within is None:  # starts instances: no key
            sub("message", messageRef=self.start_message(e.message))
        elif isinstance(e, (el.MessageCatch, el.MessageBoundary, el.MessageThrow,
                            el.MessageStart, el.MessageEnd)):
            sub("message", messageRef=self.message(e.message, e.key))
        if isinstance(e, (el.SignalCatch, el.SignalBoundary, el.SignalThrow, el.SignalStart,
                          el.SignalEnd)):
            sub("signal", signalRef=self.global_("signal", e.signal))
        if isinstance(e, (el.ConditionalCatch, el.ConditionalBoundary, el.ConditionalStart)) \
                and e.condition:
            self.formal(sub("conditional"), "condition", *expression(e.condition))
        if isinstance(e, (el.LinkThrow, el.LinkCatch)):
            sub("link", name=e.link)
        if isinstance(e, (el.CompensationBoundary, el.CompensationStart)):
            sub("compensate")
        if isinstance(e, (el.CompensationThrow, el.CompensationEnd)):
            sub("compensate", **({"activityRef": e.ref} if e.ref else {}),
                **({"waitForCompletion": "false"} if e.no_wait else {}))
        if isinstance(e, (el.CancelEnd, el.CancelBoundary)):
            sub("cancel")
        write_multiple(self, node, e)
        if isinstance(e, (Unsupported, UnsupportedBoundary)) and \
                e.definition.isalpha():  # the one it had in the file, as the schema allows
            found = sub(e.definition, **({"name": ""} if e.definition == "link" else {}))
            if e.definition == "conditional":
                self.formal(found, "condition", "", None)

    def flow(self, f: el.Flow, fid: str) -> etree._Element:
        node = etree.Element(bpmn("sequenceFlow"), id=fid, sourceRef=f.source,
                             targetRef=f.target)
        if f.condition is not None:
            self.formal(node, "conditionExpression", *expression(f.condition))
        elif f.refused is not None:  # as given: it reads back refused the same way
            self.formal(node, "conditionExpression", f.refused, SAFE_LANGUAGE)
        return node


def _first_flows(flows: list[el.Flow], scope: dict[str, str | None]) -> dict[str, int]:
    """Each subprocess -> the position in ``flows`` of the first flow inside it (at any
    depth). Written in this order, a file reads back with its flows in the builder's order
    whenever each subprocess's flows were made together."""
    first: dict[str, int] = {}
    for i, f in enumerate(flows):
        held = scope.get(f.source)
        while held is not None:
            first.setdefault(held, i)
            held = scope.get(held)
    return first


class _Slots:
    """Where the next flow element of each scope goes: after the last flow element of its
    container (before its artifacts), found once per container and then moved along, so
    adding n elements costs O(n) however many the container holds."""

    def __init__(self, proc: etree._Element, index: dict[str, etree._Element]):
        self.proc, self.index = proc, index
        self.at: dict[str | None, tuple[etree._Element, int, int]] = {}  # (node, slot, size)

    def container(self, held: str | None) -> etree._Element:
        """The XML element that holds what is in scope ``held``."""
        node = self.index.get(held, self.proc) if held is not None else self.proc
        return node if local(node) in SCOPE_TAGS else self.proc

    def append(self, held: str | None, node: etree._Element) -> None:
        key = held if self.container(held) is not self.proc else None
        if key not in self.at:
            box = self.container(key)
            kids = list(box)
            at = max((i + 1 for i, c in enumerate(kids) if local(c) in FLOW_ELEMENTS),
                     default=_after_header(box))
            self.at[key] = (box, at, len(kids))
        box, at, size = self.at[key]
        if at == size:
            box.append(node)
        else:
            box.insert(at, node)
        self.at[key] = (box, at + 1, size + 1)


# what an activity holds before its loop characteristics, in the schema's order
_BEFORE_LOOP = ("documentation", "extensionElements", "auditing", "monitoring",
                "categoryValueRef", "incoming", "outgoing", "ioSpecification", "property",
                "dataInputAssociation", "dataOutputAssociation", "resourceRole", "performer",
                "humanPerformer", "potentialOwner")
_HEADER = ("documentation", "extensionElements", "auditing", "monitoring", "property",
           "laneSet")
# what a subProcess (an activity) holds before its flow elements, in the schema's order
_ACTIVITY_HEADER = _HEADER + ("categoryValueRef", "incoming", "outgoing", "ioSpecification",
                              "dataInputAssociation", "dataOutputAssociation", "resourceRole",
                              "performer", "humanPerformer", "potentialOwner",
                              "multiInstanceLoopCharacteristics",
                              "standardLoopCharacteristics")


def _after_header(container: etree._Element) -> int:
    """Where the first flow element goes: after documentation, extensions, lanes, ... (and,
    in a subprocess, after its incoming and outgoing flows, loop, data)."""
    header = _ACTIVITY_HEADER if local(container) in SCOPE_TAGS \
        else _HEADER
    return max((i + 1 for i, c in enumerate(container) if local(c) in header), default=0)


def _insert_ref(node: etree._Element, ref: str, flow_id: str) -> None:
    """An ``incoming``/``outgoing`` reference in its place among ``node``'s children."""
    before = ("documentation", "extensionElements", "auditing", "monitoring",
              "categoryValueRef", "incoming") + (("outgoing",) if ref == "outgoing" else ())
    at = max((i + 1 for i, c in enumerate(node) if local(c) in before), default=0)
    child = etree.Element(bpmn(ref))
    child.text = flow_id
    node.insert(at, child)
