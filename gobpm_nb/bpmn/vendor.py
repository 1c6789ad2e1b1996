"""The vendor extensions people have in their files, read into what the builder takes.

- worker jobs: Camunda 8 ``zeebe:taskDefinition type``, Camunda 7 ``camunda:type="external"``
  with ``camunda:topic``;
- assignees: ``zeebe:assignmentDefinition assignee``, ``camunda:assignee``;
- message correlation: ``zeebe:subscription correlationKey`` on the ``<message>``, or the
  standard ``correlationProperty`` whose ``correlationPropertyRetrievalExpression`` for the
  message is a plain field;
- payload fields of a message or signal throw: our own ``gobpm:payload fields="a b"``.
"""

from __future__ import annotations

import re

from lxml import etree

from ..errors import ModelError
from .context import Context
from .expressions import translate
from .names import BPMN, GOBPM, ZEEBE, camunda_attr, children, extension, local

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
        if not topic:
            ctx.error(task, f"job type {kind!r} is an expression or empty; the engine needs a "
                            "fixed topic")
            return kind or "?"
        return topic
    if camunda_attr(node, "type") == "external":
        topic = camunda_attr(node, "topic")
        if not topic:
            ctx.error(node, "camunda:type is 'external' but camunda:topic is missing")
            return "?"
        return topic
    return None


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
    """The safe expression whose value in the instance's data correlates ``message``."""
    sub = extension(message, ZEEBE, "subscription")
    if sub is not None and sub.get("correlationKey") is not None:
        text = sub.get("correlationKey", "")
        try:
            return translate(text, None, "correlation key")
        except ModelError as exc:
            ctx.error(sub, str(exc))
            ctx.explained.add(owner)
            return None
    return _standard_key(ctx, message, owner)


def _standard_key(ctx: Context, message: etree._Element, owner: str) -> str | None:
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
                ctx.error(path if path is not None else how,
                          f"correlation key {text.strip()!r} of message {mid!r} is not a "
                          "plain field name")
                ctx.explained.add(owner)
                return None
            return field
    return None


def implementation(node: etree._Element) -> str:
    """How a vendor says a service task runs (for the note saying it is not run)."""
    for attr in ("class", "delegateExpression", "expression"):
        value = camunda_attr(node, attr)
        if value is not None:
            return f" (its camunda:{attr} {value!r} is not run)"
    return ""


def is_foreign(node: etree._Element) -> bool:
    """True for elements of other namespaces (vendor data): kept, never read."""
    return isinstance(node.tag, str) and not node.tag.startswith(f"{{{BPMN}}}") \
        and local(node) != ""
