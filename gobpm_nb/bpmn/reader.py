"""Reading a BPMN document into builder processes, one builder call per element.

Every process in the document is read (executable or not), in document order. An element the
engine runs becomes the builder element that does the same; one it cannot run yet becomes a
placeholder (``Process.unsupported``) so the flows around it stay whole and validation refuses
it; artifacts, lanes and data are kept in the file and left out of the graph. Outgoing flows
keep document order (the order of the ``sequenceFlow`` elements), never diagram coordinates.

A ``subProcess`` (``triggeredByEvent="true"``: an event subprocess) is read into the scope the
builder gives for it, its children and its inner flows in document order, depth first; a flow
must lie in the scope of the elements it joins. An activity's
``multiInstanceLoopCharacteristics`` make it multi-instance once it is built, its
``standardLoopCharacteristics`` a standard loop (``loops.py``);
a ``callActivity`` calls the process it names (``calls.py``).
"""

from __future__ import annotations

from ..errors import ModelError
from ..model import Process
from .activiti import service_type
from .adhoc import read_adhoc
from .asdrawn import event_arms, finish, fresh, is_flow_of_gateway, stand_in
from .calls import read_call
from .check import check_process
from .context import Context, pass_through
from .drawnfixes import repair
from .drawnflows import (
    boundary_home,
    keep_defaults,
    on_event_subprocess,
    several_starts,
    twin_flow,
)
from .events import host_of, message_of, read_event
from .expressions import translate
from .loops import read_loop
from .mappings import read_mapping
from .multiple import read_multiple
from .names import BPMN, GOBPM, ZEEBE, children, extension, is_bpmn, local, namespace
from .notes import Notes
from .schema import check as check_schema
from .spins import note_spins
from .vendor import assignee, implementation, job_topic, not_run, topic_from
from .xmllib import etree

EVENTS = {"startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent",
          "boundaryEvent"}
TASKS = {"task", "manualTask", "scriptTask", "serviceTask", "sendTask", "businessRuleTask",
         "userTask", "receiveTask"}
GATEWAYS = {"exclusiveGateway", "parallelGateway", "eventBasedGateway", "inclusiveGateway",
            "complexGateway"}
NOT_YET: dict[str, str] = {  # tag -> why (activities: boundaries may attach to them)
}
SCOPES = ("subProcess", "transaction", "adHocSubProcess")
DATA = {"dataObject", "dataObjectReference", "dataStoreReference"}
KEPT = {"laneSet", "textAnnotation", "association", "group", "documentation",
        "extensionElements", "ioSpecification", "property", "auditing", "monitoring",
        "correlationSubscription", "supports", "resourceRole", "performer", "humanPerformer",
        "potentialOwner", "dataInputAssociation", "dataOutputAssociation",
        # what a subprocess holds besides its flow elements (loops: read_loop)
        "incoming", "outgoing", "categoryValueRef", "multiInstanceLoopCharacteristics",
        "standardLoopCharacteristics", "completionCondition"}  # (an ad-hoc one's: adhoc.py)


def read_document(tree: etree._ElementTree, as_drawn: bool = False
                  ) -> tuple[dict[str, Process], Notes, list[str]]:
    """Every process of the document, the notes, and the ids of the executable processes;
    ``as_drawn``: in design-review mode (``asdrawn.py``)."""
    notes = Notes()
    ctx = Context.of(tree, notes, as_drawn)
    if as_drawn:
        ctx.stand_in = stand_in
    check_schema(tree, notes, ctx.process_of, as_drawn)
    processes: dict[str, Process] = {}
    executable: list[str] = []
    for node in children(ctx.root, BPMN, "import"):
        notes.warning(node, "imports of other documents are not followed", None)
    for proc in children(ctx.root, BPMN, "process"):
        pid = proc.get("id")
        if not pid:
            notes.error(proc, "a process without an id cannot be read", None)
            continue
        processes[pid] = read_process(ctx, proc)
        if proc.get("isExecutable") == "true":
            executable.append(pid)
    return processes, notes, executable


