"""Placeholders: elements read from a file that the engine cannot run. They keep the graph
whole (drawn, written back as they were read); validation refuses each, naming its tag and
why."""

from __future__ import annotations

from dataclasses import dataclass

from .elements import Boundary, Element


@dataclass(frozen=True)
class Unsupported(Element):
    """A placeholder for an element read from a file that the engine cannot run yet (a
    subprocess, an inclusive gateway, ...): it keeps the graph whole, and validation refuses
    it, naming ``tag`` and ``reason``. ``activity`` says whether boundaries may attach to it."""

    tag: str = ""
    reason: str = ""
    activity: bool = False  # per placeholder, not per class
    definition: str = ""  # an event's definition in the file: ``compensate``, ``conditional``
    kind = "unsupported"


@dataclass(frozen=True)
class UnsupportedBoundary(Boundary):
    """A boundary event of a kind the engine cannot run yet (escalation, compensation, ...);
    validation refuses it, naming ``tag`` and ``reason``."""

    tag: str = ""
    reason: str = ""
    definition: str = ""  # its event definition in the file: ``compensate``, ``cancel``
    kind = "unsupported_boundary"
