"""Repeated activities in a file: ``multiInstanceLoopCharacteristics`` and
``standardLoopCharacteristics``, read and written.

Read from what modelers write:

- Camunda 8: ``zeebe:loopCharacteristics inputCollection="=reviewers" inputElement="reviewer"
  outputCollection="votes" outputElement="=vote"`` in the loop's extensionElements;
- Camunda 7, Activiti and Flowable: ``camunda:collection`` (``${reviewers}`` or a plain
  variable name) and ``camunda:elementVariable`` on the loop element (``activiti:`` and
  ``flowable:`` the same);
- plain BPMN: ``isSequential``, ``loopCardinality`` (a number, ``${3}``, ``=n``) and
  ``completionCondition`` (FEEL or JUEL; the counters ``numberOfCompletedInstances`` ... and
  Camunda 7's ``nrOfCompletedInstances`` ... are the engine's own names), and the item-aware
  ``loopDataInputRef``, ``inputDataItem``, ``loopDataOutputRef``, ``outputDataItem``
  (``itemaware.py``) when no vendor extension gives the collection.

Expressions go through ``expressions.translate``; what does not translate is an error note on
the activity, and the activity is not made multi-instance (validation refuses it anyway).
Written back, an input collection or output element that has no FEEL spelling goes into our
own ``gobpm:inputCollection`` / ``gobpm:outputElement`` (the safe evaluator's syntax, with its
language), so a file written here reads back the same.

A standard loop is read from its ``testBefore`` and ``loopMaximum`` attributes and its
``loopCondition`` (a formal expression, FEEL or JUEL, translated as a flow's condition is).
One with neither a condition nor a maximum (what a modeler's loop marker draws) would run for
ever: it is an error note, and so is a condition that does not translate.
"""

from __future__ import annotations

import keyword
from typing import Any

from ..errors import ModelError
from ..model import elements as el
from ..model.checks import MANY_KINDS
from .context import Context
from .expressions import translate
from .itemaware import ItemAware
from .names import BPMN, GOBPM, ZEEBE, bpmn, camunda_attr, children, extension, local
from .roots import RootElements, expression
from .xmllib import etree

LOOP = "multiInstanceLoopCharacteristics"
STANDARD = "standardLoopCharacteristics"
# standard item-aware data: read (itemaware.py) unless a vendor extension gives the collection
_DATA_REFS = ("loopDataInputRef", "loopDataOutputRef", "inputDataItem", "outputDataItem")


#: Flowable's namespace: its loop attributes are Camunda 7's and Activiti's
FLOWABLE = "http://flowable.org/bpmn"


def _engine_attr(loop: etree._Element, name: str) -> str | None:
    """A loop attribute of Camunda 7 or Activiti (``camunda:collection``), or Flowable's."""
    found = camunda_attr(loop, name)
    return found if found is not None else loop.get(f"{{{FLOWABLE}}}{name}")


def read_loop(ctx: Context, node: etree._Element) -> None:
    """Make the activity just read from ``node`` multi-instance or a standard loop, when its
    file says so; an element that cannot be (a placeholder, a throw event) keeps the refusal
    it always had."""
    eid, p = node.get("id", ""), ctx.process
    assert p is not None
    for loop in [*children(node, BPMN, LOOP), *children(node, BPMN, STANDARD)]:
        built = [e for e in p.elements if e.id == eid]
        if not built or not isinstance(built[-1], MANY_KINDS):
            ctx.detail(loop, f"{local(loop)} on {eid!r} is not supported yet: the activity "
                             "would run once", "it runs once")
            continue
        if local(loop) == STANDARD:
            standard = _read_standard(ctx, eid, loop)
            if standard is not None:
                p.loop(eid, **standard)
            continue
        options = _LoopReader(ctx, eid, loop).read()
        if options is not None:
            p.multi_instance(eid, **options)  # the process finds it in any of its scopes


def _read_standard(ctx: Context, eid: str, loop: etree._Element) -> dict[str, Any] | None:
    """The builder's ``loop`` arguments from a ``standardLoopCharacteristics``, or None
    (with an error note) when a part of it does not read."""
    out: dict[str, Any] = {"test_before": loop.get("testBefore") in ("true", "1")}
    maximum = loop.get("loopMaximum")
    if maximum is not None:
        try:
            out["maximum"] = int(maximum.strip())
        except ValueError:
            out["maximum"] = -1
        if out["maximum"] < 0:
            return _once(ctx, loop, f"standard loop {eid!r}: loopMaximum {maximum!r} is not "
                                    "a count")
    found = loop.find(bpmn("loopCondition"))
    if found is not None and (found.text or "").strip():
        try:
            out["condition"] = translate(found.text or "", found.get("language")
                                         or ctx.language, "loop condition")
        except ModelError as exc:
            return _once(ctx, found, f"standard loop {eid!r}: {exc}")
    elif maximum is None:
        return _once(ctx, loop, f"standard loop {eid!r} has neither a loopCondition nor a "
                                "loopMaximum: it would run for ever")
    return out


