"""A drawn process as text, element by element, for a failure message (``generate``)."""

from __future__ import annotations

import dataclasses

import gobpm_nb as bpm

SKIP = ("id", "name", "within", "attached_to")


def _text(value):
    if hasattr(value, "source"):  # an expression (a callable's by its name)
        return getattr(value.source, "__name__", value.source)
    if hasattr(value, "text"):  # a timer
        return f"{value.kind} {value.text}"
    if callable(value):
        return getattr(value, "__name__", value)
    return value


def _attrs(e) -> str:
    out = []
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if f.name in SKIP or f.name == "interrupting" or value in (None, False, ()):
            continue
        if f.name == "loop":
            value = "{" + ", ".join(f"{k}={_text(getattr(value, k))}" for k in
                                    ("condition", "test_before", "maximum")) + "}"
        if f.name == "many":
            value = "{" + ", ".join(f"{k}={_text(getattr(value, k))}" for k in
                                    ("sequential", "cardinality", "completion")
                                    if getattr(value, k) not in (None, False)) + "}"
        out.append(f"{f.name}={_text(value)}")
    if getattr(e, "interrupting", True) is False:
        out.append("non-interrupting")
    return " ".join(out)


def describe(proc: bpm.Process) -> str:
    """The process as text: each element (indented by the scope it is in, boundaries under
    their activity) and each flow with its condition."""
    elements = proc.elements
    depth: dict[str, int] = {}
    for e in elements:
        depth[e.id] = depth[e.within] + 1 if e.within is not None else 0
    lines = [f"process {proc.id}"]
    for e in elements:
        on = f" on {e.attached_to}" if getattr(e, "attached_to", None) else ""
        lines.append("  " * (depth[e.id] + 1) + f"{e.id}: {e.kind}{on} {_attrs(e)}".rstrip())
    for f in proc.flows:
        cond = f"  if {f.condition.source}" if f.condition is not None else ""
        lines.append(f"  {f.source} -> {f.target}{cond}")
    return "\n".join(lines)
