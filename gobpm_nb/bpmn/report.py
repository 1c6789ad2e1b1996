"""The import report as people read it: a list of notes, grouped by process, with names.

:class:`Report` is a ``list`` of :class:`~.notes.Note` (compare it, index it, loop over it as
before) that also knows the document it came from, so it can say, for each process, which pool
draws it, whether it is executable and whether it can run, and, for each note, the name of
the element beside its id and a one-line hint. ``str(report)`` (and ``print``) is that text;
in a notebook it shows as an HTML table (``_repr_html_``; every value escaped).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from .names import BPMN, children
from .notes import Note
from .xmllib import etree

# A hint per kind of problem (the first fragment found in the message wins), else per severity.
HINTS = (
    ("is not supported", "the engine cannot run this element yet: model it another way "
                         "or leave it out of the process you run"),
    ("no messageRef", "in the modeler, choose the message this event sends or waits for"),
    ("ISO 8601", "write the time as ISO 8601: PT1H (a duration), 2026-01-01T09:00:00Z "
                 "(a date), R3/PT1H (a cycle)"),
    ("exactly one of", "give the timer one of a duration, a date or a cycle"),
    ("correlation key", "name the data field that tells instances apart "
                        "(correlationKey = field)"),
    ("default flow", "the default flow must leave the gateway it is the default of"),
    ("plain start event", "give the process (or subprocess) one start event with no "
                          "trigger"),
    ("only a process can be called", "call a process of this file or of the engine"),
    ("condition", "write the condition in the safe expression language (README: "
                  "conditions)"),
    ("not marked executable", "set isExecutable=\"true\" on the process to run, or name it: "
                              "model.process(id)"),
)
DEFAULT_HINT = {"error": "the process cannot run until this is fixed in the modeler",
                "warning": "the process runs; this part is ignored or approximated"}
FILE = "the file"  # the group of notes that concern no one process


def hint(note: Note) -> str:
    """One line on what to do about ``note``."""
    return next((text for fragment, text in HINTS if fragment in note.message),
                DEFAULT_HINT.get(note.severity, ""))


class Report(list[Note]):
    """The notes of one import, by source line; see the module's docstring."""

    def __init__(self, notes: Iterable[tuple[Note, str | None]], *,
                 processes: Sequence[str] = (), executable: Sequence[str] = (),
                 names: Mapping[str, str] | None = None,
                 pools: Mapping[str, str] | None = None) -> None:
        pairs = list(notes)
        super().__init__(note for note, _ in pairs)
        self._of = [process for _, process in pairs]  # the process of each note (None: file)
        self.processes = list(processes)
        self.executable = list(executable)
        self.names = dict(names or {})
        self.pools = dict(pools or {})

    # -- what the views read ------------------------------------------------------------
    def name_of(self, note: Note) -> str:
        """The name of the note's element as the diagram shows it ('' when it has none)."""
        given = getattr(note, "name", None)
        if isinstance(given, str) and given:
            return given
        return self.names.get(note.element or "", "")

    def groups(self) -> list[tuple[str | None, list[Note]]]:
        """(process id or None for the file, its notes) in document order; every process is
        listed, with no notes too."""
        out: dict[str | None, list[Note]] = {pid: [] for pid in self.processes}
        for note, pid in zip(self, self._of, strict=False):
            out.setdefault(pid if pid in out else None, []).append(note)
        return [(pid, notes) for pid, notes in out.items() if pid is not None or notes]

    def heading(self, pid: str | None, notes: Sequence[Note]) -> str:
        """'process Invoice (sid-36EA…) · pool Team-Assistant · not executable · cannot run:
        4 errors'."""
        if pid is None:
            return f"{FILE} (notes that concern no one process)"
        name = self.names.get(pid, "")
        words = [f"process {name} ({pid})" if name else f"process {pid}"]
        if pid in self.pools:
            words.append(f"pool {self.pools[pid]}")
        words.append("executable" if pid in self.executable else "not executable")
        errors = sum(1 for n in notes if n.severity == "error")
        warnings = len(notes) - errors
        state = f"cannot run: {plural(errors, 'error')}" if errors else "runs"
        if warnings:
            state += f", {plural(warnings, 'warning')}"
        words.append(state)
        return " · ".join(words)

    def element_text(self, note: Note) -> str:
        name = self.name_of(note)
        element = note.element or "?"
        return f"{note.tag} {name!r} ({element})" if name else f"{note.tag} {element!r}"

    # -- text and HTML ------------------------------------------------------------------
    def __str__(self) -> str:
        errors = sum(1 for n in self if n.severity == "error")
        lines = [f"Import report: {plural(errors, 'error')}, "
                 f"{plural(len(self) - errors, 'warning')}"]
        for pid, notes in self.groups():
            lines.append("")
            lines.append(self.heading(pid, notes))
            for note in notes:
                line = "?" if note.line is None else str(note.line)
                lines.append(f"  {note.severity:<7} line {line:>4}  {self.element_text(note)}: "
                             f"{note.message}")
                lines.append(f"  {'':<7}            → {hint(note)}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("Report(...)" if cycle else str(self))

    def _repr_html_(self) -> str:
        errors = sum(1 for n in self if n.severity == "error")
        parts = [f'<div class="gobpm-report"><p><b>Import report</b>: '
                 f"{plural(errors, 'error')}, {plural(len(self) - errors, 'warning')}</p>"]
        for pid, notes in self.groups():
            parts.append(f'<h4 data-process="{escape(pid or "")}">'
                         f"{escape(self.heading(pid, notes))}</h4>")
            if not notes:
                continue
            parts.append('<table><thead><tr><th>severity</th><th>line</th><th>element</th>'
                         "<th>id</th><th>problem</th><th>what to do</th></tr></thead><tbody>")
            for note in notes:
                colour = "#cf222e" if note.severity == "error" else "#9a6700"
                line = "" if note.line is None else str(note.line)
                name = self.name_of(note)
                element = f"{note.tag} {name}" if name else note.tag
                parts.append(
                    f'<tr data-severity="{escape(note.severity)}">'
                    f'<td style="color:{colour}">{escape(note.severity)}</td>'
                    f"<td>{escape(line)}</td><td>{escape(element)}</td>"
                    f"<td><code>{escape(note.element or '')}</code></td>"
                    f"<td>{escape(note.message)}</td><td>{escape(hint(note))}</td></tr>")
            parts.append("</tbody></table>")
        parts.append("</div>")
        return "".join(parts)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def names_and_pools(tree: etree._ElementTree) -> tuple[dict[str, str], dict[str, str]]:
    """Every named element's id -> name, and each process id -> the name of the pool
    (participant) that draws it."""
    names = {}
    for node in tree.getroot().iter():
        if isinstance(node.tag, str) and node.get("id") and node.get("name"):
            names[node.get("id", "")] = " ".join(node.get("name", "").split())
    pools = {}
    for collaboration in children(tree.getroot(), BPMN, "collaboration"):
        for part in children(collaboration, BPMN, "participant"):
            ref = part.get("processRef")
            if ref and ref not in pools:
                pools[ref] = " ".join((part.get("name") or part.get("id", "")).split())
    return names, pools
