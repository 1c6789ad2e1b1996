"""The ``Process`` builder: one method per element (``builder``), each returning the
element's id; a subprocess's is also the builder of its inside (``Scope``)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from ..errors import ModelError
from . import elements as el
from . import interchange
from .builder import Builder, Condition, Scope
from .definition import Definition, build_definition
from .expr import Expr

log = logging.getLogger("gobpm_nb")


def is_target(text: object) -> bool:
    """Whether ``text`` names a field, or a dotted path of fields (``a.b``; a field named
    like a keyword, ``to.from``, is a key of the data like any other)."""
    return isinstance(text, str) and all(
        part.isidentifier() and not part.startswith("__") for part in text.split("."))


class Process(Builder):
    """A process graph under construction. ``validate()`` reports every problem at once."""

    def __init__(self, id: str, name: str | None = None):
        if not isinstance(id, str) or not id:
            raise ModelError(f"process id {id!r} must be a non-empty string")
        self.id = id
        self.name = name
        self._elements: list[el.Element] = []
        self._flows: list[el.Flow] = []
        self._problems: list[str] = []
        self._cache: Definition | None = None
        # What a codec needs to write this process back into the file it came from (opaque
        # to the model; None for a process built in Python).
        self.origin: Any = None

    # -- files ----------------------------------------------------------------------------
    @classmethod
    def from_bpmn(cls, source: Any, id: str | None = None) -> Process:
        """The executable process (or the one named ``id``) of a BPMN 2.0 file: a path, bytes
        or XML text. ModelError lists every error the import found in it."""
        return interchange.codec("bpmn").read(source, id)

    @classmethod
    def of(cls, definition: Definition) -> Process:
        """A builder holding the graph of ``definition`` (its elements and flows, as
        deployed), e.g. to write it as a file."""
        p = cls(definition.id, definition.name)
        p._elements = list(definition.nodes.values())
        p._flows = list(definition.flows)
        p.origin = definition.origin
        return p

    def to_bpmn(self) -> str:
        """This process as BPMN 2.0 XML text: the file it came from with this process's
        changes, or, built in Python, a new file with a left-to-right diagram."""
        return interchange.codec("bpmn").write(self)

    # -- elements -------------------------------------------------------------------------
    def _add(self, element: el.Element) -> str:
        self._elements.append(element)
        self._cache = None
        return element.id

    def add_problem(self, problem: str) -> None:
        """Record a problem found outside the builder (a file's condition that cannot be
        translated, say): ``validate()`` reports it with the others."""
        self._problems.append(problem)
        self._cache = None

    @property
    def problems(self) -> list[str]:
        """The problems recorded outside the builder's checks, in order: ``add_problem``'s,
        and each expression or timer given that did not compile (``validate()`` lists them
        with the rest)."""
        return list(self._problems)

    def scope(self, id: str) -> Scope:
        """The builder of what is inside subprocess ``id`` (one added earlier, or read from
        a file)."""
        if not any(isinstance(e, (el.SubProcess, el.EventSubProcess)) and e.id == id
                   for e in self._elements):
            raise ModelError(f"scope({id!r}): process {self.id!r} has no subprocess {id!r}")
        return Scope(id, self)

    def multi_instance(self, node: str, *, sequential: bool = False,
                       collection: Condition | None = None, element: str | None = None,
                       cardinality: Condition | int | None = None,
                       completion: Condition | None = None,
                       output_collection: str | None = None,
                       output_element: Condition | None = None) -> str:
        """Make a task, subprocess or call activity multi-instance: one inner instance per item of
        ``collection`` (an expression giving a list; each inner instance sees its item as
        ``element``) or ``cardinality`` inner instances; parallel, or ``sequential``.
        ``completion`` (over the data, the item, ``loopCounter``, ``numberOfInstances``,
        ``numberOfCompletedInstances``, ``numberOfActiveInstances``) ends it early;
        ``output_element`` of each inner instance goes, in item order, into the list
        ``output_collection`` (what an inner instance writes then stays its own). A
        ``cardinality`` may be a plain count (``3``)."""
        if isinstance(cardinality, int) and not isinstance(cardinality, bool):
            cardinality = str(cardinality)  # a count is the expression that gives it
        for i, e in enumerate(self._elements):
            if e.id == node:
                many = el.Many(sequential=bool(sequential),
                               collection=self._expr(node, "collection", collection),
                               element=element,
                               cardinality=self._expr(node, "cardinality", cardinality),
                               completion=self._expr(node, "completion", completion),
                               output_collection=output_collection,
                               output_element=self._expr(node, "output_element",
                                                         output_element))
                self._elements[i] = dataclasses.replace(e, many=many)
                self._cache = None
                return node
        raise ModelError(f"multi_instance({node!r}): process {self.id!r} has no element "
                         f"{node!r}")

    def decide(self, gateway: str, weights: dict[str, float] | None = None) -> str:
        """Make exclusive or inclusive gateway ``gateway`` a decision: its flows' conditions
        are not read; a person chooses (``Engine.decide``) or, given ``weights`` (flow ->
        weight, a flow named by its id or by the id of the node it leads to; flows not named
        weigh 0), a rule draws from the engine's seeded generator (``Engine(seed=...)``). An
        exclusive gateway takes one flow: drawn by weight. An inclusive gateway takes one or
        more and still joins as one: each weight is that flow's own probability (at most
        1), each flow drawn on its own, and when none is drawn, one drawn by weight. A
        complex gateway becomes an inclusive one that decides (its activation condition is
        not kept)."""
        pairs: tuple[tuple[str, float], ...] = ()
        if weights is not None:
            if not isinstance(weights, dict):
                raise ModelError(f"decide({gateway!r}): weights must be a dict of flow -> "
                                 f"weight, got {type(weights).__name__}")
            for name, w in weights.items():
                if not isinstance(name, str) or isinstance(w, bool) \
                        or not isinstance(w, (int, float)):
                    raise ModelError(f"decide({gateway!r}): {name!r}: {w!r} is not a flow "
                                     "and a number")
            pairs = tuple((name, float(w)) for name, w in weights.items())
        for i, e in enumerate(self._elements):
            if e.id == gateway:
                if isinstance(e, el.ComplexGateway):  # it splits as an inclusive one
                    e = el.InclusiveGateway(e.id, e.name, within=e.within, default=e.default)
                if not isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway)):
                    raise ModelError(f"decide({gateway!r}): {e.kind} {gateway!r} is not an "
                                     "exclusive or inclusive gateway")
                self._elements[i] = dataclasses.replace(e, decision=el.Decision(pairs))
                self._cache = None
                return gateway
        raise ModelError(f"decide({gateway!r}): process {self.id!r} has no element "
                         f"{gateway!r}")

    def mapping(self, node: str, inputs: Mapping[str, Condition] | None = None,
                outputs: Mapping[str, Condition] | None = None) -> str:
        """Give task, subprocess or event ``node`` variable mappings (Camunda 8's): each
        target (a field, or a dotted path ``a.b`` into one) -> the expression giving its
        value. ``inputs`` are evaluated, in order, as the element is entered, and only it
        sees them (its job's data, the expressions inside it); ``outputs`` are evaluated,
        in order, as it completes, over what it saw and what it returned (a job's or a
        user task's outputs, a message's payload), and only they are written to the data:
        with outputs, what it returned is not merged. A call activity passes its child the
        fields its ``inputs`` names (all without) from what it sees, its inputs among them;
        its outputs read what the child returned (the fields its ``outputs`` names)."""
        for i, e in enumerate(self._elements):
            if e.id != node:
                continue
            if isinstance(e, (el.ExclusiveGateway, el.InclusiveGateway,
                              el.ComplexGateway, el.ParallelGateway, el.EventGateway,
                              el.EventSubProcess)):
                raise ModelError(f"mapping({node!r}): {e.kind} {node!r} takes no variable "
                                 "mappings")
            io = el.Mapping(self._pairs(node, "input", inputs),
                            self._pairs(node, "output", outputs))
            self._elements[i] = dataclasses.replace(e, io=io if io.inputs or io.outputs
                                                    else None)
            self._cache = None
            return node
        raise ModelError(f"mapping({node!r}): process {self.id!r} has no element {node!r}")

    def _pairs(self, node: str, kind: str, given: Mapping[str, Condition] | None,
               ) -> tuple[tuple[str, Expr], ...]:
        if given is None:
            return ()
        if not isinstance(given, Mapping):
            raise ModelError(f"mapping({node!r}): {kind}s must be a dict of target -> "
                             f"expression, got {type(given).__name__}")
        pairs = []
        for target, source in given.items():
            if not is_target(target):
                raise ModelError(f"mapping({node!r}): {kind} target {target!r} is not a "
                                 "field name or a dotted path of them (a.b)")
            expr = self._expr(node, f"{kind} {target!r}", "None" if source is None
                              else source)
            if expr is not None:
                pairs.append((target, expr))
        return tuple(pairs)

    def loop(self, node: str, *, condition: Condition | None = None,
             test_before: bool = False, maximum: int | None = None) -> str:
        """Make a task, subprocess or call activity a standard loop: it runs again while
        ``condition`` holds (over the data and ``loopCounter``, the runs done so far),
        tested after each run, or before every run with ``test_before`` (then it may run
        zero times); at most ``maximum`` runs. Each run sees its number as ``loopCounter``
        (1 for the first)."""
        for i, e in enumerate(self._elements):
            if e.id == node:
                loop = el.Loop(condition=self._expr(node, "condition", condition),
                               test_before=bool(test_before), maximum=maximum)
                self._elements[i] = dataclasses.replace(e, loop=loop)
                self._cache = None
                return node
        raise ModelError(f"loop({node!r}): process {self.id!r} has no element {node!r}")

    def for_compensation(self, node: str) -> str:
        """Mark activity ``node`` as a compensation handler (BPMN ``isForCompensation``),
        as ``for_compensation=True`` does when it is added."""
        for i, e in enumerate(self._elements):
            if e.id == node:
                self._elements[i] = dataclasses.replace(e, for_compensation=True)
                self._cache = None
                return node
        raise ModelError(f"for_compensation({node!r}): process {self.id!r} has no element "
                         f"{node!r}")

    def default_flow(self, node: str, target: str) -> str:
        """Make the flow from activity (or exclusive or inclusive gateway) ``node`` to
        ``target`` its default flow, as ``default=target`` does when it is added."""
        for i, e in enumerate(self._elements):
            if e.id == node:
                self._elements[i] = dataclasses.replace(e, default=target)
                self._cache = None
                return node
        raise ModelError(f"default_flow({node!r}): process {self.id!r} has no element "
                         f"{node!r}")

    def set_function(self, node: str, fn: el.Script) -> str:
        """Attach a Python function to a script task or a service task (an imported one
        passes data through until it has one; a worker service task becomes inline)."""
        if not callable(fn):
            raise ModelError(f"set_function({node!r}): {fn!r} is not callable")
        for i, e in enumerate(self._elements):
            if e.id != node:
                continue
            if isinstance(e, el.ScriptTask):
                self._elements[i] = dataclasses.replace(e, fn=fn)
            elif isinstance(e, el.ServiceTask):
                self._elements[i] = dataclasses.replace(e, fn=fn, topic=None)
            else:
                raise ModelError(f"set_function({node!r}): {node!r} is a {e.kind}, not a "
                                 "script or service task")
            self._cache = None
            return node
        raise ModelError(f"set_function({node!r}): process {self.id!r} has no element "
                         f"{node!r}")

    # -- flows ----------------------------------------------------------------------------
    def flow(self, *ids: str, condition: Condition | None = None,
             id: str | None = None) -> list[str]:
        """Sequence flows along a chain of ids; ``condition`` guards each of them. ``id``
        names the flow (one flow only: two ids); without it a flow is ``source->target``."""
        if len(ids) < 2:
            raise ModelError(f"flow needs at least two ids, got {list(ids)!r}")
        if id is not None and len(ids) != 2:
            raise ModelError(f"flow id {id!r} names one flow: give exactly two ids, "
                             f"got {list(ids)!r}")
        made = []
        ids = tuple(str(i) if isinstance(i, str) else i for i in ids)  # a Scope is its id
        for source, target in zip(ids, ids[1:], strict=False):
            fid = id if id is not None else f"{source}->{target}"
            expr = self._expr(fid, "condition", condition)
            refused = condition if expr is None and isinstance(condition, str) else None
            self._flows.append(el.Flow(fid, source, target, expr, refused))
            made.append(fid)
        self._cache = None
        return made

    def leave_out(self, *ids: str) -> None:
        """Take the elements and flows named ``ids`` out of the graph (design-review mode
        leaves out a flow or a boundary event the engine cannot place). A process read from
        a file keeps them in the file: ``to_bpmn`` writes only what was added. An id that
        is no element or flow of the process is a ModelError, and nothing is left out."""
        gone = set(ids)
        unknown = gone - {e.id for e in self._elements} - {f.id for f in self._flows}
        if unknown:
            raise ModelError(f"leave_out: process {self.id!r} has no element or flow "
                             f"{', '.join(repr(u) for u in sorted(unknown))}")
        self._elements = [e for e in self._elements if e.id not in gone]
        self._flows = [f for f in self._flows if f.id not in gone]
        self._cache = None

    # -- checking -------------------------------------------------------------------------
    def definition(self) -> Definition:
        """The validated, immutable snapshot of the graph as it stands now."""
        if self._cache is None or self._cache.origin is not self.origin:
            self._cache = build_definition(self.id, self.name, self._elements, self._flows,
                                           self._problems, self.origin)
        return self._cache

    def validate(self) -> Process:
        """Raise ModelError listing every problem; return the process when it is valid.
        What runs but may not be meant (an element without an outgoing flow, which ends its
        track there; an unreachable element, never entered) is logged as a warning of the
        ``gobpm_nb`` logger, each once per call (``warnings`` lists them)."""
        for warning in self.definition().warnings:
            log.warning("process %r: %s", self.id, warning)
        return self

    @property
    def warnings(self) -> list[str]:
        """What ``validate()`` warns about, in order: each element without an outgoing flow
        (its track ends there: an implicit end) and each element no start reaches (never
        entered). Also given for a process that does not validate."""
        try:
            return list(self.definition().warnings)
        except ModelError as exc:
            return list(exc.warnings)

    @property
    def elements(self) -> list[el.Element]:
        return list(self._elements)

    @property
    def flows(self) -> list[el.Flow]:
        return list(self._flows)

    def __repr__(self) -> str:
        return f"Process({self.id!r}, {len(self._elements)} elements, {len(self._flows)} flows)"
