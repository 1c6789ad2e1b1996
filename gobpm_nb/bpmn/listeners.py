"""Execution and task listeners: read, kept in the file, not run, each a warning that says so.

Camunda 7's, Activiti's and Flowable's ``executionListener`` and ``taskListener`` (a
``class``, ``expression`` or ``delegateExpression``, a nested ``script``, ``field``
injections) and Camunda 8's ``zeebe:executionListeners`` and ``zeebe:taskListeners`` (jobs of
a ``type``) call code when an element starts, ends or is taken, or when a user task is
created, assigned or completed. The engine calls no code: as SpiffWorkflow does, it leaves
them out of the run, and the report carries a **warning** naming the element, the listener's
kind, its event and the code it names. The import keeps them (an imported file writes back
as it was read). An expression listener that only sets a variable to a value
(``${execution.setVariable('done', true)}``) is not run either, and its note says what it
would have set: a run that needs that value meets it missing (an incident), never a value
made up here.
"""

from __future__ import annotations

import re

from .context import Context
from .names import CAMUNDA, ZEEBE, label, local, namespace
from .xmllib import etree

#: Flowable's own namespace: its listeners are read as Activiti's
FLOWABLE = "http://flowable.org/bpmn"
#: where Camunda 7's, Activiti's and Flowable's listeners live
SPACES = (*CAMUNDA, FLOWABLE)
_WHEN = {
    "executionListener": "the engine calls no code when an element starts, ends or is taken",
    "taskListener": "the engine calls no code when a user task is created, assigned or "
                    "completed",
}
_CODE = ("class", "expression", "delegateExpression")
# ``${execution.setVariable('name', value)}``: a listener that only sets one variable
_SETS = re.compile(r"""^[$#]\{\s*(?:execution|task)\s*\.\s*setVariable\s*\(\s*
    (?P<q>['"])(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P=q)\s*,\s*(?P<value>[^()]*?)\s*\)\s*\}$""",
                   re.VERBOSE)


def is_listener(found: etree._Element) -> bool:
    """Whether an extension element is a listener (or Camunda 8's list of them)."""
    name = local(found)
    if namespace(found) in SPACES:
        return name in _WHEN
    return namespace(found) == ZEEBE and name in ("executionListeners", "taskListeners")


def note(ctx: Context, node: etree._Element, found: etree._Element) -> None:
    """The warning for listener ``found`` on ``node`` (a flow node, a flow, a process)."""
    where = f"{label(found)} on {local(node)} {node.get('id')!r}"
    parts = _zeebe(found) if namespace(found) == ZEEBE else _parts(found)
    if not parts:
        ctx.warning(found, f"{where} names no class, expression, delegate or script: it "
                           "does nothing, and the run leaves it out")
        return
    kind = "taskListener" if "task" in local(found).lower() else "executionListener"
    text = f"{where} is not run ({parts}): {_WHEN[kind]}; the run leaves it out"
    sets = _SETS.match((found.get("expression") or "").strip())
    if sets:
        text += (f" (it would set {sets.group('name')!r} to {sets.group('value')}: that is "
                 "not done either, and what reads it finds it missing)")
    ctx.warning(found, text)


def _parts(found: etree._Element) -> str:
    """``event 'create', class 'com.acme.Audit', 2 fields``; '' when it names no code."""
    code = [f"{a} {found.get(a)!r}" for a in _CODE if found.get(a) is not None]
    counts: dict[str, int] = {}
    for c in found:
        if isinstance(c.tag, str):
            counts[local(c)] = counts.get(local(c), 0) + 1
    if "script" in counts:
        script = next(c for c in found if isinstance(c.tag, str) and local(c) == "script")
        code.append(f"a {script.get('scriptFormat') or 'script'} script")
        del counts["script"]
    if not code:
        return ""
    event = [f"event {found.get('event')!r}"] if found.get("event") else []
    return ", ".join(event + code + [f"{n} {k}{'s' * (n != 1)}" for k, n in counts.items()])


def _zeebe(found: etree._Element) -> str:
    """``end job 'audit', start job 'check'``: each listener's event and job type."""
    out = []
    for c in found:
        if isinstance(c.tag, str) and c.get("type"):
            event = f"{c.get('eventType')} " if c.get("eventType") else ""
            out.append(f"{event}job {c.get('type')!r}")
    return ", ".join(out)
