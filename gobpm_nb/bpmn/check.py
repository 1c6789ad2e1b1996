"""The builder's validation of an imported process, turned into notes with source lines.

The builder's checks (dangling flows, a gateway arm that is not a catch event, a timer that
does not parse, a placeholder's reason...) are the import's checks too: each problem becomes
an error note on the element it names, so ``model.process(id)`` returns a process only when
``validate()`` passes; each of its warnings (an element without an outgoing flow, which ends
its track there; an unreachable element) becomes a warning note. Problems the reader
already noted with more to say (an untranslatable condition leaves the flow without one) are
not repeated.
"""

from __future__ import annotations

import re

from ..errors import ModelError
from ..model import Process
from ..model import elements as el
from ..model.placeholders import Unsupported, UnsupportedBoundary
from .context import Context
from .names import FLOW_ELEMENTS, label, local
from .xmllib import etree

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
# a missing part that the reader explains better when it has noted the element already
_MISSING = ("names no message", "names no process", "has no correlation key",
            "names no signal", "names no escalation", "has no condition",
            "give exactly one of duration, date or cycle")
_NO_START = "has 0 plain start events; give one"
_NO_STARTS = (_NO_START, "needs exactly one start event, with a trigger",
              "has no start event")
_UNREACHABLE = "is unreachable from the start event"
_HINTS = {
    "has no correlation key (give key=)":
        "has no correlation key: give its <message> a zeebe:subscription correlationKey, or "
        "a correlationProperty whose retrieval expression for it is a plain field",
    "names no message": "names no message (no messageRef to a <message>)",
    "names no signal": "names no signal (no signalRef to a <signal>)",
}


def check_process(ctx: Context, proc: etree._Element) -> None:
    """Validate the process just read; every new problem is an error note, every warning
    (an implicit end, an unreachable element) a warning note."""
    p = ctx.process
    assert p is not None
    reached = None
    try:
        warnings = list(p.definition().warnings)
    except ModelError as exc:
        warnings = exc.warnings
        reached = _reached_past_placeholders(p)
        _note_problems(ctx, proc, p, exc.problems, reached)
    for warning in warnings:
        node = _element_of(ctx, warning, proc)
        if reached is not None and warning.endswith(_UNREACHABLE) and node.get("id") in reached:
            continue  # unreachable only past a placeholder: its own note explains it
        kinds = {e.id: e.kind for e in p.elements}
        ctx.notes.warning(node, _in_file_terms(warning, node, kinds), ctx.pid)


def _note_problems(ctx: Context, proc: etree._Element, p: Process, problems: list[str],
                   reached: set[str]) -> None:
    # scopes (the process: its id) whose start event is a placeholder: its own note
    # explains the missing start
    placeholder_start = {e.within if e.within is not None else p.id for e in p.elements
                         if isinstance(e, Unsupported) and e.tag == "startEvent"}
    kinds = {e.id: e.kind for e in p.elements}
    already = list(ctx.reported)
    for problem in dict.fromkeys(problems):  # the same problem twice: one note
        if problem in already:
            already.remove(problem)
            continue
        node = _element_of(ctx, problem, proc)
        if node.get("id") in ctx.explained and any(m in problem for m in _MISSING):
            continue
        if any(m in problem for m in _NO_STARTS) and node.get("id") in placeholder_start:
            continue
        ctx.notes.error(node, _elsewhere(ctx, _hinted(_in_file_terms(problem, node, kinds),
                                                      node)), ctx.pid)


def _reached_past_placeholders(p: Process) -> set[str]:
    """What a token could reach if every placeholder let it through: from the process's start
    events and event subprocesses and from each placeholder without incoming flows (a
    compensation handler), along flows, from activities to their boundary events, from a
    scope to the start events and event subprocesses in it, from a link throw to its catch.
    A node unreachable only because of a placeholder is explained by the placeholder's own
    note."""
    outgoing: dict[str, list[str]] = {}
    for f in p.flows:
        outgoing.setdefault(f.source, []).append(f.target)
    catches = {(e.within, e.link): e.id for e in p.elements if isinstance(e, el.LinkCatch)}
    for e in p.elements:
        if isinstance(e, el.Boundary):
            outgoing.setdefault(e.attached_to, []).append(e.id)
        if e.within is not None and isinstance(e, (el.StartEvent, el.EventSubProcess)):
            outgoing.setdefault(e.within, []).append(e.id)
        if isinstance(e, el.LinkThrow) and (e.within, e.link) in catches:
            outgoing.setdefault(e.id, []).append(catches[e.within, e.link])
    targets = {f.target for f in p.flows}
    todo = [e.id for e in p.elements
            if (isinstance(e, (el.StartEvent, el.EventSubProcess)) and e.within is None) or
            (isinstance(e, (Unsupported, UnsupportedBoundary)) and e.id not in targets)]
    reached = set(todo)
    while todo:
        for nxt in outgoing.get(todo.pop(), []):
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    return reached


def _element_of(ctx: Context, problem: str, proc: etree._Element) -> etree._Element:
    """The element a problem names first (by a quoted id of this process, at any depth of
    its subprocesses; a timer problem starts with its owner's id unquoted), else the
    process."""
    for quoted in _QUOTED.findall(problem) + [problem.partition(":")[0]]:
        node = ctx.by_id.get(quoted)
        if node is not None and ctx.process_of.get(quoted) == ctx.pid:
            return node
    return proc


def _in_file_terms(problem: str, node: etree._Element, kinds: dict[str, str]) -> str:
    """A problem about ``node`` that starts with the engine's name of it (``script_task
    'x'``, ``x: condition: ...``) starts with the file's (``task 'x'``) instead."""
    eid = node.get("id", "")
    for engine in (f"{kinds[eid]} {eid!r}" if eid in kinds else None, f"{eid}:"):
        if engine is not None and problem.startswith(engine):
            rest = problem[len(engine):]
            return f"{label(node)} {eid!r}" + (rest if engine.endswith("'") else ":" + rest)
    return problem


_MISSING_REFS = re.compile(r"(?:is dangling: no element|attached to unknown element) (.*)$")


def _elsewhere(ctx: Context, problem: str) -> str:
    """A reference to no element of this process says where it leads: to an element of
    another process (a pool: nothing crosses pools but message flows), or nowhere (empty)."""
    found = _MISSING_REFS.search(problem)
    if found is None:
        return problem
    said = []
    for ref in _QUOTED.findall(found.group(1)):
        pid = ctx.process_of.get(ref)
        if not ref:
            said.append("an empty reference")
        elif pid is not None and pid != ctx.pid:
            said.append(f"{ref!r} is in process {pid!r}, another pool: only a message flow "
                        "joins two pools")
    return f"{problem} ({'; '.join(dict.fromkeys(said))})" if said else problem


def _hinted(problem: str, node: etree._Element) -> str:
    if problem.endswith(_NO_START) and not any(local(c) in FLOW_ELEMENTS for c in node):
        return problem + " (it is empty in the file: a subprocess drawn collapsed, with " \
                         "nothing inside it, has nothing to run)"
    for plain, hinted in _HINTS.items():
        if problem.endswith(plain):
            return problem[: -len(plain)] + hinted
    return problem
