"""The deterministic scheduler. No BPMN knowledge lives here."""

from .clock import LAST_US, iso, to_datetime, to_us
from .draws import unit
from .scheduler import Deadline, Kernel
from .traps import PASS, SUSPEND, Trap

__all__ = ["LAST_US", "Deadline", "Kernel", "PASS", "SUSPEND", "Trap", "iso", "to_datetime",
           "to_us", "unit"]
