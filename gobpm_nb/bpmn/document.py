"""A BPMN document read into processes, with its report; written back by ``to_bpmn``."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..model import Process
from .notes import Note
from .reader import read_document
from .report import Report, names_and_pools
from .source import parse
from .writer import add_changes
from .xmllib import etree


@dataclass(frozen=True)
class Origin:
    """Where an imported process came from: what ``to_bpmn`` needs to write it back. The
    baseline lists the element and flow ids read, so additions are known, and each element's
    multi-instance loop as read, so a loop added or changed since is written."""

    model: BpmnModel
    elements: tuple[str, ...]
    flows: tuple[str, ...]
    #: (element id, its ``Many``, its ``Loop`` or None) as read
    loops: tuple[tuple[str, Any], ...] = ()
    problems: int = 0  # how many problems it had recorded (``Process.problems``) when read


class BpmnModel:
    """The processes of one BPMN file, its import report, and the file itself.

    ``processes`` maps each process id to its ``Process`` in document order (executable or
    not; one with error notes does not validate). ``report`` lists every note by line.
    ``process(id=None)`` is the one to run; ``to_bpmn()`` gives the file back. ``as_drawn``:
    read in design-review mode (what the diagram leaves out is assumed, each assumption a
    warning note beginning ``as drawn:``).
    """

    def __init__(self, tree: etree._ElementTree, as_drawn: bool = False):
        self.tree = tree
        self.as_drawn = as_drawn
        self._drawn: BpmnModel | None = self if as_drawn else None
        processes, self._notes, self.executable = read_document(tree, as_drawn)
        self.processes: dict[str, Process] = processes
        for p in processes.values():
            p.origin = Origin(self, tuple(e.id for e in p.elements),
                              tuple(f.id for f in p.flows),
                              tuple((e.id, e.many or e.loop) for e in p.elements), len(p.problems))
        lone = self._lone()
        if lone is not None:
            node = self._process_node(lone)
            if node is not None:
                self._notes.warning(node, f"process {lone!r} is not marked executable "
                                          "(isExecutable is not 'true'); it is the only "
                                          "process, so it is the one process() returns", lone)

    @classmethod
    def load(cls, source: Any, as_drawn: bool = False) -> BpmnModel:
        return cls(parse(source), as_drawn)

    def drawn(self) -> BpmnModel:
        """The same file read in design-review mode (this model, when it was); read once."""
        if self._drawn is None:
            self._drawn = BpmnModel(self.tree, as_drawn=True)
        return self._drawn

    @property
    def report(self) -> Report:
        """Every note by line: a list of ``Note`` that prints grouped by process, with the
        elements' names (and shows as a table in a notebook)."""
        names, pools = names_and_pools(self.tree)
        return Report(self._notes.pairs(), processes=list(self.processes),
                      executable=self.executable, names=names, pools=pools)

    def errors(self, id: str) -> list[Note]:
        """The error notes that concern process ``id`` (its own, and the document's)."""
        return self._notes.errors_of(id)

    def main(self) -> str:
        """The id of the process to run: the executable one, or the only one."""
        if len(self.executable) == 1:
            return self.executable[0]
        if len(self.executable) > 1:
            raise ModelError(f"the file has {len(self.executable)} executable processes "
                             f"{self.executable!r}; name one: process(id)")
        lone = self._lone()
        if lone is None:
            raise ModelError(f"the file has no executable process; name one of "
                             f"{list(self.processes)!r}: process(id)")
        return lone

    def process(self, id: str | None = None, as_drawn: bool = False) -> Process:
        """The executable process, or the one named; ModelError listing every error note
        that concerns it. ``as_drawn``: the process as design-review mode reads it (from
        ``drawn()``, whose ``report`` holds its assumptions)."""
        if as_drawn and not self.as_drawn:
            return self.drawn().process(id)
        pid = self.main() if id is None else id
        if pid not in self.processes:
            raise ModelError(f"the file has no process {pid!r}; it has "
                             f"{list(self.processes)!r}")
        errors = self.errors(pid)
        if errors:
            raise ModelError([f"process {pid!r}: {note}" for note in errors])
        return self.processes[pid].validate()

    def to_bpmn(self) -> str:
        """The file back, as text (UTF-8 declaration): what was read, kept as it was, plus
        what the processes gained since (elements and flows added with the builder, a
        multi-instance loop added to an element read). ModelError naming every id added
        that a BPMN file cannot hold (not an XML name, or already used in the file)."""
        tree = copy.deepcopy(self.tree)
        for p in self.processes.values():
            if isinstance(p.origin, Origin) and p.origin.model is self:
                add_changes(tree, p, p.origin.elements, p.origin.flows,
                            dict(p.origin.loops), p.problems[p.origin.problems:])
        return serialize(tree)

    def _lone(self) -> str | None:
        if self.executable or len(self.processes) != 1:
            return None
        return next(iter(self.processes))

    def _process_node(self, pid: str) -> etree._Element | None:
        for node in self.tree.getroot():
            if isinstance(node.tag, str) and node.get("id") == pid:
                return node
        return None

    def __repr__(self) -> str:
        errors = sum(1 for n in self.report if n.severity == "error")
        return (f"BpmnModel({len(self.processes)} processes, {errors} errors, "
                f"{len(self.report) - errors} warnings)")


