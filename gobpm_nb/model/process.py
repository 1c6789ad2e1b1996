"""The ``Process`` builder: one method per element (``builder``), each returning the
element's id; a subprocess's is also the builder of its inside (``Scope``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import ModelError
from . import elements as el
from . import interchange
from .builder import Builder, Condition
from .definition import Definition, build_definition


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

    def unsupported(self, id: str, name: str | None = None, *, tag: str, reason: str,
                    activity: bool = False, attached_to: str | None = None,
                    interrupting: bool = True) -> str:
        """A placeholder for an element the engine cannot run yet (read from a file): it keeps
        the flows to and from it, and ``validate()`` refuses it naming ``tag`` and ``reason``.
        With ``attached_to`` it is a boundary event of that activity."""
        if attached_to is not None:
            return self._add(el.UnsupportedBoundary(id, name, attached_to=attached_to,
                                                    interrupting=interrupting, tag=tag,
                                                    reason=reason))
        return self._add(el.Unsupported(id, name, tag=tag, reason=reason, activity=activity))

    def add_problem(self, problem: str) -> None:
        """Record a problem found outside the builder (a file's condition that cannot be
        translated, say): ``validate()`` reports it with the others."""
        self._problems.append(problem)
        self._cache = None

    def set_function(self, node: str, fn: Callable) -> str:
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
            self._flows.append(el.Flow(fid, source, target, expr))
            made.append(fid)
        self._cache = None
        return made

    # -- checking -------------------------------------------------------------------------
    def definition(self) -> Definition:
        """The validated, immutable snapshot of the graph as it stands now."""
        if self._cache is None or self._cache.origin is not self.origin:
            self._cache = build_definition(self.id, self.name, self._elements, self._flows,
                                           self._problems, self.origin)
        return self._cache

    def validate(self) -> Process:
        """Raise ModelError listing every problem; return the process when it is valid."""
        self.definition()
        return self

    @property
    def elements(self) -> list[el.Element]:
        return list(self._elements)

    @property
    def flows(self) -> list[el.Flow]:
        return list(self._flows)

    def __repr__(self) -> str:
        return f"Process({self.id!r}, {len(self._elements)} elements, {len(self._flows)} flows)"
