"""Facts, subscriptions, the logging echo and plain-data projections."""

from .facts import Fact, FactLog, iso, to_datetime

__all__ = ["Fact", "FactLog", "iso", "to_datetime"]
