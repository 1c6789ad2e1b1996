"""Call activities in a file: ``callActivity``, read and written.

Read from what modelers write:

- plain BPMN: ``calledElement``, the id of the process called (its newest version);
- Camunda 8: ``zeebe:calledElement processId="billing"`` (a FEEL string literal too; an
  expression is a dynamic call, refused) and ``zeebe:ioMapping``. A ``zeebe:input`` /
  ``zeebe:output`` that passes a field under its own name (``source="=amount"
  target="amount"``) names a field passed; one that renames or computes is run as a variable
  mapping (``Process.mapping``: an input's target is passed too; with such an output, the
  outputs read what the child returned and only they are written). Mapped fields are the
  inputs (outputs); with none, ``propagateAllParentVariables`` (``propagateAllChildVariables``)
  ``="false"`` passes nothing and its default passes every field;
- Camunda 7 (the element carries ``camunda:`` markup, or the file is made for Camunda
  Platform): ``camunda:calledElementBinding="version"`` with ``camunda:calledElementVersion``
  pins a version; ``camunda:in`` / ``camunda:out`` pass every field (``variables="all"``) or
  one (``source`` = ``target``), or renames (``source``) or computes (``sourceExpression``,
  JUEL) as a variable mapping; a direction with no mapping passes nothing, as in Camunda 7;
- our own ``gobpm:calledElement version="2"``: a pinned version, which Camunda 8 cannot say.

``deployment`` and ``versionTag`` bindings (Camunda 7 and 8) are read as the newest version,
with a warning. Written: ``calledElement`` (when the id is a valid QName),
``zeebe:calledElement`` with its propagation flags, a ``zeebe:ioMapping`` with one input or
output per field, and a pinned version as Camunda 7's attributes when the document declares
Camunda 7's namespace, else as ``gobpm:calledElement``.
"""

from __future__ import annotations

import keyword

from ..errors import ModelError
from ..model import elements as el
from ..model.expr import Expr
from .context import Context, pass_through
from .expressions import translate
from .mappings import zeebe_source
from .names import (
    CAMUNDA,
    GOBPM,
    MODELER,
    ZEEBE,
    bpmn,
    camunda_attr,
    extension,
    local,
    namespace,
)
from .roots import NCNAME, RootElements
from .vendor import static
from .xmllib import etree

_PASSES = "it passes through as a task that does nothing"
_LEFT_OUT = "the mapping is left out"
_LATEST = "the newest deployed version is called"


def read_call(ctx: Context, node: etree._Element) -> None:
    """Add the call activity ``node`` to the process being read."""
    eid = node.get("id", "")
    zeebe = extension(node, ZEEBE, "calledElement")
    process = _process(ctx, node, zeebe, eid)
    if not process and ctx.as_drawn:  # nothing to call: it passes (the note says so)
        ctx.p.script_task(eid, node.get("name"), fn=pass_through)
        return
    version = _version(ctx, node, zeebe, eid)
    mapped: dict[str, dict[str, str]] = {"input": {}, "output": {}}
    if zeebe is not None or extension(node, ZEEBE, "ioMapping") is not None:
        inputs = _zeebe_fields(ctx, node, zeebe, eid, "input", "propagateAllParentVariables",
                               mapped["input"])
        outputs = _zeebe_fields(ctx, node, zeebe, eid, "output", "propagateAllChildVariables",
                                mapped["output"])
    elif _camunda7(ctx, node):
        inputs = _camunda_fields(ctx, node, eid, "in", mapped["input"])
        outputs = _camunda_fields(ctx, node, eid, "out", mapped["output"])
    else:
        inputs = outputs = None
    if mapped["input"] and inputs is not None:  # what is mapped in is passed
        inputs = tuple(dict.fromkeys([*inputs, *(t.partition(".")[0] for t in mapped["input"])]))
    if mapped["output"]:  # the outputs read what the child returned; only they are written
        mapped["output"] = {**{f: f for f in outputs or ()}, **mapped["output"]}
        outputs = None
    ctx.p.call_activity(eid, node.get("name"), process=process, version=version,
                        inputs=list(inputs) if inputs is not None else None,
                        outputs=list(outputs) if outputs is not None else None)
    if mapped["input"] or mapped["output"]:
        assert ctx.process is not None
        ctx.process.mapping(eid, inputs=mapped["input"], outputs=mapped["output"])