def read_process(ctx: Context, proc: etree._Element) -> Process:
    p = Process(proc.get("id", ""), proc.get("name"))
    ctx.begin(proc, p)
    for note in ctx.notes.errors_of(p.id):  # schema errors so far: validate() reports them too
        p.add_problem(str(note))
        ctx.reported.append(str(note))
    for ext in children(proc, BPMN, "extensionElements"):  # written while it was refused
        for marker in ext:
            if namespace(marker) == GOBPM and local(marker) == "problem":
                ctx.error(marker, (marker.text or "").strip())
    not_run(ctx, proc)
    for node in proc:
        if is_bpmn(node):
            read_element(ctx, node)
    _check_flow_scopes(ctx, p)
    keep_defaults(ctx)
    if ctx.as_drawn:
        repair(ctx)
        finish(ctx)
    check_process(ctx, proc)
    note_spins(ctx, proc)
    return p


def _has_start(node: etree._Element) -> bool:
    return any(is_bpmn(c) and local(c) == "startEvent" for c in node)


def read_scope(ctx: Context, node: etree._Element, eid: str | None = None) -> None:
    """A subprocess (an event subprocess when ``triggeredByEvent``) and what it holds;
    ``eid``: the id it is read under when the file gives it none."""
    eid, name = eid or node.get("id", ""), node.get("name")
    if node.get("triggeredByEvent") == "true":
        scope = ctx.p.event_subprocess(eid, name)
    elif local(node) == "adHocSubProcess" and not (ctx.as_drawn and _has_start(node)):
        scope = read_adhoc(ctx, node)
    elif local(node) == "transaction":
        scope = ctx.p.transaction(eid, name)
    else:
        if local(node) == "adHocSubProcess":
            ctx.assume(node, f"ad-hoc subprocess {eid!r} is drawn with a start event, from "
                             "which its elements are reached: it runs as a plain subprocess")
        scope = ctx.p.subprocess(eid, name)
    outer, ctx.scope = ctx.scope, scope
    try:
        for child in node:
            if is_bpmn(child):
                read_element(ctx, child)
    finally:
        ctx.scope = outer


def _check_flow_scopes(ctx: Context, p: Process) -> None:
    """A flow written inside one scope must join elements of that scope (one that joins two
    scopes is refused by validation, naming both)."""
    within = {e.id: e.within for e in p.elements}
    for f in p.flows:
        if f.id not in ctx.flow_scope or f.source not in within or f.target not in within:
            continue
        scope, held = within[f.source], ctx.flow_scope[f.id]
        node = ctx.flows.get(f.id)
        if scope == within[f.target] and held != scope and node is not None:
            ctx.detail(node, f"sequence flow {f.id!r} is written in {_scope_name(held)} but "
                             f"joins elements of {_scope_name(scope)}",
                       f"it is read as a flow of {_scope_name(scope)}")


def _scope_name(scope: str | None) -> str:
    return f"subprocess {scope!r}" if scope is not None else "the process"


