"""The vendor extensions people have in their files, read into what the builder takes.

- worker jobs: Camunda 8 ``zeebe:taskDefinition type`` (a FEEL expression: the topic is its
  value as the job is created), Camunda 7 ``camunda:type="external"`` with ``camunda:topic``;
- assignees: ``zeebe:assignmentDefinition assignee``, ``camunda:assignee``;
- message correlation: ``zeebe:subscription correlationKey`` on the ``<message>``, or the
  standard ``correlationProperty`` whose ``correlationPropertyRetrievalExpression`` for the
  message is a plain field;
- payload fields of a message or signal throw: our own ``gobpm:payload fields="a b"``.

Variable mappings are run (``mappings.py``, ``calls.py``). Execution and task listeners, whose
code the engine cannot call, are left out of the run with a warning naming each one
(``not_run``, ``listeners.py``), never dropped silently.
"""

from __future__ import annotations

import re

from ..errors import ModelError
from ..model.expr import NO_KEY
from .context import Context
from .expressions import translate
from .listeners import is_listener
from .listeners import note as listener_note
from .names import (
    BPMN,
    GOBPM,
    ZEEBE,
    camunda_attr,
    children,
    extension,
)
from .xmllib import etree

_FEEL_STRING = re.compile(r'^=\s*"((?:[^"\\]|\\.)*)"\s*$')


def static(text: str) -> str | None:
    """A value that is a constant: plain text, or a FEEL string literal ``="x"``; None for an
    expression (FEEL ``=x``, JUEL ``${x}``)."""
    text = text.strip()
    literal = _FEEL_STRING.match(text)
    if literal:
        return re.sub(r"\\(.)", r"\1", literal.group(1))
    if text.startswith("=") or "${" in text or "#{" in text:
        return None
    return text


def job_topic(ctx: Context, node: etree._Element) -> str | None:
    """The worker topic of a task, when a vendor extension makes it a job."""
    task = extension(node, ZEEBE, "taskDefinition")
    if task is not None:
        kind = task.get("type", "")
        topic = static(kind)
        if topic is None and kind.strip().startswith("="):
            return None  # a job type written as FEEL: ``topic_from``
        if not topic:
            if ctx.detail(task, f"job type {kind!r} is an expression or empty; the engine "
                                "needs a fixed topic", "it is no worker job"):
                return None
            return kind or "?"
        return topic
    if camunda_attr(node, "type") == "external":
        topic = camunda_attr(node, "topic")
        if not topic:
            if ctx.detail(node, "camunda:type is 'external' but camunda:topic is missing",
                          "it is no worker job"):
                return None
            return "?"
        return topic
    return None


def topic_from(ctx: Context, node: etree._Element) -> str | None:
    """A job type written as FEEL (``zeebe:taskDefinition type="=kind"``): the safe
    expression that gives the topic as the job is created; None when the type is no
    expression; "" (with an error note) when it does not translate (None in design-review
    mode: it is no worker job)."""
    task = extension(node, ZEEBE, "taskDefinition")
    kind = task.get("type", "") if task is not None else ""
    if task is None or static(kind) is not None or not kind.strip().startswith("="):
        return None
    try:
        return translate(kind, None, "job type")
    except ModelError as exc:
        return None if ctx.detail(task, str(exc), "it is no worker job") else ""


def assignee(ctx: Context, node: etree._Element) -> str | None:
    """The assignee of a user task; an expression is kept as its text, with a warning."""
    found = extension(node, ZEEBE, "assignmentDefinition")
    text = found.get("assignee") if found is not None else camunda_attr(node, "assignee")
    if text is None:
        return None
    value = static(text)
    if value is None:
        ctx.warning(found if found is not None else node,
                    f"assignee {text!r} is an expression; it is kept as text, not evaluated")
        return text
    return value


def payload(node: etree._Element) -> tuple[str, ...]:
    """The data fields a message or signal throw sends (``gobpm:payload fields``)."""
    found = extension(node, GOBPM, "payload")
    return tuple(found.get("fields", "").split()) if found is not None else ()


def correlation_key(ctx: Context, message: etree._Element, owner: str) -> str | None:
    """The safe expression whose value in the instance's data correlates ``message``. Read
    once per message and process: every event that names the message shares the answer,
    and a key that cannot be read is one note, not one per event."""
    mid = message.get("id", "")
    if mid not in ctx.keys:
        ctx.keys[mid] = _key(ctx, message)
    key, failed = ctx.keys[mid]
    if failed:
        ctx.explained.add(owner)
    return key


def _key(ctx: Context, message: etree._Element) -> tuple[str | None, bool]:
    """The message's key, and whether reading it failed (an error note made)."""
    sub = extension(message, ZEEBE, "subscription")
    if sub is not None and sub.get("correlationKey") is not None:
        text = sub.get("correlationKey", "")
        try:
            return translate(text, None, "correlation key"), False
        except ModelError as exc:
            if ctx.detail(sub, str(exc), "the message is correlated by its name alone"):
                return NO_KEY, False
            return None, True
    return _standard_key(ctx, message)


def _standard_key(ctx: Context, message: etree._Element) -> tuple[str | None, bool]:
    """A ``correlationProperty`` retrieval expression for this message, if a plain field."""
    mid = message.get("id")
    for prop in children(ctx.root, BPMN, "correlationProperty"):
        for how in children(prop, BPMN, "correlationPropertyRetrievalExpression"):
            if (how.get("messageRef") or "").rpartition(":")[2] != mid:
                continue
            path = how.find(f"{{{BPMN}}}messagePath")
            text = (path.text or "") if path is not None else ""
            try:
                field = translate(text, path.get("language") if path is not None else None,
                                  "correlation key")
            except ModelError:
                field = ""
            if not field.isidentifier():
                if ctx.detail(path if path is not None else how,
                              f"correlation key {text.strip()!r} of message {mid!r} is not a "
                              "plain field name", "the message is correlated by its name "
                                                  "alone"):
                    return NO_KEY, False
                return None, True
            return field, False
    return None, False


def not_run(ctx: Context, node: etree._Element) -> None:
    """A warning for each listener of ``node`` (a flow node, a flow, a process): the engine
    runs no listener's code (``listeners.py``); every other extension it reads is run."""
    for ext in children(node, BPMN, "extensionElements"):
        for found in ext:
            if is_listener(found):
                listener_note(ctx, node, found)


def implementation(node: etree._Element) -> str:
    """How a vendor says a service task runs (for the note saying it is not run)."""
    for attr in ("class", "delegateExpression", "expression"):
        value = camunda_attr(node, attr)
        if value is not None:
            return f" (its camunda:{attr} {value!r} is not run)"
    return ""
