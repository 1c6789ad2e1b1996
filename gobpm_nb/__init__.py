"""gobpm_nb: a deterministic BPMN engine that lives in a Jupyter notebook."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .api import Engine
from .errors import (
    CheckpointError,
    EngineError,
    GobpmError,
    ModelError,
    ScenarioError,
    StoreError,
)
from .instance import Instance, Views, register_views
from .model import Process
from .model.expr import NO_KEY
from .model.interchange import register
from .observe import Fact
from .persist import MemoryStore, SQLiteStore
from .population import Population, Scenario, compare
from .population.board import register_dashboards

if TYPE_CHECKING:
    from .bpmn import BpmnModel


def load_bpmn(source: Any, run_as_drawn: bool = False) -> BpmnModel:
    """Read a BPMN 2.0 file (a path, bytes or XML text): ``gobpm_nb.bpmn.load_bpmn``, whose
    package (and lxml with it, ~5 MB of memory) is imported on first use. ``run_as_drawn``:
    design-review mode (a diagram without execution details runs; the report says what it
    assumes)."""
    from .bpmn import load_bpmn as load

    return load(source, run_as_drawn=run_as_drawn)


class _OnFirstUse:
    """The BPMN codec behind ``Process.from_bpmn`` / ``to_bpmn`` until ``gobpm_nb.bpmn`` is
    imported (importing it registers the real one in its place)."""

    def read(self, source: Any, id: str | None) -> Process:
        from .bpmn.codec import BpmnCodec

        return BpmnCodec().read(source, id)

    def write(self, process: Process) -> str:
        from .bpmn.codec import BpmnCodec

        return BpmnCodec().write(process)


register("bpmn", _OnFirstUse())


def _views() -> Views:
    """The widgets ``Engine.dashboard`` and ``Instance.lineage`` open: ``gobpm_nb.ui``, a
    layer above the engine's (anywidget with it), imported on first use."""
    from . import ui

    return ui


register_views(_views)


def _dashboards() -> Any:
    """The population dashboards ``Scenario.run(dashboard=...)`` and
    ``Population.dashboard`` open (``gobpm_nb.ui.population``), imported on first use."""
    from .ui import population

    return population


register_dashboards(_dashboards)

__all__ = ["CheckpointError", "Engine", "EngineError", "Fact", "GobpmError", "Instance",
           "MemoryStore", "ModelError", "NO_KEY", "Population", "Process", "SQLiteStore",
           "Scenario", "ScenarioError", "StoreError", "compare", "load_bpmn"]
__version__ = "0.1.0"
