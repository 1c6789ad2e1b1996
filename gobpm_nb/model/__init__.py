"""Immutable process definitions: element classes, the builder, validation."""

from .definition import Definition
from .process import Process

__all__ = ["Definition", "Process"]