def read_element(ctx: Context, node: etree._Element) -> None:
    """One child of a process: a flow node, a flow, or something kept but not run."""
    tag = local(node)
    if tag in KEPT:
        return
    if tag in DATA:
        ctx.warning(node, f"{tag} is kept in the file but not modelled: the engine keeps one "
                          "data dict per instance")
        return
    if tag == "sequenceFlow":
        read_flow(ctx, node)
        return
    if not node.get("id") and tag == "subProcess" and node.get("triggeredByEvent") == "true":
        made = fresh(ctx, f"{ctx.pid}_eventSubProcess")  # no flow names an event subprocess
        ctx.warning(node, f"an event subprocess without an id: it is read as {made!r}")
        read_scope(ctx, node, made)
        return
    if not node.get("id"):
        ctx.detail(node, f"a {tag} without an id cannot be read",
                   "no flow can name it, so it is left out")
        return
    marker = extension(node, GOBPM, "unsupported")
    if marker is not None:  # a placeholder written by to_bpmn: the same placeholder
        _written_placeholder(ctx, node, marker)
        return
    not_run(ctx, node)
    activity = tag in TASKS or tag in NOT_YET or tag in SCOPES or tag == "callActivity"
    if tag in EVENTS:
        _read_event(ctx, node)
    elif tag == "adHocSubProcess" and ctx.as_drawn and not _holds_nodes(node):
        _placeholder(ctx, node, "an ad-hoc subprocess with nothing inside to activate", True)
    elif tag in SCOPES:
        read_scope(ctx, node)
    elif tag == "callActivity":
        read_call(ctx, node)
    elif tag in TASKS:
        read_task(ctx, node)
    elif tag in GATEWAYS:
        read_gateway(ctx, node)
    elif tag in NOT_YET:
        _placeholder(ctx, node, NOT_YET[tag], not tag.endswith("Gateway"))
    else:
        _placeholder(ctx, node, f"<{tag}> is not a BPMN flow element this importer knows",
                     False)
    read_mapping(ctx, node)
    if activity:
        read_loop(ctx, node)  # on the element just built
        _activity_default(ctx, node)
        _for_compensation(ctx, node)


def _for_compensation(ctx: Context, node: etree._Element) -> None:
    """An activity marked ``isForCompensation`` (the element just built); in design-review
    mode an event subprocess's mark is not read (it starts on its trigger)."""
    if node.get("isForCompensation") != "true" or ctx.process is None or \
            not any(e.id == node.get("id") for e in ctx.process.elements):
        return
    if ctx.as_drawn and node.get("triggeredByEvent") == "true":
        ctx.assume(node, f"event subprocess {node.get('id')!r} is marked isForCompensation, "
                         "but it starts on its own trigger, not as a handler: the mark is not "
                         "read")
        return
    ctx.p.for_compensation(node.get("id", ""))


def _read_event(ctx: Context, node: etree._Element) -> None:
    """An event; in design-review mode a boundary event written outside its host's scope
    is read in that scope (``drawnflows.boundary_home``)."""
    if several_starts(ctx, node, _read_event) or on_event_subprocess(ctx, node):
        return
    moved, home = boundary_home(ctx, node) if local(node) == "boundaryEvent" else (False, None)
    outer = ctx.scope
    if moved:
        ctx.scope = home
    try:
        if not read_multiple(ctx, node):
            read_event(ctx, node)
    finally:
        ctx.scope = outer


def _holds_nodes(node: etree._Element) -> bool:
    """Whether a scope holds a flow node (anything with an id but a flow, or what a scope
    holds besides its flow elements: its loop characteristics...)."""
    return any(is_bpmn(c) and c.get("id") and local(c) != "sequenceFlow"
               and local(c) not in KEPT for c in node)


def _placeholder(ctx: Context, node: etree._Element, reason: str, activity: bool) -> None:
    inner = sum(1 for c in node.iter() if c is not node and is_bpmn(c) and c.get("id"))
    if inner and local(node) in ("subProcess", "adHocSubProcess", "transaction"):
        reason += f"; its {inner} inner elements are kept in the file but not read"
    ctx.unsupported(node.get("id", ""), node.get("name"), tag=local(node), reason=reason,
                    activity=activity)


def _written_placeholder(ctx: Context, node: etree._Element, marker: etree._Element) -> None:
    """A placeholder as ``to_bpmn`` writes one (``gobpm:unsupported tag reason``)."""
    eid, name = node.get("id", ""), node.get("name")
    tag, reason = marker.get("tag") or local(node), marker.get("reason", "")
    kind = next((local(c)[: -len("EventDefinition")] for c in node
                 if is_bpmn(c) and local(c).endswith("EventDefinition")), "")
    if local(node) == "boundaryEvent":
        ctx.unsupported(eid, name, tag=tag, reason=reason, attached_to=host_of(node),
                        interrupting=node.get("cancelActivity", "true") != "false",
                        definition=kind)
    else:
        ctx.unsupported(eid, name, tag=tag, reason=reason,
                        activity=marker.get("activity") == "true", definition=kind)


