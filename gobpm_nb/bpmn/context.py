"""What the reader of one document carries: indexes of the file and the report it fills."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import Process
from ..model.builder import Builder, Scope
from .names import BPMN, children, local
from .notes import Notes
from .xmllib import etree

#: How every note of an assumption made in design-review mode begins.
ASSUMED = "as drawn: "


def drawn_name(node: etree._Element) -> str:
    """What a diagram names an element by: its name on one line, else its id."""
    return " ".join((node.get("name") or "").split()) or node.get("id", "")


def pass_through(data: dict[str, Any]) -> None:
    """What an imported script task (or plain task) runs until it is given a function: it
    changes nothing and returns nothing."""
    return None


@dataclass
class Context:
    """One document being read: its indexes, its notes, and the process being built."""

    root: etree._Element
    notes: Notes
    by_id: dict[str, etree._Element] = field(default_factory=dict)
    process_of: dict[str, str] = field(default_factory=dict)  # element id -> process id
    language: str | None = None  # the document's default expression language
    # per process, while it is read
    pid: str = ""
    process: Process | None = None
    scope: Scope | None = None  # the subprocess being read; None: the process itself
    flows: dict[str, etree._Element] = field(default_factory=dict)  # flow id -> element
    #: flow id -> the subprocess whose XML element holds it (None: the process)
    flow_scope: dict[str, str | None] = field(default_factory=dict)
    reported: list[str] = field(default_factory=list)  # problems already noted, verbatim
    explained: set[str] = field(default_factory=set)  # ids whose missing parts are noted
    #: message id -> (its correlation key, whether reading it failed), read once per process
    keys: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    #: design-review mode (``load_bpmn(..., run_as_drawn=True)``): what a diagram leaves out
    #: is assumed, each assumption a warning note (``assume``), instead of an error
    as_drawn: bool = False
    #: in design-review mode, what builds the stand-in of an element the engine cannot run
    #: (``asdrawn.stand_in``; set by the reader)
    stand_in: Callable[..., None] | None = None
    #: design-review mode: scope (None: the process) -> its plain start events read as
    #: milestones, when it has several (a person chooses where an instance starts)
    alternatives: dict[str | None, list[str]] = field(default_factory=dict)
    #: design-review mode: flow id -> (its source, the milestone it now passes through), for
    #: a second flow between two nodes (``drawnflows.twin_flow``)
    rerouted: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: design-review mode: event subprocess -> the trigger it opens on, when it has several
    #: start events (``drawnflows.several_starts``)
    triggers: dict[str | None, str] = field(default_factory=dict)
    #: design-review mode: the nodes that only a left-out element led to (``drawnfixes``):
    #: they keep their incoming flow as drawn, so no implicit start begins at them
    cut: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, tree: etree._ElementTree, notes: Notes, as_drawn: bool = False) -> Context:
        root = tree.getroot()
        ctx = cls(root=root, notes=notes, language=root.get("expressionLanguage"),
                  as_drawn=as_drawn)
        for node in root.iter():
            if not isinstance(node.tag, str):
                continue
            value = node.get("id")
            if value is not None:
                ctx.by_id.setdefault(value, node)
        for proc in children(root, BPMN, "process"):
            pid = proc.get("id")
            if pid is None:
                continue
            for node in proc.iter():
                if isinstance(node.tag, str) and node.get("id") is not None:
                    ctx.process_of.setdefault(node.get("id", ""), pid)
        return ctx

    def begin(self, proc: etree._Element, process: Process) -> None:
        self.pid = process.id
        self.process = process
        self.scope = None
        self.flows = {f.get("id", ""): f for f in proc.iter(f"{{{BPMN}}}sequenceFlow")}
        self.flow_scope = {}
        self.reported = []
        self.explained = set()
        self.keys = {}
        self.alternatives = {}
        self.rerouted = {}
        self.triggers = {}
        self.cut = set()

    @property
    def p(self) -> Builder:
        """What elements are added to: the subprocess being read, else the process."""
        if self.scope is not None:
            return self.scope
        assert self.process is not None
        return self.process

    def unsupported(self, id: str, name: str | None, *, tag: str, reason: str,
                    activity: bool = False, attached_to: str | None = None,
                    interrupting: bool = True, definition: str = "") -> None:
        """A placeholder (``Builder.unsupported``) in the scope being read; in design-review
        mode what stands in for it (``asdrawn.stand_in``)."""
        if self.stand_in is not None:
            self.stand_in(self, id, name, tag=tag, reason=reason, activity=activity,
                     attached_to=attached_to, interrupting=interrupting)
            return
        self.p.unsupported(id, name, tag=tag, reason=reason, activity=activity,
                           attached_to=attached_to, interrupting=interrupting,
                           definition=definition)

    # -- notes --------------------------------------------------------------------------
    def error(self, node: etree._Element, message: str) -> None:
        """An error note that also makes the process refuse to validate."""
        self.notes.error(node, message, self.pid or None)
        if self.process is not None:
            self.process.add_problem(message)
            self.reported.append(message)

    def warning(self, node: etree._Element, message: str) -> None:
        self.notes.warning(node, message, self.pid or None)

    def assume(self, node: etree._Element, message: str) -> None:
        """A warning note saying what a run in design-review mode assumes (``as drawn: ...``)."""
        self.notes.warning(node, f"{ASSUMED}{message}", self.pid or None)

    def detail(self, node: etree._Element, message: str, assumption: str) -> bool:
        """An execution detail that is missing or cannot be read: an error note as written;
        in design-review mode a warning that says what is assumed instead. True when the
        assumption holds (the caller then builds what it says)."""
        if self.as_drawn:
            self.assume(node, f"{message}; {assumption}")
            return True
        self.error(node, message)
        return False

    def instantiates(self, gate: etree._Element) -> bool:
        """Whether an event-based gateway creates instances as read: it says so and, in
        design-review mode (where one with a flow into it stands as a plain one), no flow
        leads into it."""
        return gate.get("instantiate") == "true" and not (
            self.as_drawn and any(f.get("targetRef") == gate.get("id")
                                  for f in self.flows.values()))

    # -- references ---------------------------------------------------------------------
    def ref(self, node: etree._Element, attr: str, tag: str, owner: str
            ) -> etree._Element | None:
        """The root element of kind ``tag`` that ``node``'s ``attr`` names; an error note
        (a dangling reference) when it names nothing, None when the attribute is absent.
        ``owner`` is the flow node the reference serves: its missing parts are explained."""
        value = node.get(attr)
        if value is None:
            return None
        if value not in self.by_id:  # a QName reference, ``tns:Message_1``
            value = value.rpartition(":")[2]
        target = self.by_id.get(value)
        if target is None or local(target) != tag:
            if not self.detail(node, f"{attr} {value!r} names no <{tag}> in the file (an "
                                     "unresolved reference)", f"{value!r} is taken as its "
                                                              "name"):
                self.explained.add(owner)
            return None
        return target

    def name_of(self, node: etree._Element | None) -> str:
        """A message's or signal's name (what the engine matches on), else its id."""
        if node is None:
            return ""
        return node.get("name") or node.get("id") or ""
