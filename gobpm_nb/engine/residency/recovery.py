"""Restart recovery: hydration whose trigger is "the engine started". Every stored instance
comes back trigger absent, each hold at its recorded deadline, key and arming order;
instances that cannot be held come back resident; a checkpoint that cannot be read fails
only its own instance (Invariants 5 and 17, docs/architecture.md)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...errors import CheckpointError
from ...vocabulary import BOUNDARY, DEHYDRATED, FINISHED, NODE, RESIDENT, ROOT
from ..durability.checkpoint import Image, check_against, read
from ..runtime.run import Run
from ..state.dehydrated import Dehydrated, Recorded
from ..state.records import Track
from ..state.waits import CallWait, JoinWait, Later, track_holdable
from .hydrate import restore

if TYPE_CHECKING:
    from .router import Residency

log = logging.getLogger("gobpm_nb")


def recover(res: Residency, damaged: dict[str, str]) -> list[tuple[Run, Track]]:
    """Rebuild every stored instance, trigger absent: each wait registers its holder at
    its recorded deadline, key and arming order; instances that cannot be held are
    hydrated at once. An instance whose checkpoint caught every track before it parked
    (one started and not run yet) has not run since: its tracks are returned, ready, to be
    spawned once the recorded triggers are delivered, so that it runs when the next
    command runs, in its place among the instances then ready, as without the crash. One
    the store is behind (it ran, and its next checkpoint was refused) runs again at once.
    One with a recorded trigger that does not read back (``damaged``: instance -> why) is
    not recovered, as one whose checkpoint does not."""
    core = res.core
    steps: list[Later] = []
    resident: list[tuple[Image, Dehydrated]] = []
    stored = core.store.ids()
    ids = set(stored)
    for iid in stored:
        if iid in damaged:
            steps.extend(unrecovered(res, iid, {"field": "<journal>", "cause": damaged[iid]},
                                     f"a trigger the store recorded for it is damaged "
                                     f"({damaged[iid]})"))
        else:
            steps.extend(recover_one(res, iid, resident, ids))
    for _, register in sorted(steps, key=lambda item: item[0]):
        register()
    staying = {rec.id for _, rec in resident}
    for iid, rec in core.runs.items():
        if rec.residency == DEHYDRATED and iid not in staying:
            core.emit("recovered", iid, None, None, {
                "waits": len(core.holders.of_instance(iid)), "residency": DEHYDRATED})
    ready: list[tuple[Run, Track]] = []
    behind = core.journal.behind
    for image, rec in resident:
        unrun = rec.id not in behind and all(t.wait is None and t.origin == "start"
                                             for t in image.tracks)
        restore(res.core, rec, image, ready=ready if unrun else None)
        core.emit("recovered", rec.id, None, None, {
            "waits": len(core.holders.of_instance(rec.id)), "residency": RESIDENT})
    return ready

def recover_one(res: Residency, iid: str, resident: list[tuple[Image, Dehydrated]],
                stored: set[str]) -> list[Later]:
    """One stored instance: its holders' registrations, and whether it comes back
    resident. A checkpoint that cannot be read fails only its own instance. A call
    activity waiting for a child the store never held (it refused the child's first
    checkpoint, and recorded that it was behind it) calls again: its track enters the call
    activity anew. (A child the store held and deleted has ended: its end reaches the
    caller through the caller's recorded trigger or its next checkpoint.)"""
    core = res.core
    rec: Dehydrated = Recorded(iid, None, ())
    core.runs[iid] = rec
    try:
        image = read(core.codec.decode(core.store.get(iid), iid), iid)
        scopes = {t.id: t.scope for t in image.tracks if t.scope is not None}
        if scopes or image.parent:
            rec = Dehydrated.of(iid, None, None, (), scopes, image.parent)
            core.runs[iid] = rec
        proc = image.process
        defn = core.definition(proc["id"], proc["version"])
        if defn is not None and defn.signature == proc["signature"]:
            check_against(image, defn)
            assert isinstance(rec, Recorded)  # recovery's records keep their own version
            rec.defn = defn
    except CheckpointError as exc:
        return unrecovered(res, iid, {"field": exc.field}, str(exc))
    except Exception as exc:  # the store itself failed
        return unrecovered(res, iid, {"field": "<store>", "cause": type(exc).__name__},
                                repr(exc))
    behind = core.journal.behind  # (what the store recorded it was behind)
    for t in image.tracks:
        if isinstance(t.wait, CallWait) and t.wait.child in behind and \
                t.wait.child not in stored:
            t.wait, t.boundaries = None, {}  # (armed again as it enters)
    parked = [t for t in image.tracks if not isinstance(t.wait, JoinWait)]
    unheld = any(track_holdable(t) is not None for t in parked) or \
        any(not w.holdable for w in (image.events or {}).values())  # a conditional start
    if unheld and rec.defn is None:
        return unrecovered(res, iid, {"field": "process", "cause": "version not registered"},
                                "its process version is not deployed")
    dehydration = res.core.dehydration
    if rec.defn is not None and (not dehydration.dehydrate or unheld or not all(
            dehydration.eligible(rec.defn, t) for t in parked)):
        resident.append((image, rec))
    defn = rec.defn
    steps: list[Later] = []
    for t in parked:
        node = defn.nodes.get(t.node) if defn is not None else None
        label = node.label if node is not None else t.node
        assignee = getattr(node, "assignee", None)
        if t.wait is not None:
            steps += t.wait.restore(core, iid, t.id, NODE, label, assignee)
        for b in t.boundaries.values():
            steps += b.restore(core, iid, t.id, BOUNDARY, label, assignee)
    for w in (image.events or {}).values():
        steps += w.restore(core, iid, ROOT, BOUNDARY, w.node, None)
    return steps

def unrecovered(res: Residency, iid: str, details: dict[str, Any], why: str
                ) -> list[Later]:
    """An instance that could not be recovered: failed, holding nothing; its checkpoint
    stays in the store."""
    core = res.core
    run = Run(core, iid, None, None)  # type: ignore[arg-type]
    run.state, run.residency = "failed", FINISHED
    core.runs[iid] = run
    core.emit("recovery_failed", iid, None, None, details)
    log.error("instance %s not recovered: %s", iid, why)
    return []
