"""Variable mappings in a file: Camunda 8's ``zeebe:ioMapping`` and Camunda 7's
``camunda:inputOutput`` on a task, subprocess or event (a call activity's ``zeebe:ioMapping``
is read by ``calls.py``), read into ``Process.mapping``.

Each ``zeebe:input`` / ``zeebe:output`` has a ``target`` (a field, or a dotted path into one)
and a ``source``: a FEEL expression (``=order.total``), translated to the safe evaluator's
syntax, or, without ``=``, a plain text value. A source that does not translate (string
concatenation, ``string join``, a connector's secret ``{{secrets.X}}`` or ``secrets.X``
that its runtime fills in) is a warning naming the target that is not mapped: the run
leaves that one mapping out, never inventing its value. A ``camunda:inputParameter`` /
``camunda:outputParameter`` is named by a plain field; its value is its text (a constant),
a JUEL expression ``${...}``, or a ``camunda:list`` / ``camunda:map`` of those (nothing:
null); a ``camunda:script`` is not run (a warning, the parameter not mapped). The
extension stays in the file as written (the writer keeps a read file's extensions). In
design-review mode mappings are not run: the data of a design review is not the data they
read.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ModelError
from ..model import elements as el
from ..model.process import is_target
from .context import Context
from .expressions import to_feel, translate
from .names import (
    CALLABLE_LANGUAGE,
    CAMUNDA,
    GOBPM,
    SAFE_LANGUAGE,
    ZEEBE,
    extension,
    label,
    local,
    namespace,
)
from .roots import RootElements
from .xmllib import etree

#: A connector's secret, which its runtime fills in: ``{{secrets.X}}`` or ``secrets.X``
_SECRET = re.compile(r"\bsecrets\.")


def read_mapping(ctx: Context, node: etree._Element) -> None:
    """Give the element just read from ``node`` the mappings of its ``zeebe:ioMapping``."""
    found = extension(node, ZEEBE, "ioMapping")
    seven = extension(node, CAMUNDA, "inputOutput")
    own = extension(node, GOBPM, "ioMapping")
    if found is None:
        found = own
    eid = node.get("id", "")
    if local(node) == "callActivity" and seven is not None:
        ctx.detail(seven, f"camunda:inputOutput on callActivity {eid!r} is not run: a call "
                          "activity passes fields by camunda:in and camunda:out",
                   "the run leaves it out")
    if found is None and seven is None or local(node) == "callActivity":
        return
    if ctx.as_drawn:
        for f in (found, seven):
            if f is not None:
                ctx.assume(f, f"{label(f)} on {local(node)} {eid!r} is not run in a "
                              "design review: nothing is mapped in or out")
        return
    pairs: dict[str, dict[str, Any]] = {"input": {}, "output": {}}
    for m in found if found is not None else ():
        kind = local(m) if isinstance(m.tag, str) and namespace(m) == ZEEBE else ""
        if kind in pairs:
            source = zeebe_source(ctx, m, node, kind)
            if source is not None:
                pairs[kind][(m.get("target") or "").strip()] = source
    for m in own if own is not None else ():
        kind = local(m) if isinstance(m.tag, str) and namespace(m) == GOBPM else ""
        if kind in pairs:
            source = _own(ctx, m, node, kind)
            if source is not None:
                pairs[kind][(m.get("target") or "").strip()] = source
    for m in seven if seven is not None else ():
        way = _PARAMETERS.get(local(m)) if namespace(m) in CAMUNDA else None
        if way is not None:
            source = _parameter(ctx, m, node, way)
            if source is not None:
                pairs[way][(m.get("name") or "").strip()] = source
    if not pairs["input"] and not pairs["output"]:
        return
    assert ctx.process is not None
    try:
        ctx.process.mapping(eid, inputs=pairs["input"], outputs=pairs["output"])
    except ModelError as exc:  # the element was not read as one that takes mappings
        ctx.error(node, str(exc))


def zeebe_source(ctx: Context, m: etree._Element, node: etree._Element,
                 kind: str) -> str | None:
    """The safe evaluator's source of mapping ``m``; None (with a note) when it is left out."""
    target = (m.get("target") or "").strip()
    text = m.get("source") or ""
    where = f"zeebe:{kind} {target!r} of {local(node)} {node.get('id')!r}"
    if not is_target(target):
        ctx.error(m, f"{where}: the target is not a field name or a dotted path of them")
        return None
    if _SECRET.search(text):
        ctx.warning(m, f"{where} is not mapped: its source {text.strip()[:60]!r} names a "
                       "connector secret, which only a connector runtime fills in")
        return None
    if not text.strip().startswith("="):
        return repr(text)  # a plain value: the text itself
    try:
        return translate(text, None, "mapping")
    except ModelError as exc:
        ctx.warning(m, f"{where} is not mapped: {exc}")
        return None


