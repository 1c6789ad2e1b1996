"""Facts, subscriptions, the logging echo and plain-data projections."""

from ..kernel.clock import iso, to_datetime
from .facts import Fact, FactLog, Raw

__all__ = ["Fact", "FactLog", "Raw", "iso", "to_datetime"]