def _process(ctx: Context, node: etree._Element, zeebe: etree._Element | None,
             eid: str) -> str:
    """The id of the process called: zeebe's ``processId``, else ``calledElement``."""
    attr = node.get("calledElement") or camunda_attr(node, "calledElement")
    if zeebe is not None and zeebe.get("processId") is not None:
        where, text = zeebe, zeebe.get("processId", "")
    elif attr is not None:
        where, text = node, attr
    else:
        why = "it calls a CMMN case (camunda:caseRef), which is not supported" \
            if camunda_attr(node, "caseRef") is not None \
            else "no calledElement, no zeebe:calledElement processId"
        if not ctx.detail(node, f"call activity {eid!r} names no process to call ({why})",
                          _PASSES):
            ctx.explained.add(eid)
        return ""
    value = static(text)
    if not value:
        why = "empty" if value is not None else \
            "an expression: dynamic calls are not supported; give the called process's id"
        if not ctx.detail(where, f"call activity {eid!r}: process id {text!r} is {why}",
                          _PASSES):
            ctx.explained.add(eid)
        return ""
    if where is node and ":" in value and NCNAME.match(value.rpartition(":")[2]):
        value = value.rpartition(":")[2]  # a QName: ``tns:billing``
    if where is zeebe and attr is not None and attr.rpartition(":")[2] != value:
        ctx.warning(node, f"call activity {eid!r}: calledElement {attr!r} differs from "
                          f"zeebe:calledElement processId {value!r}; {value!r} is called")
    target = ctx.by_id.get(value)
    if target is not None and target.getparent() is ctx.root and local(target) != "process":
        if ctx.detail(where, f"call activity {eid!r} calls <{local(target)}> {value!r}: "
                             "only a process can be called", _PASSES):
            return ""
    return value


def _version(ctx: Context, node: etree._Element, zeebe: etree._Element | None,
             eid: str) -> int | None:
    """The pinned version of the called process; None: its newest."""
    binding = camunda_attr(node, "calledElementBinding")
    if zeebe is not None and zeebe.get("bindingType") not in (None, "latest"):
        ctx.warning(zeebe, f"call activity {eid!r}: bindingType "
                           f"{zeebe.get('bindingType')!r} is read as 'latest': {_LATEST}")
    if binding == "version":
        return _number(ctx, node, camunda_attr(node, "calledElementVersion"), eid)
    if binding not in (None, "latest"):
        ctx.warning(node, f"call activity {eid!r}: camunda:calledElementBinding {binding!r} "
                          f"is read as 'latest': {_LATEST}")
    own = extension(node, GOBPM, "calledElement")
    if own is not None and own.get("version") is not None:
        return _number(ctx, own, own.get("version"), eid)
    return None


def _number(ctx: Context, where: etree._Element, text: str | None, eid: str) -> int | None:
    value = (text or "").strip()
    if value.isdigit() and value.isascii() and int(value) >= 1:
        return int(value)
    ctx.error(where, f"call activity {eid!r}: version {text!r} is not a version number "
                     "(a whole number from 1)")
    return None


def _zeebe_fields(ctx: Context, node: etree._Element, zeebe: etree._Element | None,
                  eid: str, kind: str, flag: str, mapped: dict[str, str]
                  ) -> tuple[str, ...] | None:
    """The fields of the ``zeebe:input`` (``zeebe:output``) mappings that pass a field under
    its own name; one that renames or computes goes into ``mapped`` (target -> source, run
    as a variable mapping: ``mappings.py``); with none, every field unless ``flag`` is
    ``false``."""
    mapping = extension(node, ZEEBE, "ioMapping")
    found: list[str] = []
    for m in mapping if mapping is not None else ():
        if namespace(m) != ZEEBE or local(m) != kind:
            continue
        source, target = m.get("source", ""), m.get("target", "")
        expr = source.strip()
        if not expr.startswith("=") or expr[1:].strip() != target.strip():
            if ctx.as_drawn:
                ctx.assume(m, f"call activity {eid!r}: zeebe:{kind} {target!r} is not run in "
                              "a design review")
                continue
            value = zeebe_source(ctx, m, node, kind)
            if value is not None:
                mapped[target.strip()] = value
            continue
        _add_field(ctx, m, found, target.strip(), eid, f"zeebe:{kind}")
    if found or mapped:
        return tuple(found)
    return () if zeebe is not None and zeebe.get(flag) == "false" else None


def _camunda7(ctx: Context, node: etree._Element) -> bool:
    """Whether Camunda 7's rules apply: a direction passes only what it maps."""
    if any(namespace(n) in CAMUNDA for ext in node.iterchildren(bpmn("extensionElements"))
           for n in ext):
        return True
    if any(str(a).startswith(f"{{{ns}}}") for a in node.attrib for ns in CAMUNDA):
        return True
    platform: str | None = ctx.root.get(f"{{{MODELER}}}executionPlatform")
    return platform == "Camunda Platform"


