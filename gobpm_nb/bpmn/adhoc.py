"""Ad-hoc subprocesses in a file: ``<adHocSubProcess>`` read and written.

- ``ordering`` (``Parallel``, the default, or ``Sequential``) and
  ``cancelRemainingInstances`` (default true) are attributes; ``completionCondition`` is the
  last child (after the flow elements and artifacts, where the schema puts it), a formal
  expression translated as a flow's condition is.
- The collection is Camunda 8's ``<zeebe:adHoc activeElementsCollection="=todo"/>``; one
  with no FEEL spelling is our own ``<gobpm:activeElementsCollection language=...>``.
- What does not translate is an error note as written; in design-review mode it is left
  out with an ``as drawn:`` note, and an ad-hoc subprocess with no collection it can read is
  run by a person's choices (``Engine.activate``), which a note says too.
"""

from __future__ import annotations

from ..errors import ModelError
from ..model.adhoc import AdHocSubProcess
from ..model.builder import Scope
from .context import Context
from .expressions import translate
from .names import BPMN, GOBPM, ZEEBE, bpmn, children, extension
from .roots import RootElements, expression
from .xmllib import etree

COLLECTION = "activeElementsCollection"


def read_adhoc(ctx: Context, node: etree._Element) -> Scope:
    """The builder scope of an ``<adHocSubProcess>`` (its inside is read by the caller)."""
    eid, name = node.get("id", ""), node.get("name")
    ordering = node.get("ordering") or "Parallel"
    if ordering not in ("Parallel", "Sequential"):
        ctx.detail(node, f"ad-hoc subprocess {eid!r}: ordering {ordering!r} is neither "
                         "Parallel nor Sequential", "it runs as Parallel")
        ordering = "Parallel"
    collection = _collection(ctx, node, eid)
    completion = None
    for found in children(node, BPMN, "completionCondition"):
        completion = _translate(ctx, found, found.text or "", found.get("language")
                                or ctx.language, f"ad-hoc subprocess {eid!r}: completion "
                                                 "condition")
    if ctx.as_drawn and collection is None:
        ctx.assume(node, f"ad-hoc subprocess {eid!r} has no collection the engine reads: "
                         f"a person activates its elements (eng.activate(instance, {eid!r}, "
                         "element))")
    return ctx.p.adhoc_subprocess(
        eid, name, collection=collection, completion=completion, ordering=ordering,
        cancel_remaining=node.get("cancelRemainingInstances", "true") not in ("false", "0"))


def _collection(ctx: Context, node: etree._Element, eid: str) -> str | None:
    what = f"ad-hoc subprocess {eid!r}: active elements collection"
    zeebe = extension(node, ZEEBE, "adHoc")
    if zeebe is not None and zeebe.get(COLLECTION) is not None:
        return _translate(ctx, zeebe, zeebe.get(COLLECTION, ""), None, what)
    own = extension(node, GOBPM, COLLECTION)
    if own is not None:
        return _translate(ctx, own, own.text or "", own.get("language"), what)
    return None


def _translate(ctx: Context, node: etree._Element, text: str, language: str | None,
               what: str) -> str | None:
    if not text.strip():
        return None
    try:
        return translate(text, language, what)
    except ModelError as exc:
        if ctx.detail(node, str(exc), "it is left out"):
            return None
        ctx.p.add_problem(str(exc))
        return None


def write_adhoc(w: RootElements, node: etree._Element, e: AdHocSubProcess) -> None:
    """``node``'s attributes and collection extension for ``e`` (its completion condition is
    added last, ``write_completion``)."""
    if e.sequential:
        node.set("ordering", "Sequential")
    if not e.cancel_remaining:
        node.set("cancelRemainingInstances", "false")
    if e.collection is None:
        return
    text, language = expression(e.collection)
    ext = node.find(bpmn("extensionElements"))
    if ext is None:
        ext = etree.SubElement(node, bpmn("extensionElements"))
    if language is None:
        etree.SubElement(ext, f"{{{ZEEBE}}}adHoc", {COLLECTION: text}, nsmap=w.nsmap(ZEEBE))
    else:
        etree.SubElement(ext, f"{{{GOBPM}}}{COLLECTION}", language=language,
                         nsmap=w.nsmap(GOBPM)).text = text


def write_completion(w: RootElements, node: etree._Element, e: AdHocSubProcess) -> None:
    """The completion condition, the last child of ``node`` (after what it holds)."""
    for old in children(node, BPMN, "completionCondition"):
        node.remove(old)
    if e.completion is not None:
        w.formal(node, "completionCondition", *expression(e.completion))


__all__ = ["read_adhoc", "write_adhoc", "write_completion"]
