"""The deterministic scheduler. No BPMN knowledge lives here."""

from .clock import iso, to_datetime, to_us
from .draws import unit
from .scheduler import Deadline, Kernel
from .traps import PASS, SUSPEND, Trap

__all__ = ["Deadline", "Kernel", "PASS", "SUSPEND", "Trap", "iso", "to_datetime", "to_us", "unit"]