def _activity_default(ctx: Context, node: etree._Element) -> None:
    """An activity's default flow, on the element just built: taken only when none of its
    other outgoing flows is."""
    target = _default_target(ctx, node)
    if target is not None and ctx.process is not None and \
            any(e.id == node.get("id") for e in ctx.process.elements):
        ctx.p.default_flow(node.get("id", ""), target)


def read_task(ctx: Context, node: etree._Element) -> None:
    tag, eid, name, p = local(node), node.get("id", ""), node.get("name"), ctx.p
    jobs = tag in ("serviceTask", "sendTask", "businessRuleTask", "scriptTask")
    topic = job_topic(ctx, node) if jobs else None
    dynamic = topic_from(ctx, node) if jobs and topic is None else None
    if topic is not None:
        p.service_task(eid, name, topic=topic)
    elif dynamic is not None:  # "": it did not translate (the error note says so)
        p.service_task(eid, name, topic_from=dynamic or None, topic=None if dynamic else "?")
    elif tag in ("task", "manualTask"):
        p.script_task(eid, name, fn=pass_through)  # nothing to do: it passes through
    elif tag == "scriptTask":
        extra = _script_of(node)
        ctx.warning(node, f"script task {eid!r} has no Python function{extra}: it passes the "
                          f"data through unchanged until p.set_function({eid!r}, fn)")
        p.script_task(eid, name, fn=pass_through)
    elif tag == "serviceTask":
        ctx.warning(node, f"service task {eid!r} is not a worker job (no zeebe:taskDefinition "
                          f"or camunda:type='external'){implementation(node)}: it passes the "
                          f"data through unchanged until p.set_function({eid!r}, fn)")
        p.service_task(eid, name, fn=pass_through)
    elif tag == "sendTask" and service_type(node):
        ctx.warning(node, service_type(node) or "")
        p.service_task(eid, name, fn=pass_through)
    elif tag == "sendTask" and ctx.as_drawn and (_hosts(ctx, eid) or
                                                 node.get("isForCompensation") == "true"):
        what = "carries boundary events" if _hosts(ctx, eid) else "is a compensation handler"
        ctx.assume(node, f"send task {eid!r} {what}, which a message throw cannot be: it "
                         "passes through as a task that does nothing (its message is not "
                         "sent)")
        p.script_task(eid, name, fn=pass_through)
    elif tag == "sendTask":
        message, key = message_of(ctx, node, eid)
        p.message_throw(eid, name, message=message, key=key)
    elif tag == "businessRuleTask":
        _placeholder(ctx, node, "business rule tasks (decisions) are not supported; a "
                                "zeebe:taskDefinition or camunda:type='external' makes it a "
                                "worker job", True)
    elif tag == "userTask":
        p.user_task(eid, name, assignee=assignee(ctx, node))
    else:  # receiveTask
        message, key = message_of(ctx, node, eid)
        p.receive_task(eid, name, message=message, key=key)


def _hosts(ctx: Context, eid: str) -> bool:
    """Whether a boundary event of the file is attached to element ``eid``."""
    return any(host_of(b) == eid for b in ctx.root.iter(f"{{{BPMN}}}boundaryEvent"))


def _script_of(node: etree._Element) -> str:
    """What a note says about the script a script task carries in the file."""
    if node.find(f"{{{BPMN}}}script") is not None:
        return f" (its {node.get('scriptFormat') or 'inline'} script is not run)"
    feel = extension(node, ZEEBE, "script")
    if feel is not None:
        return f" (its zeebe:script expression {feel.get('expression', '')!r} is not run)"
    return ""