def _camunda_fields(ctx: Context, node: etree._Element, eid: str, kind: str,
                    mapped: dict[str, str]) -> tuple[str, ...] | None:
    """The fields of the ``camunda:in`` (``camunda:out``) mappings: None for
    ``variables="all"``; one that renames or computes goes into ``mapped`` (target ->
    source), except beside an ``out`` of every variable (an error note)."""
    found: list[str] = []
    every = False
    for ext in node.iterchildren(bpmn("extensionElements")):
        for m in ext:
            if namespace(m) not in CAMUNDA or local(m) != kind:
                continue
            if m.get("variables") == "all":
                every = True
            elif m.get("businessKey") is not None:
                ctx.warning(m, f"call activity {eid!r}: camunda:{kind} businessKey is "
                               "ignored (instances have no business key)")
            elif m.get("sourceExpression") is not None or \
                    m.get("source", "").strip() != m.get("target", "").strip():
                _camunda_mapped(ctx, m, eid, kind, mapped)
            else:
                _add_field(ctx, m, found, m.get("target", "").strip(), eid, f"camunda:{kind}")
    if every and kind == "out" and mapped:
        ctx.detail(node, f"call activity {eid!r}: camunda:out passes every variable and "
                         f"maps {sorted(mapped)[0]!r}: the engine cannot do both",
                   "the mapping is left out")
        mapped.clear()
    return None if every else tuple(found)


def _camunda_mapped(ctx: Context, m: etree._Element, eid: str, kind: str,
                    mapped: dict[str, str]) -> None:
    """A ``camunda:in`` / ``camunda:out`` that renames (``source``) or computes
    (``sourceExpression``, JUEL) into ``mapped``; what cannot be read is a warning."""
    target = m.get("target", "").strip()
    source = m.get("sourceExpression") or m.get("source") or ""
    where = f"call activity {eid!r}: camunda:{kind} {target!r}"
    if ctx.as_drawn:
        ctx.assume(m, f"{where} is not run in a design review")
        return
    if not target.isidentifier() or target.startswith("__"):
        ctx.error(m, f"{where}: the target is not a field name")
        return
    try:
        mapped[target] = translate(source, None, "mapping") \
            if m.get("sourceExpression") is not None else Expr(source.strip()).field or ""
    except ModelError as exc:
        ctx.warning(m, f"{where} is not mapped: {exc}")
        return
    if not mapped[target]:
        del mapped[target]
        ctx.error(m, f"{where}: source {source!r} is not a field name")


def _add_field(ctx: Context, where: etree._Element, found: list[str], name: str, eid: str,
               what: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        ctx.detail(where, f"call activity {eid!r}: {what} target {name!r} is not a field "
                          "name", _LEFT_OUT)
    elif name not in found:
        found.append(name)


def write_call(w: RootElements, node: etree._Element, e: el.CallActivity) -> None:
    """The attributes and ``extensionElements`` of call activity ``e`` on ``node`` (before
    its incoming and outgoing flows are added)."""
    if NCNAME.match(e.process):
        node.set("calledElement", e.process)
    camunda = next((ns for ns in w.root.nsmap.values() if ns in CAMUNDA), None)
    if e.version is not None and camunda is not None:
        node.set(f"{{{camunda}}}calledElementBinding", "version")
        node.set(f"{{{camunda}}}calledElementVersion", str(e.version))
    ext = etree.SubElement(node, bpmn("extensionElements"))
    called = {"processId": e.process,
              "propagateAllChildVariables": "true" if e.outputs is None else "false"}
    if e.inputs is not None:
        called["propagateAllParentVariables"] = "false"
    etree.SubElement(ext, f"{{{ZEEBE}}}calledElement", called, nsmap=w.nsmap(ZEEBE))
    if e.inputs or e.outputs:
        io = etree.SubElement(ext, f"{{{ZEEBE}}}ioMapping", nsmap=w.nsmap(ZEEBE))
        for kind, names in (("input", e.inputs or ()), ("output", e.outputs or ())):
            for name in names:
                etree.SubElement(io, f"{{{ZEEBE}}}{kind}", source=f"={name}", target=name)
    if e.version is not None and camunda is None:
        etree.SubElement(ext, f"{{{GOBPM}}}calledElement", version=str(e.version),
                         nsmap=w.nsmap(GOBPM))