_PARAMETERS = {"inputParameter": "input", "outputParameter": "output"}


def _parameter(ctx: Context, m: etree._Element, node: etree._Element,
               kind: str) -> str | None:
    """The safe evaluator's source of Camunda 7 parameter ``m``; None (with a note) when it
    is left out."""
    name = (m.get("name") or "").strip()
    where = f"camunda:{local(m)} {name!r} of {local(node)} {node.get('id')!r}"
    if not name.isidentifier() or name.startswith("__"):
        ctx.error(m, f"{where}: the name is not a field name")
        return None
    try:
        return _value(m)
    except ModelError as exc:
        ctx.warning(m, f"{where} is not mapped: {exc}")
        return None


def _value(m: etree._Element) -> str:
    """A parameter's (or a list item's, a map entry's) value as a safe expression."""
    inner = [c for c in m if isinstance(c.tag, str)]
    if not inner:
        text = (m.text or "").strip()
        if not text:
            return "None"
        if "${" in text or "#{" in text:
            return translate(text, None, "mapping")
        return repr(m.text or "")
    only = inner[0]
    kind = local(only) if len(inner) == 1 and namespace(only) in CAMUNDA else ""
    if kind == "list":
        return "[" + ", ".join(_value(v) for v in only if isinstance(v.tag, str)) + "]"
    if kind == "map":
        return "{" + ", ".join(f"{e.get('key', '')!r}: {_value(e)}" for e in only
                               if isinstance(e.tag, str)) + "}"
    what = f"camunda:{kind}" if kind else "what it holds"
    raise ModelError(f"{what} is not run (only constants, JUEL, lists and maps are read)")


def _own(ctx: Context, m: etree._Element, node: etree._Element, kind: str) -> str | None:
    """A mapping in our own ``gobpm:ioMapping`` (written where FEEL cannot say it): its
    source in the safe evaluator's syntax (``language``)."""
    target = (m.get("target") or "").strip()
    where = f"gobpm:{kind} {target!r} of {local(node)} {node.get('id')!r}"
    if not is_target(target):
        ctx.error(m, f"{where}: the target is not a field name or a dotted path of them")
        return None
    try:
        return translate(m.get("source") or "", m.get("language") or SAFE_LANGUAGE, "mapping")
    except ModelError as exc:
        ctx.warning(m, f"{where} is not mapped: {exc}")
        return None


def write_mapping(w: RootElements, ext: etree._Element, io: el.Mapping) -> None:
    """``io`` as ``zeebe:ioMapping`` when FEEL can say every source, else as our own
    ``gobpm:ioMapping`` in the safe evaluator's syntax (a Python callable is written by its
    name, which a file cannot carry: reading it back is a warning)."""
    pairs = [("input", t, x) for t, x in io.inputs] + [("output", t, x) for t, x in io.outputs]
    feel = [None if x.python else to_feel(str(x.source)) for _, _, x in pairs]
    ns = ZEEBE if all(f is not None for f in feel) else GOBPM
    found = etree.SubElement(ext, f"{{{ns}}}ioMapping", nsmap=w.nsmap(ns))
    for (kind, target, x), text in zip(pairs, feel, strict=True):
        attrs = {"source": text or "", "target": target} if ns == ZEEBE else \
            {"source": x.describe(), "target": target,
             "language": CALLABLE_LANGUAGE if x.python else SAFE_LANGUAGE}
        etree.SubElement(found, f"{{{ns}}}{kind}", attrs)