def read_gateway(ctx: Context, node: etree._Element) -> None:
    tag, eid, name, p = local(node), node.get("id", ""), node.get("name"), ctx.p
    if tag == "exclusiveGateway":
        p.exclusive_gateway(eid, name, default=_default_target(ctx, node))
    elif tag == "inclusiveGateway":
        p.inclusive_gateway(eid, name, default=_default_target(ctx, node))
    elif tag == "complexGateway":
        p.complex_gateway(eid, name, default=_default_target(ctx, node),
                          activation=_activation(ctx, node))
    elif tag == "parallelGateway":
        p.parallel_gateway(eid, name)
    elif not ctx.as_drawn or event_arms(ctx, node):
        instantiate = ctx.instantiates(node)
        parallel = node.get("eventGatewayType") == "Parallel"
        if not instantiate and node.get("instantiate") == "true":  # design-review mode
            ctx.assume(node, f"eventBasedGateway {eid!r} instantiates, but flows lead into "
                             "it: it stands as a plain (exclusive) event-based gateway, "
                             "which creates no instance")
            parallel = False
        if parallel and not instantiate and ctx.as_drawn:
            ctx.assume(node, f"eventBasedGateway {eid!r} is parallel but does not instantiate, "
                             "which BPMN does not allow: it is an exclusive event-based "
                             "gateway")
            parallel = False
        p.event_gateway(eid, name, instantiate=instantiate, parallel=parallel)


def _activation(ctx: Context, node: etree._Element) -> str | None:
    """A complex gateway's ``activationCondition``, translated; None when it has none (it
    joins as an inclusive gateway) or, in design-review mode, when it cannot be read."""
    found = node.find(f"{{{BPMN}}}activationCondition")
    if found is None:
        return None
    text = found.text or ""
    if not text.strip():
        ctx.warning(found, "the activation condition is empty: the gateway joins as an "
                           "inclusive gateway")
        return None
    try:
        return translate(text, found.get("language") or ctx.language)
    except ModelError as exc:
        ctx.detail(found, str(exc), "it is not read: the gateway joins as an inclusive "
                                    "gateway")
        return None


def _default_target(ctx: Context, node: etree._Element) -> str | None:
    """The node a gateway's or an activity's ``default`` flow goes to (what the builder
    takes)."""
    default = node.get("default")
    if default is None:
        return None
    flow = ctx.flows.get(default)
    if flow is None:
        ctx.detail(node, f"default {default!r} names no sequence flow of this process "
                         "(an unresolved reference)", "it is ignored: no flow is the default")
        return None
    target: str | None = flow.get("targetRef")
    return target


def read_flow(ctx: Context, node: etree._Element) -> None:
    """A sequence flow, its condition translated (FEEL, JUEL or plain comparisons)."""
    not_run(ctx, node)
    condition = None
    found = node.find(f"{{{BPMN}}}conditionExpression")
    if found is not None:
        text = found.text or ""
        if not text.strip():
            ctx.warning(found, "the condition is empty: the flow is taken as unconditional")
        else:
            try:
                condition = translate(text, found.get("language") or ctx.language)
            except ModelError as exc:
                ctx.detail(found, str(exc), "it is not read: its gateway decides"
                           if is_flow_of_gateway(ctx, node) else
                           "it is not read: the flow is taken as if it had none")
    source = ctx.by_id.get(node.get("sourceRef") or "")
    if condition is not None and ctx.as_drawn and source is not None and \
            local(source) == "parallelGateway":
        ctx.assume(node, f"sequence flow {node.get('id')!r} leaves a parallel gateway, which "
                         "takes every flow: its condition is not read (Camunda 7 ignores it "
                         "too)")
        condition = None
    twin = twin_flow(ctx, node, condition)
    if twin is None:
        ctx.p.flow(node.get("sourceRef", ""), node.get("targetRef", ""), id=node.get("id"),
                   condition=condition)
    if node.get("id") and twin != "again":
        ctx.flow_scope[node.get("id", "")] = str(ctx.scope) if ctx.scope is not None else None
