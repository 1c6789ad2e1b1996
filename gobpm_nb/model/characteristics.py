"""An activity's characteristics (multi-instance, standard loop) and a gateway's decision:
variable mappings: immutable parts of elements (``elements`` re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass

from .expr import Expr


@dataclass(frozen=True)
class Many:
    """An activity's multi-instance characteristics (Camunda 8's model): one inner instance
    per item of ``collection`` (each sees its item as ``element``) or ``cardinality`` of
    them, in parallel or ``sequential``; ``completion`` ends it early when it holds after an
    inner instance completes; ``output_element`` of each inner instance is collected, in
    item order, into ``output_collection``."""

    sequential: bool = False
    collection: Expr | None = None
    element: str | None = None
    cardinality: Expr | None = None
    completion: Expr | None = None
    output_collection: str | None = None
    output_element: Expr | None = None


@dataclass(frozen=True)
class Loop:
    """An activity's standard loop (BPMN 2.0 ``standardLoopCharacteristics``): it runs again
    while ``condition`` holds (None: always), tested after each run, or also before the first
    when ``test_before`` (so it may run zero times); at most ``maximum`` runs (None: no cap).
    The condition sees ``loopCounter``, the runs done so far; each run sees its own number."""

    condition: Expr | None = None
    test_before: bool = False
    maximum: int | None = None


@dataclass(frozen=True)
class Decision:
    """How a decision gateway chooses: ``weights`` — (flow, weight) pairs, a flow named by
    its id or its target's — makes a rule that draws from the engine's seeded generator;
    without weights a person chooses (``Engine.decide``)."""

    weights: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Mapping:
    """An element's variable mappings (Camunda 8's input and output mappings): each pair is
    a target (a field, or a dotted path into one: ``a.b``) and the expression giving its
    value. ``inputs`` are evaluated as the element is entered and seen only by it (its job,
    its user task, what runs inside it); ``outputs`` are evaluated as it completes, over
    what it saw and what it returned, and only they are written to the data."""

    inputs: tuple[tuple[str, Expr], ...] = ()
    outputs: tuple[tuple[str, Expr], ...] = ()


__all__ = ["Decision", "Loop", "Many", "Mapping"]