def _once(ctx: Context, node: etree._Element, problem: str) -> dict[str, Any] | None:
    """A standard loop that cannot run as written: an error note, or in design-review mode a
    loop that runs once (``loopMaximum`` 1)."""
    if ctx.detail(node, problem, "it runs once (a loopMaximum of 1)"):
        return {"maximum": 1}
    return None


class _LoopReader:
    """The builder's ``multi_instance`` arguments from one loop element, or None (with error
    notes) when some part of it does not translate."""

    def __init__(self, ctx: Context, eid: str, loop: etree._Element):
        self.ctx, self.eid, self.loop = ctx, eid, loop
        self.failed = False

    def read(self) -> dict[str, Any] | None:
        loop, zeebe = self.loop, extension(self.loop, ZEEBE, "loopCharacteristics")
        out: dict[str, Any] = {"sequential": loop.get("isSequential") in ("true", "1")}
        out["collection"] = self._vendor_expr(zeebe, "inputCollection", "collection",
                                              "input collection")
        if zeebe is not None and zeebe.get("inputElement") is not None:
            out["element"] = self._name(zeebe, zeebe.get("inputElement"), "input element")
        else:
            out["element"] = self._name(loop, _engine_attr(loop, "elementVariable"),
                                        "input element")
        if zeebe is not None:
            out["output_collection"] = self._name(zeebe, zeebe.get("outputCollection"),
                                                  "output collection")
        out["output_element"] = self._vendor_expr(zeebe, "outputElement", None,
                                                  "output element")
        out["cardinality"] = self._formal("loopCardinality", "loop cardinality")
        out["completion"] = self._formal("completionCondition", "completion condition")
        vendor = out["collection"] is not None
        self._standard_parts(vendor)
        if not vendor:
            self._no_item(out, zeebe)
            ItemAware(self.ctx, self.eid, self.loop, self._problem).read(out)
        if self.failed:
            return None
        if out["collection"] is None and out["cardinality"] is None:
            if not self.ctx.detail(loop, f"multi-instance {self.eid!r} gives neither an input "
                                         "collection (zeebe:loopCharacteristics "
                                         "inputCollection, camunda:collection) nor a "
                                         "loopCardinality", "it runs once (a cardinality "
                                                            "of 1)"):
                return None
            out["cardinality"], out["element"] = "1", None
        if self.ctx.as_drawn:
            self._as_drawn(out)
        return {k: v for k, v in out.items() if v is not None}

    def _as_drawn(self, out: dict[str, Any]) -> None:
        """Design-review mode: a loop giving both an input collection and a cardinality runs
        its cardinality (as Camunda 7 does); an output collection whose output element is
        not read (or the reverse) is not collected."""
        if out["collection"] is not None and out["cardinality"] is not None:
            self.ctx.assume(self.loop, f"multi-instance {self.eid!r} gives both an input "
                                       "collection and a loopCardinality: it runs its "
                                       "cardinality (as Camunda 7 does); the collection is "
                                       "not read")
            out["collection"] = out["element"] = None
        if (out.get("output_collection") is None) != (out["output_element"] is None):
            self.ctx.assume(self.loop, f"multi-instance {self.eid!r} has an output collection "
                                       "or an output element but not both as the engine "
                                       "reads them: nothing is collected")
            out["output_collection"] = out["output_element"] = None

    def _no_item(self, out: dict[str, Any], zeebe: etree._Element | None) -> None:
        """Camunda 7's, Activiti's or Flowable's elementVariable beside a cardinality and no
        collection: those engines set nothing (no item), and neither does this one."""
        if out["element"] is None or out["cardinality"] is None or \
                (zeebe is not None and zeebe.get("inputElement") is not None):
            return
        self.ctx.warning(self.loop, f"multi-instance {self.eid!r}: elementVariable "
                                    f"{out['element']!r} is not set: without a collection "
                                    "there is no item (loopCounter numbers each inner "
                                    "instance)")
        out["element"] = None

    def _vendor_expr(self, zeebe: etree._Element | None, attr: str, camunda: str | None,
                     what: str) -> str | None:
        """An expression from zeebe:loopCharacteristics, our own element, or Camunda 7."""
        if zeebe is not None and zeebe.get(attr) is not None:
            return self._translate(zeebe, zeebe.get(attr, ""), None, what)
        own = extension(self.loop, GOBPM, attr)
        if own is not None:
            return self._translate(own, own.text or "", own.get("language"), what)
        text = _engine_attr(self.loop, camunda) if camunda is not None else None
        return self._translate(self.loop, text, None, what) if text is not None else None

    def _formal(self, tag: str, what: str) -> str | None:
        """A ``tExpression`` child of the loop: ``loopCardinality``, ``completionCondition``."""
        found = self.loop.find(bpmn(tag))
        if found is None:
            return None
        return self._translate(found, found.text or "", found.get("language")
                               or self.ctx.language, what)

    def _translate(self, node: etree._Element, text: str, language: str | None,
                   what: str) -> str | None:
        try:
            return translate(text, language, what)
        except ModelError as exc:
            self._problem(node, f"multi-instance {self.eid!r}: {exc}")
            return None

    def _problem(self, node: etree._Element, problem: str) -> None:
        """A part that cannot be read: the loop fails, or in design-review mode the part is
        left out."""
        if not self.ctx.detail(node, problem, "it is left out"):
            self.failed = True

    def _name(self, node: etree._Element, text: str | None, what: str) -> str | None:
        """A variable name (an input element, an output collection): not an expression."""
        if text is None or not text.strip():
            return None
        name = text.strip()
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
            self._problem(node, f"multi-instance {self.eid!r}: {what} {text!r} is not a "
                                "variable name")
            return None
        return name

    def _standard_parts(self, has_collection: bool) -> None:
        """Plain BPMN's data references and behaviours, which the engine does not run."""
        for ref in (c for tag in _DATA_REFS for c in children(self.loop, BPMN, tag)):
            if has_collection:
                self.ctx.warning(ref, f"multi-instance {self.eid!r}: <{local(ref)}> is "
                                      "ignored: the input collection comes from the vendor "
                                      "extension")
        for found in children(self.loop, BPMN, "complexBehaviorDefinition"):
            self._problem(found, f"multi-instance {self.eid!r}: complexBehaviorDefinition is "
                                 "not supported (no event is thrown as inner instances end)")
        behavior = self.loop.get("behavior")
        if behavior not in (None, "All"):
            self.ctx.warning(self.loop, f"multi-instance {self.eid!r}: behavior {behavior!r} "
                                        "is ignored (no event is thrown as inner instances "
                                        "end)")


