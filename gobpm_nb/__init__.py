"""gobpm_nb: a deterministic BPMN engine that lives in a Jupyter notebook."""

from .api import Engine
from .bpmn import load_bpmn
from .errors import CheckpointError, EngineError, GobpmError, ModelError, StoreError
from .instance import Instance
from .model import Process
from .observe import Fact
from .persist import MemoryStore, SQLiteStore

__all__ = ["CheckpointError", "Engine", "EngineError", "Fact", "GobpmError", "Instance",
           "MemoryStore", "ModelError", "Process", "SQLiteStore", "StoreError", "load_bpmn"]
__version__ = "0.1.0"
