"""What a process view shows of one instance: its process in BPMN notation with the engine's
state on it, and the Graphviz DOT that is drawn where no BPMN diagram can be had (and that
gives the static SVG of a saved notebook).

The BPMN document is made once per definition (:class:`Drawings` keeps the last one a widget
showed) and only the marks change from one refresh to the next, so a live view sends its
diagram once and then a few kilobytes of state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..bpmn.drawing import Drawing, drawing
from ..observe.projections import PathTracker, ProcessState, process_state
from ..render.dot import process_dot, process_legend
from ..render.marks import bpmn_legend, process_marks

if TYPE_CHECKING:
    from ..api import Engine


class Drawings:
    """The drawing of the definition a widget showed last (definitions are immutable, so one
    made for it stays right)."""

    def __init__(self) -> None:
        self._definition: Any = None
        self._drawing: Drawing | None = None

    def of(self, definition: Any) -> Drawing | None:
        """The drawing of ``definition`` (None for none, or when no file can be written)."""
        if definition is None:
            return None
        if definition is not self._definition:
            self._drawing = drawing(definition)
            self._definition = definition
        return self._drawing


class ProcessPicture(NamedTuple):
    """A process view's traits: the state, its DOT, its BPMN XML ("" for none), marks, legend."""

    view: ProcessState
    dot: str
    bpmn: str
    marks: dict[str, Any]
    legend: list[list[str]]


def process_picture(engine: Engine, iid: str, path: PathTracker | None = None,
                    drawings: Drawings | None = None) -> ProcessPicture:
    """The process view of instance ``iid`` (``path``: a live tracker of it; ``drawings``: a
    widget's cache of drawings)."""
    view = process_state(engine, iid, path)
    drawn = (drawings or Drawings()).of(engine.instance(iid).definition)
    dot = process_dot(view)
    if drawn is None:
        return ProcessPicture(view, dot, "", {}, process_legend())
    return ProcessPicture(view, dot, drawn.xml, process_marks(view, drawn.flows, drawn.names),
                          bpmn_legend())


def panel(picture: ProcessPicture | None) -> tuple[str, str, dict[str, Any]]:
    """The dashboard's process panel traits (``process_dot``, ``process_bpmn``,
    ``process_marks``) for ``picture``, or empty ones when no instance is selected."""
    if picture is None:
        return "", "", {}
    return picture.dot, picture.bpmn, picture.marks
