"""Activiti's and Flowable's own ways of saying what a BPMN element leaves out.

- ``messageExpression`` on a ``messageEventDefinition`` with no ``messageRef``: the message
  the event sends or waits for. A fixed text (``messageExpression="order-paid"``) is that
  message's name, read as the vendor's engine reads it; an expression (``${name}``), which
  those engines evaluate when the event is armed, is an error: the engine waits for and
  sends messages of fixed names.
- ``correlationKey`` on a ``messageEventDefinition`` (Activiti's): the key of its message
  (a wait's, a throw's) when the message itself names none, if it translates.
- a catch event with no BPMN event definition (often Flowable's own: an event registry
  ``flowable:eventType``, a ``flowable:variableListenerEventDefinition``): a boundary never
  fires (a warning; the activity runs as if nothing were attached), an intermediate catch
  is an error (it would wait for what the engine cannot deliver, or, with no trigger at
  all, it is not valid BPMN).
- ``type`` on a send task (``activiti:type="mail"``, ``"camel"``, ``"http"``...): the task is
  one of the vendor's built-in services, not a message throw. The engine runs none of them:
  it passes the data through, with a warning, as an imported service task does.
"""

from __future__ import annotations

from ..errors import ModelError
from ..model.expr import NO_KEY
from .context import Context
from .expressions import translate
from .listeners import SPACES, is_listener
from .names import BPMN, children, label, local, namespace
from .xmllib import etree

#: what each of the vendor's built-in services would do
_SERVICES = {"mail": "sends no mail", "camel": "calls no Camel route",
             "mule": "calls no Mule endpoint", "http": "makes no HTTP request",
             "shell": "runs no shell command", "dmn": "evaluates no decision table"}


def vendor_attr(node: etree._Element, name: str) -> tuple[str, str] | None:
    """(prefixed name, value) of an Activiti or Flowable (or Camunda 7) attribute."""
    for ns in SPACES:
        value = node.get(f"{{{ns}}}{name}")
        if value is not None:
            prefix = next((p for p, u in node.nsmap.items() if u == ns and p), "")
            return (f"{prefix}:{name}" if prefix else name), value
    return None


def service_type(node: etree._Element) -> str | None:
    """What a send task that is one of the vendor's built-in services says: the note's
    text, else None (a message throw)."""
    found = vendor_attr(node, "type")
    if found is None or found[1] == "external":
        return None
    attr, kind = found
    does = _SERVICES.get(kind, "runs none of the vendor's built-in services")
    return (f"send task {node.get('id')!r} is the vendor's {kind!r} task ({attr} {kind!r}), "
            f"not a message throw: the engine {does}; it passes the data through unchanged "
            f"until p.set_function({node.get('id')!r}, fn)")


def message_expression(ctx: Context, owner: etree._Element, eid: str, waits: bool,
                       by_name: str) -> tuple[str, str | None] | None:
    """The (name, key) a ``messageExpression`` gives a message event with no ``messageRef``;
    None when it has none. ``waits``: the event waits (and needs a key); ``by_name``: what
    the note says of a wait correlated by name alone."""
    found = vendor_attr(owner, "messageExpression")
    if found is None or local(owner) != "messageEventDefinition":
        return None
    attr, text = found
    if "${" in text or "#{" in text:
        if not ctx.detail(owner, f"{attr} {text!r} is an expression: Activiti and Flowable "
                                 "evaluate it when the event is armed; the engine sends and "
                                 "waits for messages of fixed names only",
                          f"it is the message {text!r}"):
            ctx.explained.add(eid)
            return "", None
    key = vendor_key(ctx, owner, eid) if waits else None
    if waits and key is None and eid not in ctx.explained:
        ctx.warning(owner, f"message {text.strip()!r} (its {attr}) has no correlation "
                           f"key{by_name}")
        key = NO_KEY
    return text.strip(), key


def vendor_key(ctx: Context, owner: etree._Element, eid: str) -> str | None:
    """The key Activiti's ``correlationKey`` (on the event's ``messageEventDefinition``)
    gives its message, when it translates; None when it has none, or when it does not
    translate (an error note, ``eid`` explained)."""
    found = vendor_attr(owner, "correlationKey")
    if found is None:
        return None
    attr, text = found
    try:
        return translate(text, None, "correlation key")
    except ModelError as exc:
        if ctx.detail(owner, f"{attr}: {exc}", "the message is correlated by its name alone"):
            return NO_KEY
        ctx.explained.add(eid)
        return None


def vendor_trigger(node: etree._Element) -> str:
    """The vendor's own trigger of a catch event with no BPMN definition, as a note says it:
    `` (flowable:eventType 'order')``; '' when it has none."""
    for ext in children(node, BPMN, "extensionElements"):
        for c in ext:
            if not isinstance(c.tag, str) or is_listener(c) or namespace(c) not in SPACES:
                continue
            if local(c) == "eventType" or local(c).endswith("EventDefinition"):
                what = (c.text or "").strip() or c.get("variableName") or ""
                return f" ({label(c)}{f' {what!r}' if what else ''})"
    return ""


def never_fires(ctx: Context, node: etree._Element) -> bool:
    """A boundary event with no event definition has no trigger BPMN defines, so it never
    fires: a warning, and a boundary whose condition is never true (the activity runs as if
    nothing were attached). True when built; an intermediate catch is the caller's (an
    error: ``no_trigger``). Design-review mode keeps its own stand-in."""
    if local(node) != "boundaryEvent" or ctx.as_drawn:
        return False
    eid = node.get("id", "")
    ctx.warning(node, f"boundary event {eid!r} has no event definition{vendor_trigger(node)}: "
                      "nothing the engine knows triggers it, so it never fires; the activity "
                      "runs as if it were not attached, and the path after it is not taken")
    ctx.p.conditional_boundary(eid, node.get("name"), condition="False",
                               attached_to=(node.get("attachedToRef") or "").rpartition(":")[2],
                               interrupting=node.get("cancelActivity", "true") != "false")
    return True


def no_trigger(node: etree._Element) -> str:
    """Why an intermediate catch event with no event definition cannot run."""
    vendor = vendor_trigger(node)
    if vendor:
        return (f"a catch event needs an event definition; its trigger{vendor} is the "
                "vendor's own (an event registry event, a variable listener), which the "
                "engine cannot deliver: it would wait for ever")
    return ("a catch event needs an event definition: an intermediate catch with none is not "
            "valid BPMN 2.0 (a none intermediate event only throws), Camunda 8 refuses it when "
            "deployed, and the engine does not guess whether it waits or passes")
