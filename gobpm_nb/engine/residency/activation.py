"""A person's activation of an element of an ad-hoc subprocess (``Engine.activate``): what
waits for one, and the command, checked before anything changes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ...errors import EngineError
from ...model.adhoc import AdHocSubProcess
from ..durability.journal import Journal
from ..state.holders import Hold, Holders
from ..state.records import AdHocView, Trigger


class Host(Protocol):
    """What an activation needs of the engine (the ``Core``): its holders, its instance
    records, the journal and the router."""

    holders: Holders
    journal: Journal
    deliver: Callable[..., str]

    @property
    def runs(self) -> Mapping[str, Any]: ...  # instance id -> its record (``defn``)
    def run_of(self, iid: str) -> Any: ...


def is_adhoc(core: Host, hold: Hold) -> bool:
    """Whether a ``decision`` hold is an ad-hoc subprocess's (not a decision gateway's)."""
    defn = core.runs[hold.instance].defn
    return defn is not None and isinstance(defn.nodes.get(hold.node), AdHocSubProcess)


def adhocs(core: Host, instance: str | None = None) -> list[AdHocView]:
    """The ad-hoc subprocesses waiting for a person's activation (or one instance's), in
    the order their holds were armed."""
    waiting = core.holders.decisions
    if instance is None:
        holds = sorted(waiting.values(), key=lambda h: h.seq)
    else:
        listed = list(core.holders.record(core.run_of(instance).id).holds)
        holds = [h for h in listed if waiting.get((h.instance, h.track)) == h]
    out = []
    for h in holds:
        if h in core.holders.waking or not is_adhoc(core, h):
            continue
        defn = core.runs[h.instance].defn
        assert defn is not None
        out.append(AdHocView(h.instance, h.track, h.node, defn.activatable[h.node]))
    return out


def activate(core: Host, instance: str, adhoc: str, element: str,
             track: str | None = None) -> None:
    """Activate ``element`` of ad-hoc subprocess ``adhoc`` of ``instance`` (``track``: the
    track running it, when several do): EngineError naming what is wrong, nothing changed,
    for an unknown instance, a subprocess that waits for no activation now, an element
    that is not one of its activatable ones."""
    rec = core.run_of(instance)
    defn = rec.defn
    if defn is not None and not isinstance(defn.nodes.get(adhoc), AdHocSubProcess):
        raise EngineError(f"{adhoc!r} is not an ad-hoc subprocess of process {defn.id!r}")
    views = [v for v in adhocs(core, instance)
             if v.adhoc == adhoc and (track is None or v.track == track)]
    if not views:
        raise EngineError(f"ad-hoc subprocess {adhoc!r} of instance {instance!r} waits for "
                          "no activation now" + (f" on track {track!r}" if track else ""))
    if len(views) > 1:
        raise EngineError(f"ad-hoc subprocess {adhoc!r} runs on tracks "
                          f"{', '.join(v.track for v in views)} of instance {instance!r}: "
                          "give track=")
    view = views[0]
    if element not in view.elements:
        raise EngineError(f"{element!r} is not an activatable element of ad-hoc subprocess "
                          f"{adhoc!r}; those: {', '.join(view.elements)}")
    hold = core.holders.decisions[(view.instance, view.track)]
    trigger = Trigger("decision", hold.node, "node", hold.track, None, element)
    core.journal.record([(hold.instance, trigger)])
    core.deliver(hold, trigger)


__all__ = ["activate", "adhocs", "is_adhoc"]
