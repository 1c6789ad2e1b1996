"""BPMN 2.0 XML: read the files modelers draw into processes, report what cannot run, and
write processes back. Importing this package registers the codec behind
``Process.from_bpmn`` and ``Process.to_bpmn``. It never imports the engine."""

from .codec import load_bpmn
from .document import BpmnModel
from .notes import Note

__all__ = ["BpmnModel", "Note", "load_bpmn"]
