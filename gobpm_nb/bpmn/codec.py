"""The BPMN codec: what ``Process.from_bpmn`` and ``Process.to_bpmn`` call (see
``model/interchange.py`` for the seam)."""

from __future__ import annotations

from typing import Any

from ..model import Process
from ..model.interchange import register
from .document import BpmnModel, Origin, serialize
from .writer import new_document


def load_bpmn(source: Any, run_as_drawn: bool = False) -> BpmnModel:
    """Read a BPMN 2.0 file (a path, bytes or XML text): every process, the import report,
    the file itself. ModelError only when the file cannot be read at all (not XML, a
    DOCTYPE); everything else is a note in ``report``. ``run_as_drawn``: design-review
    mode, where a diagram without execution details runs and every assumption it makes is
    a warning note (``as drawn: ...``) in the report."""
    return BpmnModel.load(source, as_drawn=run_as_drawn)


class BpmnCodec:
    """Reads the executable (or named) process of a file; writes a process back."""

    def read(self, source: Any, id: str | None) -> Process:
        return load_bpmn(source).process(id)

    def write(self, process: Process) -> str:
        origin = process.origin
        if isinstance(origin, Origin):
            return origin.model.to_bpmn()
        return serialize(new_document(process))


register("bpmn", BpmnCodec())
