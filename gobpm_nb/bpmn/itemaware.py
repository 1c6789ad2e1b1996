"""BPMN 2.0's item-aware multi-instance data (``loopDataInputRef``, ``inputDataItem``,
``loopDataOutputRef``, ``outputDataItem``) read onto the engine's multi-instance: the
collection, each inner instance's item, the output collection and what each inner instance
gives to it.

A ``loopDataInputRef`` or ``loopDataOutputRef`` names an item-aware element: a data object
(or a reference to one), a property, an ioSpecification's data input or output. Its **id**
is the instance data's field (as SpiffWorkflow reads it); a reference that names nothing in
the file is the field its text names. A data item's field is its id (its name when the id is
not a variable name). An output item that an inner instance does not set stops the instance
with an incident (a missing field), as any output element does.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from .context import Context
from .names import BPMN, children, local
from .xmllib import etree

#: Elements a loop data reference may name whose id is a field
_ITEM_AWARE = {"dataObject", "property", "dataInput", "dataOutput", "dataStoreReference"}


def _field(text: str | None) -> str | None:
    name = (text or "").strip()
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        return None
    return name


class ItemAware:
    """Reads one loop's item-aware data into the builder's ``multi_instance`` arguments."""

    def __init__(self, ctx: Context, eid: str, loop: etree._Element,
                 problem: Callable[[etree._Element, str], None]):
        self.ctx, self.eid, self.problem = ctx, eid, problem
        self.parts = {local(c): c for tag in ("loopDataInputRef", "inputDataItem",
                                              "loopDataOutputRef", "outputDataItem")
                      for c in children(loop, BPMN, tag)}

    def read(self, out: dict[str, Any]) -> None:
        parts = self.parts
        if "loopDataInputRef" in parts:
            out["collection"] = self._ref(parts["loopDataInputRef"])
        item = parts.get("inputDataItem")
        if item is not None and out["element"] is None:
            if out["collection"] is not None:
                out["element"] = self._item(item)
            else:
                self.ctx.warning(item, f"multi-instance {self.eid!r}: <inputDataItem> is not "
                                       "set: without a loopDataInputRef there is no item "
                                       "(loopCounter numbers each inner instance)")
        self._output(out)

    def _output(self, out: dict[str, Any]) -> None:
        ref, item = self.parts.get("loopDataOutputRef"), self.parts.get("outputDataItem")
        if ref is None and item is None:
            return
        if out.get("output_collection") is not None or out["output_element"] is not None:
            return
        if ref is None or item is None:
            alone = ref if ref is not None else item
            assert alone is not None
            self.ctx.warning(alone, f"multi-instance {self.eid!r}: <{local(alone)}> alone "
                                    "collects nothing: it needs both loopDataOutputRef and "
                                    "outputDataItem")
            return
        out["output_collection"] = self._ref(ref)
        out["output_element"] = self._item(item)

    def _ref(self, node: etree._Element) -> str | None:
        """The field a loop data reference names (see the module docstring)."""
        text = (node.text or "").strip()
        target = self.ctx.by_id.get(text)
        if target is not None and local(target) == "dataObjectReference":
            target = self.ctx.by_id.get(target.get("dataObjectRef", ""), target)
        if target is not None and local(target) in _ITEM_AWARE | {"dataObjectReference"}:
            text = target.get("id", text)
        name = _field(text)
        if name is None:
            self.problem(node, f"multi-instance {self.eid!r}: <{local(node)}> "
                         f"{text!r} is not a variable name")
        return name

    def _item(self, node: etree._Element) -> str | None:
        """The field of a data item: its id, or its name when the id is not a field."""
        name = _field(node.get("id")) or _field(node.get("name"))
        if name is None:
            self.problem(node, f"multi-instance {self.eid!r}: <{local(node)}> has "
                         "neither an id nor a name that is a variable name")
        return name