def write_loop(w: RootElements, node: etree._Element, many: el.Many) -> etree._Element:
    """``<multiInstanceLoopCharacteristics>`` for ``many`` as the last child of ``node``
    (after its incoming and outgoing flows, where the schema puts it)."""
    loop = etree.SubElement(node, bpmn(LOOP), isSequential=str(many.sequential).lower())
    attrs: dict[str, str] = {}
    own: list[tuple[str, str, str]] = []  # (attribute, text, language) with no FEEL spelling
    for attr, value in (("inputCollection", many.collection),
                        ("outputElement", many.output_element)):
        if value is not None:
            text, language = expression(value)
            if language is None:
                attrs[attr] = text
            else:
                own.append((attr, text, language))
    for attr, name in (("inputElement", many.element),
                       ("outputCollection", many.output_collection)):
        if name is not None:
            attrs[attr] = name
    if attrs or own:
        ext = etree.SubElement(loop, bpmn("extensionElements"))
        if attrs:
            ordered = {k: attrs[k] for k in ("inputCollection", "inputElement",
                                             "outputCollection", "outputElement") if k in attrs}
            etree.SubElement(ext, f"{{{ZEEBE}}}loopCharacteristics", ordered,
                             nsmap=w.nsmap(ZEEBE))
        for attr, text, language in own:
            etree.SubElement(ext, f"{{{GOBPM}}}{attr}", language=language,
                             nsmap=w.nsmap(GOBPM)).text = text
    if many.cardinality is not None:
        w.formal(loop, "loopCardinality", *expression(many.cardinality))
    if many.completion is not None:
        w.formal(loop, "completionCondition", *expression(many.completion))
    return loop


def write_standard(w: RootElements, node: etree._Element, loop: el.Loop) -> etree._Element:
    """``<standardLoopCharacteristics>`` for ``loop`` as the last child of ``node``."""
    attrs = {"testBefore": "true"} if loop.test_before else {}
    if loop.maximum is not None:
        attrs["loopMaximum"] = str(loop.maximum)
    found = etree.SubElement(node, bpmn(STANDARD), attrs)
    if loop.condition is not None:
        w.formal(found, "loopCondition", *expression(loop.condition))
    return found
