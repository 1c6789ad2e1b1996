"""Which scope holds each element: the process, or a subprocess (plain or event) inside it.

The writer nests each element in its scope's ``<subProcess>`` and the layout draws it inside
that subprocess's shape; both ask here. An element whose ``within`` names no subprocess, or
whose chain of scopes loops (validation refuses both), is taken to be in the process, so a
file can still be written for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import elements as el

SCOPES = (el.SubProcess, el.EventSubProcess)


def scope_of(elements: Iterable[el.Element]) -> dict[str, str | None]:
    """Each element id -> the id of the subprocess that holds it (None: the process)."""
    nodes = {e.id: e for e in elements}
    out: dict[str, str | None] = {}
    for e in nodes.values():
        out[e.id] = e.within if _sound(e, nodes) else None
    return out


def _sound(e: el.Element, nodes: dict[str, el.Element]) -> bool:
    """Whether following ``within`` from ``e`` passes only subprocesses and reaches the
    process without a loop."""
    seen = {e.id}
    here = e
    while here.within is not None:
        host = nodes.get(here.within)
        if not isinstance(host, SCOPES) or host.id in seen:
            return False
        seen.add(host.id)
        here = host
    return True


def children_of(elements: Iterable[el.Element]) -> dict[str | None, list[el.Element]]:
    """Each scope (None: the process) -> the elements directly in it, in the given order."""
    listed = list(elements)
    scope = scope_of(listed)
    out: dict[str | None, list[el.Element]] = {None: []}
    for e in listed:
        out.setdefault(scope[e.id], []).append(e)
    return out
