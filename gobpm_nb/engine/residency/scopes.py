"""Where a trigger lands in an instance's scopes: whether a node trigger resumes its track in
place, and which tracks a scope holds (from a dehydrated instance's map of track to scope)."""

from __future__ import annotations

from ...model import Definition
from ...model.adhoc import AdHocSubProcess
from ...vocabulary import ROOT


def in_place(defn: Definition | None, node: str) -> bool:
    """Whether a node trigger at ``node`` resumes its track in place, its other holds kept:
    one arm of a parallel multiple catch (the arms still to come stay its own), an ad-hoc
    subprocess's activation (the subprocess runs on, its tracks inside naming its track)."""
    n = defn.nodes.get(node) if defn is not None else None
    return getattr(n, "parallel", False) or isinstance(n, AdHocSubProcess)


def inside(scopes: dict[str, str] | None, host: str) -> set[str] | None:
    """The tracks inside the scope run by ``host`` (``ROOT``: every track: None), from a
    dehydrated instance's map of track to scope."""
    if host == ROOT:
        return None
    found: set[str] = set()
    for tid in scopes or {}:
        up: str | None = tid
        while up is not None and up != host:
            up = scopes.get(up) if scopes else None
        if up == host:
            found.add(tid)
    return found