def serialize(tree: etree._ElementTree) -> str:
    """A tree as text with a UTF-8 declaration (the text is no longer in the file's bytes);
    comments and processing instructions around the root keep a line each. lxml writes
    each start tag on one line, so where the file spread one over several lines, blank
    lines are added before it (``_keep_lines``): every element read still ends its start
    tag on the line it did in the file (its ``sourceline``, the line a note gives), unless
    something was added above it."""
    root = tree.getroot()
    before = [etree.tostring(n, encoding="unicode", with_tail=False)
              for n in reversed(list(root.itersiblings(preceding=True)))]
    after = [etree.tostring(n, encoding="unicode", with_tail=False)
             for n in root.itersiblings()]
    prolog = ['<?xml version="1.0" encoding="UTF-8"?>', *before]
    head, gap = "\n".join(prolog), "\n"
    line = head.count("\n") + 2  # where the root's start tag is written
    if root.sourceline is not None and root.sourceline < line:
        head, gap = "".join(prolog), ""  # the file had no declaration: the root stays put
        line = head.count("\n") + 1
    if root.sourceline is not None and root.sourceline > line:
        head += "\n" * (root.sourceline - line)
        line = root.sourceline
    _keep_lines(root, line)
    body = etree.tostring(root, encoding="unicode", with_tail=False)
    return head + gap + "\n".join([body, *after]) + "\n"


def _keep_lines(node: etree._Element, line: int) -> int:
    """Add newlines to the whitespace before each element inside ``node`` (whose one-line
    start tag is written on ``line``) that would otherwise end its start tag above its
    ``sourceline``; the line ``node``'s end tag is written on."""
    line += (node.text or "").count("\n")
    previous: etree._Element | None = None
    for child in node:
        if isinstance(child.tag, str):
            want = child.sourceline
            if want is not None and want > line and _pad(node, previous, want - line):
                line = want
            line = _keep_lines(child, line)
        else:  # a comment or processing instruction: written as it was read
            line += etree.tostring(child, encoding="unicode", with_tail=False).count("\n")
        line += (child.tail or "").count("\n")
        previous = child
    return line


def _pad(parent: etree._Element, previous: etree._Element | None, lines: int) -> bool:
    """Add ``lines`` newlines to the whitespace before the child after ``previous`` (the
    parent's text when it is the first); False when that text is not whitespace."""
    text = parent.text if previous is None else previous.tail
    if text is not None and text.strip():
        return False
    padded = "\n" * lines + (text or "")
    if previous is None:
        parent.text = padded
    else:
        previous.tail = padded
    return True
